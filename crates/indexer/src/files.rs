//! Reading the files a user or a bundle names: regular files only, never more than the bytes
//! they may hold. A named file could otherwise be a FIFO that never ends (a build that hangs
//! for ever), `/dev/zero` behind a symlink (gigabytes in seconds), a 3 GB sparse file, or, for
//! a file a bundle names, one outside the bundle's folder. Every command reads its
//! configuration, labelled questions and bundles through here.

use std::io::Read;
use std::path::Path;

use anyhow::{bail, Context, Result};

/// Whether a symbolic link is followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    /// The path a user named may be a link.
    Follow,
    /// A file the bundle names must be in its folder: a link is refused.
    Refuse,
}

/// Reads `path` when it is a regular file of at most `max` bytes.
pub fn read_bounded(path: &Path, max: u64, links: Links) -> Result<Vec<u8>> {
    let file = open(path, links).with_context(|| format!("opening {}", path.display()))?;
    let meta = file
        .metadata()
        .with_context(|| format!("reading {}", path.display()))?;
    if !meta.is_file() {
        bail!("{} is not a regular file", path.display());
    }
    if meta.len() > max {
        bail!(
            "{} is {} bytes; at most {max} were expected",
            path.display(),
            meta.len()
        );
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // A file that grows while read still stops at the bound.
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("reading {}", path.display()))?;
    if bytes.len() as u64 > max {
        bail!("{} grew past {max} bytes while read", path.display());
    }
    Ok(bytes)
}

/// A text file a user named (a configuration, labelled questions), as UTF-8 without a byte
/// order mark: a regular file of at most `max` bytes, the link followed. `what` names it in
/// errors ("configuration").
pub fn read_user_text(path: &Path, max: u64, what: &str) -> Result<String> {
    let bytes =
        read_bounded(path, max, Links::Follow).with_context(|| format!("reading the {what}"))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        anyhow::anyhow!(
            "the {what} {} is not UTF-8 text (byte {})",
            path.display(),
            e.utf8_error().valid_up_to()
        )
    })?;
    Ok(text
        .strip_prefix('\u{feff}')
        .map(str::to_owned)
        .unwrap_or(text))
}

#[cfg(unix)]
fn open(path: &Path, links: Links) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    // Non-blocking so that opening a FIFO returns at once (and is then refused as not a file).
    let mut flags = libc::O_NONBLOCK;
    if links == Links::Refuse {
        flags |= libc::O_NOFOLLOW;
    }
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(path)
}

#[cfg(not(unix))]
fn open(path: &Path, links: Links) -> std::io::Result<std::fs::File> {
    if links == Links::Refuse && std::fs::symlink_metadata(path)?.file_type().is_symlink() {
        return Err(std::io::Error::other("a symbolic link"));
    }
    std::fs::File::open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_within_their_bound_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let small = dir.path().join("small.bin");
        std::fs::write(&small, b"0123456789").unwrap();
        assert_eq!(read_bounded(&small, 10, Links::Refuse).unwrap().len(), 10);
        let err = read_bounded(&small, 9, Links::Refuse).unwrap_err();
        assert!(format!("{err:#}").contains("at most 9"), "{err:#}");

        // A huge sparse file is refused from its size, without reading it.
        let huge = dir.path().join("huge.bin");
        std::fs::File::create(&huge)
            .unwrap()
            .set_len(3 << 30)
            .unwrap();
        let t = std::time::Instant::now();
        assert!(read_bounded(&huge, 1 << 20, Links::Refuse).is_err());
        assert!(t.elapsed().as_secs() < 5);

        #[cfg(unix)]
        {
            let link = dir.path().join("link.bin");
            std::os::unix::fs::symlink(&small, &link).unwrap();
            assert!(read_bounded(&link, 100, Links::Refuse).is_err());
            assert_eq!(read_bounded(&link, 100, Links::Follow).unwrap().len(), 10);
            let zero = dir.path().join("zero.bin");
            std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
            assert!(read_bounded(&zero, 100, Links::Follow).is_err(), "a device");
            let fifo = dir.path().join("fifo.bin");
            let made = std::process::Command::new("mkfifo").arg(&fifo).status();
            assert!(made.unwrap().success());
            let err = read_bounded(&fifo, 100, Links::Follow).unwrap_err();
            assert!(format!("{err:#}").contains("not a regular file"), "{err:#}");
        }
    }

    #[test]
    fn user_text_is_utf8_named_in_errors_and_loses_its_bom() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("q.txt");
        std::fs::write(&p, "\u{feff}hello").unwrap();
        assert_eq!(read_user_text(&p, 100, "questions").unwrap(), "hello");
        std::fs::write(&p, b"\xff\xfe").unwrap();
        let err = format!("{:#}", read_user_text(&p, 100, "questions").unwrap_err());
        assert!(
            err.contains("questions") && err.contains("not UTF-8"),
            "{err}"
        );
        let missing = format!(
            "{:#}",
            read_user_text(&dir.path().join("none"), 100, "configuration").unwrap_err()
        );
        assert!(missing.contains("reading the configuration"), "{missing}");
    }
}
