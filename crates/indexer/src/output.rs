//! Writing outputs so that readers (and a crashed build) never see a half-written file.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};

/// Writes `bytes` to `path` through a temporary file in the same folder and a rename. Copies of
/// the old file compressed ahead (`path.br`, `path.gz`) are removed: servers prefer them, so
/// they would go on serving the old content.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut builder = tempfile::Builder::new();
    // Outputs are published: readable by a web server running as another user. 0666 is
    // narrowed by the umask as for any new file (0644 with the usual 022), not tempfile's 0600.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder
        .tempfile_in(dir)
        .with_context(|| format!("creating a temporary file in {}", dir.display()))?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path)
        .with_context(|| format!("renaming into {}", path.display()))?;
    remove_copies(path)
}

pub use lantern_engine::split_dir;

/// Writes a bundle's split form into `dir`: every shard (content-addressed: an unchanged one
/// keeps its name and its bytes), then the meta file, then removes shards of older builds.
/// A reader holding the old meta finds its shards until the new meta is in place.
pub fn write_split(dir: &Path, split: &lantern_engine::Split) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut keep = std::collections::HashSet::new();
    for (name, bytes) in &split.shards {
        let path = dir.join(name);
        let same = std::fs::metadata(&path).is_ok_and(|m| m.len() == bytes.len() as u64);
        if !same {
            write_atomic(&path, bytes)?;
        }
        keep.insert(name.clone());
    }
    write_atomic(&dir.join(lantern_engine::SPLIT_META), &split.meta)?;
    for entry in std::fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))? {
        let name = entry?.file_name().to_string_lossy().into_owned();
        let base = name
            .strip_suffix(".br")
            .or_else(|| name.strip_suffix(".gz"))
            .unwrap_or(&name);
        if is_shard_name(base) && !keep.contains(base) {
            remove(&dir.join(&name))?;
        }
    }
    Ok(())
}

/// A shard kind, `-`, 16 hex digits, `-` and a place in the group, then `.bin` (or, as bundle
/// format 5 wrote them, no place): only such files are removed.
fn is_shard_name(name: &str) -> bool {
    let Some(stem) = name.strip_suffix(".bin") else {
        return false;
    };
    let mut parts = stem.split('-');
    let (Some(kind), Some(hash)) = (parts.next(), parts.next()) else {
        return false;
    };
    let place = parts.next();
    matches!(kind, "terms" | "text" | "centroids" | "vectors")
        && hash.len() == 16
        && hash.bytes().all(|b| b.is_ascii_hexdigit())
        && place
            .is_none_or(|p| !p.is_empty() && p.len() <= 4 && p.bytes().all(|b| b.is_ascii_digit()))
        && parts.next().is_none()
}

/// Removes an output a build no longer makes (a query table after `query_table_rank = 0`,
/// say) and its precompressed copies; absent files are fine.
pub fn remove_stale(path: &Path) -> Result<()> {
    remove(path)?;
    remove_copies(path)
}

fn remove_copies(path: &Path) -> Result<()> {
    for ext in ["br", "gz"] {
        let mut stale = path.as_os_str().to_owned();
        stale.push(format!(".{ext}"));
        remove(Path::new(&stale))?;
    }
    Ok(())
}

fn remove(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("removing the stale file {}", path.display()))
        }
        _ => Ok(()),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn stale_precompressed_copies_go_with_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("search.lantern");
        for name in [
            "search.lantern",
            "search.lantern.br",
            "search.lantern.gz",
            "other.br",
        ] {
            std::fs::write(dir.path().join(name), b"old").unwrap();
        }
        write_atomic(&p, b"new").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        assert!(is_shard_name("terms-0123456789abcdef.bin"));
        assert!(is_shard_name("centroids-0123456789abcdef-0.bin"));
        assert!(is_shard_name("text-0123456789abcdef-15.bin"));
        assert!(!is_shard_name("text-0123456789abcdef-.bin"));
        assert!(!is_shard_name("text-0123456789abcdef-1-2.bin"));
        assert!(!is_shard_name("meta.bin") && !is_shard_name("notes-0123456789abcdef.bin"));
        assert!(!dir.path().join("search.lantern.br").exists());
        assert!(!dir.path().join("search.lantern.gz").exists());
        assert!(dir.path().join("other.br").exists());
    }

    #[test]
    fn outputs_are_readable_by_others_as_the_umask_allows() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.bin");
        write_atomic(&p, b"x").unwrap();
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        // Whatever the umask, the owner can write and the temp-file default (0600) is gone
        // unless the umask itself removes group and other bits.
        assert_eq!(mode & 0o600, 0o600);
        let umask_allows_read = {
            let probe = dir.path().join("probe");
            std::fs::write(&probe, b"").unwrap();
            std::fs::metadata(&probe).unwrap().permissions().mode() & 0o044
        };
        assert_eq!(mode & 0o044, umask_allows_read, "mode {mode:o}");
    }
}
