//! The word-embedding table, kept outside the graph in shards of rows.
//!
//! The table is half of the model's weights (30,522 rows of 384 values for MiniLM) and a query
//! reads a dozen of its rows. So the packed graph starts after the lookup (its `word_rows`
//! input), the embedder looks the rows up itself, and a website publishes the table as small
//! files named by their content that a browser fetches as its queries need them
//! ([`split_packed`]); a whole pack, as the indexer reads it, holds every shard.
//!
//! A shard's file: `magic "LANTERNR" | format version u32 LE | postcard Weights` (its rows,
//! grouped and scaled as in the pack). Rows are decoded exactly as the whole table was, so the
//! vectors are those of the graph that looked the rows up itself.

use serde::{Deserialize, Serialize};
use serde_bytes::ByteBuf;
use sha2::{Digest, Sha256};

use super::{decode, model_err, Decoded, PackSpec, Weights, PACK_VERSION};
use crate::error::Result;

const SHARD_MAGIC: &[u8; 8] = b"LANTERNR";
/// Rows per shard: about 55 KB each at 4 bits a value, 120 files for MiniLM's 30,522 rows. A
/// question's dozen word pieces fall in about eight shards (231 labelled questions): some
/// 460 KB before its first answer with the model, against 130 KB at 64 rows a shard, which
/// made a site publish 477 files. Over a visit the bytes are the same: with a service worker,
/// every shard is fetched for offline use after the first answer.
pub(super) const ROWS_PER_SHARD: u32 = 256;

/// The table as a pack stores it.
#[derive(Serialize, Deserialize)]
pub struct WordTable {
    /// Rows (one per word piece).
    pub rows: u32,
    /// Values a row.
    pub cols: u32,
    /// Rows a shard.
    pub rows_per_shard: u32,
    /// One per `rows_per_shard` rows, in row order.
    pub shards: Vec<ShardEntry>,
}

/// One shard of rows: its file's sha256, and the file in a whole pack.
#[derive(Serialize, Deserialize)]
pub struct ShardEntry {
    /// sha256 of the shard's file: its name and its check.
    pub sha256: [u8; 32],
    /// The file itself in a whole pack; none in a pack published without its rows.
    pub file: Option<ByteBuf>,
}

/// A shard's file name, from its sha256 (content-addressed: cached for ever).
fn shard_name(sha256: &[u8; 32]) -> String {
    lantern_engine::hashed_name("rows", &hex::encode(sha256), "bin")
}

/// Writes one shard's file (when packing).
fn shard_file(w: &Weights) -> Result<(Vec<u8>, [u8; 32])> {
    let mut out = SHARD_MAGIC.to_vec();
    out.extend_from_slice(&PACK_VERSION.to_le_bytes());
    out.extend(postcard::to_allocvec(w).map_err(|e| model_err(e.to_string()))?);
    let sha = Sha256::digest(&out).into();
    Ok((out, sha))
}

/// Splits a whole table's quantized weights into shards (when packing).
pub fn shard(w: &Weights, spec: PackSpec) -> Result<WordTable> {
    let (rows, cols) = (w.rows as usize, w.cols as usize);
    let bits = cols * spec.table_bits as usize;
    if w.per_column || !bits.is_multiple_of(8) {
        return Err(model_err(
            "the word-embedding table's rows do not fill whole bytes",
        ));
    }
    let (row_bytes, row_scales) = (bits / 8, cols.div_ceil(spec.group as usize));
    let per = ROWS_PER_SHARD as usize;
    let mut shards = Vec::with_capacity(rows.div_ceil(per));
    for start in (0..rows).step_by(per) {
        let end = rows.min(start + per);
        let part = Weights {
            rows: (end - start) as u32,
            cols: w.cols,
            per_column: false,
            codes: w.codes[start * row_bytes..end * row_bytes].to_vec(),
            scales: w.scales[start * row_scales..end * row_scales].to_vec(),
        };
        let (file, sha256) = shard_file(&part)?;
        shards.push(ShardEntry {
            sha256,
            file: Some(ByteBuf::from(file)),
        });
    }
    Ok(WordTable {
        rows: w.rows,
        cols: w.cols,
        rows_per_shard: ROWS_PER_SHARD,
        shards,
    })
}

/// The word-embedding rows an embedder holds, and the files the others are in.
pub struct WordRows {
    spec: PackSpec,
    rows: usize,
    cols: usize,
    per_shard: usize,
    shards: Vec<Slot>,
}

struct Slot {
    sha256: [u8; 32],
    rows: Option<Decoded>,
}

impl std::fmt::Debug for WordRows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let held = self.shards.iter().filter(|s| s.rows.is_some()).count();
        f.debug_struct("WordRows")
            .field("rows", &self.rows)
            .field("cols", &self.cols)
            .field("shards", &self.shards.len())
            .field("held", &held)
            .finish()
    }
}

impl WordRows {
    /// Checks a pack's table and decodes the shards it holds.
    pub(super) fn new(t: WordTable, spec: PackSpec) -> Result<WordRows> {
        let bad = |m: &str| Err(model_err(format!("packed model: its word table {m}")));
        let (rows, cols, per) = (t.rows as usize, t.cols as usize, t.rows_per_shard as usize);
        if rows == 0 || cols == 0 || per == 0 || per.saturating_mul(cols) > super::MAX_VALUES {
            return bad("has an out-of-bounds shape");
        }
        if t.shards.len() != rows.div_ceil(per) {
            return bad("has the wrong number of shards");
        }
        let mut words = WordRows {
            spec,
            rows,
            cols,
            per_shard: per,
            shards: Vec::with_capacity(t.shards.len()),
        };
        let mut files = Vec::new();
        for entry in t.shards {
            files.push(entry.file);
            words.shards.push(Slot {
                sha256: entry.sha256,
                rows: None,
            });
        }
        for (i, file) in files.into_iter().enumerate() {
            if let Some(file) = file {
                words.add(i, &file)?;
            }
        }
        Ok(words)
    }

    /// Vector dimensions of a row.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// The shards holding `ids`' rows that are not held yet, in order, each once.
    pub fn missing(&self, ids: &[u32]) -> Vec<usize> {
        let mut out: Vec<usize> = ids
            .iter()
            .map(|&id| id as usize / self.per_shard)
            .filter(|&s| self.shards.get(s).is_some_and(|slot| slot.rows.is_none()))
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Every shard not held.
    pub fn absent(&self) -> Vec<usize> {
        (0..self.shards.len())
            .filter(|&s| self.shards[s].rows.is_none())
            .collect()
    }

    /// The file name of shard `shard` (relative to the model's manifest once published).
    pub fn file_name(&self, shard: usize) -> Option<String> {
        self.shards.get(shard).map(|s| shard_name(&s.sha256))
    }

    /// Checks shard `shard`'s file against its sha256 and decodes it.
    pub fn add(&mut self, shard: usize, file: &[u8]) -> Result<()> {
        let bad = |m: String| Err(model_err(format!("word rows, shard {shard}: {m}")));
        let (rows, cols, per) = (self.rows, self.cols, self.per_shard);
        let Some(slot) = self.shards.get_mut(shard) else {
            return bad("there is no such shard".into());
        };
        let sum: [u8; 32] = Sha256::digest(file).into();
        if sum != slot.sha256 {
            return bad("the file does not match the pack's sha256".into());
        }
        if file.len() < 12 || &file[..8] != SHARD_MAGIC {
            return bad("not a Lantern word-row file".into());
        }
        let version = u32::from_le_bytes([file[8], file[9], file[10], file[11]]);
        if version != PACK_VERSION {
            return bad(format!("format {version}, this build reads {PACK_VERSION}"));
        }
        let w: Weights = match postcard::from_bytes(&file[12..]) {
            Ok(w) => w,
            Err(e) => return bad(format!("damaged ({e})")),
        };
        let want = per.min(rows - shard * per);
        if w.per_column || w.rows as usize != want || w.cols as usize != cols {
            return bad("its shape does not match the table".into());
        }
        slot.rows = Some(decode(&w, self.spec)?);
        Ok(())
    }

    /// The rows of `ids`, one after another: each row's int8 values times its scale, as the
    /// graph computed them when it held the table.
    pub(crate) fn lookup(&self, ids: &[u32]) -> Result<Vec<f32>> {
        let mut out = Vec::with_capacity(ids.len() * self.cols);
        for &id in ids {
            let id = id as usize;
            if id >= self.rows {
                return Err(model_err(format!("token {id} is outside the word table")));
            }
            let Some(d) = &self.shards[id / self.per_shard].rows else {
                return Err(model_err(format!(
                    "the word rows of token {id} are not loaded (shard {})",
                    id / self.per_shard
                )));
            };
            let r = id % self.per_shard;
            let s = d.scale[r];
            out.extend(
                d.q[r * self.cols..(r + 1) * self.cols]
                    .iter()
                    .map(|&q| q as f32 * s),
            );
        }
        Ok(out)
    }

    /// Drops the held shards' files from a table: what a website publishes as the pack.
    pub(super) fn strip(t: &mut WordTable) -> Vec<super::NamedFile> {
        let mut files: Vec<super::NamedFile> = Vec::new();
        for entry in &mut t.shards {
            if let Some(file) = entry.file.take() {
                let name = shard_name(&entry.sha256);
                // Equal rows make equal files, one name.
                if !files.iter().any(|(n, _)| *n == name) {
                    files.push((name, file.into_vec()));
                }
            }
        }
        files
    }
}
