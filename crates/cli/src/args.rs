//! The command line, as clap types. Each command's arguments become the libraries' own option
//! types once, in `main.rs`.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Parser, Subcommand};

use lantern_engine::Mode;
use lantern_indexer::config::{SlugStyle, UrlStyle};

#[derive(Parser)]
#[command(
    name = "lantern",
    version,
    about = "Semantic search for documentation sites, in the reader's browser"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// Where the model is: the flag, else $LANTERN_MODEL_DIR, else ./models/minilm when present
/// (a checkout), else the model this binary carries.
#[derive(clap::Args, Clone)]
pub struct ModelArg {
    /// Model folder (its manifest.json names the files) [default: $LANTERN_MODEL_DIR, else
    /// models/minilm under the current directory when present, else the model inside lantern].
    #[arg(long)]
    pub model_dir: Option<PathBuf>,
}

impl ModelArg {
    /// Reads and checks the model.
    pub fn load(&self) -> anyhow::Result<lantern_embedder::Model> {
        use lantern_embedder::{Error, Model, DEFAULT_MODEL_DIR, MANIFEST_FILE, MODEL_DIR_ENV};
        let named = self.model_dir.clone().or_else(|| {
            std::env::var_os(MODEL_DIR_ENV)
                .filter(|d| !d.is_empty())
                .map(PathBuf::from)
        });
        let checkout = PathBuf::from(DEFAULT_MODEL_DIR);
        match named {
            Some(dir) => Ok(Model::open(&dir)?),
            None if checkout.join(MANIFEST_FILE).is_file() => Ok(Model::open(&checkout)?),
            None if !lantern_assets::model().is_empty() => {
                let read = |name: &str| {
                    lantern_assets::model_file(name)
                        .map(<[u8]>::to_vec)
                        .ok_or_else(|| Error::Io(format!("the model inside lantern has no {name}")))
                };
                Ok(Model::load("the model inside lantern", &read)?)
            }
            None => Ok(Model::open(&checkout)?),
        }
    }
}

#[derive(Subcommand)]
pub enum Command {
    /// Build a search bundle from a folder of markdown, or of a site generator's built HTML.
    Build(BuildArgs),
    /// Search a bundle with the same engine the browser runs.
    Query {
        bundle: PathBuf,
        text: String,
        /// hybrid, vector (or semantic) or keyword.
        #[arg(long, default_value = "hybrid")]
        mode: Mode,
        /// Number of hits.
        #[arg(short, default_value_t = 10)]
        k: usize,
        /// Print the whole result as JSON.
        #[arg(long)]
        json: bool,
        /// Show each retriever's rank and score.
        #[arg(long)]
        explain: bool,
        /// Only pages carrying this filter, key=value (repeatable: values of one key are
        /// alternatives, different keys must all match).
        #[arg(long = "filter", value_parser = parse_filter)]
        filters: Vec<(String, String)>,
        /// What embeds the query: the model, or the bundle's query table (`BUNDLE.query`:
        /// approximate meaning without the model, as the browser has before the model loads).
        #[arg(long, value_enum, default_value_t)]
        query_encoder: lantern_server::QueryEncoder,
        #[command(flatten)]
        model: ModelArg,
    },
    /// Measure retrieval quality on labelled questions, per search mode.
    Eval(EvalArgs),
    /// Choose the hybrid fusion by leave-one-site-out evaluation over several labelled sets.
    Tune {
        /// A labelled set, NAME=BUNDLE:GOLDEN; give two or more. Sets named SITE/SET (e.g.
        /// rust/nav) share a site and are held out together.
        #[arg(long = "set", required = true)]
        sets: Vec<lantern_server::tune::TuneSet>,
        /// Also print every fusion tried with its MRR@10 on each set.
        #[arg(long)]
        grid: bool,
        /// Also write every fusion's metrics per set and type as JSON here.
        #[arg(long)]
        json: Option<PathBuf>,
        /// What embeds the questions: the model, or each bundle's query table.
        #[arg(long, value_enum, default_value_t)]
        query_encoder: lantern_server::QueryEncoder,
        #[command(flatten)]
        model: ModelArg,
    },
    /// Render the docs to HTML pages with the search widget, build their bundle and publish the
    /// model beside them.
    Site {
        docs: PathBuf,
        /// Output folder (pages, search.lantern, model/).
        #[arg(long, short)]
        out: PathBuf,
        /// Site name shown in the header.
        #[arg(long, default_value = "Lantern")]
        title: String,
        /// Embedding cache [default: OUT.cache, outside the published folder].
        #[arg(long)]
        cache: Option<PathBuf>,
        #[command(flatten)]
        model: ModelArg,
    },
    /// Ask for a cited answer through a running `lantern proxy`; with --golden, evaluate answers
    /// over labelled questions instead (opt-in: needs a real model behind the proxy).
    Ask {
        bundle: PathBuf,
        /// The question (omit with --golden).
        text: Option<String>,
        #[arg(long)]
        proxy: String,
        #[arg(long)]
        golden: Option<PathBuf>,
        /// Print every attempt's raw answer text and what became of it (verified, a retry and
        /// the verifier's note, withheld, or failed with the text streamed so far).
        #[arg(long, short)]
        verbose: bool,
        #[command(flatten)]
        model: ModelArg,
    },
    /// Forward questions with their passages to an OpenAI-compatible LLM, holding the API key
    /// (from LANTERN_UPSTREAM_API_KEY) server-side.
    Proxy {
        /// Base URL of the chat-completions API, e.g. https://api.openai.com/v1.
        #[arg(long)]
        upstream: String,
        #[arg(long)]
        model: String,
        #[arg(long, default_value = "127.0.0.1:8787")]
        addr: SocketAddr,
        /// Origin allowed to call from a browser (repeatable).
        #[arg(long = "allow-origin")]
        allow_origin: Vec<String>,
        /// Requests per client per minute.
        #[arg(long, default_value_t = 20)]
        rate: u32,
        /// Accept only passages whose text is this bundle's text for that chunk (the deployed
        /// bundle), so the proxy relays nothing but the documentation to the model.
        #[arg(long)]
        bundle: Option<PathBuf>,
        /// Seconds from the request to the first piece of answer (a model on a CPU reads the
        /// passages first: tens of seconds).
        #[arg(long, value_name = "SECS", default_value_t = lantern_server::proxy::FIRST_TOKEN_SECS)]
        first_token_timeout: u64,
        /// Seconds of silence allowed between two pieces of an answer, once it has started.
        #[arg(long, value_name = "SECS", default_value_t = lantern_server::proxy::IDLE_SECS)]
        idle_timeout: u64,
        /// Seconds a whole answer may take.
        #[arg(long, value_name = "SECS", default_value_t = lantern_server::proxy::ANSWER_SECS)]
        answer_timeout: u64,
        /// Attempts again after a connection error or a 5xx (never after a timeout).
        #[arg(long, default_value_t = 2)]
        retries: u32,
    },
    /// Serve the bundle to coding agents and chat clients over the Model Context Protocol:
    /// stdio by default, streamable HTTP with --http.
    Mcp {
        /// The bundle: a path, or the http(s) URL of a deployed site's bundle (fetched once,
        /// checked, and cached).
        bundle: String,
        /// Serve streamable HTTP on this address (at /mcp) instead of stdio.
        #[arg(long)]
        http: Option<SocketAddr>,
        /// A running `lantern proxy`: enables the `ask` tool.
        #[arg(long)]
        proxy: Option<String>,
        /// Where fetched bundles are cached [default: ~/.cache/lantern/bundles].
        #[arg(long)]
        cache_dir: Option<PathBuf>,
        /// Fetch a remote bundle again even if it is cached.
        #[arg(long)]
        refresh: bool,
        #[command(flatten)]
        model: ModelArg,
    },
    /// Serve a folder over HTTP on this machine (the demo site, browser tests).
    Serve {
        dir: PathBuf,
        /// Address to listen on; port 0 picks a free one.
        #[arg(long, default_value = "127.0.0.1:8080")]
        addr: SocketAddr,
    },
    /// Print the embedding of a text as JSON (for parity checks with the browser).
    #[command(hide = true)]
    Embed {
        text: String,
        #[command(flatten)]
        model: ModelArg,
    },
    /// Show what a bundle holds: model, settings, counts and sizes by part.
    Inspect { bundle: PathBuf },
}

#[derive(clap::Args)]
pub struct BuildArgs {
    /// Folder of markdown documents, or of a site generator's built HTML.
    pub docs: PathBuf,
    /// Read the folder as built HTML (default: markdown if it has any, else HTML).
    #[arg(long, conflicts_with = "markdown")]
    pub html: bool,
    /// Read the folder as markdown sources.
    #[arg(long)]
    pub markdown: bool,
    /// Bundle file to write. Without it, DOCS is a built site and everything to publish is
    /// written into DOCS/lantern/ (bundle, model, runtime, widget, service worker, and
    /// snippet.html: the tags to paste into the site's template).
    #[arg(long, short)]
    pub out: Option<PathBuf>,
    /// Without --out: what the service worker controls: lantern (its folder, whose search
    /// page then works offline), site (every page, from /lantern-sw.js) or none.
    #[arg(long, default_value = "lantern", conflicts_with = "out")]
    pub service_worker: lantern_indexer::SwScope,
    /// Without --out: the meaning readers get: full (the bundle's quick query table at once,
    /// the model for questions that need it) or quick (the query table alone: no model is
    /// published, and readers never download one).
    #[arg(long = "model", default_value = "full", conflicts_with = "out")]
    pub meaning: lantern_indexer::Meaning,
    /// Without --out: also publish the bundle as one file (lantern/search.lantern) beside its
    /// split form, for readers of your own that fetch one file. Lantern's widget, `lantern
    /// mcp` and `lantern query` read the split form.
    #[arg(long, conflicts_with = "out")]
    pub whole_file: bool,
    /// Without --out: the browser runtime to publish, a folder as `site/build.sh` assembles it
    /// [default: the runtime inside lantern].
    #[arg(long, conflicts_with = "out")]
    pub runtime: Option<PathBuf>,
    /// Configuration file [default: DOCS/lantern.toml when present].
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Files to index (glob relative to DOCS; repeatable; replaces the configured list).
    #[arg(long)]
    pub include: Vec<String>,
    /// Files to leave out (glob; repeatable; added to the configured list).
    #[arg(long)]
    pub exclude: Vec<String>,
    /// Prefix of page URLs.
    #[arg(long)]
    pub base_url: Option<String>,
    /// Page URLs: html (guide/install.html) or directory (guide/install/).
    #[arg(long)]
    pub urls: Option<UrlStyle>,
    /// Heading anchors: github or mdbook.
    #[arg(long)]
    pub slugs: Option<SlugStyle>,
    /// Embedding cache file [default: OUT.cache; without --out, one per site in the user's
    /// cache folder, never inside the site].
    #[arg(long)]
    pub cache: Option<PathBuf>,
    /// Embed everything, ignoring and not writing the cache.
    #[arg(long)]
    pub no_cache: bool,
    /// A build split across CI jobs: embed this job's part K of N of the texts into the cache
    /// (--cache) and write no bundle. A last job passes every part's cache with --cache-from.
    #[arg(long, value_name = "K/N")]
    pub part: Option<lantern_indexer::Part>,
    /// Reuse the vectors in this cache too (another job's part; repeatable).
    #[arg(long, value_name = "CACHE")]
    pub cache_from: Vec<PathBuf>,
    #[command(flatten)]
    pub model: ModelArg,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(clap::Args)]
pub struct EvalArgs {
    #[arg(long)]
    pub bundle: PathBuf,
    /// JSONL golden questions.
    #[arg(long)]
    pub golden: PathBuf,
    /// Also write every outcome and metric as JSON here.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Fail when hybrid page hit@5 is below this.
    #[arg(long)]
    pub min_hit5: Option<f64>,
    /// Fail when hybrid MRR@10 is below this.
    #[arg(long)]
    pub min_mrr: Option<f64>,
    /// Fail when hybrid finds fewer top-5 pages than keyword on any question type by more than
    /// one question.
    #[arg(long)]
    pub gate_types: bool,
    /// Fail when, on all questions or any type, hybrid MRR@10 trails the better of vector and
    /// keyword by more than this (e.g. 0.01).
    #[arg(long)]
    pub max_trail: Option<f64>,
    /// What embeds the questions: the model, or the bundle's query table.
    #[arg(long, value_enum, default_value_t)]
    pub query_encoder: lantern_server::QueryEncoder,
    /// Take the questions' vectors from this JSON object (question text -> vector, or null for
    /// none) instead: how another query-side encoder is measured against the same bundle. With
    /// `--query-encoder table` they stand in for the table's, their cosines put on the model's
    /// scale by the table's calibration, as a quick encoder's would be.
    #[arg(long)]
    pub query_vectors: Option<PathBuf>,
    #[command(flatten)]
    pub model: ModelArg,
}

/// `key=value` from the command line.
fn parse_filter(spec: &str) -> Result<(String, String), String> {
    lantern_engine::Filter::parse_pair(spec).map_err(|e| e.to_string())
}

impl BuildArgs {
    /// The flags as the indexer's plan takes them.
    pub fn flags(&self) -> lantern_indexer::BuildFlags {
        use lantern_indexer::config::Input;
        lantern_indexer::BuildFlags {
            docs: self.docs.clone(),
            out: self.out.clone(),
            config: self.config.clone(),
            input: if self.html {
                Input::Html
            } else if self.markdown {
                Input::Markdown
            } else {
                Input::Auto
            },
            include: self.include.clone(),
            exclude: self.exclude.clone(),
            base_url: self.base_url.clone(),
            urls: self.urls,
            slugs: self.slugs,
            cache: self.cache.clone(),
            no_cache: self.no_cache,
            progress: !self.quiet,
            whole_file: self.whole_file,
            service_worker: self.service_worker,
            meaning: self.meaning,
            runtime: self.runtime.clone(),
            part: self.part,
            cache_from: self.cache_from.clone(),
        }
    }
}

impl EvalArgs {
    /// The gate the flags ask for.
    pub fn gate(&self) -> lantern_server::eval::Gate {
        lantern_server::eval::Gate {
            min_hit5: self.min_hit5,
            min_mrr: self.min_mrr,
            types: self.gate_types,
            max_trail: self.max_trail,
        }
    }
}
