//! Text analysis for keyword search, shared by the builder and every runtime so a query's terms
//! match the index's terms:
//!
//! - Unicode word segmentation; `C++` and `C#` stay whole;
//! - identifiers yield themselves and their parts (`max_tokens`, `getElementById`,
//!   `HTTPServer`), so both the identifier and its words find the section;
//! - lowercasing, then the Snowball stemmer of the page's language (English stop words for
//!   English), then accent folding, so `naïve` and `naive` are one term;
//! - Chinese, Japanese and Korean runs indexed as overlapping character pairs (as Lucene's CJK
//!   analyzer does) instead of single characters, which match almost anything.

use rust_stemmers::{Algorithm, Stemmer};
use serde::{Deserialize, Serialize};
use unicode_segmentation::UnicodeSegmentation;

/// Written into the bundle so a runtime can refuse an index analyzed differently.
pub const ANALYZER_VERSION: u32 = 3;

/// Words too common to tell chunks apart. Kept short: in docs, "not", "only", "all" carry meaning.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "can", "do", "does", "for", "from",
    "has", "have", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "of", "on", "or",
    "our", "so", "than", "that", "the", "their", "then", "there", "these", "this", "those", "to",
    "was", "we", "were", "what", "when", "where", "which", "while", "who", "why", "will", "with",
    "you", "your",
];

/// A page's language, as far as analysis cares: which stemmer its words get.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Lang {
    /// No stemming (languages without a Snowball stemmer, Chinese, Japanese, Korean...).
    None,
    /// English (also the English stop words).
    English,
    /// Arabic.
    Arabic,
    /// Danish.
    Danish,
    /// Dutch.
    Dutch,
    /// Finnish.
    Finnish,
    /// French.
    French,
    /// German.
    German,
    /// Greek.
    Greek,
    /// Hungarian.
    Hungarian,
    /// Italian.
    Italian,
    /// Norwegian.
    Norwegian,
    /// Portuguese.
    Portuguese,
    /// Romanian.
    Romanian,
    /// Russian.
    Russian,
    /// Spanish.
    Spanish,
    /// Swedish.
    Swedish,
    /// Tamil.
    Tamil,
    /// Turkish.
    Turkish,
}

impl Lang {
    /// The language of a BCP 47 tag (`en`, `de-CH`, `pt_BR`...); unknown tags are `None`.
    pub fn from_tag(tag: &str) -> Lang {
        let primary = tag
            .split(['-', '_'])
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        match primary.as_str() {
            "en" => Lang::English,
            "ar" => Lang::Arabic,
            "da" => Lang::Danish,
            "nl" => Lang::Dutch,
            "fi" => Lang::Finnish,
            "fr" => Lang::French,
            "de" => Lang::German,
            "el" => Lang::Greek,
            "hu" => Lang::Hungarian,
            "it" => Lang::Italian,
            "no" | "nb" | "nn" => Lang::Norwegian,
            "pt" => Lang::Portuguese,
            "ro" => Lang::Romanian,
            "ru" => Lang::Russian,
            "es" => Lang::Spanish,
            "sv" => Lang::Swedish,
            "ta" => Lang::Tamil,
            "tr" => Lang::Turkish,
            _ => Lang::None,
        }
    }

    /// Whether this build stems the language's words as the indexer did: English and the
    /// languages without a stemmer always; the others with the feature `all-languages` (on by
    /// default). The reader's first download for an English site leaves it off: seventeen more
    /// Snowball stemmers are 30 KB of it (brotli).
    pub fn stemmed_here(self) -> bool {
        cfg!(feature = "all-languages") || self.stemmed_without_all_languages()
    }

    /// Whether the build without `all-languages` stems the language: what decides which UI
    /// module a site publishes.
    pub fn stemmed_without_all_languages(self) -> bool {
        matches!(self, Lang::None | Lang::English)
    }

    fn algorithm(self) -> Option<Algorithm> {
        // Without the feature, the other stemmers are unreachable and left out of the build.
        if !self.stemmed_here() {
            return None;
        }
        Some(match self {
            Lang::None => return None,
            Lang::English => Algorithm::English,
            Lang::Arabic => Algorithm::Arabic,
            Lang::Danish => Algorithm::Danish,
            Lang::Dutch => Algorithm::Dutch,
            Lang::Finnish => Algorithm::Finnish,
            Lang::French => Algorithm::French,
            Lang::German => Algorithm::German,
            Lang::Greek => Algorithm::Greek,
            Lang::Hungarian => Algorithm::Hungarian,
            Lang::Italian => Algorithm::Italian,
            Lang::Norwegian => Algorithm::Norwegian,
            Lang::Portuguese => Algorithm::Portuguese,
            Lang::Romanian => Algorithm::Romanian,
            Lang::Russian => Algorithm::Russian,
            Lang::Spanish => Algorithm::Spanish,
            Lang::Swedish => Algorithm::Swedish,
            Lang::Tamil => Algorithm::Tamil,
            Lang::Turkish => Algorithm::Turkish,
        })
    }
}

/// Turns text into index terms.
#[derive(Default)]
pub struct Analyzer {}

/// One word of the input: where it is and the term it becomes (`None` for a stop word).
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    /// Byte range in the analyzed text.
    pub start: usize,
    pub end: usize,
    pub term: Option<String>,
}

/// Chinese, Japanese and Korean letters: runs of them are indexed as character pairs.
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF      // Hiragana, Katakana
        | 0x3400..=0x4DBF    // CJK Extension A
        | 0x4E00..=0x9FFF    // CJK Unified Ideographs
        | 0xAC00..=0xD7AF    // Hangul syllables
        | 0xF900..=0xFAFF    // CJK compatibility ideographs
        | 0x20000..=0x2FFFF) // Extensions B and later
}

fn is_cjk_word(w: &str) -> bool {
    !w.is_empty() && w.chars().all(is_cjk)
}

pub use crate::fold::fold;

impl Analyzer {
    /// Every word of `text` in order, stop words included (as `term: None`), so phrase checks
    /// and highlights can see positions. Identifier parts follow their identifier; CJK runs
    /// become overlapping pairs.
    pub fn tokens(&self, text: &str, lang: Lang) -> Vec<Token> {
        let stemmer = lang.algorithm().map(Stemmer::create);
        let mut out = Vec::new();
        let mut run: Option<(usize, usize)> = None; // a CJK run being collected
        let flush = |run: &mut Option<(usize, usize)>, out: &mut Vec<Token>| {
            if let Some((s, e)) = run.take() {
                for (a, b) in cjk_pairs(s, &text[s..e]) {
                    out.push(Token {
                        start: a,
                        end: b,
                        term: Some(text[a..b].to_string()),
                    });
                }
            }
        };
        for (start, word) in words(text) {
            // Word segmentation splits CJK text character by character: join adjacent ones.
            if is_cjk_word(word) {
                match &mut run {
                    Some((_, e)) if *e == start => *e = start + word.len(),
                    _ => {
                        flush(&mut run, &mut out);
                        run = Some((start, start + word.len()));
                    }
                }
                continue;
            }
            flush(&mut run, &mut out);
            for (s, part) in split_identifier(start, word) {
                out.push(Token {
                    start: s,
                    end: s + part.len(),
                    term: term_with(part, lang, stemmer.as_ref()),
                });
            }
        }
        flush(&mut run, &mut out);
        out
    }

    /// Index terms of `text`, stop words dropped.
    pub fn terms(&self, text: &str, lang: Lang) -> Vec<String> {
        self.tokens(text, lang)
            .into_iter()
            .filter_map(|t| t.term)
            .collect()
    }

    /// The term for one word in `lang`, or `None` for a stop word.
    pub fn term(&self, word: &str, lang: Lang) -> Option<String> {
        term_with(word, lang, lang.algorithm().map(Stemmer::create).as_ref())
    }

    /// The terms a query word may stand for in any of `langs` (the bundle's languages), or
    /// none when it is a stop word in all of them.
    pub fn alternatives(&self, word: &str, langs: &[Lang]) -> Vec<String> {
        // Sorted and once each, by insertion: a handful of languages at most.
        let mut out: Vec<String> = Vec::new();
        for term in langs.iter().filter_map(|&l| self.term(word, l)) {
            if let Err(at) = out.binary_search(&term) {
                out.insert(at, term);
            }
        }
        out
    }

    /// A query's free words as search units: each word, except that consecutive CJK
    /// characters (which word segmentation splits one by one) become overlapping pairs.
    pub fn query_units(&self, words: &[String]) -> Vec<String> {
        let mut out = Vec::new();
        let mut run = String::new();
        let flush = |run: &mut String, out: &mut Vec<String>| {
            if !run.is_empty() {
                out.extend(
                    cjk_pairs(0, run)
                        .into_iter()
                        .map(|(s, e)| run[s..e].to_string()),
                );
                run.clear();
            }
        };
        for w in words {
            if is_cjk_word(w) {
                run.push_str(w);
            } else {
                flush(&mut run, &mut out);
                out.push(w.clone());
            }
        }
        flush(&mut run, &mut out);
        out
    }
}

/// The words of `text` as a reader typed them (`C++` whole): what a query is made of.
pub fn split_words(text: &str) -> Vec<&str> {
    words(text).into_iter().map(|(_, w)| w).collect()
}

/// The words of `text` as written (lowercase, accents folded), without identifier parts or
/// CJK pairs: what quoted phrases are compared with.
pub fn surface_words(text: &str) -> Vec<String> {
    words(text).into_iter().map(|(_, w)| fold(w)).collect()
}

fn term_with(word: &str, lang: Lang, stemmer: Option<&Stemmer>) -> Option<String> {
    if is_cjk_word(word) {
        return Some(word.to_string());
    }
    let lower = crate::case::lowercase(word);
    if lang == Lang::English && STOP_WORDS.binary_search(&lower.as_str()).is_ok() {
        return None;
    }
    // Stem first (the stemmers know their accents), then fold, so both spellings meet.
    let stemmed = match stemmer {
        Some(s) => s.stem(&lower).into_owned(),
        None => lower,
    };
    Some(fold(&stemmed))
}

/// Words of `text` with their byte offsets: runs of letters and digits per Unicode word
/// boundaries, with `++` or `#` kept on a word they follow directly (`C++`, `C#`, `F#`).
fn words(text: &str) -> Vec<(usize, &str)> {
    let segs: Vec<(usize, &str)> = text.split_word_bound_indices().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < segs.len() {
        let (start, w) = segs[i];
        i += 1;
        if !w.chars().any(char::is_alphanumeric) {
            continue;
        }
        let mut end = start + w.len();
        let rest = &text[end..];
        let after_ok = |n: usize| {
            rest[n..]
                .chars()
                .next()
                .is_none_or(|c| !c.is_alphanumeric())
        };
        if rest.starts_with("++") && after_ok(2) {
            end += 2;
        } else if rest.starts_with('#') && after_ok(1) && w.chars().count() <= 2 {
            end += 1;
        }
        while i < segs.len() && segs[i].0 < end {
            i += 1;
        }
        out.push((start, &text[start..end]));
    }
    out
}

/// Overlapping pairs of characters of a CJK run (a lone character stands alone).
fn cjk_pairs(start: usize, run: &str) -> Vec<(usize, usize)> {
    let chars: Vec<(usize, char)> = run.char_indices().collect();
    if chars.len() == 1 {
        return vec![(start, start + run.len())];
    }
    chars
        .windows(2)
        .map(|w| (start + w[0].0, start + w[1].0 + w[1].1.len_utf8()))
        .collect()
}

/// An identifier yields itself and, when it has parts, each part: split at `.` and apostrophes
/// (`document.getElementById` -> `document`, `getElementById`; `widgets.draw_chart` ->
/// `widgets`, `draw_chart`, as API docs write a name their readers type alone), each of
/// those at `_` (`draw`, `chart`), and each of those at case changes (`get`, `Element`, `By`,
/// `Id`; `HTTPServer` -> `HTTP`, `Server`).
fn split_identifier(start: usize, word: &str) -> Vec<(usize, &str)> {
    let mut out = vec![(start, word)];
    let dotted = segments(word, |c| matches!(c, '.' | '\'' | '\u{2019}'));
    let whole_is_one = dotted.len() == 1 && dotted[0].1.len() == word.len();
    for (off, seg) in dotted {
        if !whole_is_one {
            out.push((start + off, seg));
        }
        let snake = segments(seg, |c| c == '_');
        let seg_is_one = snake.len() == 1 && snake[0].1.len() == seg.len();
        for (off2, part) in snake {
            if !seg_is_one {
                out.push((start + off + off2, part));
            }
            let cases = case_parts(part);
            if cases.len() > 1 {
                out.extend(cases.into_iter().map(|(a, p)| (start + off + off2 + a, p)));
            }
        }
    }
    out
}

/// The next finer parts of an identifier, as [`split_identifier`] indexes them: at dots and
/// apostrophes, else at `_`, else at case changes (`status.HTTP_201_CREATED` -> `status`,
/// `HTTP_201_CREATED`; that -> `HTTP`, `201`, `CREATED`). None for a plain word.
pub(crate) fn identifier_parts(word: &str) -> Vec<&str> {
    for parts in [
        segments(word, |c| matches!(c, '.' | '\'' | '\u{2019}')),
        segments(word, |c| c == '_'),
        case_parts(word),
    ] {
        let plain = parts.len() == 1 && parts[0].1.len() == word.len();
        if !parts.is_empty() && !plain {
            return parts.into_iter().map(|(_, p)| p).collect();
        }
    }
    Vec::new()
}

/// The pieces of `word` between separators, each with its offset, if it holds a letter or digit.
fn segments(word: &str, is_sep: impl Fn(char) -> bool) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut from = 0;
    for (i, c) in word.char_indices().chain([(word.len(), '.')]) {
        if i == word.len() || is_sep(c) {
            let seg = &word[from..i];
            if seg.chars().any(char::is_alphanumeric) {
                out.push((from, seg));
            }
            from = i + c.len_utf8();
        }
    }
    out
}

/// `getElementById` -> `get`, `Element`, `By`, `Id`; `HTTPServer` -> `HTTP`, `Server`.
fn case_parts(seg: &str) -> Vec<(usize, &str)> {
    let chars: Vec<(usize, char)> = seg.char_indices().collect();
    let mut out = Vec::new();
    let mut from = 0;
    for (k, &(i, c)) in chars.iter().enumerate().skip(1) {
        let prev = chars[k - 1].1;
        let next = chars.get(k + 1).map(|n| n.1);
        let upper_after_lower = c.is_uppercase() && prev.is_lowercase();
        let end_of_acronym =
            c.is_uppercase() && prev.is_uppercase() && next.is_some_and(char::is_lowercase);
        if upper_after_lower || end_of_acronym {
            out.push((from, &seg[from..i]));
            from = i;
        }
    }
    out.push((from, &seg[from..]));
    out
}

/// The languages a query word may mean: the pages' own, English when they state none.
pub(crate) fn query_langs(page_langs: &[Lang]) -> Vec<Lang> {
    if page_langs.is_empty() {
        vec![Lang::English]
    } else {
        page_langs.to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EN: Lang = Lang::English;

    #[test]
    fn stop_words_are_sorted_for_binary_search() {
        let mut sorted = STOP_WORDS.to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, STOP_WORDS);
    }

    #[test]
    fn lowercases_stems_and_drops_stop_words() {
        let a = Analyzer::default();
        assert_eq!(
            a.terms("The Builders are Running the tests", EN),
            vec!["builder", "run", "test"]
        );
    }

    #[test]
    fn positions_cover_the_original_words() {
        let a = Analyzer::default();
        let text = "Héllo, wörld: of";
        let toks = a.tokens(text, EN);
        let words: Vec<&str> = toks.iter().map(|t| &text[t.start..t.end]).collect();
        assert_eq!(words, vec!["Héllo", "wörld", "of"]);
        assert_eq!(toks[2].term, None);
    }

    #[test]
    fn identifiers_yield_whole_and_parts() {
        let a = Analyzer::default();
        let terms = a.terms("use max_tokens here", EN);
        assert!(terms.iter().any(|t| t.starts_with("max_token")));
        assert!(terms.contains(&"max".to_string()));
        assert!(terms.contains(&"token".to_string()));
        let terms = a.terms("call document.getElementById on HTTPServer", EN);
        for t in [
            "document.getelementbyid",
            "document",
            "getelementbyid",
            "get",
            "element",
            "id",
            "httpserver",
            "http",
            "server",
        ] {
            assert!(terms.contains(&t.to_string()), "{t} in {terms:?}");
        }
        // A dotted API name yields its last name whole, as readers type it.
        let terms = a.terms("widgets.draw_chart(values)", EN);
        for t in [
            "widgets.draw_chart",
            "widget",
            "draw_chart",
            "draw",
            "chart",
            "valu",
        ] {
            assert!(terms.contains(&t.to_string()), "{t} in {terms:?}");
        }
        // "by" is a stop word even as a part.
        assert!(!terms.contains(&"by".to_string()));
    }

    #[test]
    fn identifier_parts_go_one_level_finer() {
        assert_eq!(
            identifier_parts("status.HTTP_201_CREATED"),
            ["status", "HTTP_201_CREATED"]
        );
        assert_eq!(
            identifier_parts("HTTP_201_CREATED"),
            ["HTTP", "201", "CREATED"]
        );
        assert_eq!(
            identifier_parts("getElementById"),
            ["get", "Element", "By", "Id"]
        );
        assert_eq!(identifier_parts("editor's"), ["editor", "s"]);
        assert_eq!(identifier_parts("_private"), ["private"]);
        assert!(identifier_parts("plain").is_empty());
        assert!(identifier_parts("HTTP").is_empty());
        assert!(identifier_parts("201").is_empty());
    }

    #[test]
    fn language_names_keep_their_symbols() {
        let a = Analyzer::default();
        assert_eq!(a.terms("C++ and C# and F#", EN), vec!["c++", "c#", "f#"]);
        assert_eq!(a.terms("item #3", EN), vec!["item", "3"]);
    }

    #[test]
    fn accents_fold_on_both_sides() {
        let a = Analyzer::default();
        assert_eq!(a.term("naïve", EN), a.term("naive", EN));
        assert_eq!(a.term("Café", Lang::French), a.term("cafe", Lang::French));
        assert_eq!(fold("ÉCOLE"), "ecole");
    }

    #[test]
    fn languages_stem_their_own_words() {
        let a = Analyzer::default();
        assert_eq!(
            a.term("Konfigurationen", Lang::German),
            a.term("Konfiguration", Lang::German)
        );
        assert_eq!(
            a.term("données", Lang::French),
            a.term("donnée", Lang::French)
        );
        assert_eq!(Lang::from_tag("de-CH"), Lang::German);
        assert_eq!(Lang::from_tag("pt_BR"), Lang::Portuguese);
        assert_eq!(Lang::from_tag("ja"), Lang::None);
        // Only English drops English stop words.
        assert_eq!(a.term("the", EN), None);
        assert!(a.term("die", Lang::German).is_some());
    }

    #[test]
    fn cjk_runs_become_pairs() {
        let a = Analyzer::default();
        assert_eq!(
            a.terms("所有权规则", Lang::None),
            vec!["所有", "有权", "权规", "规则"]
        );
        assert_eq!(a.terms("字", Lang::None), vec!["字"]);
        let text = "設定ファイルを読む";
        for t in a.tokens(text, Lang::None) {
            assert!(text.is_char_boundary(t.start) && text.is_char_boundary(t.end));
            assert_eq!(t.end - t.start, text[t.start..t.end].len());
        }
        let words: Vec<String> = "所 有 权 rules".split(' ').map(String::from).collect();
        assert_eq!(a.query_units(&words), vec!["所有", "有权", "rules"]);
    }

    #[test]
    fn multibyte_separators_keep_positions_on_char_boundaries() {
        let a = Analyzer::default();
        let text = "the mutex\u{2019}s lock and a_b\u{2019}c ÉtéÀ";
        for t in a.tokens(text, EN) {
            assert!(text.is_char_boundary(t.start) && text.is_char_boundary(t.end));
            assert!(!text[t.start..t.end].is_empty());
        }
        assert!(a.terms(text, EN).contains(&"mutex".to_string()));
    }

    #[test]
    fn alternatives_cover_every_language_of_the_bundle() {
        let a = Analyzer::default();
        let alts = a.alternatives("running", &[Lang::English, Lang::German]);
        assert!(alts.contains(&"run".to_string()));
        assert!(alts.len() <= 2);
        assert!(a.alternatives("the", &[Lang::English]).is_empty());
    }
}
