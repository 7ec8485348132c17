//! The UI's plain state: what is loaded, what the status line says, which option is active.
//! No DOM in here, so the logic reads (and tests) like ordinary Rust.

use lantern_engine::{highlight_segments, AskOutcome, Hit, Mode, Results};

use crate::labels::{fill, Labels};
use crate::runtime::Progress;

/// Hits requested per search.
pub const K: u32 = 12;

/// Hits asked for first when the list's texts must be fetched: more than the dialog shows
/// before scrolling at 720 px (3 rows), about what it shows at 1080 (6), so a reader's first
/// screen waits for half the text blocks; the rest of the list follows (bench/typing.sh).
pub const K_FIRST: u32 = 6;

/// What is loaded so far.
#[derive(Clone, Debug, PartialEq)]
pub enum Stage {
    Idle,
    Bundle(Progress),
    Keyword,
    /// Results are shown and the model waits for a question that needs it (see
    /// [`needs_model`]); `quick`: results carry the query table's meaning.
    Ready(bool),
    /// The model is downloading; `quick`: results meanwhile carry the query table's meaning.
    Model(Progress, bool),
    Hybrid,
    /// The reader asked to save data: no model download; `quick` as above.
    SaveData(bool),
    /// The site publishes no model (`lantern build --model quick`); `quick` as above.
    QuickOnly(bool),
    Failed(String),
}

impl Stage {
    /// The status line, in the page's language.
    pub fn status(&self, l: &Labels) -> String {
        match self {
            Stage::Idle => String::new(),
            Stage::Bundle(p) => fill(l.loading_index, &[("size", &mb(p.loaded))]),
            Stage::Keyword => l.keyword_ready.into(),
            Stage::Model(p, quick) => {
                let now = if *quick { l.now_quick } else { l.now_keyword };
                match (p.loaded, p.total) {
                    (0.0, _) => fill(l.loading_model, &[("now", now), ("loaded", "…")]),
                    (loaded, t) if t > 0.0 => fill(
                        l.loading_model_of,
                        &[("now", now), ("loaded", &mb(loaded)), ("total", &mb(t))],
                    ),
                    (loaded, _) => fill(l.loading_model, &[("now", now), ("loaded", &mb(loaded))]),
                }
            }
            Stage::Ready(true) => l.ready_quick.into(),
            Stage::Ready(false) => l.ready_keyword.into(),
            Stage::Hybrid => l.hybrid_ready.into(),
            Stage::SaveData(true) => l.save_data_quick.into(),
            Stage::SaveData(false) => l.save_data_keyword.into(),
            Stage::QuickOnly(true) => l.now_quick.into(),
            Stage::QuickOnly(false) => l.quick_only.into(),
            Stage::Failed(e) => e.clone(),
        }
    }

    /// A short name for tests and styling (`data-stage`).
    pub fn name(&self) -> &'static str {
        match self {
            Stage::Idle => "idle",
            Stage::Bundle(_) => "bundle",
            Stage::Keyword => "keyword",
            Stage::Ready(_) => "ready",
            Stage::Model(..) => "model",
            Stage::Hybrid => "hybrid",
            Stage::SaveData(_) => "save-data",
            Stage::QuickOnly(_) => "quick-only",
            Stage::Failed(_) => "failed",
        }
    }

    /// Something is downloading.
    pub fn loading(&self) -> bool {
        matches!(self, Stage::Model(..) | Stage::Bundle(_))
    }
}

/// Whether results call for the model (23 MB, so only on intent): meaning was asked for
/// (vector mode), or keyword evidence is weak: no good match, or no section holds every word
/// of the question (paraphrases, where meaning helps most). A question whose words a section
/// holds is answered well without it.
pub fn needs_model(r: &Results, mode: Mode) -> bool {
    match mode {
        Mode::Keyword => false,
        Mode::Vector => true,
        Mode::Hybrid => r.no_good_match || !r.all_words,
    }
}

/// How long (ms) a keystroke's search waits before fetching what the loaded index lacks. A
/// reader typing at 80-150 ms a key supersedes it first, so only the words they pause at cost
/// bytes; what is loaded answers at once. A lone word of one or two letters waits longer: it
/// is nearly always the start of a longer word, and its prefix spans much of the dictionary.
pub fn fetch_delay(query: &str) -> u32 {
    let q = query.trim();
    // Chinese and Japanese words are one or two characters: no longer wait for them.
    let cjk = q.chars().any(|c| c as u32 >= 0x2E80);
    if !cjk && !q.contains(char::is_whitespace) && q.chars().count() <= 2 {
        600
    } else {
        150
    }
}

/// Meaning (query table, model) is fetched for results that need it once the reader has
/// paused this long (ms) on that query: a question typed word by word is weak at every word,
/// and the download should start for the question, not its first word.
pub const MEANING_AFTER_MS: u64 = 400;

/// The answer panel's state.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    None,
    Streaming(String),
    Done(AskOutcome),
    Failed(String),
}

/// Hits in display order (grouped by page), the order arrow keys move through.
pub fn flat_hits(results: Option<Results>) -> Vec<Hit> {
    results
        .map(|r| r.pages.into_iter().flat_map(|g| g.hits).collect())
        .unwrap_or_default()
}

/// The same, borrowed: what a keystroke or a pointer move needs without copying the results.
pub fn shown_hits(results: Option<&Results>) -> impl Iterator<Item = &Hit> {
    results
        .into_iter()
        .flat_map(|r| r.pages.iter().flat_map(|g| g.hits.iter()))
}

/// The active option once `new` results replace `old`: the same section if it is still
/// listed (results upgrading under the reader's arrow keys must not change what Enter opens),
/// else the same position, within range.
pub fn keep_active(active: usize, old: &[Hit], new: &[Hit]) -> usize {
    old.get(active)
        .and_then(|h| new.iter().position(|n| n.chunk == h.chunk))
        .unwrap_or_else(|| active.min(new.len().saturating_sub(1)))
}

/// The next active option after an arrow key, wrapping around.
pub fn step(active: usize, len: usize, down: bool) -> usize {
    match (len, down) {
        (0, _) => 0,
        (n, true) => (active + 1) % n,
        (n, false) => (active + n - 1) % n,
    }
}

/// At most this many words ride along in a result link.
const MAX_HIGHLIGHT_WORDS: usize = 8;

/// Where a result leads, by click or by Enter: its section, with the words its excerpt matched.
pub fn hit_link(hit: &Hit, query: &str) -> String {
    let matched: Vec<String> = highlight_segments(&hit.excerpt, &hit.highlights)
        .into_iter()
        .filter(|(_, hl)| *hl)
        .map(|(t, _)| t)
        .collect();
    highlight_url(&hit.url, query, &matched)
}

/// The result link carrying the words to mark on the destination page (`?highlight=`, read by
/// widget.js there): the words the hit's excerpt matched, else the query's longer words.
pub fn highlight_url(url: &str, query: &str, matched: &[String]) -> String {
    fn add(words: &mut Vec<String>, w: &str) {
        let w = lantern_engine::lowercase(w.trim_matches(|c: char| !c.is_alphanumeric()));
        if w.chars().count() >= 2 && !words.contains(&w) && words.len() < MAX_HIGHLIGHT_WORDS {
            words.push(w);
        }
    }
    let mut words: Vec<String> = Vec::new();
    for w in matched {
        add(&mut words, w);
    }
    if words.is_empty() {
        for w in query.split_whitespace().filter(|w| w.chars().count() >= 4) {
            add(&mut words, w);
        }
    }
    if words.is_empty() {
        return url.to_string();
    }
    let (base, fragment) = match url.split_once('#') {
        Some((b, f)) => (b, format!("#{f}")),
        None => (url, String::new()),
    };
    let joiner = if base.contains('?') { '&' } else { '?' };
    format!(
        "{base}{joiner}highlight={}{fragment}",
        encode_component(&words.join(" "))
    )
}

/// Percent-encodes everything but RFC 3986's unreserved characters.
fn encode_component(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn mb(bytes: f64) -> String {
    if bytes >= 1_048_576.0 {
        format!("{} MB", fixed(bytes / 1_048_576.0, 1))
    } else {
        format!("{} KB", fixed(bytes / 1024.0, 0))
    }
}

/// `x` with `decimals` digits after the point, rounded half away from zero. The UI's only
/// way of writing a float: core's float formatting is 17 KB of the module a reader downloads
/// first, for a status line and a "why?" note.
pub fn fixed(x: f64, decimals: u32) -> String {
    let decimals = decimals.min(9);
    let scale = 10u64.pow(decimals);
    let scaled = (x.abs() * scale as f64).round();
    let v = if scaled.is_finite() { scaled as u64 } else { 0 };
    let sign = if x < 0.0 && v > 0 { "-" } else { "" };
    let whole = v / scale;
    if decimals == 0 {
        return format!("{sign}{whole}");
    }
    let frac = (v % scale).to_string();
    let pad = "0".repeat(decimals as usize - frac.len());
    format!("{sign}{whole}.{pad}{frac}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::labels::EN;

    #[test]
    fn short_prefixes_wait_longer_before_fetching() {
        assert_eq!(fetch_delay("o"), 600);
        assert_eq!(fetch_delay(" ow "), 600);
        assert_eq!(fetch_delay("own"), 150);
        assert_eq!(fetch_delay("how do"), 150);
        assert_eq!(fetch_delay("io x"), 150);
        // A Chinese word of two characters is a whole word.
        assert_eq!(fetch_delay("所有"), 150);
    }

    #[test]
    fn the_selected_section_stays_selected_when_results_upgrade() {
        let hit = |chunk| Hit {
            chunk,
            page: 0,
            title: String::new(),
            breadcrumb: String::new(),
            url: String::new(),
            score: 0.0,
            keyword: None,
            vector: None,
            excerpt: String::new(),
            highlights: Vec::new(),
        };
        let old = [hit(1), hit(2), hit(3)];
        assert_eq!(keep_active(1, &old, &[hit(7), hit(3), hit(2)]), 2);
        assert_eq!(keep_active(1, &old, &[hit(7), hit(8), hit(9)]), 1);
        assert_eq!(keep_active(2, &old, &[hit(7)]), 0);
        assert_eq!(keep_active(0, &old, &[]), 0);
    }

    #[test]
    fn the_model_is_wanted_only_when_results_need_meaning() {
        let r = |no_good_match, all_words| Results {
            mode: Mode::Hybrid,
            hits: Vec::new(),
            pages: Vec::new(),
            no_good_match,
            best_cosine: None,
            all_words,
            keyword_strength: 0.0,
            approximate: true,
            unread_script: false,
            missing: Vec::new(),
        };
        // Every word found: keyword evidence answers; the reader does not pay for the model.
        assert!(!needs_model(&r(false, true), Mode::Hybrid));
        // A paraphrase (no section holds every word) or no good match: meaning helps.
        assert!(needs_model(&r(false, false), Mode::Hybrid));
        assert!(needs_model(&r(true, true), Mode::Hybrid));
        // Choosing meaning asks for it; choosing keywords never does.
        assert!(needs_model(&r(false, true), Mode::Vector));
        assert!(!needs_model(&r(true, false), Mode::Keyword));
    }

    #[test]
    fn floats_are_written_without_core_float_formatting() {
        assert_eq!(fixed(2.0, 1), "2.0");
        assert_eq!(fixed(0.12345, 4), "0.1235");
        assert_eq!(fixed(0.05, 3), "0.050");
        assert_eq!(fixed(12.5, 2), "12.50");
        assert_eq!(fixed(511.6, 0), "512");
        assert_eq!(fixed(-1.25, 1), "-1.3");
        assert_eq!(fixed(-0.0001, 2), "0.00");
        assert_eq!(fixed(f64::NAN, 2), "0.00");
        assert_eq!(fixed(0.999, 2), "1.00");
    }

    #[test]
    fn arrows_wrap() {
        assert_eq!(step(0, 3, false), 2);
        assert_eq!(step(2, 3, true), 0);
        assert_eq!(step(5, 0, true), 0);
    }

    #[test]
    fn result_links_carry_the_matched_words() {
        let m = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            highlight_url(
                "/guide/#export",
                "export charts",
                &m(&["Export", "charts", "export"])
            ),
            "/guide/?highlight=export%20charts#export"
        );
        assert_eq!(
            highlight_url("/a.html?v=2", "how do I keep search offline", &[]),
            "/a.html?v=2&highlight=keep%20search%20offline"
        );
        assert_eq!(highlight_url("/a.html#x", "how do I", &[]), "/a.html#x");
        // Whatever a query holds, the link stays one link with one fragment.
        let hostile = highlight_url("/a.html#x", "<script>\"&#?= ünïcode", &m(&["#?&="]));
        assert_eq!(hostile, "/a.html?highlight=script%20%C3%BCn%C3%AFcode#x");
    }

    #[test]
    fn status_shows_model_progress() {
        let p = Progress {
            loaded: 2.0 * 1_048_576.0,
            total: 4.0 * 1_048_576.0,
        };
        let s = Stage::Model(p, false);
        assert_eq!(
            s.status(&EN),
            "Keyword results · loading semantic search 2.0 MB / 4.0 MB"
        );
        assert!(s.loading());
        assert_eq!(s.name(), "model");
        assert_eq!(
            Stage::Model(p, true).status(&EN),
            "Keywords + quick meaning · loading semantic search 2.0 MB / 4.0 MB"
        );
        // In the page's language.
        assert_eq!(
            s.status(crate::labels::for_lang("de")),
            "Stichwort-Ergebnisse · semantische Suche wird geladen 2.0 MB / 4.0 MB"
        );
        assert!(!Stage::SaveData(true).loading());
        assert!(!Stage::QuickOnly(false).loading());
        assert_ne!(
            Stage::QuickOnly(true).status(&EN),
            Stage::SaveData(true).status(&EN)
        );
    }
}
