//! Content-addressed file names, made and recognised in one place. A file named by its
//! content never changes under that name, so hosts and the service worker may keep it for
//! ever: the model files and word rows (`stem-<12 hex of sha256>.ext`), the wasm modules
//! (the same, named by web/tools/content-address.sh at build time) and a split bundle's
//! shards (`kind-<16 hex of xxh3>-<place in its group>.bin`). `lantern serve` marks these
//! immutable; web/widget/sw.js serves them cache first by the same rule, and both are
//! checked against one table of cases (tests/content-addressed.json).

/// Hex digits of a sha256 kept in a file name.
pub const NAME_HEX: usize = 12;

/// `stem-<first 12 hex digits of sha256_hex>.ext`.
pub fn hashed_name(stem: &str, sha256_hex: &str, ext: &str) -> String {
    let hex = sha256_hex.get(..NAME_HEX).unwrap_or(sha256_hex);
    format!("{stem}-{hex}.{ext}")
}

/// `kind-<hash as 16 hex digits>-<member>.bin`: shard `member` of the group whose content
/// hashes to `hash`.
pub(crate) fn shard_name(kind: &str, hash: u64, member: usize) -> String {
    format!("{kind}-{hash:016x}-{member}.bin")
}

/// Whether the last segment of `path` is content-addressed: `stem-<12 to 64 lowercase hex>.ext`
/// or a shard's `kind-<hex>-<n>.ext`, with a lowercase alphanumeric extension; never a page
/// (`notes-20241231235959.html` is a date).
pub fn is_content_addressed(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let Some((stem, ext)) = name.rsplit_once('.') else {
        return false;
    };
    let ext_ok = !ext.is_empty()
        && ext
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        && ext != "html"
        && ext != "htm";
    // A shard's place in its group follows its hash.
    let stem = match stem.rsplit_once('-') {
        Some((head, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => head,
        _ => stem,
    };
    let hash = stem.rsplit_once('-').map_or("", |(_, h)| h);
    ext_ok
        && (NAME_HEX..=64).contains(&hash.len())
        && hash
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cases web/widget/sw.js is tested against too.
    const CASES: &str = include_str!("../../../tests/content-addressed.json");

    fn cases(key: &str) -> Vec<String> {
        let v: serde_json::Value = serde_json::from_str(CASES).unwrap();
        v[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect()
    }

    #[test]
    fn content_addressed_names_are_told_apart() {
        let (yes, no) = (cases("yes"), cases("no"));
        assert!(yes.len() >= 5 && no.len() >= 10);
        for p in yes {
            assert!(is_content_addressed(&p), "{p}");
        }
        for p in no {
            assert!(!is_content_addressed(&p), "{p}");
        }
    }

    #[test]
    fn the_names_made_here_are_recognised_here() {
        let sha = "0123456789abcdef".repeat(4);
        assert_eq!(
            hashed_name("model", &sha, "pack"),
            "model-0123456789ab.pack"
        );
        for name in [
            hashed_name("model", &sha, "pack"),
            hashed_name("rows", &sha, "bin"),
            shard_name("terms", 0xfeed, 3),
        ] {
            assert!(is_content_addressed(&format!("/x/{name}")), "{name}");
        }
        assert_eq!(shard_name("text", 1, 12), "text-0000000000000001-12.bin");
    }
}
