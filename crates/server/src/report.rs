//! What the CLI prints for a search and for a bundle, as plain text. Document text is untrusted:
//! control characters are replaced, so a document cannot send escape sequences to a terminal.

use std::fmt::Write;
use std::time::Duration;

use lantern_engine::{AskOutcome, Results, Signal};

use crate::searcher::Searcher;

/// Replaces every control character (newlines included) with a space, and so every character
/// that reorders or hides what a terminal shows: bidi controls (U+202E turns "txt.exe" into
/// "exe.txt"), line and paragraph separators, zero-width characters.
pub fn terminal_safe(s: &str) -> String {
    s.chars()
        .map(|c| {
            let hidden =
                lantern_indexer::extract::is_invisible(c) || matches!(c, '\u{2028}' | '\u{2029}');
            if c.is_control() || hidden {
                ' '
            } else {
                c
            }
        })
        .collect()
}

/// Search results as `lantern query` prints them; with `explain`, each retriever's rank and
/// score, and the timing.
pub fn results_text(results: &Results, explain: bool, took: Duration) -> String {
    let mut out = String::new();
    if results.no_good_match {
        out.push_str("No good match in these docs. Closest sources:\n");
    }
    let sig = |s: Option<Signal>| {
        s.map(|s| format!("#{} ({:.3})", s.rank, s.score))
            .unwrap_or_else(|| "-".into())
    };
    for (i, group) in results.pages.iter().enumerate() {
        let _ = writeln!(
            out,
            "{}. {}  {}",
            i + 1,
            terminal_safe(&group.title),
            terminal_safe(&group.url)
        );
        for hit in &group.hits {
            let _ = writeln!(
                out,
                "   - {}  {}",
                terminal_safe(&hit.breadcrumb),
                terminal_safe(&hit.url)
            );
            let _ = writeln!(out, "     {}", terminal_safe(&hit.excerpt));
            if explain {
                let _ = writeln!(
                    out,
                    "     score {:.4}  keyword {}  vector {}",
                    hit.score,
                    sig(hit.keyword),
                    sig(hit.vector)
                );
            }
        }
    }
    if explain {
        let _ = writeln!(
            out,
            "mode {}, best cosine {}, search {:.2} ms",
            results.mode,
            results
                .best_cosine
                .map(|c| format!("{c:.3}"))
                .unwrap_or_else(|| "-".into()),
            took.as_secs_f64() * 1000.0
        );
    }
    out
}

/// What `lantern inspect` prints: model, settings, counts and sizes by part.
pub fn bundle_text(searcher: &Searcher) -> String {
    let b = searcher.engine().bundle();
    let h = b.header();
    let s = b.part_sizes();
    let (path, bytes) = searcher.source();
    let kib = |n: usize| format!("{:.1} KiB", n as f64 / 1024.0);
    let mut out = String::new();
    let _ = writeln!(out, "bundle      {} ({})", path.display(), kib(bytes));
    let _ = writeln!(
        out,
        "model       {} sha256 {} dim {} max tokens {}",
        terminal_safe(&h.model.id),
        terminal_safe(&h.model.sha256),
        h.model.dim,
        h.model.max_tokens
    );
    let _ = writeln!(
        out,
        "counts      {} pages, {} chunks, {} terms",
        h.pages, h.chunks, h.terms
    );
    let _ = writeln!(
        out,
        "bm25f       k1 {}; weight/b: title {}/{}, heading {}/{}, headings above {}/{}, body {}/{}",
        h.bm25.k1,
        h.bm25.title.weight,
        h.bm25.title.b,
        h.bm25.heading.weight,
        h.bm25.heading.b,
        h.bm25.path.weight,
        h.bm25.path.b,
        h.bm25.body.weight,
        h.bm25.body.b
    );
    let _ = writeln!(
        out,
        "vectors     int8, scale {:.1}; {} partition(s), a query reads {}; abstain below cosine {:.2}",
        h.quantization.scale,
        b.vectors().partition_count(),
        b.vectors().probe(),
        h.abstain_cosine
    );
    let _ = writeln!(
        out,
        "parts       text {}, postings {}, vectors {}, header {}, meta {}; {} shards",
        kib(s.text),
        kib(s.postings),
        kib(s.vectors),
        kib(s.header),
        kib(s.meta),
        s.shards
    );
    out
}

/// The files of the split bundle a query read (`lantern query --explain`), in order.
pub fn shards_text(read: &[(String, usize)]) -> String {
    let kib = |n: usize| format!("{:.1} KiB", n as f64 / 1024.0);
    let total: usize = read.iter().map(|(_, n)| n).sum();
    let mut out = format!(
        "split bundle: {} files, {} read (uncompressed)\n",
        read.len(),
        kib(total)
    );
    for (name, n) in read {
        let _ = writeln!(out, "  {name} {}", kib(*n));
    }
    out
}

/// An ask's outcome as `lantern ask` prints it: the answer and its numbered sources, or why
/// there is none.
pub fn answer_text(outcome: &AskOutcome) -> String {
    match outcome {
        AskOutcome::Answered { text, passages, .. } => {
            let mut out = format!("{}\n\n", terminal_safe_lines(text));
            for p in passages {
                let _ = writeln!(
                    out,
                    "[{}] {}  {}",
                    p.n,
                    terminal_safe(&p.breadcrumb),
                    terminal_safe(&p.url)
                );
            }
            out
        }
        AskOutcome::Abstained { reason, .. } => format!("No answer ({reason:?}).\n"),
    }
}

/// Like [`terminal_safe`], but keeps line breaks.
fn terminal_safe_lines(s: &str) -> String {
    s.lines().map(terminal_safe).collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_do_not_reach_the_terminal() {
        assert_eq!(terminal_safe("a\u{1b}[31mred\u{7}\nb"), "a [31mred  b");
        assert_eq!(terminal_safe("x\u{202E}exe.txt\u{2028}y"), "x exe.txt y");
    }
}
