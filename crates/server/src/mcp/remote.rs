//! Where `lantern mcp` gets its bundle: a local file, or a deployed site's bundle fetched once
//! over HTTP(S), checked, and kept in a cache on disk.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::{bail, Context, Result};
use futures_util::StreamExt;
use sha2::{Digest, Sha256};

use lantern_engine::Bundle;

/// A remote bundle larger than this is refused before it is held in memory: the cap of a
/// bundle read from disk.
const MAX_REMOTE_BYTES: u64 = crate::files::MAX_BUNDLE_FILE_BYTES;
/// How long fetching a remote bundle may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(120);

/// A bundle's bytes and where they came from.
pub struct Loaded {
    /// The bundle file.
    pub bytes: Vec<u8>,
    /// The path or URL given.
    pub source: String,
    /// When the file was written (local) or last fetched (remote).
    pub modified: Option<SystemTime>,
}

/// Is `source` an HTTP(S) URL rather than a path?
pub fn is_url(source: &str) -> bool {
    let lower = source.to_ascii_lowercase();
    lower.starts_with("https://") || lower.starts_with("http://")
}

/// The default cache folder: `bundles/` in [`lantern_embedder::user_cache_dir`].
pub fn default_cache_dir() -> Option<PathBuf> {
    Some(lantern_embedder::user_cache_dir()?.join("bundles"))
}

/// Reads a local bundle, or returns the cached copy of a remote one (fetching it when there is
/// none, when `refresh` is set, or when the cached copy is damaged).
pub async fn load(source: &str, cache_dir: Option<&Path>, refresh: bool) -> Result<Loaded> {
    if !is_url(source) {
        let path = Path::new(source);
        let bytes = if path.is_file() {
            crate::files::read_bounded(path, MAX_REMOTE_BYTES, crate::files::Links::Follow)?
        } else {
            // The split form (a published site's only one): its shards joined into one file.
            crate::Searcher::open(path, None)?
                .engine()
                .bundle()
                .to_bytes()?
        };
        let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok();
        return Ok(Loaded {
            bytes,
            source: source.to_string(),
            modified,
        });
    }
    let url = reqwest::Url::parse(source)
        .map_err(|_| anyhow::anyhow!("the bundle address is not a valid URL"))?;
    // The address shown everywhere (messages, corpus_status, hit links): no credentials.
    let shown = without_credentials(&url);
    let source = shown.as_str();
    let cached = cache_dir.map(|d| d.join(cache_name(shown.as_str())));
    if let (Some(path), false) = (&cached, refresh) {
        if let Ok(bytes) =
            crate::files::read_bounded(path, MAX_REMOTE_BYTES, crate::files::Links::Follow)
        {
            // A damaged copy is fetched again rather than trusted.
            if Bundle::from_bytes(&bytes).is_ok() {
                let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok();
                return Ok(Loaded {
                    bytes,
                    source: source.to_string(),
                    modified,
                });
            }
        }
    }
    let bytes = match fetch(&url, &shown, MAX_REMOTE_BYTES).await? {
        Some(bytes) => bytes,
        // A published site has the split form only: `search.lantern.d/`.
        None => fetch_split(&url, &shown).await?,
    };
    Bundle::from_bytes(&bytes)
        .with_context(|| format!("the bundle at {source} is not a usable Lantern bundle"))?;
    if let Some(path) = &cached {
        // The cache only saves a later fetch: failing to write it is not an error.
        if let Err(e) = write_cache(path, &bytes) {
            eprintln!(
                "warning: could not cache the bundle at {}: {e:#}",
                path.display()
            );
        }
    }
    Ok(Loaded {
        bytes,
        source: source.to_string(),
        modified: Some(SystemTime::now()),
    })
}

/// The cache file for a URL: named by its hash, so any URL is a safe file name.
fn cache_name(url: &str) -> String {
    let digest = Sha256::digest(url.as_bytes());
    let hex: String = digest[..12].iter().map(|b| format!("{b:02x}")).collect();
    format!("{hex}.lantern")
}

/// `url` without a user name or password.
pub fn without_credentials(url: &reqwest::Url) -> reqwest::Url {
    let mut shown = url.clone();
    // Only fails for URLs that cannot have credentials, which then have none.
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown
}

/// Shards of a split bundle fetched at once.
const SHARD_FETCHES: usize = 8;

/// `url`'s split form, `URL.d/meta.bin` and the shards it lists, joined into one bundle file.
async fn fetch_split(url: &reqwest::Url, shown: &reqwest::Url) -> Result<Vec<u8>> {
    let in_folder = |name: &str| {
        let mut u = url.clone();
        u.set_path(&format!(
            "{}{}/{name}",
            url.path(),
            lantern_engine::SPLIT_DIR_SUFFIX
        ));
        u.set_query(None);
        u
    };
    let meta_url = in_folder(lantern_engine::SPLIT_META);
    let Some(meta) = fetch(&meta_url, &without_credentials(&meta_url), MAX_REMOTE_BYTES).await?
    else {
        bail!("fetching {shown}: the server answered 404 Not Found (and has no split form at {shown}.d/)");
    };
    let mut bundle = Bundle::from_bytes(&meta)
        .with_context(|| format!("the bundle at {shown} is not a usable Lantern bundle"))?;
    let wanted: Vec<(String, u64)> = bundle
        .shard_files()
        .into_iter()
        .map(|name| {
            let max = bundle.shard_max_len(&name).unwrap_or(0);
            (name, max)
        })
        .collect();
    let total: u64 = wanted.iter().map(|(_, max)| max).sum();
    if total > MAX_REMOTE_BYTES {
        bail!("the bundle at {shown} is larger than {MAX_REMOTE_BYTES} bytes");
    }
    let mut shards = futures_util::stream::iter(wanted.into_iter().map(|(name, max)| {
        let shard_url = in_folder(&name);
        async move {
            let shown = without_credentials(&shard_url);
            match fetch(&shard_url, &shown, max).await? {
                Some(bytes) => Ok((name, bytes)),
                None => bail!("fetching {shown}: the server answered 404 Not Found"),
            }
        }
    }))
    .buffer_unordered(SHARD_FETCHES);
    while let Some(shard) = shards.next().await {
        let (name, bytes) = shard?;
        bundle
            .add_shard(&name, &bytes)
            .with_context(|| format!("the shard {name} of the bundle at {shown}"))?;
    }
    Ok(bundle.to_bytes()?)
}

/// Fetches `url` (its credentials, if any, sent as basic authentication), at most `max` bytes;
/// `None` when the server has no such file (404). Messages name `shown`.
async fn fetch(url: &reqwest::Url, shown: &reqwest::Url, max: u64) -> Result<Option<Vec<u8>>> {
    let client = reqwest::Client::builder()
        .timeout(FETCH_TIMEOUT)
        .build()
        .context("starting the HTTP client")?;
    let res = client
        .get(url.clone())
        .send()
        .await
        .map_err(|e| anyhow::Error::new(e.without_url()))
        .with_context(|| format!("fetching {shown}"))?;
    let status = res.status();
    if status == reqwest::StatusCode::NOT_FOUND {
        return Ok(None);
    }
    if !status.is_success() {
        bail!("fetching {shown}: the server answered {status}");
    }
    if res.content_length().is_some_and(|n| n > max) {
        bail!("{shown} is larger than {max} bytes");
    }
    let mut bytes = Vec::new();
    let mut body = res.bytes_stream();
    while let Some(chunk) = body.next().await {
        let chunk = chunk
            .map_err(|e| anyhow::Error::new(e.without_url()))
            .with_context(|| format!("reading {shown}"))?;
        if bytes.len() as u64 + chunk.len() as u64 > max {
            bail!("{shown} is larger than {max} bytes");
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(Some(bytes))
}

/// Writes the cache file whole or not at all.
fn write_cache(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().context("cache path without a folder")?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let tmp = path.with_extension("part");
    std::fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("renaming to {}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_never_shown() {
        let url = reqwest::Url::parse("https://user:secret@docs.example.com/s.lantern").unwrap();
        assert_eq!(
            without_credentials(&url).as_str(),
            "https://docs.example.com/s.lantern"
        );
    }

    #[test]
    fn urls_and_paths_are_told_apart() {
        assert!(is_url("https://docs.example.com/search.lantern"));
        assert!(is_url("HTTP://localhost:8080/x.lantern"));
        assert!(!is_url("out/site.lantern"));
        assert!(!is_url("/abs/https.lantern"));
    }

    #[test]
    fn cache_names_are_plain_and_distinct() {
        let a = cache_name("https://a.example/search.lantern");
        let b = cache_name("https://b.example/search.lantern");
        assert_ne!(a, b);
        assert!(a
            .chars()
            .all(|c| c.is_ascii_hexdigit() || c == '.' || c.is_ascii_lowercase()));
        assert!(a.ends_with(".lantern"));
    }
}
