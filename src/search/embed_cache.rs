//! On-disk cache of document embeddings, so a second run over the same catalog does not run the
//! model again.
//!
//! Layout: one file per (model, document set), `DIR/embeddings/<model>-<docs>.f32`, where
//! `<model>` is the first 16 hex digits of the model fingerprint (sha256 of config, tokenizer
//! and weights) and `<docs>` the first 32 hex digits of sha256 over the per-document text
//! hashes, sorted: the same documents in another order (a catalog, and the same tools pooled
//! behind another query set's own catalog) share one file, as `Embedder::embed_all` gives
//! them the same vectors in any order; a load maps each document to its row by its hash. A
//! changed model or any changed document text gives another file name, so stale vectors are
//! never read (old files are simply left; deleting the folder is always safe).
//! One file per catalog (rather than one per document) keeps a 10,000-tool load to a single
//! sequential read.
//!
//! File format, little-endian:
//! `b"TBEMB001"`, model fingerprint (64 hex bytes), dim (u32), count (u32),
//! count × sha256(document text), count × dim f32 vectors, then sha256 of everything before it.
//! Files are written with `output::write_atomic` (temp file + rename), so a crash mid-write
//! leaves the old state, never a partial file; the trailing checksum and the per-document
//! hashes are checked on every load anyway, and any mismatch counts as a miss.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::embed::hex;
use crate::error::Error;

const MAGIC: &[u8; 8] = b"TBEMB001";

/// The cache folder: the explicit option, else env `TOOLBUDGET_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/toolbudget`, else `$HOME/.cache/toolbudget`; `None` when none is known.
pub fn resolve_cache_dir(explicit: Option<&Path>) -> Option<PathBuf> {
    let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    explicit
        .map(Path::to_path_buf)
        .or_else(|| env("TOOLBUDGET_CACHE_DIR").map(PathBuf::from))
        .or_else(|| env("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("toolbudget")))
        .or_else(|| env("HOME").map(|d| PathBuf::from(d).join(".cache").join("toolbudget")))
}

/// What happened to the cache while building an index (not part of `settings()`: it differs
/// between the first and the second run, and results must not).
#[derive(Debug, Clone, PartialEq)]
pub enum CacheStatus {
    /// Vectors read from this file.
    Hit(PathBuf),
    /// Vectors computed and saved here.
    Written(PathBuf),
    /// Vectors computed; saving failed (read-only folder, disk full). Results are unaffected.
    WriteFailed(String),
    /// No cache folder configured or known.
    Disabled,
}

/// A cache folder for one model.
#[derive(Debug, Clone)]
pub struct EmbedCache {
    dir: PathBuf,
    model_fingerprint: String,
}

/// The hashes identifying one set of document texts.
#[derive(Debug, Clone)]
pub struct DocumentKey {
    text_hashes: Vec<[u8; 32]>,
    set_hash: String,
}

impl DocumentKey {
    pub fn new<S: AsRef<str>>(texts: &[S]) -> DocumentKey {
        Self::hashed(texts, b"")
    }

    /// The key of a set of query texts: hashed under a prefix of their own, so that a query
    /// set never shares a file with a catalog whose documents read the same (queries are
    /// embedded one at a time, documents in batches).
    pub fn queries<S: AsRef<str>>(texts: &[S]) -> DocumentKey {
        Self::hashed(texts, b"query\n")
    }

    fn hashed<S: AsRef<str>>(texts: &[S], prefix: &[u8]) -> DocumentKey {
        let text_hashes: Vec<[u8; 32]> = texts
            .iter()
            .map(|t| {
                let mut h = Sha256::new();
                h.update(prefix);
                h.update(t.as_ref().as_bytes());
                h.finalize().into()
            })
            .collect();
        let mut sorted = text_hashes.clone();
        sorted.sort_unstable();
        let mut set = Sha256::new();
        for h in &sorted {
            set.update(h);
        }
        DocumentKey {
            text_hashes,
            set_hash: hex(&set.finalize()),
        }
    }
}

impl EmbedCache {
    pub fn new(dir: &Path, model_fingerprint: &str) -> EmbedCache {
        EmbedCache {
            dir: dir.to_path_buf(),
            model_fingerprint: model_fingerprint.to_string(),
        }
    }

    /// The file holding the vectors of these documents under this model.
    pub fn path_for(&self, key: &DocumentKey) -> PathBuf {
        let model = &self.model_fingerprint[..self.model_fingerprint.len().min(16)];
        self.dir
            .join("embeddings")
            .join(format!("{model}-{}.f32", &key.set_hash[..32]))
    }

    /// The cached `count × dim` matrix, or `None` when absent, stale or damaged.
    pub fn load(&self, key: &DocumentKey, dim: usize) -> Option<Vec<f32>> {
        let bytes = std::fs::read(self.path_for(key)).ok()?;
        self.decode(&bytes, key, dim)
    }

    fn decode(&self, bytes: &[u8], key: &DocumentKey, dim: usize) -> Option<Vec<f32>> {
        let count = key.text_hashes.len();
        let header = MAGIC.len() + 64 + 4 + 4;
        let expected_len = header + count * 32 + count * dim * 4 + 32;
        if bytes.len() != expected_len || &bytes[..8] != MAGIC {
            return None;
        }
        let (body, checksum) = bytes.split_at(bytes.len() - 32);
        if Sha256::digest(body).as_slice() != checksum {
            return None;
        }
        if &body[8..72] != self.model_fingerprint.as_bytes() {
            return None;
        }
        let read_u32 =
            |at: usize| u32::from_le_bytes([body[at], body[at + 1], body[at + 2], body[at + 3]]);
        if read_u32(72) as usize != dim || read_u32(76) as usize != count {
            return None;
        }
        let hashes = &body[header..header + count * 32];
        let floats = &body[header + count * 32..];
        // The file's rows may be in another order: each document's row by its text hash.
        let rows: std::collections::HashMap<&[u8], usize> = hashes
            .chunks_exact(32)
            .enumerate()
            .map(|(row, h)| (h, row))
            .collect();
        let mut matrix = Vec::with_capacity(count * dim);
        for want in &key.text_hashes {
            let row = *rows.get(want.as_slice())?;
            matrix.extend(
                floats[row * dim * 4..(row + 1) * dim * 4]
                    .chunks_exact(4)
                    .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
            );
        }
        Some(matrix)
    }

    /// Saves the matrix atomically; returns the file written.
    pub fn store(&self, key: &DocumentKey, dim: usize, matrix: &[f32]) -> Result<PathBuf, Error> {
        let path = self.path_for(key);
        let bytes = self.encode(key, dim, matrix);
        crate::output::write_atomic(&path, &bytes)?;
        Ok(path)
    }

    fn encode(&self, key: &DocumentKey, dim: usize, matrix: &[f32]) -> Vec<u8> {
        let count = key.text_hashes.len();
        assert_eq!(matrix.len(), count * dim);
        let mut out = Vec::with_capacity(80 + count * 32 + matrix.len() * 4 + 32);
        out.extend_from_slice(MAGIC);
        let mut fingerprint = [b'0'; 64];
        let fp = self.model_fingerprint.as_bytes();
        fingerprint[..fp.len().min(64)].copy_from_slice(&fp[..fp.len().min(64)]);
        out.extend_from_slice(&fingerprint);
        out.extend_from_slice(&(dim as u32).to_le_bytes());
        out.extend_from_slice(&(count as u32).to_le_bytes());
        for h in &key.text_hashes {
            out.extend_from_slice(h);
        }
        for x in matrix {
            out.extend_from_slice(&x.to_le_bytes());
        }
        let checksum = Sha256::digest(&out);
        out.extend_from_slice(&checksum);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FP: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    fn sample() -> (Vec<String>, Vec<f32>) {
        let texts = vec!["read a file".to_string(), "send mail".to_string()];
        let matrix = vec![0.5, -0.25, 1.0, 0.125, 3.0, -7.5];
        (texts, matrix)
    }

    #[test]
    fn round_trips_exact_floats() {
        let dir = tempfile::tempdir().unwrap();
        let cache = EmbedCache::new(dir.path(), FP);
        let (texts, matrix) = sample();
        let key = DocumentKey::new(&texts);
        assert_eq!(cache.load(&key, 3), None);
        let path = cache.store(&key, 3, &matrix).unwrap();
        assert!(path.starts_with(dir.path().join("embeddings")));
        assert_eq!(cache.load(&key, 3), Some(matrix));
    }

    #[test]
    fn changed_text_or_model_misses() {
        let dir = tempfile::tempdir().unwrap();
        let (texts, matrix) = sample();
        let key = DocumentKey::new(&texts);
        EmbedCache::new(dir.path(), FP)
            .store(&key, 3, &matrix)
            .unwrap();
        let edited = DocumentKey::new(&["read a file", "send email"]);
        assert_eq!(EmbedCache::new(dir.path(), FP).load(&edited, 3), None);
        let other_model = FP.replace('0', "f");
        assert_eq!(
            EmbedCache::new(dir.path(), &other_model).load(&key, 3),
            None
        );
        // Same first 16 digits of the fingerprint, so the same file name: the header decides.
        let same_prefix = format!("{}{}", &FP[..16], "f".repeat(48));
        assert_eq!(
            EmbedCache::new(dir.path(), &same_prefix).load(&key, 3),
            None
        );
    }

    #[test]
    fn damaged_files_are_misses_not_errors() {
        let dir = tempfile::tempdir().unwrap();
        let cache = EmbedCache::new(dir.path(), FP);
        let (texts, matrix) = sample();
        let key = DocumentKey::new(&texts);
        let path = cache.store(&key, 3, &matrix).unwrap();
        let good = std::fs::read(&path).unwrap();
        // A torn write (what write_atomic prevents) and a flipped bit are both rejected.
        std::fs::write(&path, &good[..good.len() / 2]).unwrap();
        assert_eq!(cache.load(&key, 3), None);
        let mut flipped = good.clone();
        flipped[100] ^= 1;
        std::fs::write(&path, &flipped).unwrap();
        assert_eq!(cache.load(&key, 3), None);
        std::fs::write(&path, &good).unwrap();
        assert_eq!(cache.load(&key, 3), Some(matrix));
        // The atomic writer leaves no temp files behind.
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    #[test]
    fn the_same_documents_in_another_order_share_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let cache = EmbedCache::new(dir.path(), FP);
        let (texts, matrix) = sample();
        let key = DocumentKey::new(&texts);
        let path = cache.store(&key, 3, &matrix).unwrap();
        let swapped = DocumentKey::new(&[texts[1].as_str(), texts[0].as_str()]);
        assert_eq!(cache.path_for(&swapped), path);
        // Rows follow the asking order.
        assert_eq!(
            cache.load(&swapped, 3),
            Some(vec![0.125, 3.0, -7.5, 0.5, -0.25, 1.0])
        );
        // A document set that is a part of the stored one is another file.
        let part = DocumentKey::new(&[texts[0].as_str()]);
        assert_ne!(cache.path_for(&part), path);
        assert_eq!(cache.load(&part, 3), None);
    }

    #[test]
    fn explicit_dir_wins() {
        let p = Path::new("/tmp/x");
        assert_eq!(resolve_cache_dir(Some(p)), Some(p.to_path_buf()));
    }
}
