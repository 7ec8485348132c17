//! `lantern build SITE_DIR`: everything a built site publishes for search, in one folder of
//! it (`SITE_DIR/lantern/`): the bundle (whole and split) and its query table, the model as
//! browsers run it, the runtime and widget, the service worker, a search page that works
//! offline, and the tags to paste into the site's template (`snippet.html`).
//!
//! Nothing here is an embedding cache: that lives outside the published folder (see
//! [`user_cache_path`]), so a generator that wipes its output does not wipe it, and no cache is
//! ever published.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use lantern_embedder::Model;
use lantern_engine::Lang;

use crate::model::{publish_model, unpublish_model};
use crate::output::write_atomic;
use crate::render::escape;

/// The folder inside the site that Lantern writes, and nothing else.
pub const PUBLISH_FOLDER: &str = "lantern";
/// The tags to paste before `</head>`, written inside [`PUBLISH_FOLDER`].
pub const SNIPPET_FILE: &str = "snippet.html";
/// The bundle's file name inside [`PUBLISH_FOLDER`].
pub const BUNDLE_FILE: &str = "search.lantern";
/// The service worker's file inside [`PUBLISH_FOLDER`] (scope: that folder).
pub const SW_FILE: &str = "sw.js";
/// The service worker's file at the site root, when it serves the whole site.
pub const SITE_SW_FILE: &str = "lantern-sw.js";

/// What the service worker controls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SwScope {
    /// Only Lantern's folder: its search page works offline once visited, and the site's own
    /// pages are left to the site.
    #[default]
    Lantern,
    /// The whole site (`/lantern-sw.js`): every page visited is kept for offline reading.
    Site,
    /// No service worker.
    None,
}

impl std::str::FromStr for SwScope {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "lantern" => Ok(SwScope::Lantern),
            "site" => Ok(SwScope::Site),
            "none" => Ok(SwScope::None),
            _ => Err(format!(
                "unknown service worker scope {s:?} (lantern, site or none)"
            )),
        }
    }
}

/// Which meaning a site's readers get.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Meaning {
    /// The query table at once, and the model (megabytes) for questions that need it.
    #[default]
    Full,
    /// The query table alone: no model and no embedder are published, and readers never
    /// download them.
    Quick,
}

impl std::str::FromStr for Meaning {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "full" => Ok(Meaning::Full),
            "quick" => Ok(Meaning::Quick),
            _ => Err(format!("unknown model choice {s:?} (full or quick)")),
        }
    }
}

/// The runtime's files that only embed questions with the model: left out with
/// [`Meaning::Quick`]. (`embedder.js` stays: `lantern.js` imports it, and it fetches nothing
/// until a model is loaded.)
fn embeds_with_the_model(rel: &str) -> bool {
    let name = rel.trim_end_matches(".br").trim_end_matches(".gz");
    name.starts_with("pkg/lantern_embed_wasm") || name.starts_with("embed-worker")
}

/// The runtime's files (path under [`PUBLISH_FOLDER`], bytes), as `site/build.sh` assembles
/// them and the packaged binary carries them.
pub type RuntimeFiles<'a> = &'a [(&'a str, &'a [u8])];

/// The list of files Lantern wrote under [`PUBLISH_FOLDER`] (and the site-wide worker), one
/// path a line, relative to the site: what a later build may replace or delete.
pub const MANIFEST_FILE: &str = ".lantern-files";

/// What replaces a service worker a site no longer wants: returning readers' browsers keep
/// running the old one until its script changes, so it changes into one that clears Lantern's
/// caches and unregisters itself.
pub const RETIRED_WORKER: &str = "// Lantern's service worker was turned off for this site: this one removes itself.
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil((async () => {
  for (const name of await caches.keys()) if (name.startsWith('lantern-')) await caches.delete(name);
  await self.registration.unregister();
})()));
";

/// Replaces a worker published before with [`RETIRED_WORKER`]; publishes none where there was none.
fn retire_worker(path: &Path) -> Result<()> {
    if path.is_file() {
        write_atomic(path, RETIRED_WORKER.as_bytes())?;
    }
    Ok(())
}

/// The lock file a build holds under [`PUBLISH_FOLDER`] from start to publish.
const LOCK_FILE: &str = ".lantern-lock";

/// A build's hold on a site: while it lives, another `lantern build` of the same site stops at
/// once instead of interleaving its shards and deletions with this one's.
#[derive(Debug)]
pub struct SiteLock {
    _file: std::fs::File,
}

/// Takes the site's build lock (creating the publish folder if needed), or says another build
/// holds it. Released when the returned guard drops, or the process ends however it ends.
pub fn lock_site(site: &Path) -> Result<SiteLock> {
    let folder = site.join(PUBLISH_FOLDER);
    std::fs::create_dir_all(&folder).with_context(|| format!("creating {}", folder.display()))?;
    let path = folder.join(LOCK_FILE);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .with_context(|| format!("opening {}", path.display()))?;
    match file.try_lock() {
        Ok(()) => Ok(SiteLock { _file: file }),
        Err(std::fs::TryLockError::WouldBlock) => bail!(
            "another lantern build is publishing into {} now; run one at a time",
            folder.display()
        ),
        Err(std::fs::TryLockError::Error(e)) => {
            Err(e).with_context(|| format!("locking {}", path.display()))
        }
    }
}

/// Folders under [`PUBLISH_FOLDER`] that a publish writes into.
const WRITTEN_FOLDERS: [&str; 5] = ["model", "pkg", "ui", "ui-intl", "search.lantern.d"];

/// Whether `real` (a canonical path) is the file system's root or the user's home: never a
/// site, and a folder whose every file a mistyped command would publish into or serve.
pub fn is_root_or_home(real: &Path) -> bool {
    let home = std::env::var_os("HOME").and_then(|h| PathBuf::from(h).canonicalize().ok());
    real.parent().is_none() || home.as_deref() == Some(real)
}

/// Checks `site` before anything is written into it: a real folder that is not the file
/// system's root or the user's home (a mistyped path would publish into them), whose
/// [`PUBLISH_FOLDER`] and the folders in it, where they exist, are real folders too: a symbolic
/// link would take the files written, and the stale ones deleted, somewhere else.
pub fn check_site(site: &Path) -> Result<()> {
    let real = site
        .canonicalize()
        .with_context(|| format!("opening {}", site.display()))?;
    if !real.is_dir() {
        bail!("{} is not a folder", site.display());
    }
    if is_root_or_home(&real) {
        bail!(
            "{} is not a built site: point lantern at your generator's output folder (site/, book/, public/...)",
            real.display()
        );
    }
    let folder = site.join(PUBLISH_FOLDER);
    let inner = WRITTEN_FOLDERS.iter().map(|f| folder.join(f));
    for path in std::iter::once(folder.clone()).chain(inner) {
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_symlink() => bail!(
                "{} is a symbolic link: lantern writes only into real folders inside the site (remove the link, or publish with --out)",
                path.display()
            ),
            Ok(m) if !m.is_dir() => bail!(
                "{} is a file, not the folder lantern publishes into",
                path.display()
            ),
            _ => {}
        }
    }
    let foreign = foreign_files(site)?;
    if let Some(first) = foreign.first() {
        bail!(
            "{} holds {} file{} Lantern did not write ({}{}): lantern owns that folder and would replace or delete them; move them elsewhere (or, if they are an older Lantern's, delete the folder) and build again",
            folder.display(),
            foreign.len(),
            if foreign.len() == 1 { "" } else { "s" },
            first,
            if foreign.len() > 1 { ", ..." } else { "" }
        );
    }
    Ok(())
}

/// Files under `site`'s publish folder, and a site-wide worker, that no build of Lantern wrote:
/// not on the manifest, nor a compressed copy of a file on it. A folder published before
/// manifests existed is known by its `snippet.html`, and taken as Lantern's whole.
fn foreign_files(site: &Path) -> Result<Vec<String>> {
    let folder = site.join(PUBLISH_FOLDER);
    let listed: Option<HashSet<String>> = match std::fs::read_to_string(folder.join(MANIFEST_FILE))
    {
        Ok(text) => Some(text.lines().map(str::to_string).collect()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            return Err(e)
                .with_context(|| format!("reading {}", folder.join(MANIFEST_FILE).display()))
        }
    };
    let legacy = listed.is_none() && folder.join(SNIPPET_FILE).is_file();
    if legacy {
        return Ok(Vec::new());
    }
    let listed = listed.unwrap_or_default();
    let ours = |rel: &str| {
        let original = rel
            .strip_suffix(".br")
            .or_else(|| rel.strip_suffix(".gz"))
            .unwrap_or(rel);
        listed.contains(rel) || listed.contains(original)
    };
    let mut foreign: Vec<String> = published_files(site)?
        .into_iter()
        .filter(|rel| !ours(rel))
        .collect();
    if site.join(SITE_SW_FILE).exists() && !ours(SITE_SW_FILE) {
        foreign.push(SITE_SW_FILE.to_string());
    }
    foreign.sort();
    Ok(foreign)
}

/// Every file under `site`'s publish folder, relative to `site`, `/`-separated, the manifest
/// itself left out.
fn published_files(site: &Path) -> Result<Vec<String>> {
    let folder = site.join(PUBLISH_FOLDER);
    let mut out = Vec::new();
    if !folder.is_dir() {
        return Ok(out);
    }
    for entry in walkdir::WalkDir::new(&folder).sort_by_file_name() {
        let entry = entry.with_context(|| format!("listing {}", folder.display()))?;
        if entry.file_type().is_dir() {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(site) else {
            continue;
        };
        let rel = rel.to_string_lossy().replace('\\', "/");
        let own = [MANIFEST_FILE, LOCK_FILE].map(|f| format!("{PUBLISH_FOLDER}/{f}"));
        if !own.contains(&rel) {
            out.push(rel);
        }
    }
    Ok(out)
}

/// Writes the manifest: every file now in the publish folder (the build refused to start while
/// any was not Lantern's) and the site-wide worker when there is one.
fn write_manifest(site: &Path) -> Result<()> {
    let mut files = published_files(site)?;
    if site.join(SITE_SW_FILE).is_file() {
        files.push(SITE_SW_FILE.to_string());
    }
    let mut text = files.join("\n");
    text.push('\n');
    write_atomic(
        &site.join(PUBLISH_FOLDER).join(MANIFEST_FILE),
        text.as_bytes(),
    )
}

/// Where a site's embedding cache lives between deploys: `builds/` in the user's cache
/// folder ([`lantern_embedder::user_cache_dir`]), one file per site, named by the site
/// folder's absolute path. `None` when the machine has no home folder.
pub fn user_cache_path(site: &Path) -> Option<PathBuf> {
    let abs = std::path::absolute(site).unwrap_or_else(|_| site.to_path_buf());
    let key = lantern_embedder::sha256_hex(abs.to_string_lossy().as_bytes());
    Some(
        lantern_embedder::user_cache_dir()?
            .join("builds")
            .join(format!("{}.cache", &key[..16])),
    )
}

/// Where the widget finds the model: the published model folder, or `none`.
fn model_attr(dir: &str, meaning: Meaning) -> String {
    match meaning {
        Meaning::Full => format!("{dir}model/"),
        Meaning::Quick => "none".into(),
    }
}

/// The tags a site pastes before `</head>` of every page. `base` is the site's base URL
/// (`/`, `/docs/`, `https://example.org/book/`).
pub fn snippet(base: &str, sw: SwScope, meaning: Meaning) -> String {
    let base = escape(&format!("{}/", base.trim_end_matches('/')));
    let dir = format!("{base}{PUBLISH_FOLDER}/");
    let model = model_attr(&dir, meaning);
    let sw = match sw {
        SwScope::Lantern => format!("<meta name=\"lantern-sw\" content=\"{dir}{SW_FILE}\">\n"),
        SwScope::Site => format!("<meta name=\"lantern-sw\" content=\"{base}{SITE_SW_FILE}\">\n"),
        SwScope::None => String::new(),
    };
    format!(
        "<!-- Lantern search: paste before </head> of every page -->\n\
         {sw}<script type=\"module\" src=\"{dir}widget.js\"></script>\n\
         <lantern-search bundle=\"{dir}{BUNDLE_FILE}\" model=\"{model}\"></lantern-search>\n"
    )
}

/// A search page inside [`PUBLISH_FOLDER`]: the service worker's scope always holds a page,
/// so a reader can search offline there.
fn search_page(base: &str, meaning: Meaning) -> String {
    let base = escape(&format!("{}/", base.trim_end_matches('/')));
    let dir = format!("{base}{PUBLISH_FOLDER}/");
    let model = model_attr(&dir, meaning);
    format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>Search</title>\n<meta name=\"lantern-sw\" content=\"{dir}{SW_FILE}\">\n\
         <script type=\"module\" src=\"{dir}widget.js\"></script>\n</head>\n<body>\n\
         <main><p><a href=\"{base}\">Back to the site</a></p>\n\
         <lantern-search page bundle=\"{dir}{BUNDLE_FILE}\" model=\"{model}\"></lantern-search>\n\
         </main>\n</body>\n</html>\n"
    )
}

/// What [`publish`] wrote.
pub struct Published {
    /// The published folder.
    pub dir: PathBuf,
    /// The tags to paste (also in `snippet.html`).
    pub snippet: String,
}

/// The runtime carries its UI module twice: `ui/` stems English only (and the languages
/// without a stemmer), `ui-intl/` every language, at 30 KB more (brotli) in a reader's first
/// download. Keeps the one `langs` (the bundle's languages) needs, as `ui/`.
pub fn choose_ui(runtime: &mut Vec<(String, Vec<u8>)>, langs: &[Lang]) {
    const INTL: &str = "ui-intl/";
    let intl = langs.iter().any(|l| !l.stemmed_without_all_languages());
    if intl && runtime.iter().any(|(p, _)| p.starts_with(INTL)) {
        runtime.retain(|(p, _)| !p.starts_with("ui/"));
        for (p, _) in runtime.iter_mut() {
            if let Some(rest) = p.strip_prefix(INTL) {
                *p = format!("ui/{rest}");
            }
        }
    } else {
        runtime.retain(|(p, _)| !p.starts_with(INTL));
    }
}

/// Writes the runtime, the model (`None`: quick meaning only, see [`Meaning`]), the service
/// worker, the search page and the snippet into `site/lantern/` (the bundle is built there
/// first, by [`crate::build`]). Files of the runtime's earlier versions that this one does not
/// have are removed, and so is a model published before when none is now.
pub fn publish(
    site: &Path,
    runtime: RuntimeFiles,
    model: Option<&Model>,
    base: &str,
    sw: SwScope,
) -> Result<Published> {
    let meaning = match model {
        Some(_) => Meaning::Full,
        None => Meaning::Quick,
    };
    let dir = site.join(PUBLISH_FOLDER);
    let Some((_, worker)) = runtime.iter().find(|(p, _)| *p == SW_FILE) else {
        bail!("the runtime has no {SW_FILE}");
    };
    if !runtime.iter().any(|(p, _)| *p == "widget.js") {
        bail!("the runtime has no widget.js");
    }
    let mut written = HashSet::new();
    for (rel, bytes) in runtime {
        if rel.split('/').any(|part| part.is_empty() || part == "..") {
            bail!("the runtime names an unsafe path {rel:?}");
        }
        let path = dir.join(rel);
        if meaning == Meaning::Quick && embeds_with_the_model(rel) {
            // Published before with the model: gone with it.
            crate::remove_stale(&path)?;
            continue;
        }
        let same = std::fs::read(&path).is_ok_and(|old| old == *bytes);
        if !same {
            write_atomic(&path, bytes)?;
        }
        written.insert(path);
    }
    // Older runtimes' content-addressed modules, under the runtime's own folders.
    for sub in ["pkg", "ui"] {
        let Ok(entries) = std::fs::read_dir(dir.join(sub)) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let base = path.with_extension("");
            let original = match path.extension().and_then(|e| e.to_str()) {
                Some("br" | "gz") => base,
                _ => path.clone(),
            };
            if !written.contains(&original) && path.is_file() {
                std::fs::remove_file(&path)
                    .with_context(|| format!("removing the stale {}", path.display()))?;
            }
        }
    }
    match model {
        Some(model) => {
            publish_model(model, &dir.join("model"))?;
        }
        None => unpublish_model(&dir.join("model"))?,
    }
    let site_sw = site.join(SITE_SW_FILE);
    match sw {
        SwScope::Site => write_atomic(&site_sw, worker)?,
        SwScope::Lantern | SwScope::None => retire_worker(&site_sw)?,
    }
    if sw == SwScope::None {
        retire_worker(&dir.join(SW_FILE))?;
    }
    write_atomic(
        &dir.join("index.html"),
        search_page(base, meaning).as_bytes(),
    )?;
    let snippet = snippet(base, sw, meaning);
    write_atomic(&dir.join(SNIPPET_FILE), snippet.as_bytes())?;
    write_manifest(site)?;
    Ok(Published { dir, snippet })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_snippet_points_into_the_published_folder_and_escapes_the_base() {
        let s = snippet("/", SwScope::Lantern, Meaning::Full);
        assert!(s.contains("<script type=\"module\" src=\"/lantern/widget.js\"></script>"));
        assert!(s.contains("bundle=\"/lantern/search.lantern\" model=\"/lantern/model/\""));
        assert!(s.contains("content=\"/lantern/sw.js\""));
        let s = snippet("/book", SwScope::Site, Meaning::Quick);
        assert!(s.contains("src=\"/book/lantern/widget.js\""));
        assert!(s.contains("content=\"/book/lantern-sw.js\""));
        assert!(s.contains("model=\"none\""), "{s}");
        assert!(!snippet("/", SwScope::None, Meaning::Full).contains("lantern-sw"));
        let s = snippet("/\"><script>x</script>", SwScope::None, Meaning::Full);
        assert!(!s.contains("<script>x"), "{s}");
    }

    #[test]
    fn one_build_at_a_time_publishes_into_a_site() {
        let site = tempfile::tempdir().unwrap();
        let first = lock_site(site.path()).unwrap();
        let err = lock_site(site.path()).expect_err("a second build waits its turn");
        assert!(err.to_string().contains("another lantern build"), "{err}");
        drop(first);
        lock_site(site.path()).unwrap();
        // The lock file is Lantern's own, never taken for an owner's file.
        assert!(foreign_files(site.path()).unwrap().is_empty());
    }

    #[test]
    fn quick_meaning_leaves_the_embedder_out() {
        for rel in [
            "pkg/lantern_embed_wasm_bg-0123456789ab.wasm",
            "pkg/lantern_embed_wasm-0123456789ab.js.br",
            "embed-worker-0123456789ab.js.gz",
        ] {
            assert!(embeds_with_the_model(rel), "{rel}");
        }
        for rel in [
            "pkg/lantern_search_wasm_bg.wasm",
            "lantern.js",
            "embedder.js",
            "widget.js",
            "sw.js",
        ] {
            assert!(!embeds_with_the_model(rel), "{rel}");
        }
    }

    #[test]
    fn the_cache_lives_outside_the_site() {
        let dir = tempfile::tempdir().unwrap();
        let site = dir.path().join("site");
        if let Some(p) = user_cache_path(&site) {
            assert!(!p.starts_with(&site), "{}", p.display());
            assert_ne!(Some(p), user_cache_path(&dir.path().join("other")));
        }
    }
}
