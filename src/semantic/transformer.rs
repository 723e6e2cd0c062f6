//! The full sentence-transformers encoder (all-MiniLM-L6-v2 as published: BERT, 6
//! layers, 384 dimensions), run on the CPU by candle (issue 24.2, option a). A text's
//! embedding is what sentence-transformers computes for this model: the encoder's output
//! states averaged over the text's tokens (the attention mask), L2-normalised.

use anyhow::{anyhow, Context};
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use std::path::Path;
use tokenizers::{Tokenizer, TruncationParams};

/// Texts encoded in one forward pass (sorted by length first, so that little padding is
/// computed).
const BATCH: usize = 16;

/// The loaded encoder and its tokenizer.
pub(super) struct Encoder {
    model: BertModel,
    tokenizer: Tokenizer,
    device: Device,
}

impl Encoder {
    /// Loads `config.json`, `tokenizer.json` and `model.safetensors` (f32) from `dir`;
    /// texts are cut at `max_tokens` tokens, special tokens included.
    /// Errors: a file that is missing or not what a BERT model needs.
    pub(super) fn load(dir: &Path, max_tokens: usize) -> anyhow::Result<Self> {
        let config: Config = serde_json::from_str(
            &std::fs::read_to_string(dir.join("config.json")).context("reading config.json")?,
        )
        .context("config.json is not a BERT configuration")?;
        let mut tokenizer = Tokenizer::from_file(dir.join("tokenizer.json"))
            .map_err(|e| anyhow!("tokenizer.json: {e}"))?;
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: max_tokens.min(config.max_position_embeddings),
                ..TruncationParams::default()
            }))
            .map_err(|e| anyhow!("tokenizer.json: {e}"))?;
        let device = Device::Cpu;
        let weights =
            std::fs::read(dir.join("model.safetensors")).context("reading model.safetensors")?;
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &device)?;
        let model = BertModel::load(vb, &config).context("model.safetensors")?;
        Ok(Self {
            model,
            tokenizer,
            device,
        })
    }

    /// One unit vector per text, in order.
    pub(super) fn embed(&self, texts: &[String]) -> anyhow::Result<Vec<Vec<f32>>> {
        let mut ids: Vec<Vec<u32>> = Vec::with_capacity(texts.len());
        for t in texts {
            let enc = self
                .tokenizer
                .encode(t.as_str(), true)
                .map_err(|e| anyhow!("tokenizing: {e}"))?;
            ids.push(enc.get_ids().to_vec());
        }
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| ids[i].len());
        let mut out: Vec<Vec<f32>> = vec![Vec::new(); texts.len()];
        for chunk in order.chunks(BATCH) {
            let width = chunk
                .iter()
                .map(|&i| ids[i].len())
                .max()
                .unwrap_or(0)
                .max(1);
            let mut flat = Vec::with_capacity(chunk.len() * width);
            let mut mask = Vec::with_capacity(chunk.len() * width);
            for &i in chunk {
                let row = &ids[i];
                flat.extend_from_slice(row);
                flat.extend(std::iter::repeat_n(0u32, width - row.len()));
                mask.extend(std::iter::repeat_n(1f32, row.len()));
                mask.extend(std::iter::repeat_n(0f32, width - row.len()));
            }
            let input = Tensor::from_vec(flat, (chunk.len(), width), &self.device)?;
            let mask = Tensor::from_vec(mask, (chunk.len(), width), &self.device)?;
            let states = self
                .model
                .forward(&input, &input.zeros_like()?, Some(&mask))?;
            // mean over the text's own tokens
            let summed = states.broadcast_mul(&mask.unsqueeze(2)?)?.sum(1)?;
            let counts = mask.sum_keepdim(1)?.clamp(1e-9, f32::MAX)?;
            let mean = summed.broadcast_div(&counts)?;
            let norms = mean.sqr()?.sum_keepdim(1)?.sqrt()?.clamp(1e-12, f32::MAX)?;
            let unit = mean.broadcast_div(&norms)?;
            for (row, &i) in unit.to_vec2::<f32>()?.into_iter().zip(chunk) {
                out[i] = row;
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The encoder in `GRAFT_TEST_TRANSFORMER` (CI sets it to what `scripts/get-model.sh`
    /// caches, and then it must load), else the cache's if there; `None` skips the test
    /// on a machine without it.
    fn encoder() -> Option<Encoder> {
        if let Some(dir) = std::env::var_os("GRAFT_TEST_TRANSFORMER") {
            return Some(
                Encoder::load(Path::new(&dir), 256).expect("GRAFT_TEST_TRANSFORMER loads"),
            );
        }
        let dir = std::path::PathBuf::from(std::env::var_os("HOME")?)
            .join(".cache/graft/models/all-MiniLM-L6-v2");
        dir.join("model.safetensors")
            .is_file()
            .then(|| Encoder::load(&dir, 256).expect("the cached encoder loads"))
    }

    fn cos(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn a_text_embeds_the_same_alone_or_padded_in_a_batch_and_meaning_decides_closeness() {
        let Some(e) = encoder() else {
            eprintln!("no all-MiniLM-L6-v2 in the cache: skipped");
            return;
        };
        let texts: Vec<String> = [
            "refund a charge",
            "give the customer their money back for this payment, please",
            "create a webhook for repository events",
        ]
        .map(String::from)
        .to_vec();
        let batch = e.embed(&texts).unwrap();
        for v in &batch {
            assert_eq!(v.len(), 384);
            assert!((cos(v, v) - 1.0).abs() < 1e-4);
        }
        // the short text shares a batch with a longer one: padding must not move it
        let alone = e.embed(&texts[..1]).unwrap();
        assert!(
            cos(&alone[0], &batch[0]) > 0.9999,
            "{}",
            cos(&alone[0], &batch[0])
        );
        assert!(cos(&batch[0], &batch[1]) > cos(&batch[0], &batch[2]) + 0.1);
    }
}
