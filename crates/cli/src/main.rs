//! The `lantern` command: parses arguments and dispatches to the libraries (indexer, server,
//! embedder). Nothing else happens here.

mod args;

// The static Linux build (musl) takes mimalloc: musl's own allocator made building 34% slower.
#[cfg(target_env = "musl")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Parser;

use args::{Cli, Command};
use lantern_indexer::site::{site, SiteOptions};
use lantern_server::{ask, eval, mcp, proxy, report, serve, tune, Searcher};

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of our output went away (`lantern query ... | head`): done, as ripgrep.
        Err(e) if broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Mcp {
            bundle,
            http,
            proxy,
            cache_dir,
            refresh,
            model,
        } => {
            let opts = mcp::McpOptions {
                bundle,
                model: std::sync::Arc::new(model.load()?),
                proxy,
                http,
                cache_dir,
                refresh,
            };
            let rt = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()?;
            rt.block_on(mcp::serve(opts))
        }
        command => run_writing(command),
    }
}

/// The commands that print to stdout. (Over stdio, MCP's stdout carries the protocol alone,
/// so it is never locked for it.)
fn run_writing(command: Command) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    match command {
        Command::Mcp { .. } => anyhow::bail!("lantern mcp does not write reports"),
        Command::Build(args) => {
            // The flags and the site are checked before the model loads.
            let plan = lantern_indexer::BuildPlan::new(args.flags())?;
            let model = args.model.load()?;
            let outcome = plan.run(&model)?;
            for line in lantern_indexer::source::skipped_lines(outcome.skipped()) {
                eprintln!("warning: {line}");
            }
            for w in outcome.warnings() {
                eprintln!("warning: {w}");
            }
            write!(stdout, "{outcome}")?;
        }
        Command::Site {
            docs,
            out,
            title,
            cache,
            model,
        } => {
            let model = model.load()?;
            let opts = SiteOptions {
                docs,
                out,
                title,
                cache,
            };
            let r = site(&opts, &model)?;
            for w in &r.build.warnings {
                eprintln!("warning: {w}");
            }
            writeln!(
                stdout,
                "rendered {} pages into {}\n{}",
                r.pages,
                opts.out.display(),
                r.build
            )?;
        }
        Command::Query {
            bundle,
            text,
            mode,
            k,
            json,
            explain,
            filters,
            query_encoder,
            model,
        } => query_command(
            &bundle,
            &text,
            (mode, k, &filters),
            (json, explain),
            query_encoder,
            &model,
            &mut stdout,
        )?,
        Command::Inspect { bundle } => {
            write!(
                stdout,
                "{}",
                report::bundle_text(&Searcher::open(&bundle, None)?)
            )?;
        }
        Command::Tune {
            sets,
            grid,
            json,
            query_encoder,
            model,
        } => tune::tune(
            &sets,
            &model.load()?,
            query_encoder,
            grid,
            json.as_deref(),
            &mut stdout,
        )?,
        Command::Eval(args) => {
            let mut searcher = Searcher::open(&args.bundle, Some(&args.model.load()?))?;
            searcher.set_encoder(args.query_encoder)?;
            if let Some(path) = &args.query_vectors {
                searcher.use_query_vectors(path)?;
            }
            eval::evaluate(
                &searcher,
                &args.golden,
                &args.gate(),
                args.json.as_deref(),
                &mut stdout,
            )?;
        }
        Command::Ask {
            bundle,
            text,
            proxy,
            golden,
            verbose,
            model,
        } => ask_command(
            &bundle,
            text,
            &proxy,
            golden.as_deref(),
            verbose,
            &model,
            &mut stdout,
        )?,
        Command::Proxy {
            upstream,
            model,
            addr,
            allow_origin,
            rate,
            bundle,
            first_token_timeout,
            idle_timeout,
            answer_timeout,
            retries,
        } => {
            let mut c = proxy::ProxyConfig::new(&upstream, &model);
            c.allowed_origins = allow_origin;
            c.rate_per_minute = rate;
            c.first_token_timeout = std::time::Duration::from_secs(first_token_timeout);
            c.idle_timeout = std::time::Duration::from_secs(idle_timeout);
            c.answer_timeout = std::time::Duration::from_secs(answer_timeout);
            c.retries = retries;
            if let Some(path) = bundle {
                let searcher = Searcher::open(&path, None)?;
                c.bundle = Some(std::sync::Arc::new(searcher.into_engine().into_bundle()));
            }
            proxy::run(c, addr)?;
        }
        Command::Serve { dir, addr } => serve::serve(dir, addr)?,
        Command::Embed { text, model } => {
            let v = model.load()?.embedder()?.embed(&text)?;
            writeln!(stdout, "{}", serde_json::to_string(&v)?)?;
        }
    }
    Ok(())
}

/// `lantern ask`: one question through the answer proxy, or a golden set's.
fn ask_command(
    bundle: &std::path::Path,
    text: Option<String>,
    proxy: &str,
    golden: Option<&std::path::Path>,
    verbose: bool,
    model: &args::ModelArg,
    stdout: &mut impl Write,
) -> Result<()> {
    let searcher = Searcher::open(bundle, Some(&model.load()?))?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    match golden {
        Some(golden) => rt.block_on(ask::evaluate_answers(
            &searcher, proxy, golden, verbose, stdout,
        ))?,
        None => {
            let q = text.context("give a question, or --golden FILE")?;
            let mut attempts = Vec::new();
            let outcome = rt.block_on(ask::ask_observed(&searcher, proxy, &q, &mut |a| {
                attempts.push(a)
            }));
            if verbose {
                for a in &attempts {
                    eprintln!("attempt {}: {:?}\n  -> {}", a.number, a.text, a.result);
                }
            }
            write!(stdout, "{}", report::answer_text(&outcome?))?;
        }
    }
    Ok(())
}

/// `lantern query`: one search, as text or JSON.
fn query_command(
    bundle: &std::path::Path,
    text: &str,
    (mode, k, filters): (lantern_engine::Mode, usize, &[(String, String)]),
    (json, explain): (bool, bool),
    query_encoder: lantern_server::QueryEncoder,
    model: &args::ModelArg,
    stdout: &mut impl Write,
) -> Result<()> {
    let filter = filters
        .iter()
        .fold(lantern_engine::Filter::default(), |f, (k, v)| f.with(k, v));
    let needs_model = mode != lantern_engine::Mode::Keyword
        && query_encoder != lantern_server::QueryEncoder::Table;
    let model = needs_model.then(|| model.load()).transpose()?;
    let mut searcher = Searcher::open(bundle, model.as_ref())?;
    searcher.set_encoder(query_encoder)?;
    let started = std::time::Instant::now();
    let results = searcher.search_filtered(text, mode, k, &filter)?;
    let took = started.elapsed();
    if json {
        writeln!(stdout, "{}", serde_json::to_string_pretty(&results)?)?;
    } else {
        write!(stdout, "{}", report::results_text(&results, explain, took))?;
        if explain {
            let read = searcher.shards_read(text, mode, k, &filter)?;
            write!(stdout, "{}", report::shards_text(&read))?;
        }
    }
    Ok(())
}
