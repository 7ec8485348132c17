//! Progress of a long step: a bar on a terminal, and a plain line every few seconds where
//! stderr is a log (CI), which a bar would leave silent for the minutes a large site takes.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

/// How often a log gets a line.
const LINE_EVERY: Duration = Duration::from_secs(5);

/// One step's progress, shared by the threads doing it.
pub(crate) enum Progress {
    Hidden,
    Bar(ProgressBar),
    Lines(Lines),
}

pub(crate) struct Lines {
    name: String,
    total: u64,
    done: AtomicU64,
    started: Instant,
    last: Mutex<Instant>,
}

impl Progress {
    /// `total` units of `name` ("sections") to do; nothing shown when `name` is `None`.
    pub(crate) fn new(name: Option<&str>, total: usize) -> Self {
        let Some(name) = name.filter(|_| total > 0) else {
            return Self::Hidden;
        };
        if std::io::stderr().is_terminal() {
            let bar = ProgressBar::new(total as u64);
            bar.set_style(
                ProgressStyle::with_template(&format!(
                    "embedding {{bar:30}} {{pos}}/{{len}} {name} ({{per_sec}}, eta {{eta}})"
                ))
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            return Self::Bar(bar);
        }
        let now = Instant::now();
        Self::Lines(Lines {
            name: name.to_string(),
            total: total as u64,
            done: AtomicU64::new(0),
            started: now,
            last: Mutex::new(now),
        })
    }

    /// `n` more units done.
    pub(crate) fn inc(&self, n: u64) {
        match self {
            Self::Hidden => {}
            Self::Bar(bar) => bar.inc(n),
            Self::Lines(lines) => {
                let done = lines.done.fetch_add(n, Ordering::Relaxed) + n;
                let Ok(mut last) = lines.last.try_lock() else {
                    return;
                };
                if last.elapsed() >= LINE_EVERY && done < lines.total {
                    *last = Instant::now();
                    eprintln!("{}", lines.line(done, lines.started.elapsed()));
                }
            }
        }
    }

    /// The step is over: the bar goes, a log gets its last line.
    pub(crate) fn finish(&self) {
        match self {
            Self::Hidden => {}
            Self::Bar(bar) => bar.finish_and_clear(),
            Self::Lines(lines) => {
                let done = lines.done.load(Ordering::Relaxed);
                // A step shorter than one interval says nothing: the summary says enough.
                if lines.started.elapsed() >= LINE_EVERY {
                    eprintln!("{}", lines.line(done, lines.started.elapsed()));
                }
            }
        }
    }
}

impl Lines {
    fn line(&self, done: u64, elapsed: Duration) -> String {
        let secs = elapsed.as_secs_f64().max(1e-3);
        let rate = done as f64 / secs;
        let left = if done >= self.total {
            format!("done in {}", clock(secs))
        } else if rate > 0.0 {
            format!("about {} left", clock((self.total - done) as f64 / rate))
        } else {
            "starting".to_string()
        };
        format!(
            "embedding: {done}/{} {} ({:.0}%, {rate:.1}/s, {left})",
            self.total,
            self.name,
            done as f64 * 100.0 / self.total as f64
        )
    }
}

/// Seconds as `1m 05s` or `42s`.
fn clock(secs: f64) -> String {
    let s = secs.round() as u64;
    if s >= 60 {
        format!("{}m {:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_line_says_count_rate_and_time_left() {
        let lines = Lines {
            name: "sections".into(),
            total: 1000,
            done: AtomicU64::new(0),
            started: Instant::now(),
            last: Mutex::new(Instant::now()),
        };
        assert_eq!(
            lines.line(250, Duration::from_secs(10)),
            "embedding: 250/1000 sections (25%, 25.0/s, about 30s left)"
        );
        assert_eq!(
            lines.line(1000, Duration::from_secs(75)),
            "embedding: 1000/1000 sections (100%, 13.3/s, done in 1m 15s)"
        );
    }
}
