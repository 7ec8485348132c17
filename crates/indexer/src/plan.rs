//! What `lantern build` does, decided once from its flags: the input kind, the bundle's path,
//! the cache, and for a built site what is published into its `lantern/` folder and where the
//! browser runtime comes from. The CLI parses flags into [`BuildFlags`] and runs the plan.

use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use lantern_embedder::Model;

use crate::build::{build, default_cache_path, BuildOptions, BuildReport};
use crate::config::{Config, Input, SlugStyle, UrlStyle, CONFIG_FILE};
use crate::part::{build_part, Part, PartReport};
use crate::publish::{
    self, user_cache_path, Meaning, Published, SwScope, BUNDLE_FILE, PUBLISH_FOLDER, SITE_SW_FILE,
    SNIPPET_FILE,
};
use crate::source::{self, Skipped};

/// `lantern build`'s flags, as given.
#[derive(Debug, Clone)]
pub struct BuildFlags {
    /// The folder of markdown or built HTML.
    pub docs: PathBuf,
    /// `--out`: the bundle file to write. Without it, `docs` is a built site to publish into.
    pub out: Option<PathBuf>,
    /// `--config` [default: `docs/lantern.toml` when present].
    pub config: Option<PathBuf>,
    /// `--html` or `--markdown`; `Auto` when neither.
    pub input: Input,
    /// `--include` (replaces the configured list when not empty).
    pub include: Vec<String>,
    /// `--exclude` (added to the configured list).
    pub exclude: Vec<String>,
    /// `--base-url`.
    pub base_url: Option<String>,
    /// `--urls`.
    pub urls: Option<UrlStyle>,
    /// `--slugs`.
    pub slugs: Option<SlugStyle>,
    /// `--cache`.
    pub cache: Option<PathBuf>,
    /// `--no-cache`.
    pub no_cache: bool,
    /// Show progress (not `--quiet`).
    pub progress: bool,
    /// `--whole-file` (a published site; a file named by `--out` is always whole).
    pub whole_file: bool,
    /// `--service-worker` (a published site).
    pub service_worker: SwScope,
    /// `--model full|quick` (a published site).
    pub meaning: Meaning,
    /// `--runtime` (a published site) [default: the runtime inside lantern].
    pub runtime: Option<PathBuf>,
    /// `--part K/N`: this job embeds its share into the cache; no bundle.
    pub part: Option<Part>,
    /// `--cache-from` (repeatable): other jobs' caches to reuse.
    pub cache_from: Vec<PathBuf>,
}

/// A decided build: the bundle's options, and what a built site publishes.
pub struct BuildPlan {
    /// What the bundle is built from and where it is written.
    pub options: BuildOptions,
    publish: Option<PublishPlan>,
}

struct PublishPlan {
    site: PathBuf,
    runtime: Option<PathBuf>,
    meaning: Meaning,
    service_worker: SwScope,
}

/// What a planned build wrote: a bundle, or one part's share of the embeddings.
pub enum Built {
    /// The bundle's build.
    Bundle(BuildReport),
    /// One job of a build split across jobs (`--part`).
    Part(PartReport),
}

/// What a planned build did.
pub struct BuildOutcome {
    /// The bundle's build, or the part's.
    pub built: Built,
    /// The cache used, if any.
    pub cache: Option<PathBuf>,
    /// What was published into a built site.
    pub published: Option<Published>,
}

impl BuildPlan {
    /// Reads the configuration (`lantern.toml` or `--config`), lays the flags over it and
    /// checks the site, all before a model loads or anything is written.
    pub fn new(flags: BuildFlags) -> Result<Self> {
        let mut config = match &flags.config {
            Some(named) => Config::load_named(named)?,
            None => Config::load(&flags.docs.join(CONFIG_FILE))?,
        };
        if !flags.include.is_empty() {
            config.include = flags.include.clone();
        }
        config.exclude.extend(flags.exclude.iter().cloned());
        if flags.input != Input::Auto {
            config.input = flags.input;
        }
        if let Some(b) = &flags.base_url {
            config.base_url = b.clone();
        }
        if let Some(u) = flags.urls {
            config.urls = u;
        }
        if let Some(s) = flags.slugs {
            config.slugs = s;
        }
        config.validate()?;
        // What Lantern published into a site is never one of its pages.
        let published = flags.docs.join(PUBLISH_FOLDER);
        let skip_published = |config: &mut Config| {
            config.exclude.push(format!("{PUBLISH_FOLDER}/**"));
            config.exclude.push(SITE_SW_FILE.to_string());
        };
        let (out, publish) = match &flags.out {
            Some(out) => {
                if published.join(SNIPPET_FILE).is_file() {
                    skip_published(&mut config);
                }
                (out.clone(), None)
            }
            None => {
                publish::check_site(&flags.docs)?;
                if config.input == Input::Markdown {
                    bail!(
                        "markdown sources are not a site to publish into: give --out FILE for the bundle (or `lantern site` to render them)"
                    );
                }
                if config.input == Input::Auto && source::holds_markdown_only(&flags.docs) {
                    bail!(
                        "{} holds markdown, not a built site: point lantern at your generator's output (site/, book/, public/...), or give --out FILE to build a bundle from the markdown",
                        flags.docs.display()
                    );
                }
                // A built site: its pages are HTML whatever else it holds.
                config.input = Input::Html;
                skip_published(&mut config);
                let plan = PublishPlan {
                    site: flags.docs.clone(),
                    runtime: flags.runtime.clone(),
                    meaning: flags.meaning,
                    service_worker: flags.service_worker,
                };
                (published.join(BUNDLE_FILE), Some(plan))
            }
        };
        let cache = if flags.no_cache {
            None
        } else if let Some(c) = &flags.cache {
            Some(c.clone())
        } else if flags.out.is_some() {
            Some(default_cache_path(&out))
        } else {
            user_cache_path(&flags.docs)
        };
        if flags.part.is_some() && cache.is_none() {
            bail!("--part writes its share into the embedding cache: give --cache PATH, not --no-cache");
        }
        // A part another job did not hand over is named now, not after an hour of embedding.
        if let Some(missing) = flags.cache_from.iter().find(|p| !p.is_file()) {
            bail!("--cache-from {}: no such file", missing.display());
        }
        let options = BuildOptions {
            docs: flags.docs,
            out,
            config,
            cache,
            progress: flags.progress,
            whole_file: flags.out.is_some() || flags.whole_file,
            part: flags.part,
            cache_from: flags.cache_from,
        };
        Ok(Self { options, publish })
    }

    /// The built site this plan publishes into, if it does.
    pub fn site(&self) -> Option<&Path> {
        self.publish.as_ref().map(|p| p.site.as_path())
    }

    /// Builds the bundle and, for a built site, publishes everything beside it. The site is
    /// locked and the runtime read before anything is written.
    pub fn run(&self, model: &Model) -> Result<BuildOutcome> {
        if let Some(part) = self.options.part {
            // A part writes its cache alone: nothing in the site, nothing to lock.
            let report = build_part(&self.options, model, &model.embedder()?, part)?;
            return Ok(BuildOutcome {
                built: Built::Part(report),
                cache: self.options.cache.clone(),
                published: None,
            });
        }
        let _lock = self.site().map(publish::lock_site).transpose()?;
        let runtime = match &self.publish {
            Some(p) => Some(load_runtime(p.runtime.as_deref())?),
            None => None,
        };
        let report = build(&self.options, model, &model.embedder()?)?;
        let published = match (&self.publish, runtime) {
            (Some(p), Some(mut runtime)) => {
                publish::choose_ui(&mut runtime, &report.langs);
                let files: Vec<(&str, &[u8])> = runtime
                    .iter()
                    .map(|(p, b)| (p.as_str(), b.as_slice()))
                    .collect();
                let model = match p.meaning {
                    Meaning::Full => Some(model),
                    Meaning::Quick => None,
                };
                Some(publish::publish(
                    &p.site,
                    &files,
                    model,
                    &self.options.config.base_url,
                    p.service_worker,
                )?)
            }
            _ => None,
        };
        Ok(BuildOutcome {
            built: Built::Bundle(report),
            cache: self.options.cache.clone(),
            published,
        })
    }
}

impl BuildOutcome {
    /// Files the build left out.
    pub fn skipped(&self) -> &[Skipped] {
        match &self.built {
            Built::Bundle(r) => &r.skipped,
            Built::Part(r) => &r.skipped,
        }
    }

    /// What the owner should know.
    pub fn warnings(&self) -> &[String] {
        match &self.built {
            Built::Bundle(r) => &r.warnings,
            Built::Part(r) => &r.warnings,
        }
    }
}

impl fmt::Display for BuildOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.built {
            Built::Bundle(r) => writeln!(f, "{r}")?,
            Built::Part(r) => writeln!(f, "{r}")?,
        }
        if let Some(p) = &self.published {
            match &self.cache {
                Some(c) => writeln!(f, "  embedding cache: {}", c.display())?,
                None => writeln!(f, "  embedding cache: none")?,
            }
            writeln!(
                f,
                "published search into {}\npaste these tags before </head> of every page (also in {}):\n\n{}",
                p.dir.display(),
                p.dir.join(SNIPPET_FILE).display(),
                p.snippet
            )?;
        }
        Ok(())
    }
}

/// The browser runtime a built site publishes, each file as (path under the published folder,
/// bytes): from a folder (`--runtime`, as `site/build.sh` assembles it) or the one this
/// binary carries (`dist/package.sh`).
pub fn load_runtime(dir: Option<&Path>) -> Result<Vec<(String, Vec<u8>)>> {
    let Some(dir) = dir else {
        let carried = lantern_assets::web();
        if carried.is_empty() {
            bail!(
                "this lantern carries no browser runtime (a development build): pass --runtime out/web/lantern after `bash site/build.sh`, or build the binary with `bash dist/package.sh`"
            );
        }
        return Ok(carried
            .iter()
            .map(|(p, b)| (p.to_string(), b.to_vec()))
            .collect());
    };
    let mut files = Vec::new();
    for entry in walkdir::WalkDir::new(dir).follow_links(false) {
        let entry = entry.with_context(|| format!("listing {}", dir.display()))?;
        if !entry.file_type().is_file() {
            continue;
        }
        let rel = entry
            .path()
            .strip_prefix(dir)?
            .to_string_lossy()
            .replace('\\', "/");
        // Precompressed copies are made again at publish time.
        if rel.ends_with(".br") || rel.ends_with(".gz") {
            continue;
        }
        let bytes = std::fs::read(entry.path())
            .with_context(|| format!("reading {}", entry.path().display()))?;
        files.push((rel, bytes));
    }
    if !files.iter().any(|(p, _)| p == "widget.js") {
        bail!("{} is not a Lantern runtime (no widget.js)", dir.display());
    }
    Ok(files)
}
