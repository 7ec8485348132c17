//! Model folders on disk: where the model is, and its files read and checked against the
//! manifest. The contract itself ([`Manifest`]) lives in `lantern-engine`, which checks a
//! model against a bundle before anything downloads it.

use std::path::{Path, PathBuf};

use crate::digest::sha256_hex;
use lantern_engine::{Manifest, MANIFEST_FILE};

use crate::embed::Embedder;
use crate::error::{Error, Result};

/// Environment variable naming the model folder when no flag does.
pub const MODEL_DIR_ENV: &str = "LANTERN_MODEL_DIR";
/// The model folder when neither flag nor environment names one, relative to the working
/// directory (the repository root, where `models/fetch.sh` prepares it).
pub const DEFAULT_MODEL_DIR: &str = "models/minilm";

/// The model folder to use: the flag if given, else `$LANTERN_MODEL_DIR`, else
/// [`DEFAULT_MODEL_DIR`].
pub fn model_dir(flag: Option<&Path>) -> PathBuf {
    if let Some(p) = flag {
        return p.to_path_buf();
    }
    match std::env::var_os(MODEL_DIR_ENV) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => PathBuf::from(DEFAULT_MODEL_DIR),
    }
}

/// A model read and verified against its manifest: the packed model and, for a pack published
/// without its word rows, the row files beside it. Index time and query time run this one
/// model (Lantern's own encoder), natively and in browsers alike, so documents and questions
/// are embedded by the same code, bit for bit.
pub struct Model {
    /// The contract.
    pub manifest: Manifest,
    /// The tokenizer, as `tokenizer.json` (carried in the pack).
    pub tokenizer: Vec<u8>,
    /// The packed model's bytes as the manifest names them: whole, or without its word rows.
    packed: Vec<u8>,
    /// The word-row files of a pack published without them, by shard.
    rows: Vec<(usize, String, Vec<u8>)>,
    /// Where the model was read from, for messages.
    origin: String,
    /// The folder, when the model was read from one.
    dir: Option<PathBuf>,
}

const HINT: &str = "run `bash models/fetch.sh` in a checkout, or pass --model-dir";

impl Model {
    /// Reads `dir/manifest.json` and the files it names, checking their sha256 sums. `dir` is
    /// a model folder as `models/fetch.sh` prepares it (a whole pack) or as a site publishes
    /// it (a pack and its word-row files).
    pub fn open(dir: &Path) -> Result<Model> {
        let read = |name: &str| {
            std::fs::read(dir.join(name)).map_err(|e| {
                Error::Io(format!(
                    "reading {}: {e} ({HINT})",
                    dir.join(name).display()
                ))
            })
        };
        let mut m = Model::load(&dir.display().to_string(), &read)?;
        m.dir = Some(dir.to_path_buf());
        Ok(m)
    }

    /// Reads a model from files given by name (`read`), `manifest.json` first: a folder, or
    /// the files a program carries. `origin` names the source in messages.
    pub fn load(origin: &str, read: &dyn Fn(&str) -> Result<Vec<u8>>) -> Result<Model> {
        let manifest = Manifest::from_json(&read(MANIFEST_FILE)?)?;
        manifest.validate()?;
        let Some(entry) = &manifest.packed else {
            return Err(Error::Manifest(format!(
                "the manifest in {origin} names no packed model ({HINT})"
            )));
        };
        let packed = read(&entry.file)?;
        if sha256_hex(&packed) != entry.sha256 {
            return Err(Error::Mismatch(format!(
                "{} in {origin} does not match the manifest's sha256 ({HINT})",
                entry.file
            )));
        }
        let opened = crate::pack::open_packed(&packed)?;
        let mut rows = Vec::new();
        for shard in opened.words.absent() {
            let name = opened.words.file_name(shard).unwrap_or_default();
            // Checked against the pack's sha256 when the embedder takes it.
            rows.push((shard, name.clone(), read(&name)?));
        }
        Ok(Model {
            manifest,
            tokenizer: opened.tokenizer_json,
            packed,
            rows,
            origin: origin.to_string(),
            dir: None,
        })
    }

    /// Where the model was read from.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The folder the model was read from, if it was.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// The embedder, holding every word row: what embeds the chunks at build time and the
    /// questions natively, as a reader's browser embeds them.
    pub fn embedder(&self) -> Result<Embedder> {
        let mut e = Embedder::from_packed(&self.manifest, &self.packed)?;
        for (shard, _, bytes) in &self.rows {
            e.add_word_rows(*shard, bytes)?;
        }
        Ok(e)
    }

    /// The model as a website publishes it: the pack without its word rows and the rows'
    /// files (name, bytes), which the pack names and checks by their sha256.
    pub fn published_pack(&self) -> Result<(Vec<u8>, Vec<crate::pack::NamedFile>)> {
        if self.rows.is_empty() {
            return crate::pack::split_packed(&self.packed);
        }
        let rows = self.rows.iter().map(|(_, n, b)| (n.clone(), b.clone()));
        Ok((self.packed.clone(), rows.collect()))
    }

    /// What the vectors this model makes are named by in caches: the sha256 of the pack
    /// without its word rows (which pins every row's file). The same model read whole or as
    /// published has the same identity.
    pub fn vectors_id(&self) -> Result<String> {
        Ok(sha256_hex(&self.published_pack()?.0))
    }

    /// The packed model's bytes as the manifest names them.
    pub fn packed_bytes(&self) -> &[u8] {
        &self.packed
    }
}

/// Lantern's folder in the user's cache: `$XDG_CACHE_HOME/lantern`, else `~/.cache/lantern`. A
/// relative `XDG_CACHE_HOME` is ignored, as the XDG spec says (it would put caches wherever
/// the command happens to run). `None` when there is no home folder either.
pub fn user_cache_dir() -> Option<std::path::PathBuf> {
    cache_dir_from(std::env::var_os("XDG_CACHE_HOME"), std::env::var_os("HOME"))
}

fn cache_dir_from(
    xdg: Option<std::ffi::OsString>,
    home: Option<std::ffi::OsString>,
) -> Option<std::path::PathBuf> {
    let base = xdg
        .map(std::path::PathBuf::from)
        .filter(|d| d.is_absolute())
        .or_else(|| home.map(|h| std::path::PathBuf::from(h).join(".cache")))?;
    Some(base.join("lantern"))
}

#[cfg(test)]
mod cache_dir_tests {
    use super::cache_dir_from;
    use std::path::PathBuf;

    #[test]
    fn only_an_absolute_xdg_cache_home_is_used() {
        let dir =
            |x: Option<&str>, h: Option<&str>| cache_dir_from(x.map(Into::into), h.map(Into::into));
        assert_eq!(
            dir(Some("/c"), Some("/h")),
            Some(PathBuf::from("/c/lantern"))
        );
        for ignored in ["", "rel/cache", "./c"] {
            assert_eq!(
                dir(Some(ignored), Some("/h")),
                Some(PathBuf::from("/h/.cache/lantern")),
                "{ignored:?}"
            );
        }
        assert_eq!(dir(None, None), None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_wins_over_the_default() {
        assert_eq!(model_dir(Some(Path::new("/x"))), PathBuf::from("/x"));
    }
}
