//! Sentence embeddings with all-MiniLM-L6-v2 on the CPU (our own encoder, [`super::bert`], over
//! the model's safetensors weights + its own `tokenizer.json`), computed exactly as
//! sentence-transformers does: word pieces truncated at 256 (the model's `max_seq_length`; its
//! position table has 512 slots but it was trained at 256), mean pooling over the tokens, then
//! L2 normalisation — so a dot product of two vectors is their cosine.
//!
//! Documents are embedded in batches of about [`BATCH_TOKENS`] word pieces, formed from texts of
//! similar length (sorted by length), the batches spread over the cores; sequences are packed
//! without padding (see `bert`). A query runs alone with each matrix product split over the
//! cores.
//!
//! The model is never downloaded here: `just model` (or `scripts/fetch-model.sh`) puts it under
//! `models/all-MiniLM-L6-v2`, and [`resolve_model_dir`] finds it.

use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use tokenizers::{Tokenizer, TruncationParams};

use super::bert::{Dims, Encoder, Layer, LayerNorm, Linear, Threads};
use crate::error::Error;

/// The folder name the fetch recipe writes, under `models/`.
pub const MODEL_NAME: &str = "all-MiniLM-L6-v2";
/// sentence-transformers' `max_seq_length` for this model (word pieces, with [CLS] and [SEP]).
pub const MAX_TOKENS: usize = 256;
/// Word pieces per forward pass when embedding many texts: enough rows for the matrix kernels
/// to run at full speed, few enough that the activations stay in the caches and that a
/// 1,000-text catalog makes dozens of batches to spread over the cores.
pub const BATCH_TOKENS: usize = 1024;

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
    encoder: Encoder,
    tokenizer: Tokenizer,
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

/// The fields of a BERT `config.json` the encoder needs.
#[derive(Debug, Deserialize)]
struct BertConfig {
    vocab_size: usize,
    hidden_size: usize,
    num_attention_heads: usize,
    num_hidden_layers: usize,
    intermediate_size: usize,
    max_position_embeddings: usize,
    #[serde(default = "default_layer_norm_eps")]
    layer_norm_eps: f64,
    #[serde(default = "default_hidden_act")]
    hidden_act: String,
}

fn default_layer_norm_eps() -> f64 {
    1e-12
}

fn default_hidden_act() -> String {
    "gelu".to_string()
}

impl BertConfig {
    fn dims(&self) -> Result<Dims, String> {
        if self.hidden_act != "gelu" {
            return Err(format!(
                "hidden_act {:?} is not supported (only \"gelu\")",
                self.hidden_act
            ));
        }
        if self.num_attention_heads == 0
            || !self.hidden_size.is_multiple_of(self.num_attention_heads)
        {
            return Err(format!(
                "hidden_size {} is not a multiple of num_attention_heads {}",
                self.hidden_size, self.num_attention_heads
            ));
        }
        if self.max_position_embeddings < MAX_TOKENS {
            return Err(format!(
                "max_position_embeddings {} is below the {MAX_TOKENS} word pieces embedded",
                self.max_position_embeddings
            ));
        }
        Ok(Dims {
            hidden: self.hidden_size,
            heads: self.num_attention_heads,
            intermediate: self.intermediate_size,
            layers: self.num_hidden_layers,
            max_positions: self.max_position_embeddings,
            layer_norm_eps: self.layer_norm_eps as f32,
        })
    }
}

/// Reads the encoder's tensors out of a safetensors file, checking each one's shape.
fn load_encoder(bytes: &[u8], config: &BertConfig, dims: Dims) -> Result<Encoder, String> {
    let st = safetensors::SafeTensors::deserialize(bytes).map_err(|e| e.to_string())?;
    let tensor = |name: &str, shape: &[usize]| -> Result<Vec<f32>, String> {
        let t = st
            .tensor(name)
            .map_err(|_| format!("tensor {name} is missing"))?;
        if t.dtype() != safetensors::Dtype::F32 || t.shape() != shape {
            return Err(format!(
                "tensor {name} is {:?} {:?}, expected F32 {shape:?}",
                t.dtype(),
                t.shape()
            ));
        }
        Ok(t.data()
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect())
    };
    let h = dims.hidden;
    let linear = |prefix: &str, out: usize, inp: usize| -> Result<Linear, String> {
        Ok(Linear {
            w: tensor(&format!("{prefix}.weight"), &[out, inp])?,
            b: tensor(&format!("{prefix}.bias"), &[out])?,
            out,
            inp,
        })
    };
    let norm = |prefix: &str| -> Result<LayerNorm, String> {
        Ok(LayerNorm {
            gamma: tensor(&format!("{prefix}.weight"), &[h])?,
            beta: tensor(&format!("{prefix}.bias"), &[h])?,
        })
    };
    let layers = (0..dims.layers)
        .map(|i| {
            let p = format!("encoder.layer.{i}");
            let parts =
                ["query", "key", "value"].map(|n| linear(&format!("{p}.attention.self.{n}"), h, h));
            let mut qkv = Linear {
                w: Vec::with_capacity(3 * h * h),
                b: Vec::with_capacity(3 * h),
                out: 3 * h,
                inp: h,
            };
            for part in parts {
                let part = part?;
                qkv.w.extend(part.w);
                qkv.b.extend(part.b);
            }
            Ok(Layer {
                qkv,
                attention_out: linear(&format!("{p}.attention.output.dense"), h, h)?,
                attention_norm: norm(&format!("{p}.attention.output.LayerNorm"))?,
                intermediate: linear(&format!("{p}.intermediate.dense"), dims.intermediate, h)?,
                output: linear(&format!("{p}.output.dense"), h, dims.intermediate)?,
                output_norm: norm(&format!("{p}.output.LayerNorm"))?,
            })
        })
        .collect::<Result<Vec<Layer>, String>>()?;
    let token_types = tensor("embeddings.token_type_embeddings.weight", &[2, h])
        .or_else(|_| tensor("embeddings.token_type_embeddings.weight", &[1, h]))?;
    Ok(Encoder {
        dims,
        word: tensor("embeddings.word_embeddings.weight", &[config.vocab_size, h])?,
        position: tensor(
            "embeddings.position_embeddings.weight",
            &[dims.max_positions, h],
        )?,
        token_type: token_types[..h].to_vec(),
        embedding_norm: norm("embeddings.LayerNorm")?,
        layers,
    })
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
        let config: BertConfig = serde_json::from_slice(&config_bytes).map_err(|e| {
            Error::input(
                &config_path,
                Some(crate::error::Position {
                    line: e.line(),
                    column: e.column(),
                }),
                format!("not a BERT config: {e}"),
            )
        })?;
        let dims = config.dims().map_err(|e| {
            Error::input(&config_path, None, format!("not a usable BERT config: {e}"))
        })?;

        let tokenizer_path = dir.join("tokenizer.json");
        let mut tokenizer = Tokenizer::from_bytes(&tokenizer_bytes)
            .map_err(|e| Error::input(&tokenizer_path, None, format!("bad tokenizer: {e}")))?;
        // The shipped tokenizer.json pads and truncates to 128; sentence-transformers truncates
        // at max_seq_length 256, and the encoder packs sequences without padding.
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..Default::default()
            }))
            .map_err(|e| Error::input(&tokenizer_path, None, format!("bad tokenizer: {e}")))?;

        let weights_path = dir.join("model.safetensors");
        let encoder = load_encoder(&weights, &config, dims)
            .map_err(|e| Error::input(&weights_path, None, format!("bad weights: {e}")))?;
        Ok(Embedder {
            encoder,
            tokenizer,
            dir: dir.to_path_buf(),
            fingerprint,
            dim: dims.hidden,
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

    /// Embeds one text (a query): a unit vector of `dim()` floats, each matrix product
    /// split over the cores.
    pub fn embed_one(&self, text: &str) -> Result<Vec<f32>, String> {
        let ids = self.token_ids(&[text])?;
        let seq: Vec<&[u32]> = ids.iter().map(Vec::as_slice).collect();
        Ok(self
            .encoder
            .embed(&seq, Threads::Split)
            .pop()
            .unwrap_or_default())
    }

    /// Embeds many texts into a row-major `texts.len() × dim()` matrix, in input order.
    /// Texts with the same word pieces are embedded once. The distinct ones are sorted by
    /// length, then by their pieces, into batches of about [`BATCH_TOKENS`] word pieces, and
    /// batches run in parallel on rayon's pool, one core each. The batches (and so every
    /// vector, to the last bit) depend only on the set of texts, not on their order: a catalog
    /// and the same tools pooled in another order get the same vectors, and one cache file
    /// (`embed_cache`). `progress` advances by the texts each finished batch stood for.
    pub fn embed_all(
        &self,
        texts: &[&str],
        progress: &dyn crate::progress::Progress,
    ) -> Result<Vec<f32>, String> {
        let all_ids = self.token_ids(texts)?;
        // Distinct piece sequences, each with the texts it stands for.
        let mut by_pieces: std::collections::BTreeMap<(usize, &[u32]), Vec<usize>> =
            std::collections::BTreeMap::new();
        for (i, ids) in all_ids.iter().enumerate() {
            by_pieces
                .entry((ids.len(), ids.as_slice()))
                .or_default()
                .push(i);
        }
        let (ids, users): (Vec<&[u32]>, Vec<Vec<usize>>) =
            by_pieces.into_iter().map(|((_, ids), u)| (ids, u)).unzip();
        let order: Vec<usize> = (0..ids.len()).collect();
        let mut batches: Vec<&[usize]> = Vec::new();
        let mut rest = order.as_slice();
        while !rest.is_empty() {
            let mut tokens = 0;
            let take = rest
                .iter()
                .take_while(|&&i| {
                    tokens += ids[i].len();
                    tokens <= BATCH_TOKENS
                })
                .count()
                .max(1);
            let (batch, tail) = rest.split_at(take);
            batches.push(batch);
            rest = tail;
        }
        // Longest batches first, so the last ones to finish are short.
        batches.reverse();
        let vectors: Vec<Vec<Vec<f32>>> = batches
            .par_iter()
            .map(|batch| {
                let seq: Vec<&[u32]> = batch.iter().map(|&i| ids[i]).collect();
                let rows = self.encoder.embed(&seq, Threads::Single);
                progress.advance(batch.iter().map(|&i| users[i].len() as u64).sum());
                rows
            })
            .collect();
        let mut matrix = vec![0f32; texts.len() * self.dim];
        for (batch, rows) in batches.iter().zip(vectors) {
            for (&u, row) in batch.iter().zip(rows) {
                for &i in &users[u] {
                    matrix[i * self.dim..(i + 1) * self.dim].copy_from_slice(&row);
                }
            }
        }
        Ok(matrix)
    }

    /// Word-piece ids of each text, with [CLS] and [SEP], truncated at [`MAX_TOKENS`]; only
    /// the [`tokenized_prefix`] of a text is tokenized (the same ids, bounded work).
    fn token_ids(&self, texts: &[&str]) -> Result<Vec<Vec<u32>>, String> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.iter().map(|t| tokenized_prefix(t)).collect(), true)
            .map_err(|e| format!("tokenizing failed: {e}"))?;
        Ok(encodings.iter().map(|e| e.get_ids().to_vec()).collect())
    }
}

/// The start of `text` that gives the same [`MAX_TOKENS`] word pieces as the whole: cut right
/// before the first ASCII space, tab, newline or punctuation mark that follows at least
/// `MAX_TOKENS` words. Why the ids are equal, for MiniLM's BERT normalizer, pre-tokenizer and
/// WordPiece: every ASCII punctuation mark is a word of its own, and every run of ASCII
/// letters and digits that starts the text or follows such a boundary starts a new word (the
/// normalizer removes neither, and changes no boundary); each word gives at least one piece
/// (`[UNK]` at worst), so the prefix gives at least `MAX_TOKENS` pieces, more than the 254
/// kept. A boundary ends the word before it and starts no combining sequence, so the words of
/// the prefix are the whole text's first words, normalized and split the same. A 50 MB
/// description was tokenized whole (5.6 GB) to keep 254 pieces.
pub(crate) fn tokenized_prefix(text: &str) -> &str {
    let mut words = 0usize;
    let mut after_boundary = true;
    for (i, &c) in text.as_bytes().iter().enumerate() {
        let punctuation = c.is_ascii_punctuation();
        let boundary = punctuation || matches!(c, b' ' | b'\t' | b'\n' | b'\r');
        if boundary && words >= MAX_TOKENS {
            // An ASCII byte: a character boundary.
            return &text[..i];
        }
        if punctuation || (after_boundary && c.is_ascii_alphanumeric()) {
            words += 1;
        }
        after_boundary = boundary;
    }
    text
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
    fn vectors_do_not_depend_on_the_order_of_the_texts() {
        let Some(model) = test_embedder() else { return };
        // Enough texts for several batches; equal lengths (ties), a repeated text, and two
        // texts with the same pieces once lowercased.
        let mut texts: Vec<String> = (0..400)
            .map(|i| format!("tool {} reads item {} of the list", i % 37, i % 11))
            .collect();
        texts.push("Send Mail".into());
        texts.push("send mail".into());
        let forward: Vec<&str> = texts.iter().map(String::as_str).collect();
        let mut backward = forward.clone();
        backward.reverse();
        let a = model.embed_all(&forward, &crate::progress::Quiet).unwrap();
        let b = model.embed_all(&backward, &crate::progress::Quiet).unwrap();
        let n = forward.len();
        for i in 0..n {
            let j = n - 1 - i;
            assert_eq!(
                a[i * 384..(i + 1) * 384],
                b[j * 384..(j + 1) * 384],
                "text {i}"
            );
        }
        assert_eq!(a[(n - 2) * 384..(n - 1) * 384], a[(n - 1) * 384..n * 384]);
    }

    /// Counts what is reported done.
    #[derive(Default)]
    struct Counted(std::sync::atomic::AtomicU64);

    impl crate::progress::Progress for Counted {
        fn phase(&self, _: &str, _: u64, _: crate::progress::Unit) {}
        fn step(&self, _: &str) {}
        fn advance(&self, n: u64) {
            self.0.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
        }
        fn note(&self, _: &str) {}
        fn warn(&self, _: &str) {}
        fn finish(&self) {}
    }

    #[test]
    fn batching_and_padding_do_not_change_vectors() {
        let Some(model) = test_embedder() else { return };
        let texts = [
            "send a message to a slack channel",
            "x",
            "read a file from disk and return its contents with line numbers",
        ];
        let done = Counted::default();
        let matrix = model.embed_all(&texts, &done).unwrap();
        assert_eq!(
            done.0.load(std::sync::atomic::Ordering::Relaxed),
            texts.len() as u64
        );
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

    /// The texts of the candle reference: a one-token text, two tool texts, one cut at
    /// [`MAX_TOKENS`].
    fn reference_texts() -> Vec<String> {
        vec![
            "x".into(),
            "Get the current weather in a city. Arguments: city, units.".into(),
            "slack send message. Send a message to a channel or a user.".into(),
            "search the web for recent news about rust ".repeat(40),
        ]
    }

    /// `fixtures/embed/candle-reference.json`: what candle's `BertModel` (the implementation
    /// this encoder replaced) computes for [`reference_texts`] on the pinned model — padded
    /// batch and mask, mean-pooled and normalised alike. Written by
    /// `TOOLBUDGET_WRITE_CANDLE_REFERENCE=1 cargo test --features candle-reference --lib
    /// candle_reference`; kept in the repository so that `cargo test` checks the encoder against
    /// candle without building candle (three crates, minutes of every cold build).
    #[derive(serde::Serialize, serde::Deserialize)]
    struct CandleReference {
        generated_by: String,
        model_sha256: String,
        texts: Vec<String>,
        vectors: Vec<Vec<f32>>,
    }

    const CANDLE_REFERENCE: &str = "fixtures/embed/candle-reference.json";

    fn max_diff(a: &[f32], b: &[f32]) -> f32 {
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0f32, f32::max)
    }

    /// The encoder against candle's vectors, in a batch and alone, to 1e-5.
    #[test]
    fn matches_candle_bert() {
        let Some(model) = test_embedder() else { return };
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(CANDLE_REFERENCE);
        let reference: CandleReference =
            serde_json::from_slice(&std::fs::read(&path).expect("the reference is committed"))
                .expect("the reference parses");
        assert_eq!(reference.texts, reference_texts());
        let weights = std::fs::read(model.dir().join("model.safetensors")).unwrap();
        assert_eq!(
            reference.model_sha256,
            hex(&sha2::Sha256::digest(&weights)),
            "the reference was computed on other weights: regenerate it (see CandleReference)"
        );
        let texts: Vec<&str> = reference.texts.iter().map(String::as_str).collect();
        let ids = model.token_ids(&texts).unwrap();
        assert_eq!(
            ids.iter().map(Vec::len).max(),
            Some(MAX_TOKENS),
            "the long text is cut at {MAX_TOKENS}"
        );
        let got = model.embed_all(&texts, &crate::progress::Quiet).unwrap();
        assert_eq!(reference.vectors.len(), texts.len());
        for (i, want) in reference.vectors.iter().enumerate() {
            assert_eq!(want.len(), 384);
            let diff = max_diff(want, &got[i * 384..(i + 1) * 384]);
            assert!(diff < 1e-5, "text {i} differs from candle by {diff}");
            let diff = max_diff(want, &model.embed_one(texts[i]).unwrap());
            assert!(diff < 1e-5, "text {i} alone differs from candle by {diff}");
        }
    }

    /// candle's `BertModel` computed now against the committed reference (or writing it, with
    /// `TOOLBUDGET_WRITE_CANDLE_REFERENCE=1`).
    #[cfg(feature = "candle-reference")]
    #[test]
    fn candle_reference_is_current() {
        use candle_core::{DType, Device, Tensor};
        use candle_nn::VarBuilder;
        use candle_transformers::models::bert::{BertModel, Config};
        let Some(model) = test_embedder() else { return };
        let dir = model.dir();
        let config: Config =
            serde_json::from_slice(&std::fs::read(dir.join("config.json")).unwrap()).unwrap();
        let weights = std::fs::read(dir.join("model.safetensors")).unwrap();
        let model_sha256 = hex(&sha2::Sha256::digest(&weights));
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &Device::Cpu).unwrap();
        let bert = BertModel::load(vb, &config).unwrap();
        let texts = reference_texts();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let ids = model.token_ids(&refs).unwrap();
        let len = ids.iter().map(Vec::len).max().unwrap();
        let mut flat = Vec::new();
        let mut mask = Vec::new();
        for row in &ids {
            flat.extend(row.iter().copied().chain(std::iter::repeat(0)).take(len));
            mask.extend((0..len).map(|i| u32::from(i < row.len())));
        }
        let t_ids = Tensor::from_vec(flat, (ids.len(), len), &Device::Cpu).unwrap();
        let t_mask = Tensor::from_vec(mask, (ids.len(), len), &Device::Cpu).unwrap();
        let hidden = bert
            .forward(&t_ids, &t_ids.zeros_like().unwrap(), Some(&t_mask))
            .unwrap();
        let m = t_mask.to_dtype(DType::F32).unwrap().unsqueeze(2).unwrap();
        let mean = hidden
            .broadcast_mul(&m)
            .unwrap()
            .sum(1)
            .unwrap()
            .broadcast_div(&m.sum(1).unwrap())
            .unwrap();
        let norm = mean.sqr().unwrap().sum_keepdim(1).unwrap().sqrt().unwrap();
        let vectors = mean.broadcast_div(&norm).unwrap().to_vec2::<f32>().unwrap();
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(CANDLE_REFERENCE);
        if std::env::var_os("TOOLBUDGET_WRITE_CANDLE_REFERENCE").is_some() {
            let reference = CandleReference {
                generated_by: "candle-transformers 0.11 BertModel, f32 on the CPU, mean-pooled \
                               over the attention mask and L2-normalised"
                    .into(),
                model_sha256,
                texts,
                vectors,
            };
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, crate::output::to_json(&reference)).unwrap();
            return;
        }
        let committed: CandleReference =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(committed.model_sha256, model_sha256);
        for (i, (a, b)) in committed.vectors.iter().zip(&vectors).enumerate() {
            let diff = max_diff(a, b);
            assert!(
                diff < 1e-6,
                "text {i}: candle now differs from the reference by {diff}"
            );
        }
    }

    #[test]
    fn the_tokenized_prefix_gives_the_same_ids() {
        let Some(model) = test_embedder() else { return };
        let texts = [
            "word ".repeat(2000),
            format!(
                "{}{}",
                "Créer un ticket, puis l'assigner. ".repeat(100),
                " ".repeat(100_000)
            ),
            "a,".repeat(5000),
            "日本語のテキスト and some words; ".repeat(200),
            format!("{} end", "x".repeat(300)).repeat(300),
            "\u{0301}e\u{0301}\ta.b\u{7}c\u{0b}d ".repeat(300),
            "short text".to_string(),
        ];
        for t in &texts {
            let cut = tokenized_prefix(t);
            let head: String = t.chars().take(40).collect();
            assert!(cut.len() < t.len() || t.len() < 2000, "{head:?}");
            let whole = model.tokenizer.encode(t.as_str(), true).unwrap();
            let prefix = model.tokenizer.encode(cut, true).unwrap();
            assert_eq!(whole.get_ids(), prefix.get_ids(), "{head:?}");
            if t.len() > 2000 {
                assert_eq!(whole.get_ids().len(), MAX_TOKENS, "{head:?}");
            }
        }
        // Fewer words than the cut needs: the whole text.
        let blank = format!("one{}two", " ".repeat(10_000));
        assert_eq!(tokenized_prefix(&blank), blank);
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
