//! The `lantern` command line.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};

use lantern::build::{self, BuildOptions};
use lantern::config::{Config, SlugStyle, UrlStyle, CONFIG_FILE};
use lantern::model::{self, Manifest, Model};
use lantern_engine::{Bundle, Engine, Mode};

#[derive(Parser)]
#[command(
    name = "lantern",
    version,
    about = "Semantic search for documentation sites, in the reader's browser"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Build a search bundle from a folder of markdown.
    Build(BuildArgs),
    /// Search a bundle with the same engine the browser runs.
    Query {
        bundle: PathBuf,
        text: String,
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
        /// Model folder [default: $LANTERN_MODEL_DIR or models/minilm].
        #[arg(long)]
        model_dir: Option<PathBuf>,
    },
    /// Measure retrieval quality on labelled questions, per search mode.
    Eval(EvalArgs),
    /// Render the docs to HTML pages with the search widget, and build their bundle beside them.
    Site {
        docs: PathBuf,
        /// Output folder (pages, search.lantern).
        #[arg(long, short)]
        out: PathBuf,
        /// Site name shown in the header.
        #[arg(long, default_value = "Lantern")]
        title: String,
        /// Embedding cache [default: OUT.cache, outside the published folder].
        #[arg(long)]
        cache: Option<PathBuf>,
        #[arg(long)]
        model_dir: Option<PathBuf>,
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
        #[arg(long)]
        model_dir: Option<PathBuf>,
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
        addr: std::net::SocketAddr,
        /// Origin allowed to call from a browser (repeatable).
        #[arg(long = "allow-origin")]
        allow_origin: Vec<String>,
        /// Requests per client per minute.
        #[arg(long, default_value_t = 20)]
        rate: u32,
    },
    /// Serve a folder over HTTP on this machine (the demo site, browser tests).
    Serve {
        dir: PathBuf,
        /// Address to listen on; port 0 picks a free one.
        #[arg(long, default_value = "127.0.0.1:8080")]
        addr: std::net::SocketAddr,
    },
    /// Print the embedding of a text as JSON (for parity checks).
    #[command(hide = true)]
    Embed {
        text: String,
        #[arg(long)]
        model_dir: Option<PathBuf>,
    },
    /// Show what a bundle holds: model, settings, counts and sizes by part.
    Inspect { bundle: PathBuf },
    /// Prepare the downloaded model files (run by models/fetch.sh).
    PrepareModel {
        #[arg(long)]
        onnx: PathBuf,
        #[arg(long)]
        tokenizer: PathBuf,
        /// Output folder; its manifest.json, if present, pins the expected result.
        #[arg(long)]
        out: PathBuf,
    },
}

#[derive(clap::Args)]
struct BuildArgs {
    /// Folder of markdown documents.
    docs: PathBuf,
    /// Bundle file to write.
    #[arg(long, short)]
    out: PathBuf,
    /// Configuration file [default: DOCS/lantern.toml when present].
    #[arg(long)]
    config: Option<PathBuf>,
    /// Files to index (glob relative to DOCS; repeatable; replaces the configured list).
    #[arg(long)]
    include: Vec<String>,
    /// Files to leave out (glob; repeatable; added to the configured list).
    #[arg(long)]
    exclude: Vec<String>,
    /// Prefix of page URLs.
    #[arg(long)]
    base_url: Option<String>,
    #[arg(long, value_enum)]
    urls: Option<UrlStyle>,
    #[arg(long, value_enum)]
    slugs: Option<SlugStyle>,
    /// Embedding cache file [default: OUT.cache].
    #[arg(long)]
    cache: Option<PathBuf>,
    /// Embed everything, ignoring and not writing the cache.
    #[arg(long)]
    no_cache: bool,
    /// Model folder [default: $LANTERN_MODEL_DIR or models/minilm].
    #[arg(long)]
    model_dir: Option<PathBuf>,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
}

#[derive(clap::Args)]
struct EvalArgs {
    #[arg(long)]
    bundle: PathBuf,
    /// JSONL golden questions.
    #[arg(long)]
    golden: PathBuf,
    /// Also write every outcome and metric as JSON here.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Fail when hybrid page hit@5 is below this.
    #[arg(long)]
    min_hit5: Option<f64>,
    /// Fail when hybrid MRR@10 is below this.
    #[arg(long)]
    min_mrr: Option<f64>,
    /// Fail when hybrid finds fewer top-5 pages than keyword on any question type by more than
    /// one question.
    #[arg(long)]
    gate_types: bool,
    #[arg(long)]
    model_dir: Option<PathBuf>,
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Build(args) => run_build(args),
        Command::Inspect { bundle } => inspect(&bundle),
        Command::Site {
            docs,
            out,
            title,
            cache,
            model_dir,
        } => {
            let config = Config::load(&docs.join(CONFIG_FILE))?;
            let base = config.base_url.trim_end_matches('/').to_string();
            let head = format!(
                "<meta name=\"lantern-sw\" content=\"{base}/sw.js\">\n<script type=\"module\" src=\"{base}/lantern/widget.js\"></script>"
            );
            let n = lantern::render::render_site(&docs, &out, &config, &title, &head)?;
            println!("rendered {n} pages into {}", out.display());
            let mut cache_path = out.as_os_str().to_owned();
            cache_path.push(".cache");
            run_build(BuildArgs {
                docs,
                out: out.join("search.lantern"),
                config: None,
                include: Vec::new(),
                exclude: Vec::new(),
                base_url: None,
                urls: None,
                slugs: None,
                cache: Some(cache.unwrap_or_else(|| PathBuf::from(cache_path))),
                no_cache: false,
                model_dir,
                quiet: true,
            })
        }
        Command::Ask {
            bundle,
            text,
            proxy,
            golden,
            model_dir,
        } => run_ask(&bundle, text, &proxy, golden, model_dir),
        Command::Proxy {
            upstream,
            model,
            addr,
            allow_origin,
            rate,
        } => {
            let mut c = lantern::proxy::ProxyConfig::new(&upstream, &model);
            c.allowed_origins = allow_origin;
            c.rate_per_minute = rate;
            lantern::proxy::run(c, addr)
        }
        Command::Serve { dir, addr } => lantern::serve::serve(dir, addr),
        Command::Embed { text, model_dir } => {
            let model = Model::open(&model_dir.unwrap_or_else(model::default_dir))?;
            println!(
                "{}",
                serde_json::to_string(&model.embedder()?.embed(&text)?)?
            );
            Ok(())
        }
        Command::Eval(args) => run_eval(args),
        Command::Query {
            bundle,
            text,
            mode,
            k,
            json,
            explain,
            model_dir,
        } => query(&bundle, &text, mode, k, json, explain, model_dir),
        Command::PrepareModel {
            onnx,
            tokenizer,
            out,
        } => {
            let pinned: Option<Manifest> = std::fs::read(out.join(model::MANIFEST_FILE))
                .ok()
                .map(|b| serde_json::from_slice(&b))
                .transpose()
                .context("parsing the pinned manifest")?;
            let m = model::prepare(&onnx, &tokenizer, &out, pinned.as_ref())?;
            println!(
                "prepared {} (sha256 {}) in {}",
                m.model_id,
                m.sha256,
                out.display()
            );
            Ok(())
        }
    }
}

fn run_build(args: BuildArgs) -> Result<()> {
    let config_path = args
        .config
        .clone()
        .unwrap_or_else(|| args.docs.join(CONFIG_FILE));
    let mut config = Config::load(&config_path)?;
    if !args.include.is_empty() {
        config.include = args.include;
    }
    config.exclude.extend(args.exclude);
    if let Some(b) = args.base_url {
        config.base_url = b;
    }
    if let Some(u) = args.urls {
        config.urls = u;
    }
    if let Some(s) = args.slugs {
        config.slugs = s;
    }
    let cache = (!args.no_cache).then(|| {
        args.cache
            .unwrap_or_else(|| build::default_cache_path(&args.out))
    });
    let model = Model::open(&args.model_dir.unwrap_or_else(model::default_dir))?;
    let embedder = model.embedder()?;
    let opts = BuildOptions {
        docs: args.docs,
        out: args.out,
        config,
        cache,
        progress: !args.quiet,
    };
    let r = build::build(&opts, &model.manifest, &embedder)?;
    for s in &r.skipped {
        eprintln!("warning: skipped {}: {}", s.path, s.reason);
    }
    for w in &r.warnings {
        eprintln!("warning: {w}");
    }
    let per_chunk = if r.embedded > 0 {
        format!(
            ", {:.1} ms/chunk",
            r.embed_time.as_secs_f64() * 1000.0 / r.embedded as f64
        )
    } else {
        String::new()
    };
    println!(
        "built {}: {} pages, {} chunks ({} embedded, {} from cache{}), {} skipped, {} in {:.1}s",
        opts.out.display(),
        r.pages,
        r.chunks,
        r.embedded,
        r.reused,
        per_chunk,
        r.skipped.len(),
        human_bytes(r.bytes),
        r.total_time.as_secs_f64()
    );
    println!(
        "  parts: text {}, postings {}, vectors+graph {}, header {} ({} per chunk)",
        human_bytes(r.sizes.text),
        human_bytes(r.sizes.postings),
        human_bytes(r.sizes.vectors_and_graph),
        human_bytes(r.sizes.header),
        human_bytes(r.bytes / r.chunks.max(1)),
    );
    Ok(())
}

fn load(path: &PathBuf) -> Result<Bundle> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    Bundle::from_bytes(&bytes).with_context(|| format!("loading {}", path.display()))
}

fn query(
    path: &PathBuf,
    text: &str,
    mode: Mode,
    k: usize,
    json: bool,
    explain: bool,
    model_dir: Option<PathBuf>,
) -> Result<()> {
    let bundle = load(path)?;
    let vector = if mode == Mode::Keyword {
        None
    } else {
        let model = Model::open(&model_dir.unwrap_or_else(model::default_dir))?;
        bundle.check_model(&model.manifest.sha256)?;
        Some(model.embedder()?.embed(text)?)
    };
    let engine = Engine::new(bundle);
    let started = std::time::Instant::now();
    let results = engine.search(text, vector.as_deref(), mode, k);
    let took = started.elapsed();
    if json {
        println!("{}", serde_json::to_string_pretty(&results)?);
        return Ok(());
    }
    if results.no_good_match {
        println!("No good match in these docs. Closest sources:");
    }
    for (i, group) in results.pages.iter().enumerate() {
        println!("{}. {}  {}", i + 1, group.title, group.url);
        for hit in &group.hits {
            println!("   - {}  {}", hit.breadcrumb, hit.url);
            println!("     {}", hit.excerpt.replace('\n', " "));
            if explain {
                let sig = |s: Option<lantern_engine::search::Signal>| {
                    s.map(|s| format!("#{} ({:.3})", s.rank, s.score))
                        .unwrap_or_else(|| "-".into())
                };
                println!(
                    "     score {:.4}  keyword {}  vector {}",
                    hit.score,
                    sig(hit.keyword),
                    sig(hit.vector)
                );
            }
        }
    }
    if explain {
        println!(
            "mode {:?}, best cosine {}, search {:.2} ms",
            results.mode,
            results
                .best_cosine
                .map(|c| format!("{c:.3}"))
                .unwrap_or_else(|| "-".into()),
            took.as_secs_f64() * 1000.0
        );
    }
    Ok(())
}

fn run_eval(args: EvalArgs) -> Result<()> {
    use lantern::eval;
    let bundle = load(&args.bundle)?;
    let model = Model::open(&args.model_dir.unwrap_or_else(model::default_dir))?;
    bundle.check_model(&model.manifest.sha256)?;
    let embedder = model.embedder()?;
    let questions = eval::load_golden(&args.golden)?;
    let threshold = bundle.header.abstain_cosine;
    let engine = Engine::new(bundle);
    let by_mode = eval::run(&engine, &embedder, &questions)?;

    let mut groups: Vec<String> = questions.iter().map(|q| q.group()).collect();
    groups.sort();
    groups.dedup();
    println!(
        "{} questions ({} answerable) from {}; page-level metrics",
        questions.len(),
        questions.iter().filter(|q| q.answerable()).count(),
        args.golden.display()
    );
    println!(
        "{:<8} {:<13} {:>4} {:>6} {:>6} {:>6} {:>7} {:>8} {:>10}",
        "mode", "questions", "n", "hit@1", "hit@3", "hit@5", "MRR@10", "nDCG@10", "sect.hit@5"
    );
    let fmt = |x: f64| format!("{x:.3}");
    let mut report = serde_json::Map::new();
    for mode in eval::MODES {
        let name = eval::mode_name(mode);
        let outcomes = &by_mode[name];
        let mut rows = vec![("all".to_string(), outcomes.iter().collect::<Vec<_>>())];
        if groups.len() > 1 {
            for g in &groups {
                rows.push((
                    g.clone(),
                    outcomes.iter().filter(|o| &o.group == g).collect(),
                ));
            }
        }
        let mut mode_json = serde_json::Map::new();
        for (label, set) in rows {
            let m = eval::metrics(&set);
            if m.n == 0 {
                continue;
            }
            println!(
                "{:<8} {:<13} {:>4} {:>6} {:>6} {:>6} {:>7} {:>8} {:>10}",
                name,
                label,
                m.n,
                fmt(m.hit1),
                fmt(m.hit3),
                fmt(m.hit5),
                fmt(m.mrr10),
                fmt(m.ndcg10),
                m.section_hit5.map(fmt).unwrap_or_else(|| "-".into())
            );
            mode_json.insert(label, serde_json::to_value(&m)?);
        }
        report.insert(name.into(), serde_json::Value::Object(mode_json));
    }

    println!();
    for mode in eval::MODES {
        let name = eval::mode_name(mode);
        let o = &by_mode[name];
        let ms: Vec<f64> = o.iter().map(|o| o.ms).collect();
        let (abstain, answered) = eval::abstention(o);
        println!(
            "{:<8} latency p50 {:.2} ms, p95 {:.2} ms{}",
            name,
            eval::percentile(ms.clone(), 0.5),
            eval::percentile(ms, 0.95),
            match (abstain, answered) {
                (Some(a), Some(b)) => format!(
                    "; abstained on {:.0}% of unanswerable, answered {:.0}% of answerable",
                    a * 100.0,
                    b * 100.0
                ),
                _ => String::new(),
            }
        );
    }
    let hybrid = &by_mode["hybrid"];
    if let (Some(auc), Some((t, bal))) = (eval::auroc(hybrid), eval::calibrate(hybrid)) {
        println!(
            "abstention signal (best dense cosine): AUROC {auc:.3}; best threshold {t:.3} (balanced accuracy {bal:.3}); bundle uses {threshold:.3}"
        );
        report.insert("calibration".into(), serde_json::json!({"auroc": auc, "threshold": t, "balanced_accuracy": bal, "bundle_threshold": threshold}));
    }
    let misses: Vec<&lantern::eval::Outcome> = hybrid
        .iter()
        .filter(|o| o.answerable && o.page_rank.is_none_or(|r| r > 5))
        .collect();
    if !misses.is_empty() {
        println!("hybrid misses (expected page not in top 5):");
        for m in &misses {
            let q = questions.iter().find(|q| q.id == m.id).expect("known id");
            println!(
                "  {:<14} rank {:<5} {:?} -> {}",
                m.id,
                m.page_rank
                    .map(|r| r.to_string())
                    .unwrap_or_else(|| ">10".into()),
                q.query,
                q.expected.join(", ")
            );
        }
    }
    if let Some(path) = &args.json {
        report.insert("outcomes".into(), serde_json::to_value(&by_mode)?);
        lantern::write_atomic(path, serde_json::to_string_pretty(&report)?.as_bytes())?;
    }

    // The gate.
    let all = eval::metrics(&hybrid.iter().collect::<Vec<_>>());
    let mut failures = Vec::new();
    if let Some(min) = args.min_hit5 {
        if all.hit5 < min {
            failures.push(format!("hybrid hit@5 {:.3} < {min}", all.hit5));
        }
    }
    if let Some(min) = args.min_mrr {
        if all.mrr10 < min {
            failures.push(format!("hybrid MRR@10 {:.3} < {min}", all.mrr10));
        }
    }
    if args.gate_types {
        let hits5 = |mode: &str, g: &str| {
            by_mode[mode]
                .iter()
                .filter(|o| o.group == g && o.page_rank.is_some_and(|r| r <= 5))
                .count()
        };
        for g in &groups {
            let (h, k) = (hits5("hybrid", g), hits5("keyword", g));
            if h + 1 < k {
                failures.push(format!(
                    "hybrid finds {h} {g} questions in the top 5, keyword {k}"
                ));
            }
        }
    }
    if !failures.is_empty() {
        anyhow::bail!("quality gate failed: {}", failures.join("; "));
    }
    Ok(())
}

fn run_ask(
    bundle: &PathBuf,
    text: Option<String>,
    proxy: &str,
    golden: Option<PathBuf>,
    model_dir: Option<PathBuf>,
) -> Result<()> {
    use lantern::ask::{ask, AskOutcome};
    let bundle = load(bundle)?;
    let model = Model::open(&model_dir.unwrap_or_else(model::default_dir))?;
    bundle.check_model(&model.manifest.sha256)?;
    let embedder = model.embedder()?;
    let engine = Engine::new(bundle);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let Some(golden) = golden else {
        let q = text.context("give a question, or --golden FILE")?;
        let v = embedder.embed(&q)?;
        match rt.block_on(ask(&engine, Some(&v), proxy, &q))? {
            AskOutcome::Answered { text, passages, .. } => {
                println!("{text}\n");
                for p in passages {
                    println!("[{}] {}  {}", p.n, p.breadcrumb, p.url);
                }
            }
            AskOutcome::Abstained { reason, .. } => println!("No answer ({reason:?})."),
        }
        return Ok(());
    };
    // Opt-in answer evaluation over a golden set.
    let questions = lantern::eval::load_golden(&golden)?;
    let (mut answerable, mut answered, mut unanswerable, mut abstained) = (0, 0, 0, 0);
    let (mut model_answers, mut verified) = (0, 0);
    for q in &questions {
        let v = embedder.embed(&q.query)?;
        let out = rt.block_on(ask(&engine, Some(&v), proxy, &q.query))?;
        let ok = matches!(out, AskOutcome::Answered { .. });
        match &out {
            AskOutcome::Answered { .. } => {
                model_answers += 1;
                verified += 1;
            }
            AskOutcome::Abstained {
                reason,
                model_calls,
            } => {
                if *model_calls > 0 && *reason != lantern_engine::answer::Abstention::NotInContext {
                    model_answers += 1;
                }
            }
        }
        if q.answerable() {
            answerable += 1;
            answered += ok as usize;
        } else {
            unanswerable += 1;
            abstained += (!ok) as usize;
        }
        println!("{:<10} {}", q.id, if ok { "answered" } else { "abstained" });
    }
    let pct = |a: usize, b: usize| {
        if b == 0 {
            0.0
        } else {
            100.0 * a as f64 / b as f64
        }
    };
    println!(
        "coverage {:.0}% of answerable; citation validity {:.0}% of model answers; abstention {:.0}% of unanswerable",
        pct(answered, answerable),
        pct(verified, model_answers),
        pct(abstained, unanswerable)
    );
    Ok(())
}

fn inspect(path: &PathBuf) -> Result<()> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let bundle =
        Bundle::from_bytes(&bytes).with_context(|| format!("loading {}", path.display()))?;
    let h = &bundle.header;
    let s = bundle.part_sizes();
    println!(
        "bundle      {} ({})",
        path.display(),
        human_bytes(bytes.len())
    );
    println!(
        "model       {} sha256 {} dim {} max tokens {}",
        h.model.id, h.model.sha256, h.model.dim, h.model.max_tokens
    );
    println!(
        "counts      {} pages, {} chunks, {} terms",
        h.pages, h.chunks, h.terms
    );
    println!(
        "bm25        k1 {} b {} heading weight {}",
        h.bm25.k1, h.bm25.b, h.bm25.heading_weight
    );
    println!(
        "vectors     int8, scale {:.1}; abstain below cosine {:.2}",
        h.quantization.scale, h.abstain_cosine
    );
    println!(
        "parts       text {}, postings {}, vectors+graph {}, header {}",
        human_bytes(s.text),
        human_bytes(s.postings),
        human_bytes(s.vectors_and_graph),
        human_bytes(s.header)
    );
    Ok(())
}

fn human_bytes(n: usize) -> String {
    match n {
        n if n >= 1 << 20 => format!("{:.2} MiB", n as f64 / (1u64 << 20) as f64),
        n if n >= 1 << 10 => format!("{:.1} KiB", n as f64 / 1024.0),
        n => format!("{n} B"),
    }
}
