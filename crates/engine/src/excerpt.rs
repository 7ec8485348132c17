//! Excerpts: a window of a chunk's text around its densest cluster of matched words, with
//! the matched words' positions for highlighting.

use std::collections::HashSet;

use crate::analyze::{fold, Analyzer, Lang, Token};
use crate::query::Query;

const EXCERPT_CHARS: usize = 220;

/// Words to highlight: the query's terms and, for the word being typed, its prefix.
pub(crate) type HighlightTerms = (HashSet<String>, Option<String>);

/// Terms whose words get highlighted: the query's terms and, for the typed word, its prefix.
pub(crate) fn highlight_terms(
    analyzer: &Analyzer,
    langs: &[Lang],
    query: &Query,
) -> HighlightTerms {
    let units = analyzer.query_units(&query.words);
    let phrase_units: Vec<String> = query
        .phrases
        .iter()
        .flat_map(|p| analyzer.query_units(p))
        .collect();
    let terms = units
        .iter()
        .chain(&phrase_units)
        .flat_map(|w| analyzer.alternatives(w, langs));
    let prefix = query
        .last_is_prefix
        .then(|| query.words.last().map(|w| fold(w)))
        .flatten();
    (terms.collect(), prefix)
}

/// A window of the chunk text around its densest cluster of matched words, with the byte
/// ranges of those words.
pub(crate) fn excerpt(
    analyzer: &Analyzer,
    text: &str,
    lang: Lang,
    (terms, prefix): &HighlightTerms,
) -> (String, Vec<(u32, u32)>) {
    let tokens = analyzer.tokens(text, lang);
    let is_match = |t: &Token| {
        t.term.as_ref().is_some_and(|term| terms.contains(term))
            || prefix
                .as_ref()
                .is_some_and(|p| fold(&text[t.start..t.end]).starts_with(p.as_str()))
    };
    // Identifier parts and CJK pairs overlap their neighbours: merge them into runs.
    let mut matches: Vec<(usize, usize)> = Vec::new();
    for t in tokens.iter().filter(|t| is_match(t)) {
        match matches.last_mut() {
            Some(last) if t.start < last.1 => last.1 = last.1.max(t.end),
            _ => matches.push((t.start, t.end)),
        }
    }
    // Start at the match whose window holds the most matches.
    let mut start = 0;
    let mut best = 0;
    for &(s, _) in &matches {
        let n = matches
            .iter()
            .filter(|&&(m, _)| m >= s && m < s + EXCERPT_CHARS)
            .count();
        if n > best {
            best = n;
            start = s;
        }
    }
    // Back up a little for context, to a char and word boundary.
    let mut from = start.saturating_sub(40);
    while from > 0 && !text.is_char_boundary(from) {
        from -= 1;
    }
    if from > 0 {
        // Past the whitespace character, which may be wider than a byte (a no-break space).
        if let Some((sp, ws)) = text[from..start]
            .char_indices()
            .find(|(_, c)| c.is_whitespace())
        {
            from += sp + ws.len_utf8();
        }
    }
    let mut to = (from + EXCERPT_CHARS).min(text.len());
    while to < text.len() && !text.is_char_boundary(to) {
        to += 1;
    }
    if to < text.len() {
        if let Some(sp) = text[from..to].rfind(char::is_whitespace) {
            if sp > 0 {
                to = from + sp;
            }
        }
    }
    let lead = if from > 0 { "…" } else { "" };
    let tail = if to < text.len() { "…" } else { "" };
    let body = &text[from..to];
    let excerpt = format!("{lead}{body}{tail}");
    let shift = lead.len();
    // Offsets in UTF-16 code units: what JavaScript strings index by, and the one unit every
    // consumer of `Hit::highlights` (the UI, the JS API, JSON output) reads.
    let utf16 = |b: usize| excerpt[..b].encode_utf16().count() as u32;
    let highlights = matches
        .iter()
        .filter(|&&(s, e)| s >= from && e <= to)
        .map(|&(s, e)| (utf16(s - from + shift), utf16(e - from + shift)))
        .collect();
    (excerpt, highlights)
}

/// Splits `text` at `Hit::highlights`-style UTF-16 ranges into (segment, highlighted) pairs, so a
/// UI can build highlights as separate text nodes and never as markup.
pub fn highlight_segments(text: &str, ranges: &[(u32, u32)]) -> Vec<(String, bool)> {
    let units: Vec<u16> = text.encode_utf16().collect();
    let mut ranges: Vec<(usize, usize)> = ranges
        .iter()
        .map(|&(s, e)| (s as usize, (e as usize).min(units.len())))
        .filter(|(s, e)| s < e)
        .collect();
    // Offsets within one chunk's text: far below 2^32.
    crate::order::sort_by_key(&mut ranges, |&(s, e)| ((s as u64) << 32) | e as u64);
    let mut out = Vec::new();
    let mut at = 0;
    for (s, e) in ranges {
        if s < at {
            continue;
        }
        if s > at {
            out.push((String::from_utf16_lossy(&units[at..s]), false));
        }
        out.push((String::from_utf16_lossy(&units[s..e]), true));
        at = e;
    }
    if at < units.len() {
        out.push((String::from_utf16_lossy(&units[at..]), false));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_at_utf16_ranges() {
        let s = highlight_segments("a café <b> here", &[(2, 6), (7, 10)]);
        assert_eq!(
            s,
            vec![
                ("a ".into(), false),
                ("café".into(), true),
                (" ".into(), false),
                ("<b>".into(), true),
                (" here".into(), false)
            ]
        );
        assert_eq!(
            highlight_segments("x", &[(0, 9), (0, 1)]),
            vec![("x".to_string(), true)]
        );
    }
}
