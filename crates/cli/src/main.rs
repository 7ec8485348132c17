//! The `lantern` command: parses arguments and dispatches to the libraries (indexer, server,
//! embedder). Nothing else happens here.

mod args;

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Parser;

use args::{Cli, Command};
use lantern_embedder::Model;
use lantern_indexer::site::{site, SiteOptions};
use lantern_server::{ask, eval, mcp, proxy, report, serve, tune, Searcher};

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
                model_dir: model.dir(),
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
            let model = Model::open(&args.model.dir())?;
            let opts = args.options()?;
            let r = lantern_indexer::build(&opts, &model.manifest, &model.embedder()?)?;
            for s in &r.skipped {
                eprintln!("warning: skipped {}: {}", s.path, s.reason);
            }
            for w in &r.warnings {
                eprintln!("warning: {w}");
            }
            writeln!(stdout, "{r}")?;
        }
        Command::Site {
            docs,
            out,
            title,
            cache,
            model,
        } => {
            let model = Model::open(&model.dir())?;
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
        } => {
            let filter = filters
                .iter()
                .fold(lantern_engine::Filter::default(), |f, (k, v)| f.with(k, v));
            let dir = model.dir();
            // The packed model is checked against the bundle through the model folder too.
            let needs_model = mode != lantern_engine::Mode::Keyword
                && query_encoder != lantern_server::QueryEncoder::Table;
            let mut searcher = Searcher::open(&bundle, needs_model.then_some(dir.as_path()))?;
            searcher.set_encoder(query_encoder)?;
            let started = std::time::Instant::now();
            let results = searcher.search_filtered(&text, mode, k, &filter)?;
            let took = started.elapsed();
            if json {
                writeln!(stdout, "{}", serde_json::to_string_pretty(&results)?)?;
            } else {
                write!(stdout, "{}", report::results_text(&results, explain, took))?;
                if explain {
                    let read = searcher.shards_read(&text, mode, k, &filter)?;
                    write!(stdout, "{}", report::shards_text(&read))?;
                }
            }
        }
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
            &model.dir(),
            query_encoder,
            grid,
            json.as_deref(),
            &mut stdout,
        )?,
        Command::Eval(args) => {
            let mut searcher = Searcher::open(&args.bundle, Some(&args.model.dir()))?;
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
            model,
        } => {
            let searcher = Searcher::open(&bundle, Some(&model.dir()))?;
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            match golden {
                Some(golden) => rt.block_on(ask::evaluate_answers(
                    &searcher,
                    &proxy,
                    &golden,
                    &mut stdout,
                ))?,
                None => {
                    let q = text.context("give a question, or --golden FILE")?;
                    let outcome = rt.block_on(ask::ask(&searcher, &proxy, &q))?;
                    write!(stdout, "{}", report::answer_text(&outcome))?;
                }
            }
        }
        Command::Proxy {
            upstream,
            model,
            addr,
            allow_origin,
            rate,
            bundle,
        } => {
            let mut c = proxy::ProxyConfig::new(&upstream, &model);
            c.allowed_origins = allow_origin;
            c.rate_per_minute = rate;
            if let Some(path) = bundle {
                let searcher = Searcher::open(&path, None)?;
                c.bundle = Some(std::sync::Arc::new(searcher.into_engine().into_bundle()));
            }
            proxy::run(c, addr)?;
        }
        Command::Serve { dir, addr } => serve::serve(dir, addr)?,
        Command::Embed {
            text,
            packed,
            model,
        } => {
            let model = Model::open(&model.dir())?;
            let embedder = if packed {
                model.packed_embedder()?
            } else {
                model.embedder()?
            };
            let v = embedder.embed(&text)?;
            writeln!(stdout, "{}", serde_json::to_string(&v)?)?;
        }
        Command::PrepareModel {
            onnx,
            tokenizer,
            out,
        } => {
            let m = lantern_indexer::model::prepare_model(&onnx, &tokenizer, &out)?;
            writeln!(
                stdout,
                "prepared {} (sha256 {}) in {}",
                m.model_id,
                m.sha256,
                out.display()
            )?;
        }
    }
    Ok(())
}
