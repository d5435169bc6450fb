//! Sentence embeddings with all-MiniLM-L6-v2 on the CPU (candle's `BertModel` + the model's own
//! `tokenizer.json`), computed exactly as sentence-transformers does: word pieces truncated at
//! 256 (the model's `max_seq_length`; its position table has 512 slots but it was trained at
//! 256), mean pooling over the attention mask, then L2 normalisation — so a dot product of two
//! vectors is their cosine.
//!
//! The model is never downloaded here: `just model` (or `scripts/fetch-model.sh`) puts it under
//! `models/all-MiniLM-L6-v2`, and [`resolve_model_dir`] finds it.

use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use rayon::prelude::*;
use sha2::{Digest, Sha256};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

use crate::error::Error;

/// The folder name the fetch recipe writes, under `models/`.
pub const MODEL_NAME: &str = "all-MiniLM-L6-v2";
/// sentence-transformers' `max_seq_length` for this model (word pieces, with [CLS] and [SEP]).
pub const MAX_TOKENS: usize = 256;
/// Documents per forward pass. Batches are formed from documents of similar length (sorted by
/// text length) so padding wastes little; 32 keeps the activations small on 2 cores.
pub const BATCH_SIZE: usize = 32;

const MODEL_FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// Finds the model folder: the explicit `--model-dir`, else env `TOOLBUDGET_MODEL_DIR`, else
/// `models/all-MiniLM-L6-v2` under the current directory, else next to this crate's sources.
/// An explicit location that lacks the files is an error (no silent fallback past it).
pub fn resolve_model_dir(explicit: Option<&Path>) -> Result<PathBuf, Error> {
    let env = std::env::var_os("TOOLBUDGET_MODEL_DIR").filter(|v| !v.is_empty());
    let chosen = explicit
        .map(Path::to_path_buf)
        .or_else(|| env.map(PathBuf::from));
    if let Some(dir) = chosen {
        return if has_model(&dir) {
            Ok(dir)
        } else {
            Err(missing(&dir))
        };
    }
    let local = Path::new("models").join(MODEL_NAME);
    if has_model(&local) {
        return Ok(local);
    }
    let beside_crate = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("models")
        .join(MODEL_NAME);
    if has_model(&beside_crate) {
        return Ok(beside_crate);
    }
    Err(missing(&local))
}

fn has_model(dir: &Path) -> bool {
    MODEL_FILES.iter().all(|f| dir.join(f).is_file())
}

fn missing(dir: &Path) -> Error {
    Error::Missing(format!(
        "embedding model not found at {} (needs {}): run `just model` (or scripts/fetch-model.sh), \
         or pass --model-dir / set TOOLBUDGET_MODEL_DIR",
        dir.display(),
        MODEL_FILES.join(", ")
    ))
}

/// Fixes candle's thread count (`RAYON_NUM_THREADS`, when unset) to the available cores.
/// candle asks for its thread count on every matrix product and, unless that variable is set,
/// answers by reading `/proc/cpuinfo`: about 3 ms of each ~10 ms query embedding (measured
/// with perf).
///
/// # Safety
/// Sets an environment variable: call it before any other thread starts (first thing in
/// `main`), or while no other thread reads the environment.
pub unsafe fn pin_thread_count() {
    if std::env::var_os("RAYON_NUM_THREADS").is_none() {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        // SAFETY: the caller guarantees no other thread reads the environment now.
        unsafe { std::env::set_var("RAYON_NUM_THREADS", cores.to_string()) };
    }
}

/// A loaded model and tokenizer. Cheap to share (`Arc`): inference takes `&self`.
pub struct Embedder {
    model: BertModel,
    tokenizer: Tokenizer,
    device: Device,
    dir: PathBuf,
    /// sha256 over config, tokenizer and weights: the cache key, so a changed model never
    /// reuses vectors of another.
    fingerprint: String,
    dim: usize,
}

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedder")
            .field("dir", &self.dir)
            .field("fingerprint", &self.fingerprint)
            .field("dim", &self.dim)
            .finish()
    }
}

impl Embedder {
    /// Loads the model from a folder holding `config.json`, `tokenizer.json` and
    /// `model.safetensors` (the layout `scripts/fetch-model.sh` writes).
    pub fn load(dir: &Path) -> Result<Embedder, Error> {
        if !has_model(dir) {
            return Err(missing(dir));
        }
        let read = |name: &str| {
            let path = dir.join(name);
            std::fs::read(&path).map_err(|e| Error::input(&path, None, format!("cannot read: {e}")))
        };
        let config_bytes = read("config.json")?;
        let tokenizer_bytes = read("tokenizer.json")?;
        let weights = read("model.safetensors")?;

        let mut hasher = Sha256::new();
        for part in [&config_bytes, &tokenizer_bytes, &weights] {
            hasher.update((part.len() as u64).to_le_bytes());
            hasher.update(part);
        }
        let fingerprint = hex(&hasher.finalize());

        let config_path = dir.join("config.json");
        let config: Config = serde_json::from_slice(&config_bytes).map_err(|e| {
            Error::input(
                &config_path,
                Some(crate::error::Position {
                    line: e.line(),
                    column: e.column(),
                }),
                format!("not a BERT config: {e}"),
            )
        })?;
        let dim = config.hidden_size;

        let tokenizer_path = dir.join("tokenizer.json");
        let mut tokenizer = Tokenizer::from_bytes(&tokenizer_bytes)
            .map_err(|e| Error::input(&tokenizer_path, None, format!("bad tokenizer: {e}")))?;
        // The shipped tokenizer.json pads and truncates to 128; sentence-transformers overrides
        // that with max_seq_length 256 and pads each batch to its longest member.
        let pad_id = tokenizer.token_to_id("[PAD]").unwrap_or(0);
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            pad_id,
            pad_token: "[PAD]".to_string(),
            ..Default::default()
        }));
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..Default::default()
            }))
            .map_err(|e| Error::input(&tokenizer_path, None, format!("bad tokenizer: {e}")))?;

        let device = Device::Cpu;
        let weights_path = dir.join("model.safetensors");
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &device)
            .map_err(|e| Error::input(&weights_path, None, format!("bad weights: {e}")))?;
        let model = BertModel::load(vb, &config)
            .map_err(|e| Error::input(&weights_path, None, format!("bad weights: {e}")))?;
        Ok(Embedder {
            model,
            tokenizer,
            device,
            dir: dir.to_path_buf(),
            fingerprint,
            dim,
        })
    }

    /// Vector length (384 for MiniLM).
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// sha256 (hex) of config + tokenizer + weights.
    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Embeds one text (a query): a unit vector of `dim()` floats.
    pub fn embed_one(&self, text: &str) -> Result<Vec<f32>, String> {
        Ok(self.embed_batch(&[text])?.pop().unwrap_or_default())
    }

    /// Embeds many texts into a row-major `texts.len() × dim()` matrix, in input order.
    /// Texts are sorted by length into batches of [`BATCH_SIZE`] (less padding), and batches
    /// run in parallel on rayon's pool.
    pub fn embed_all(&self, texts: &[&str]) -> Result<Vec<f32>, String> {
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| (texts[i].len(), i));
        let batches: Vec<&[usize]> = order.chunks(BATCH_SIZE).collect();
        let vectors: Vec<Vec<Vec<f32>>> = batches
            .par_iter()
            .map(|batch| {
                let batch_texts: Vec<&str> = batch.iter().map(|&i| texts[i]).collect();
                self.embed_batch(&batch_texts)
            })
            .collect::<Result<_, String>>()?;
        let mut matrix = vec![0f32; texts.len() * self.dim];
        for (batch, rows) in batches.iter().zip(vectors) {
            for (&i, row) in batch.iter().zip(rows) {
                matrix[i * self.dim..(i + 1) * self.dim].copy_from_slice(&row);
            }
        }
        Ok(matrix)
    }

    /// One forward pass: tokenize (padded to the longest, truncated at 256), run BERT,
    /// mean-pool the token vectors the attention mask keeps, L2-normalise.
    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, String> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| format!("tokenizing failed: {e}"))?;
        let rows = encodings.len();
        let len = encodings[0].get_ids().len();
        let mut ids = Vec::with_capacity(rows * len);
        let mut mask = Vec::with_capacity(rows * len);
        for e in &encodings {
            ids.extend_from_slice(e.get_ids());
            mask.extend_from_slice(e.get_attention_mask());
        }
        let run = || -> candle_core::Result<Vec<Vec<f32>>> {
            let ids = Tensor::from_vec(ids, (rows, len), &self.device)?;
            let types = ids.zeros_like()?;
            let mask = Tensor::from_vec(mask, (rows, len), &self.device)?;
            let hidden = self.model.forward(&ids, &types, Some(&mask))?;
            let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
            let summed = hidden.broadcast_mul(&mask)?.sum(1)?;
            let counts = mask.sum(1)?.clamp(1e-9f32, f32::MAX)?;
            let mean = summed.broadcast_div(&counts)?;
            let norm = mean
                .sqr()?
                .sum_keepdim(1)?
                .sqrt()?
                .clamp(1e-12f32, f32::MAX)?;
            mean.broadcast_div(&norm)?.to_vec2::<f32>()
        };
        run().map_err(|e| format!("embedding failed: {e}"))
    }
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::sync::{Arc, OnceLock};

    /// The model, loaded once per test binary; `None` (with a message) when not fetched.
    pub(crate) fn test_embedder() -> Option<Arc<Embedder>> {
        static MODEL: OnceLock<Option<Arc<Embedder>>> = OnceLock::new();
        MODEL
            .get_or_init(|| match resolve_model_dir(None) {
                Ok(dir) => Some(Arc::new(Embedder::load(&dir).expect("model loads"))),
                Err(e) if std::env::var_os("TOOLBUDGET_REQUIRE_MODEL").is_some() => {
                    panic!("TOOLBUDGET_REQUIRE_MODEL is set: {e}")
                }
                Err(e) => {
                    eprintln!("skipping: {e}");
                    None
                }
            })
            .clone()
    }

    #[test]
    fn matches_the_published_vector() {
        let Some(model) = test_embedder() else { return };
        let v = model.embed_one("This is an example sentence").unwrap();
        assert_eq!(v.len(), 384);
        // sentence-transformers/all-MiniLM-L6-v2, first dimensions of this sentence.
        for (got, want) in v.iter().zip([0.0677f32, 0.0635, 0.0487]) {
            assert!((got - want).abs() < 1e-4, "got {:?}", &v[..3]);
        }
        let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5);
    }

    #[test]
    fn batching_and_padding_do_not_change_vectors() {
        let Some(model) = test_embedder() else { return };
        let texts = [
            "send a message to a slack channel",
            "x",
            "read a file from disk and return its contents with line numbers",
        ];
        let matrix = model.embed_all(&texts).unwrap();
        for (i, t) in texts.iter().enumerate() {
            let alone = model.embed_one(t).unwrap();
            let row = &matrix[i * 384..(i + 1) * 384];
            let diff = alone
                .iter()
                .zip(row)
                .map(|(a, b)| (a - b).abs())
                .fold(0f32, f32::max);
            assert!(diff < 1e-5, "text {i} differs by {diff}");
        }
    }

    #[test]
    fn long_text_is_truncated_not_rejected() {
        let Some(model) = test_embedder() else { return };
        let long = "word ".repeat(2000);
        assert_eq!(model.embed_one(&long).unwrap().len(), 384);
    }

    #[test]
    fn explicit_dir_without_model_names_the_recipe() {
        let dir = tempfile::tempdir().unwrap();
        let err = resolve_model_dir(Some(dir.path())).unwrap_err().to_string();
        assert!(err.contains("just model"), "{err}");
        assert!(err.contains(&dir.path().display().to_string()), "{err}");
        let err = Embedder::load(dir.path()).unwrap_err().to_string();
        assert!(err.contains("scripts/fetch-model.sh"), "{err}");
    }
}
