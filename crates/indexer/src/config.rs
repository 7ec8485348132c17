//! Build configuration: `lantern.toml` in the docs folder (all keys optional), overridden by
//! command-line flags.

use std::path::Path;

use anyhow::{Context, Result};
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use serde::Deserialize;

/// Everything but RFC 3986's unreserved characters is encoded in a path segment.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// The settings file read from the docs folder.
pub const CONFIG_FILE: &str = "lantern.toml";

/// How a page's URL derives from its source path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum UrlStyle {
    /// `guide/install.md` -> `guide/install.html`; `README.md`/`index.md` -> `index.html` (mdBook).
    #[default]
    Html,
    /// `guide/install.md` -> `guide/install/`; `index.md` -> `./` (mkdocs, Hugo).
    Directory,
}

/// What the docs folder holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Input {
    /// Markdown if the folder has any markdown file, else built HTML.
    #[default]
    Auto,
    /// Markdown sources (`**/*.md`, `**/*.markdown`).
    Markdown,
    /// A site generator's built HTML (`**/*.html`, `**/*.htm`); page URLs are the files' paths.
    Html,
}

/// How heading anchors are made from heading text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum SlugStyle {
    /// GitHub: Unicode-lowercased, punctuation dropped, spaces to `-`, `-1`, `-2` for repeats.
    #[default]
    Github,
    /// mdBook: like GitHub but lowercases ASCII only.
    Mdbook,
}

/// A site's settings (`lantern.toml`, then flags).
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Markdown sources or built HTML.
    pub input: Input,
    /// Globs (relative to the docs folder) of files to index; empty means the input's own
    /// (`**/*.md` and `**/*.markdown`, or `**/*.html` and `**/*.htm`).
    pub include: Vec<String>,
    /// Globs of files to leave out, applied after `include`.
    pub exclude: Vec<String>,
    /// Prefix of every page URL, e.g. `/docs/` or `https://example.org/book/`.
    pub base_url: String,
    /// How page URLs are made from file paths.
    pub urls: UrlStyle,
    /// How heading anchors are made.
    pub slugs: SlugStyle,
    /// Files larger than this are skipped with a warning.
    pub max_file_bytes: u64,
    /// Best dense cosine under which search says "no good match"; unset, the model's
    /// calibrated threshold (its manifest) applies. See the evaluation docs.
    pub abstain_cosine: Option<f32>,
    /// Language of pages whose front matter names none (a BCP 47 tag such as `en` or `de`):
    /// it picks the stemmer.
    pub language: String,
    /// Values per term of the query table written beside the bundle (approximate meaning
    /// before the model loads); 0 writes none.
    pub query_table_rank: usize,
    /// Vector partitions (k-means clusters a query reads only the nearest of); 0 lets the
    /// build decide: one up to 4,096 chunks, about one per 64 chunks beyond.
    pub vector_partitions: usize,
    /// Partitions a query reads; 0 for the default (16).
    pub vector_probe: u32,
    /// Words readers type that the docs say otherwise: a query word (the key) also matches
    /// the words of each value. One way; declare both for both ways.
    pub synonyms: std::collections::BTreeMap<String, Vec<String>>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            input: Input::Auto,
            include: Vec::new(),
            exclude: vec!["**/node_modules/**".into(), "**/.*/**".into()],
            base_url: "/".into(),
            urls: UrlStyle::Html,
            slugs: SlugStyle::Github,
            max_file_bytes: 4 * 1024 * 1024,
            abstain_cosine: None,
            language: "en".into(),
            query_table_rank: 128,
            vector_partitions: 0,
            vector_probe: 0,
            synonyms: Default::default(),
        }
    }
}

impl std::str::FromStr for UrlStyle {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "html" => Ok(UrlStyle::Html),
            "directory" => Ok(UrlStyle::Directory),
            _ => Err(format!("unknown URL style {s:?} (html or directory)")),
        }
    }
}

impl std::str::FromStr for Input {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "auto" => Ok(Input::Auto),
            "markdown" => Ok(Input::Markdown),
            "html" => Ok(Input::Html),
            _ => Err(format!("unknown input {s:?} (auto, markdown or html)")),
        }
    }
}

impl Input {
    /// The files this input reads when `include` names none.
    pub fn default_include(self) -> Vec<String> {
        let globs: &[&str] = match self {
            Input::Html => &["**/*.html", "**/*.htm"],
            Input::Auto | Input::Markdown => &["**/*.md", "**/*.markdown"],
        };
        globs.iter().map(|g| g.to_string()).collect()
    }

    /// Pages generators write that index the docs rather than being part of them: skipped by
    /// name (Sphinx's indexes of terms and modules, and its `_modules/` pages of highlighted
    /// source code; its search page says noindex itself, and its `_sources/` copies are not
    /// HTML).
    pub fn generated_pages(self) -> Vec<String> {
        match self {
            Input::Html => ["genindex.html", "py-modindex.html", "_modules/**"]
                .iter()
                .flat_map(|f| [f.to_string(), format!("**/{f}")])
                .collect(),
            Input::Auto | Input::Markdown => Vec::new(),
        }
    }

    /// What generators write that is not a page of the docs.
    pub fn default_exclude(self) -> Vec<String> {
        match self {
            Input::Html => vec!["404.html".into(), "**/404.html".into()],
            Input::Auto | Input::Markdown => Vec::new(),
        }
    }
}

impl std::str::FromStr for SlugStyle {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "github" => Ok(SlugStyle::Github),
            "mdbook" => Ok(SlugStyle::Mdbook),
            _ => Err(format!("unknown slug style {s:?} (github or mdbook)")),
        }
    }
}

/// Most bytes a configuration may have: a real one is a few hundred (a long synonym list a
/// few dozen KB); `/dev/zero` named as one must not fill the memory.
pub const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

impl Config {
    /// Reads the docs folder's own `path` (`lantern.toml`), or the defaults when there is none.
    pub fn load(path: &Path) -> Result<Config> {
        if std::fs::symlink_metadata(path).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
        {
            return Ok(Config::default());
        }
        Self::load_named(path)
    }

    /// Reads a configuration the user named (`--config`): one that does not exist is an error,
    /// as the base URL and synonyms it was meant to carry would otherwise be silently dropped.
    pub fn load_named(path: &Path) -> Result<Config> {
        let text = crate::files::read_user_text(path, MAX_CONFIG_BYTES, "configuration")?;
        let config: Config =
            toml::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
        config
            .validate()
            .with_context(|| format!("in {}", path.display()))?;
        Ok(config)
    }

    /// Refuses values that would silently break search: a threshold that is not a cosine
    /// (NaN would turn "no good match" off), a zero size limit, control characters in URLs.
    pub fn validate(&self) -> Result<()> {
        if let Some(t) = self.abstain_cosine {
            if !(t.is_finite() && (-1.0..=1.0).contains(&t)) {
                anyhow::bail!("abstain_cosine must be a number from -1 to 1, not {t}");
            }
        }
        if self.max_file_bytes == 0 {
            anyhow::bail!("max_file_bytes must be at least 1");
        }
        if self.query_table_rank > 384 {
            anyhow::bail!(
                "query_table_rank must be at most 384 (0 for no query table), not {}",
                self.query_table_rank
            );
        }
        if self.vector_partitions > 1 << 20 {
            anyhow::bail!(
                "vector_partitions must be at most {} (0 to let the build decide), not {}",
                1 << 20,
                self.vector_partitions
            );
        }
        self.validate_synonyms()?;
        if !lantern_engine::is_safe_link(&self.base_url) {
            anyhow::bail!(
                "base_url must be a path (/docs/) or an http(s) URL (https://example.com/docs/), not {:?}",
                self.base_url
            );
        }
        Ok(())
    }

    /// Where the page built from `rel` (a `/`-separated path relative to the docs folder) lives
    /// in the site, as a plain path without the base URL: `guide/install.html`, `guide/`. A
    /// built HTML page stays where it is, a folder's `index.html` named by the folder.
    pub fn page_path(&self, rel: &str) -> String {
        if is_html_path(rel) {
            let (dir, name) = rel.rsplit_once('/').map_or(("", rel), |(d, n)| (d, n));
            let lower = name.to_ascii_lowercase();
            return match (lower == "index.html" || lower == "index.htm", dir) {
                (true, "") => String::new(),
                (true, d) => format!("{d}/"),
                (false, _) => rel.to_string(),
            };
        }
        let stem = rel.rsplit_once('.').map(|(s, _)| s).unwrap_or(rel);
        let (dir, name) = match stem.rsplit_once('/') {
            Some((d, n)) => (format!("{d}/"), n),
            None => (String::new(), stem),
        };
        let index = name.eq_ignore_ascii_case("readme") || name.eq_ignore_ascii_case("index");
        match (self.urls, index) {
            (UrlStyle::Html, true) => format!("{dir}index.html"),
            (UrlStyle::Html, false) => format!("{dir}{name}.html"),
            (UrlStyle::Directory, true) => dir,
            (UrlStyle::Directory, false) => format!("{dir}{name}/"),
        }
    }

    /// The URL of the page built from `rel`: the base URL and the page's path, percent-encoded
    /// so that names with spaces, `#`, `?` or `%` stay one working link.
    pub fn page_url(&self, rel: &str) -> String {
        let mut base = self.base_url.clone();
        if !base.ends_with('/') {
            base.push('/');
        }
        let path = self.page_path(rel);
        let encoded: Vec<String> = path
            .split('/')
            .map(|seg| utf8_percent_encode(seg, SEGMENT).to_string())
            .collect();
        format!("{base}{}", encoded.join("/"))
    }
}

/// Bounds on `[synonyms]`: a bundle's header carries them, and every query reads them.
const MAX_SYNONYM_KEYS: usize = 10_000;
const MAX_SYNONYM_VALUES: usize = 16;
const MAX_SYNONYM_BYTES: usize = 100;

impl Config {
    fn validate_synonyms(&self) -> Result<()> {
        if self.synonyms.len() > MAX_SYNONYM_KEYS {
            anyhow::bail!(
                "[synonyms] has {} keys; at most {MAX_SYNONYM_KEYS}",
                self.synonyms.len()
            );
        }
        for (key, values) in &self.synonyms {
            // A key is matched against one word of a query: "foo-bar" or "<script>" would
            // be split into other words and never match.
            let one_word = !key.is_empty() && key.chars().all(|c| c.is_alphanumeric() || c == '_');
            if !one_word || key.len() > MAX_SYNONYM_BYTES {
                anyhow::bail!(
                    "[synonyms] key {key:?} must be one word (letters, digits or _) of at most {MAX_SYNONYM_BYTES} bytes"
                );
            }
            if values.is_empty() || values.len() > MAX_SYNONYM_VALUES {
                anyhow::bail!(
                    "[synonyms] {key:?} needs 1 to {MAX_SYNONYM_VALUES} values, not {}",
                    values.len()
                );
            }
            if let Some(v) = values
                .iter()
                .find(|v| v.trim().is_empty() || v.len() > MAX_SYNONYM_BYTES)
            {
                anyhow::bail!(
                    "[synonyms] {key:?} has the value {v:?}: each must hold a word and at most {MAX_SYNONYM_BYTES} bytes"
                );
            }
        }
        Ok(())
    }

    /// `[synonyms]` as the bundle writer takes them.
    pub fn synonym_list(&self) -> Vec<(String, Vec<String>)> {
        self.synonyms
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }
}

/// Is this source path a built HTML page (rather than markdown)?
pub fn is_html_path(rel: &str) -> bool {
    let lower = rel.to_ascii_lowercase();
    lower.ends_with(".html") || lower.ends_with(".htm")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_follow_the_chosen_style() {
        let mut c = Config {
            base_url: "/book".into(),
            ..Config::default()
        };
        assert_eq!(c.page_url("ch01.md"), "/book/ch01.html");
        assert_eq!(c.page_url("guide/README.md"), "/book/guide/index.html");
        c.urls = UrlStyle::Directory;
        assert_eq!(c.page_url("guide/install.md"), "/book/guide/install/");
        assert_eq!(c.page_url("index.md"), "/book/");
        c.urls = UrlStyle::Html;
        assert_eq!(
            c.page_url("my page #1?.md"),
            "/book/my%20page%20%231%3F.html"
        );
        assert_eq!(c.page_path("my page #1?.md"), "my page #1?.html");
        assert_eq!(c.page_url("ünï/x.md"), "/book/%C3%BCn%C3%AF/x.html");
        // Built pages keep their paths; folder indexes are pretty URLs.
        assert_eq!(c.page_url("index.html"), "/book/");
        assert_eq!(c.page_url("guide/index.html"), "/book/guide/");
        assert_eq!(c.page_url("guide/a b.htm"), "/book/guide/a%20b.htm");
        c.urls = UrlStyle::Directory;
        assert_eq!(c.page_url("guide/install.html"), "/book/guide/install.html");
    }

    #[test]
    fn numeric_settings_are_checked() {
        for text in [
            "abstain_cosine = nan",
            "abstain_cosine = inf",
            "abstain_cosine = -5.0",
            "max_file_bytes = 0",
            "base_url = 'javascript:alert(1)//'",
            "base_url = ' javascript:alert(1)'",
            "base_url = 'data:text/html,x'",
        ] {
            let c: Config = toml::from_str(text).unwrap();
            assert!(c.validate().is_err(), "{text}");
        }
        assert!(Config::default().validate().is_ok());
        for text in [
            "base_url = 'https://docs.example.com/x/'",
            "base_url = '//cdn.example/'",
        ] {
            let c: Config = toml::from_str(text).unwrap();
            assert!(c.validate().is_ok(), "{text}");
        }
    }

    #[test]
    fn synonyms_are_read_and_bounded() {
        let c: Config = toml::from_str(
            "[synonyms]\nmonorepo = ['workspace']\nairgapped = ['offline', 'cargo vendor']",
        )
        .unwrap();
        c.validate().unwrap();
        assert_eq!(
            c.synonym_list(),
            [
                (
                    "airgapped".to_string(),
                    vec!["offline".to_string(), "cargo vendor".to_string()]
                ),
                ("monorepo".to_string(), vec!["workspace".to_string()]),
            ]
        );
        for (bad, says) in [
            ("'sign in' = ['login']", "one word"),
            ("'foo-bar' = ['login']", "one word"),
            ("'<script>' = ['login']", "one word"),
            ("x = []", "1 to 16 values"),
            ("x = ['  ']", "must hold a word"),
            ("x = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n', 'o', 'p', 'q']", "1 to 16 values"),
        ] {
            let c: Config = toml::from_str(&format!("[synonyms]\n{bad}")).unwrap();
            let e = c.validate().unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
        let long = format!("[synonyms]\nx = ['{}']", "w".repeat(101));
        assert!(toml::from_str::<Config>(&long).unwrap().validate().is_err());
        // Not a table of lists: a clear parse error, not a default.
        assert!(toml::from_str::<Config>("synonyms = ['monorepo']").is_err());
    }

    #[test]
    fn unknown_keys_are_rejected() {
        assert!(toml::from_str::<Config>("inclde = []").is_err());
        let c: Config =
            toml::from_str("base_url = '/x/'\nurls = 'directory'\ninput = 'html'").unwrap();
        assert_eq!(c.input, Input::Html);
        assert_eq!(c.urls, UrlStyle::Directory);
        assert!(c.include.is_empty());
    }

    #[test]
    fn a_named_configuration_must_be_a_small_regular_file_that_exists() {
        let dir = tempfile::tempdir().unwrap();
        // The docs' own lantern.toml may be absent; a named one may not.
        assert!(Config::load(&dir.path().join(CONFIG_FILE)).is_ok());
        let err = format!(
            "{:#}",
            Config::load_named(&dir.path().join("lantern.tmol")).unwrap_err()
        );
        assert!(err.contains("lantern.tmol"), "{err}");
        #[cfg(unix)]
        {
            let started = std::time::Instant::now();
            let fifo = dir.path().join(CONFIG_FILE);
            assert!(std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success());
            for named in [fifo.as_path(), Path::new("/dev/zero")] {
                let err = format!("{:#}", Config::load_named(named).unwrap_err());
                assert!(err.contains("not a regular file"), "{err}");
            }
            // The docs' own lantern.toml as a FIFO is refused too, not waited on.
            assert!(Config::load(&fifo).is_err());
            assert!(started.elapsed().as_secs() < 5);
            let big = dir.path().join("big.toml");
            std::fs::File::create(&big)
                .unwrap()
                .set_len(MAX_CONFIG_BYTES + 1)
                .unwrap();
            let err = format!("{:#}", Config::load_named(&big).unwrap_err());
            assert!(err.contains("at most"), "{err}");
        }
    }
}
