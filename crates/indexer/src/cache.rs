//! The embedding cache that makes rebuilds incremental: vectors keyed by the prepared model's
//! sha256 and the sha256 of the exact text embedded. Unchanged chunks are never embedded again;
//! another model invalidates everything. Each entry carries a checksum of its key and vector:
//! a damaged entry (a flipped bit gives a finite, plausible, wrong vector) is embedded again.

use std::collections::HashMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

const CACHE_VERSION: u32 = 2;
/// Largest cache file read: about 650,000 sections of 384 values, far past any docs site.
const MAX_CACHE_BYTES: u64 = 1 << 30;

#[derive(Serialize, Deserialize)]
struct CacheFile {
    version: u32,
    model_sha256: String,
    /// Sorted by key, so the file is deterministic too.
    entries: Vec<Entry>,
}

#[derive(Serialize, Deserialize)]
struct Entry {
    key: [u8; 32],
    vector: Vec<f32>,
    /// [`checksum`] of the key and vector.
    check: u64,
}

/// The first 8 bytes of the sha256 of a key and its vector's little-endian bytes.
fn checksum(key: &[u8; 32], vector: &[f32]) -> u64 {
    let mut h = Sha256::new();
    h.update(key);
    for x in vector {
        h.update(x.to_le_bytes());
    }
    let d = h.finalize();
    u64::from_le_bytes(d[..8].try_into().expect("8 bytes of 32"))
}

/// Vectors of texts already embedded, named by their text's hash and by the model that made them: a rebuild embeds only what changed.
pub struct EmbeddingCache {
    model_sha256: String,
    entries: HashMap<[u8; 32], Vec<f32>>,
    /// Keys looked up or added in this build; only these are saved.
    live: HashMap<[u8; 32], ()>,
    dropped: usize,
}

/// The cache key of a text: its sha256.
pub fn text_key(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

impl EmbeddingCache {
    /// An empty cache for the model whose vectors id is `model_sha256`.
    pub fn empty(model_sha256: &str) -> Self {
        EmbeddingCache {
            model_sha256: model_sha256.to_string(),
            entries: HashMap::new(),
            live: HashMap::new(),
            dropped: 0,
        }
    }

    /// Loads the cache at `path`. A missing file is an empty cache; an unreadable one or one made
    /// by another model is discarded, with the reason returned for a warning.
    pub fn load(path: &Path, model_sha256: &str) -> (Self, Option<String>) {
        // Only a regular file of a sane size is read: a FIFO would block the build, a link to
        // /dev/zero would never end.
        match std::fs::metadata(path) {
            Ok(m) if !m.is_file() => {
                return (
                    Self::empty(model_sha256),
                    Some("cache is not a regular file; embedding everything".into()),
                )
            }
            Ok(m) if m.len() > MAX_CACHE_BYTES => {
                return (
                    Self::empty(model_sha256),
                    Some(format!(
                        "cache is {} bytes, more than {MAX_CACHE_BYTES}; embedding everything",
                        m.len()
                    )),
                )
            }
            _ => {}
        }
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return (Self::empty(model_sha256), None)
            }
            Err(e) => {
                return (
                    Self::empty(model_sha256),
                    Some(format!("cache unreadable ({e}); embedding everything")),
                )
            }
        };
        match postcard::from_bytes::<CacheFile>(&bytes) {
            Ok(f) if f.version == CACHE_VERSION && f.model_sha256 == model_sha256 => {
                let mut c = Self::empty(model_sha256);
                for e in f.entries {
                    if e.check == checksum(&e.key, &e.vector) {
                        c.entries.insert(e.key, e.vector);
                    } else {
                        c.dropped += 1;
                    }
                }
                (c, None)
            }
            Ok(f) if f.model_sha256 != model_sha256 => (
                Self::empty(model_sha256),
                Some("cache was made with another model; embedding everything".into()),
            ),
            _ => (
                Self::empty(model_sha256),
                Some("cache is corrupt or outdated; embedding everything".into()),
            ),
        }
    }

    /// The cached vector for `key`, if there is one of `dim` finite values; a damaged entry is
    /// dropped (and so embedded again), counted in [`Self::dropped`].
    pub fn get(&mut self, key: &[u8; 32], dim: usize) -> Option<Vec<f32>> {
        if self
            .entries
            .get(key)
            .is_some_and(|v| v.len() != dim || v.iter().any(|x| !x.is_finite()))
        {
            self.entries.remove(key);
            self.dropped += 1;
        }
        let v = self.entries.get(key).cloned();
        if v.is_some() {
            self.live.insert(*key, ());
        }
        v
    }

    /// Damaged entries (failed checksum, wrong length, non-finite values) dropped so far.
    pub fn dropped(&self) -> usize {
        self.dropped
    }

    /// Stores `vector` for the text whose [`text_key`] is `key`.
    pub fn insert(&mut self, key: [u8; 32], vector: Vec<f32>) {
        self.live.insert(key, ());
        self.entries.insert(key, vector);
    }

    /// Adds `other`'s entries that this cache lacks (another job's share of a split build).
    /// They are saved only if this build uses them.
    pub fn absorb(&mut self, other: EmbeddingCache) {
        self.dropped += other.dropped;
        for (key, vector) in other.entries {
            self.entries.entry(key).or_insert(vector);
        }
    }

    /// Writes the entries used by this build (stale ones are dropped) atomically.
    pub fn save(&self, path: &Path) -> anyhow::Result<()> {
        let mut entries: Vec<Entry> = self
            .live
            .keys()
            .filter_map(|k| {
                let vector = self.entries.get(k)?.clone();
                Some(Entry {
                    key: *k,
                    check: checksum(k, &vector),
                    vector,
                })
            })
            .collect();
        entries.sort_unstable_by_key(|e| e.key);
        let file = CacheFile {
            version: CACHE_VERSION,
            model_sha256: self.model_sha256.clone(),
            entries,
        };
        crate::write_atomic(path, &postcard::to_allocvec(&file)?)
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::EmbeddingCache;

    #[test]
    fn a_cache_that_is_not_a_regular_file_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo.cache");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let zero = dir.path().join("zero.cache");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        for path in [fifo, zero] {
            // Returns at once (a FIFO with no writer would block a read forever).
            let (c, warning) = EmbeddingCache::load(&path, "model");
            assert!(c.entries.is_empty());
            let warning = warning.expect("a warning");
            assert!(warning.contains("not a regular file"), "{warning}");
        }
    }
}
