//! Tokenlearn (model2vec's recipe, MinishLab's `tokenlearn`): the static table is
//! regressed onto the full model's sentence embeddings of in-domain texts, so that the
//! mean of a text's rows points where the transformer's embedding of that text points.
//!
//! 1. every corpus line goes through the transformer (mean of its output states over
//!    the text's tokens, L2-normalised: what sentence-transformers computes);
//! 2. the table starts from the distilled rows (one `[CLS] t [SEP]` pass per token, SIF
//!    weighted, no PCA) and is trained with Adam on `1 − cos(mean(rows of the text),
//!    target)`, the text tokenized as model2vec-rs does (no special tokens, unknown
//!    tokens skipped); 5% of the lines are held out and their loss reported;
//! 3. the table is written in the model2vec layout (f16), so Graft reads it as any
//!    static model.

use anyhow::{anyhow, Context, Result};
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use std::path::Path;
use std::time::Instant;
use tokenizers::{Tokenizer, TruncationParams};

/// Sentences per transformer pass.
const BATCH: usize = 32;
/// Longest text in tokens (the model's own limit for sentence-transformers is 256).
const MAX_TOKENS: usize = 128;

pub struct Options {
    pub epochs: usize,
    pub learning_rate: f32,
}

/// Runs the recipe: teacher in `teacher`, one text per line in `corpus`, the static
/// model written to `out`; the teacher's embeddings are cached in `cache` (a file of
/// little-endian f32, one row per line) so that a second run trains at once.
pub fn run(teacher: &Path, corpus: &Path, out: &Path, cache: &Path, opts: &Options) -> Result<()> {
    let started = Instant::now();
    let config_text = std::fs::read_to_string(teacher.join("config.json"))?;
    let config: Config = serde_json::from_str(&config_text)?;
    let hidden = config.hidden_size;
    let mut tokenizer =
        Tokenizer::from_file(teacher.join("tokenizer.json")).map_err(|e| anyhow!("{e}"))?;
    tokenizer.with_padding(None);
    tokenizer
        .with_truncation(Some(TruncationParams {
            max_length: MAX_TOKENS,
            ..TruncationParams::default()
        }))
        .map_err(|e| anyhow!("{e}"))?;
    let vocab = tokenizer.get_vocab_size(true);
    let unk = tokenizer.token_to_id("[UNK]").context("no [UNK] token")?;
    let cls = tokenizer.token_to_id("[CLS]").context("no [CLS] token")?;
    let sep = tokenizer.token_to_id("[SEP]").context("no [SEP] token")?;
    let texts: Vec<String> = std::fs::read_to_string(corpus)?
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect();
    let device = Device::Cpu;
    // SAFETY: read-only mapping of a file this program never writes
    let vb = unsafe {
        VarBuilder::from_mmaped_safetensors(
            &[teacher.join("model.safetensors")],
            DType::F32,
            &device,
        )?
    };
    let model = BertModel::load(vb, &config)?;

    // 1. the teacher's embeddings
    let targets: Vec<f32> = match std::fs::read(cache) {
        Ok(b) if b.len() == texts.len() * hidden * 4 => {
            eprintln!(
                "tokenlearn: {} teacher embeddings from {}",
                texts.len(),
                cache.display()
            );
            b.chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect()
        }
        _ => {
            let mut ids: Vec<Vec<u32>> = Vec::with_capacity(texts.len());
            for t in &texts {
                ids.push(
                    tokenizer
                        .encode(t.as_str(), true)
                        .map_err(|e| anyhow!("{e}"))?
                        .get_ids()
                        .to_vec(),
                );
            }
            let mut order: Vec<usize> = (0..texts.len()).collect();
            order.sort_by_key(|&i| ids[i].len());
            let mut targets = vec![0f32; texts.len() * hidden];
            for (n, chunk) in order.chunks(BATCH).enumerate() {
                let width = chunk
                    .iter()
                    .map(|&i| ids[i].len())
                    .max()
                    .unwrap_or(1)
                    .max(1);
                let mut flat = Vec::with_capacity(chunk.len() * width);
                let mut mask = Vec::with_capacity(chunk.len() * width);
                for &i in chunk {
                    flat.extend_from_slice(&ids[i]);
                    flat.extend(std::iter::repeat_n(0u32, width - ids[i].len()));
                    mask.extend(std::iter::repeat_n(1f32, ids[i].len()));
                    mask.extend(std::iter::repeat_n(0f32, width - ids[i].len()));
                }
                let input = Tensor::from_vec(flat, (chunk.len(), width), &device)?;
                let mask = Tensor::from_vec(mask, (chunk.len(), width), &device)?;
                let states = model.forward(&input, &input.zeros_like()?, Some(&mask))?;
                let summed = states.broadcast_mul(&mask.unsqueeze(2)?)?.sum(1)?;
                let mean = summed.broadcast_div(&mask.sum_keepdim(1)?)?;
                for (row, &i) in mean.to_vec2::<f32>()?.into_iter().zip(chunk) {
                    let norm = row.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
                    for (d, x) in row.iter().enumerate() {
                        targets[i * hidden + d] = x / norm;
                    }
                }
                if n % 200 == 0 {
                    eprintln!(
                        "tokenlearn: teacher {}/{} texts ({:.0?})",
                        n * BATCH,
                        texts.len(),
                        started.elapsed()
                    );
                }
            }
            let bytes: Vec<u8> = targets.iter().flat_map(|x| x.to_le_bytes()).collect();
            std::fs::write(cache, bytes)?;
            targets
        }
    };

    // 2. the starting table: distilled rows, SIF weighted
    let mut table = vec![0f32; vocab * hidden];
    for start in (0..vocab).step_by(256) {
        let end = (start + 256).min(vocab);
        let ids: Vec<u32> = (start..end).flat_map(|t| [cls, t as u32, sep]).collect();
        let ids = Tensor::from_vec(ids, (end - start, 3), &device)?;
        let states = model.forward(&ids, &ids.zeros_like()?, None)?.mean(1)?;
        for (r, row) in states.to_vec2::<f32>()?.into_iter().enumerate() {
            table[(start + r) * hidden..(start + r + 1) * hidden].copy_from_slice(&row);
        }
    }
    let z: f64 = (0..vocab).map(|r| 1.0 / (r as f64 + 2.0)).sum();
    for r in 0..vocab {
        let p = (1.0 / (r as f64 + 2.0)) / z;
        let w = (1e-4 / (1e-4 + p)) as f32;
        for x in &mut table[r * hidden..(r + 1) * hidden] {
            *x *= w;
        }
    }
    eprintln!("tokenlearn: starting table ({:.0?})", started.elapsed());

    // the student's tokens, as model2vec-rs reads a text
    let student: Vec<Vec<u32>> = texts
        .iter()
        .map(|t| {
            tokenizer
                .encode(t.as_str(), false)
                .map(|e| e.get_ids().iter().copied().filter(|&i| i != unk).collect())
                .map_err(|e| anyhow!("{e}"))
        })
        .collect::<Result<_>>()?;
    let mut order: Vec<usize> = (0..texts.len())
        .filter(|&i| !student[i].is_empty())
        .collect();
    // a fixed shuffle (xorshift), so a run is repeatable
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for i in (1..order.len()).rev() {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        order.swap(i, (seed % (i as u64 + 1)) as usize);
    }
    let held = order.len() / 20;
    let (valid, train) = order.split_at(held);

    let loss_of = |table: &[f32], i: usize, grad: Option<&mut Vec<f32>>| -> f32 {
        let toks = &student[i];
        let mut m = vec![0f32; hidden];
        for &t in toks {
            for (d, x) in table[t as usize * hidden..(t as usize + 1) * hidden]
                .iter()
                .enumerate()
            {
                m[d] += x;
            }
        }
        let n = toks.len() as f32;
        m.iter_mut().for_each(|x| *x /= n);
        let y = &targets[i * hidden..(i + 1) * hidden];
        let norm = m.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-9);
        let dot: f32 = m.iter().zip(y).map(|(a, b)| a * b).sum();
        let cos = dot / norm;
        if let Some(g) = grad {
            // d(1 − cos)/dm = −(y/|m| − dot·m/|m|³); each row gets 1/n of it
            g.clear();
            g.extend(
                m.iter()
                    .zip(y)
                    .map(|(mi, yi)| -(yi / norm - dot * mi / (norm * norm * norm)) / n),
            );
        }
        1.0 - cos
    };
    let valid_loss = |table: &[f32]| -> f32 {
        valid.iter().map(|&i| loss_of(table, i, None)).sum::<f32>() / valid.len().max(1) as f32
    };
    eprintln!(
        "tokenlearn: {} texts train, {} held out; held-out loss {:.4} before",
        train.len(),
        valid.len(),
        valid_loss(&table)
    );

    // Adam, per row: a row's moments move only when a text uses it (lazy Adam)
    let (b1, b2, eps) = (0.9f32, 0.999f32, 1e-8f32);
    let mut m1 = vec![0f32; vocab * hidden];
    let mut m2 = vec![0f32; vocab * hidden];
    let mut steps = vec![0i32; vocab];
    let mut g = Vec::with_capacity(hidden);
    let batch = 64;
    for epoch in 0..opts.epochs {
        let mut total = 0f32;
        for chunk in train.chunks(batch) {
            let mut acc: std::collections::HashMap<u32, Vec<f32>> = Default::default();
            for &i in chunk {
                total += loss_of(&table, i, Some(&mut g));
                for &t in &student[i] {
                    let e = acc.entry(t).or_insert_with(|| vec![0f32; hidden]);
                    for (a, b) in e.iter_mut().zip(&g) {
                        *a += b / chunk.len() as f32;
                    }
                }
            }
            for (t, grad) in acc {
                let t = t as usize;
                steps[t] += 1;
                let (c1, c2) = (1.0 - b1.powi(steps[t]), 1.0 - b2.powi(steps[t]));
                for d in 0..hidden {
                    let k = t * hidden + d;
                    m1[k] = b1 * m1[k] + (1.0 - b1) * grad[d];
                    m2[k] = b2 * m2[k] + (1.0 - b2) * grad[d] * grad[d];
                    table[k] -= opts.learning_rate * (m1[k] / c1) / ((m2[k] / c2).sqrt() + eps);
                }
            }
        }
        eprintln!(
            "tokenlearn: epoch {} train loss {:.4}, held-out loss {:.4} ({:.0?})",
            epoch + 1,
            total / train.len() as f32,
            valid_loss(&table),
            started.elapsed()
        );
    }

    // 3. the model2vec layout
    std::fs::create_dir_all(out)?;
    let f16: Vec<u8> = table
        .iter()
        .flat_map(|&x| half::f16::from_f32(x).to_le_bytes())
        .collect();
    let view =
        safetensors::tensor::TensorView::new(safetensors::Dtype::F16, vec![vocab, hidden], &f16)?;
    safetensors::serialize_to_file([("embeddings", view)], None, &out.join("model.safetensors"))?;
    std::fs::copy(teacher.join("tokenizer.json"), out.join("tokenizer.json"))?;
    let config = serde_json::json!({
        "model_type": "model2vec",
        "architectures": ["StaticModel"],
        "hidden_dim": hidden,
        "normalize": true,
        "base_model": teacher.file_name().map(|n| n.to_string_lossy().into_owned()),
        "tokenlearn": {"texts": texts.len(), "epochs": opts.epochs, "learning_rate": opts.learning_rate},
    });
    std::fs::write(
        out.join("config.json"),
        serde_json::to_string_pretty(&config)? + "\n",
    )?;
    eprintln!(
        "tokenlearn: wrote {} in {:.0?}",
        out.display(),
        started.elapsed()
    );
    Ok(())
}
