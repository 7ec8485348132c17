//! `lantern site`: Lantern's own markdown docs as a website with search. The bundle is built
//! first, so a failed build leaves the previous site as it was; then the pages are rendered and
//! the model is published beside them.

use std::path::PathBuf;

use anyhow::Result;
use lantern_embedder::Model;

use crate::build::{build, default_cache_path, BuildOptions, BuildReport};
use crate::config::{Config, Input, CONFIG_FILE};
use crate::model::publish_model;
use crate::render::{escape, render_site};

/// The bundle's file name inside the site folder.
pub const BUNDLE_FILE: &str = "search.lantern";
/// The model's folder inside the site folder.
pub const MODEL_FOLDER: &str = "model";

/// What `lantern site` writes.
pub struct SiteOptions {
    /// Markdown docs (with an optional `lantern.toml`).
    pub docs: PathBuf,
    /// The site folder.
    pub out: PathBuf,
    /// Site name shown in the header.
    pub title: String,
    /// Embedding cache; default `OUT.cache`, outside the published folder.
    pub cache: Option<PathBuf>,
}

/// What was written.
pub struct SiteReport {
    /// Pages rendered (the search page included).
    pub pages: usize,
    /// The bundle build.
    pub build: BuildReport,
}

/// Builds the bundle, renders the pages and publishes the model into `opts.out`.
pub fn site(opts: &SiteOptions, model: &Model) -> Result<SiteReport> {
    let config = Config::load(&opts.docs.join(CONFIG_FILE))?;
    // Checked before anything is written: a built site goes to `lantern build`.
    if opts.docs.is_dir() && crate::source::detect_input(&opts.docs, &config)? == Input::Html {
        anyhow::bail!(
            "{} holds built HTML: `lantern site` renders markdown; index a built site with `lantern build {}`",
            opts.docs.display(),
            opts.docs.display()
        );
    }
    let embedder = model.embedder()?;
    let build = build(
        &BuildOptions {
            docs: opts.docs.clone(),
            out: opts.out.join(BUNDLE_FILE),
            config: config.clone(),
            cache: Some(
                opts.cache
                    .clone()
                    .unwrap_or_else(|| default_cache_path(&opts.out)),
            ),
            progress: false,
            whole_file: false,
            part: None,
            cache_from: Vec::new(),
        },
        model,
        &embedder,
    )?;
    publish_model(model, &opts.out.join(MODEL_FOLDER))?;
    let base = escape(config.base_url.trim_end_matches('/'));
    let head = format!(
        "<meta name=\"lantern-sw\" content=\"{base}/sw.js\">\n<script type=\"module\" src=\"{base}/lantern/widget.js\"></script>"
    );
    let pages = render_site(&opts.docs, &opts.out, &config, &opts.title, &head)?;
    Ok(SiteReport { pages, build })
}
