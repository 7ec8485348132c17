//! Finding the documents to index: globs decide what is in scope; anything in scope that cannot
//! be read as text is skipped with a reason instead of failing the build.

use std::path::Path;

use anyhow::{Context, Result};
use globset::{Glob, GlobSet, GlobSetBuilder};

use crate::config::{Config, Input};
use crate::extract::HtmlSkip;

/// A document that will be indexed.
pub struct SourceFile {
    /// Path relative to the docs folder, `/`-separated.
    pub rel: String,
    /// The file's text (UTF-8).
    pub text: String,
}

/// A file in scope that was left out, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Skipped {
    /// Path relative to the docs folder.
    pub path: String,
    /// Why it was left out.
    pub reason: SkipReason,
}

/// Files named per reason in [`skipped_lines`]; the rest are counted.
pub const SKIPS_NAMED_PER_REASON: usize = 5;

/// What to tell the owner about the files left out: each named with its reason, at most
/// [`SKIPS_NAMED_PER_REASON`] per kind of reason, then how many more (Django's manual skips 150
/// generated source listings; naming each buried every other line of the build).
pub fn skipped_lines(skipped: &[Skipped]) -> Vec<String> {
    let mut kinds: Vec<(std::mem::Discriminant<SkipReason>, usize)> = Vec::new();
    let mut lines = Vec::new();
    for s in skipped {
        let kind = std::mem::discriminant(&s.reason);
        let seen = match kinds.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, n)) => {
                *n += 1;
                *n
            }
            None => {
                kinds.push((kind, 1));
                1
            }
        };
        if seen <= SKIPS_NAMED_PER_REASON {
            lines.push(format!("skipped {}: {}", s.path, s.reason));
        }
    }
    for (kind, n) in kinds {
        if n > SKIPS_NAMED_PER_REASON {
            let first = skipped
                .iter()
                .find(|s| std::mem::discriminant(&s.reason) == kind)
                .expect("a skip of this kind");
            lines.push(format!(
                "skipped {} more files like {} ({})",
                n - SKIPS_NAMED_PER_REASON,
                first.path,
                first.reason
            ));
        }
    }
    lines
}

/// The named reasons a file in scope is not indexed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SkipReason {
    /// The file or folder could not be read.
    #[error("unreadable: {0}")]
    Unreadable(String),
    /// Larger than `max_file_bytes`.
    #[error("too large ({size} bytes; the limit is {limit}, see max_file_bytes)")]
    TooLarge {
        /// The file's size.
        size: u64,
        /// The configured limit.
        limit: u64,
    },
    /// NUL bytes near the start: not a text file.
    #[error("binary file (contains NUL bytes)")]
    Binary,
    /// Not UTF-8.
    #[error("not valid UTF-8 (invalid byte at offset {0})")]
    NotUtf8(usize),
    /// The file's name is not UTF-8, so it has no URL.
    #[error("the file name is not valid UTF-8")]
    NonUtf8Name,
    /// The parser failed on it.
    #[error("could not be parsed")]
    Unparsable,
    /// An index of the docs a generator writes (Sphinx's genindex.html, py-modindex.html).
    #[error("a generated index of the docs, not a page of them")]
    GeneratedIndex,
    /// Nothing left to index after extraction (empty, or headings only).
    #[error("no text to index")]
    NoText,
    /// A built page that asks not to be indexed, or cannot be.
    #[error(transparent)]
    Html(#[from] HtmlSkip),
    /// A folder's `index.html` that repeats a page beside it (mdBook copies its first
    /// chapter there): indexing both would show every result twice.
    #[error("repeats {0}")]
    Duplicate(String),
}

/// The files read, those left out, and what the folder turned out to hold.
pub struct Collected {
    /// The files in scope, in path order.
    pub files: Vec<SourceFile>,
    /// Files left out, each with its reason.
    pub skipped: Vec<Skipped>,
    /// Markdown or HTML (never `Auto`).
    pub input: Input,
}

/// What a folder holds: markdown if any file in scope is markdown, else built HTML if any page
/// is, else markdown (and the build will say nothing was found).
pub fn detect_input(root: &Path, config: &Config) -> Result<Input> {
    if config.input != Input::Auto {
        return Ok(config.input);
    }
    let found = kinds(root, &config.exclude)?;
    // A built site can carry a stray README.md (a Sphinx theme's, under _static/), and docs
    // sources an HTML partial or two: the kind with more pages is what the folder is.
    Ok(if found.html > found.markdown {
        Input::Html
    } else {
        Input::Markdown
    })
}

/// Whether `root` holds markdown and no HTML page: docs sources, not a built site (what
/// `lantern build SITE` refuses to publish into).
pub fn holds_markdown_only(root: &Path) -> bool {
    kinds(root, &[]).is_ok_and(|k| k.markdown > 0 && k.html == 0)
}

/// How many pages of each kind a folder holds, by the default include globs.
struct Kinds {
    markdown: usize,
    html: usize,
}

/// One walk for both questions.
fn kinds(root: &Path, exclude: &[String]) -> Result<Kinds> {
    let exclude = globset(exclude)?;
    let markdown = globset(&Input::Markdown.default_include())?;
    let html = globset(&Input::Html.default_include())?;
    let mut found = Kinds {
        markdown: 0,
        html: 0,
    };
    for entry in walkdir::WalkDir::new(root).into_iter().flatten() {
        let Ok(rel) = entry.path().strip_prefix(root) else {
            continue;
        };
        let Some(rel) = rel.to_str() else { continue };
        let rel = rel.replace('\\', "/");
        if !entry.file_type().is_file() || exclude.is_match(&rel) {
            continue;
        }
        found.markdown += markdown.is_match(&rel) as usize;
        found.html += html.is_match(&rel) as usize;
    }
    Ok(found)
}

fn globset(globs: &[String]) -> Result<GlobSet> {
    let mut b = GlobSetBuilder::new();
    for g in globs {
        b.add(Glob::new(g).with_context(|| format!("invalid glob {g:?}"))?);
    }
    Ok(b.build()?)
}

/// Reads every in-scope file under `root`, in path order (so builds are deterministic).
pub fn collect(root: &Path, config: &Config) -> Result<Collected> {
    if !root.is_dir() {
        anyhow::bail!("{} is not a folder", root.display());
    }
    let input = detect_input(root, config)?;
    let include = if config.include.is_empty() {
        globset(&input.default_include())?
    } else {
        globset(&config.include)?
    };
    let mut excludes = config.exclude.clone();
    excludes.extend(input.default_exclude());
    let exclude = globset(&excludes)?;
    let generated = globset(&input.generated_pages())?;
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    for entry in walkdir::WalkDir::new(root).sort_by_file_name() {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                let path = e
                    .path()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default();
                skipped.push(Skipped {
                    path,
                    reason: SkipReason::Unreadable(e.to_string()),
                });
                continue;
            }
        };
        if !entry.file_type().is_file() {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(root) else {
            continue;
        };
        let parts: Option<Vec<&str>> = rel.components().map(|c| c.as_os_str().to_str()).collect();
        let Some(parts) = parts else {
            skipped.push(Skipped {
                path: rel.to_string_lossy().into_owned(),
                reason: SkipReason::NonUtf8Name,
            });
            continue;
        };
        let rel = parts.join("/");
        if !include.is_match(&rel) || exclude.is_match(&rel) {
            continue;
        }
        if generated.is_match(&rel) {
            skipped.push(Skipped {
                path: rel,
                reason: SkipReason::GeneratedIndex,
            });
            continue;
        }
        match read_text(entry.path(), config.max_file_bytes) {
            Ok(text) => files.push(SourceFile { rel, text }),
            Err(reason) => skipped.push(Skipped { path: rel, reason }),
        }
    }
    // Two sources that become one page would overwrite each other on the site while the
    // bundle kept both, pointing results at anchors that do not exist.
    let mut urls: std::collections::HashMap<String, &str> = std::collections::HashMap::new();
    for f in &files {
        if let Some(other) = urls.insert(config.page_url(&f.rel), &f.rel) {
            anyhow::bail!(
                "{other} and {} both become the page {}; rename or exclude one of them",
                f.rel,
                config.page_url(&f.rel)
            );
        }
    }
    Ok(Collected {
        files,
        skipped,
        input,
    })
}

/// `bytes` decoded as UTF-16 when they open with its byte order mark (`None` when they do
/// not; `Some(None)` when they do but are not valid UTF-16).
fn utf16_with_bom(bytes: &[u8]) -> Option<Option<String>> {
    let little = match bytes {
        [0xFF, 0xFE, ..] => true,
        [0xFE, 0xFF, ..] => false,
        _ => return None,
    };
    let body = &bytes[2..];
    if !body.len().is_multiple_of(2) {
        return Some(None);
    }
    let units = body.chunks_exact(2).map(|p| {
        if little {
            u16::from_le_bytes([p[0], p[1]])
        } else {
            u16::from_be_bytes([p[0], p[1]])
        }
    });
    Some(
        char::decode_utf16(units)
            .collect::<Result<String, _>>()
            .ok(),
    )
}

/// The file as text, or why it cannot be indexed.
fn read_text(path: &Path, max_bytes: u64) -> std::result::Result<String, SkipReason> {
    let unreadable = |e: std::io::Error| SkipReason::Unreadable(e.to_string());
    let len = std::fs::metadata(path).map_err(unreadable)?.len();
    if len > max_bytes {
        return Err(SkipReason::TooLarge {
            size: len,
            limit: max_bytes,
        });
    }
    let bytes = std::fs::read(path).map_err(unreadable)?;
    // UTF-16 with its byte order mark (some Windows editors save HTML so): text, not binary.
    if let Some(text) = utf16_with_bom(&bytes) {
        return text.ok_or(SkipReason::NotUtf8(0));
    }
    if bytes.iter().take(8192).any(|&b| b == 0) {
        return Err(SkipReason::Binary);
    }
    let text =
        String::from_utf8(bytes).map_err(|e| SkipReason::NotUtf8(e.utf8_error().valid_up_to()))?;
    Ok(text
        .strip_prefix('\u{feff}')
        .map(str::to_owned)
        .unwrap_or(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_skips_for_one_reason_are_counted_not_listed() {
        let mut skipped: Vec<Skipped> = (0..150)
            .map(|i| Skipped {
                path: format!("_modules/m{i}.html"),
                reason: SkipReason::GeneratedIndex,
            })
            .collect();
        skipped.insert(
            3,
            Skipped {
                path: "empty.md".into(),
                reason: SkipReason::NoText,
            },
        );
        let lines = skipped_lines(&skipped);
        assert_eq!(lines.len(), SKIPS_NAMED_PER_REASON + 2, "{lines:#?}");
        assert!(lines.contains(&"skipped empty.md: no text to index".to_string()));
        assert_eq!(
            lines.last().unwrap(),
            "skipped 145 more files like _modules/m0.html (a generated index of the docs, not a page of them)"
        );
    }

    #[test]
    fn generators_pages_that_are_not_docs_are_left_out_of_a_built_site() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("api")).unwrap();
        for f in [
            "index.html",
            "404.html",
            "genindex.html",
            "py-modindex.html",
            "api/genindex.html",
            "api/client.html",
        ] {
            std::fs::write(dir.path().join(f), "<html><body><h1>x</h1></body></html>").unwrap();
        }
        // Sphinx's highlighted sources, and a theme's README among its static files.
        std::fs::create_dir_all(dir.path().join("_modules/pkg")).unwrap();
        std::fs::write(
            dir.path().join("_modules/pkg/core.html"),
            "<html>code</html>",
        )
        .unwrap();
        std::fs::create_dir_all(dir.path().join("_static/font")).unwrap();
        std::fs::write(dir.path().join("_static/font/README.md"), "# Font").unwrap();
        let c = collect(dir.path(), &Config::default()).unwrap();
        assert_eq!(
            c.input,
            Input::Html,
            "a stray README does not make a built site markdown"
        );
        let rels: Vec<&str> = c.files.iter().map(|f| f.rel.as_str()).collect();
        assert_eq!(rels, ["api/client.html", "index.html"]);
        // The generated indexes are named skips; the error page is left out quietly.
        let skipped: Vec<(&str, String)> = c
            .skipped
            .iter()
            .map(|s| (s.path.as_str(), s.reason.to_string()))
            .collect();
        assert_eq!(skipped.len(), 4, "{skipped:?}");
        assert!(skipped
            .iter()
            .all(|(p, why)| p.ends_with(".html") && why.contains("generated index")));
    }

    #[test]
    fn utf16_pages_with_a_bom_are_read_as_text() {
        let dir = tempfile::tempdir().unwrap();
        let page = "<html><body><h1>Größe</h1><p>text</p></body></html>";
        let mut le = vec![0xFF, 0xFE];
        le.extend(page.encode_utf16().flat_map(u16::to_le_bytes));
        let mut be = vec![0xFE, 0xFF];
        be.extend(page.encode_utf16().flat_map(u16::to_be_bytes));
        std::fs::write(dir.path().join("le.html"), le).unwrap();
        std::fs::write(dir.path().join("be.html"), be).unwrap();
        // A lone surrogate is no text: a named skip, not a panic.
        std::fs::write(dir.path().join("bad.html"), [0xFF, 0xFE, 0x00, 0xD8]).unwrap();
        let c = collect(dir.path(), &Config::default()).unwrap();
        let texts: Vec<&str> = c.files.iter().map(|f| f.text.as_str()).collect();
        assert_eq!(texts, [page, page]);
        assert_eq!(c.skipped.len(), 1, "{:?}", c.skipped);
    }

    #[test]
    fn docs_sources_with_an_html_partial_stay_markdown() {
        let dir = tempfile::tempdir().unwrap();
        for f in ["index.md", "guide.md", "main.html"] {
            std::fs::write(dir.path().join(f), "# x\n\ntext\n").unwrap();
        }
        let c = collect(dir.path(), &Config::default()).unwrap();
        assert_eq!(c.input, Input::Markdown);
        assert!(!holds_markdown_only(dir.path()));
    }
}
