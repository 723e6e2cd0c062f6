//! Derives a static embedding model (the model2vec layout: `config.json`,
//! `tokenizer.json`, `model.safetensors` with one `embeddings` row per token) from a
//! sentence-transformers BERT model, following model2vec's distillation (Tulkens & van
//! Dongen, "Model2Vec: Distill a Small Fast Model from any Sentence Transformer", 2024):
//!
//! 1. every vocabulary token `t` goes through the encoder as `[CLS] t [SEP]`, and its
//!    vector is the mean of the three output states (the model's own mean pooling);
//! 2. PCA (nalgebra's symmetric eigendecomposition of the covariance) keeps the `DIMS`
//!    directions of most variance, centred;
//! 3. each row is weighted by SIF, `a / (a + p(t))` with `a = 1e-4` and `p` the Zipf
//!    probability of the token's rank (the vocabulary's order).
//!
//! A sentence's embedding is then the mean of its tokens' rows (model2vec-rs does that
//! in Graft). Usage: `graft-distill SOURCE_DIR OUT_DIR [DIMS=256]`.
//!
//! `graft-distill tokenlearn TEACHER_DIR CORPUS OUT_DIR CACHE [EPOCHS=3] [LR=0.001]`
//! trains a static model on in-domain text instead ([`tokenlearn`]; issue 24.2 measured
//! it and kept the distilled model: see the README's Search section).

use anyhow::{anyhow, Context, Result};
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use std::path::PathBuf;
use std::time::Instant;

mod tokenlearn;

const SIF: f64 = 1e-4;

fn main() -> Result<()> {
    if std::env::args().nth(1).as_deref() == Some("tokenlearn") {
        let usage = "usage: graft-distill tokenlearn TEACHER_DIR CORPUS OUT_DIR CACHE [EPOCHS] [LR]";
        let a: Vec<String> = std::env::args().skip(2).collect();
        if a.len() < 4 {
            return Err(anyhow!(usage));
        }
        let opts = tokenlearn::Options {
            epochs: a.get(4).map(|e| e.parse()).transpose()?.unwrap_or(3),
            learning_rate: a.get(5).map(|e| e.parse()).transpose()?.unwrap_or(1e-3),
        };
        let path = |i: usize| std::path::Path::new(&a[i]);
        return tokenlearn::run(path(0), path(1), path(2), path(3), &opts);
    }
    let mut args = std::env::args().skip(1);
    let source = PathBuf::from(args.next().context("usage: graft-distill SOURCE_DIR OUT_DIR [DIMS]")?);
    let out = PathBuf::from(args.next().context("usage: graft-distill SOURCE_DIR OUT_DIR [DIMS]")?);
    let dims: usize = args.next().map(|d| d.parse()).transpose()?.unwrap_or(256);
    let started = Instant::now();

    let config_text = std::fs::read_to_string(source.join("config.json"))?;
    let config: Config = serde_json::from_str(&config_text)?;
    let hidden = config.hidden_size;
    if dims == 0 || dims > hidden {
        return Err(anyhow!("DIMS must be 1..={hidden}"));
    }
    let tokenizer = tokenizers::Tokenizer::from_file(source.join("tokenizer.json")).map_err(|e| anyhow!("{e}"))?;
    let vocab = tokenizer.get_vocab_size(true);
    let cls = tokenizer.token_to_id("[CLS]").context("no [CLS] token")?;
    let sep = tokenizer.token_to_id("[SEP]").context("no [SEP] token")?;
    let device = Device::Cpu;
    // SAFETY: read-only mapping of a file this program never writes
    let vb = unsafe { VarBuilder::from_mmaped_safetensors(&[source.join("model.safetensors")], DType::F32, &device)? };
    let model = BertModel::load(vb, &config)?;

    // 1. one vector per token
    let mut rows = vec![0f32; vocab * hidden];
    let batch = 256;
    for start in (0..vocab).step_by(batch) {
        let end = (start + batch).min(vocab);
        let ids: Vec<u32> = (start..end).flat_map(|t| [cls, t as u32, sep]).collect();
        let ids = Tensor::from_vec(ids, (end - start, 3), &device)?;
        let states = model.forward(&ids, &ids.zeros_like()?, None)?.mean(1)?;
        for (r, row) in states.to_vec2::<f32>()?.into_iter().enumerate() {
            rows[(start + r) * hidden..(start + r + 1) * hidden].copy_from_slice(&row);
        }
        if (start / batch) % 20 == 0 {
            eprintln!("distill: {start}/{vocab} tokens ({:.0?})", started.elapsed());
        }
    }

    // 2. PCA
    let data = nalgebra::DMatrix::<f64>::from_row_iterator(vocab, hidden, rows.iter().map(|&x| x as f64));
    let mean = data.row_mean();
    let centred = nalgebra::DMatrix::from_fn(vocab, hidden, |r, c| data[(r, c)] - mean[c]);
    let covariance = (centred.transpose() * &centred) / (vocab as f64 - 1.0);
    let eigen = nalgebra::SymmetricEigen::new(covariance);
    let mut order: Vec<usize> = (0..hidden).collect();
    order.sort_by(|&a, &b| eigen.eigenvalues[b].total_cmp(&eigen.eigenvalues[a]));
    let kept = &order[..dims];
    let explained: f64 = kept.iter().map(|&k| eigen.eigenvalues[k]).sum::<f64>() / eigen.eigenvalues.sum();
    let basis = nalgebra::DMatrix::from_fn(hidden, dims, |r, c| eigen.eigenvectors[(r, kept[c])]);
    let projected = centred * basis;
    eprintln!("distill: PCA {hidden} -> {dims} dimensions keeps {:.1}% of the variance", explained * 100.0);

    // 3. SIF weights by Zipf rank
    let z: f64 = (0..vocab).map(|r| 1.0 / (r as f64 + 2.0)).sum();
    let mut table: Vec<half::f16> = Vec::with_capacity(vocab * dims);
    for r in 0..vocab {
        let p = (1.0 / (r as f64 + 2.0)) / z;
        let w = SIF / (SIF + p);
        for c in 0..dims {
            table.push(half::f16::from_f64(projected[(r, c)] * w));
        }
    }

    std::fs::create_dir_all(&out)?;
    let bytes: Vec<u8> = table.iter().flat_map(|x| x.to_le_bytes()).collect();
    let view = safetensors::tensor::TensorView::new(safetensors::Dtype::F16, vec![vocab, dims], &bytes)?;
    safetensors::serialize_to_file([("embeddings", view)], None, &out.join("model.safetensors"))?;
    std::fs::copy(source.join("tokenizer.json"), out.join("tokenizer.json"))?;
    let base = source.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let config = serde_json::json!({
        "model_type": "model2vec",
        "architectures": ["StaticModel"],
        "hidden_dim": dims,
        "apply_pca": dims,
        "sif_coefficient": SIF,
        "normalize": true,
        "base_model": base,
    });
    std::fs::write(out.join("config.json"), serde_json::to_string_pretty(&config)? + "\n")?;
    eprintln!("distill: wrote {} in {:.0?}", out.display(), started.elapsed());
    Ok(())
}
