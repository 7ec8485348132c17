//! Text analysis for keyword search: Unicode word segmentation, lowercasing, English stemming and
//! stop words. The builder and the runtime share it, so a query's terms match the index's terms.

use rust_stemmers::{Algorithm, Stemmer};
use unicode_segmentation::UnicodeSegmentation;

/// Written into the bundle so a runtime can refuse an index analyzed differently.
pub const ANALYZER_VERSION: u32 = 1;

/// Words too common to tell chunks apart. Kept short: in docs, "not", "only", "all" carry meaning.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "can", "do", "does", "for", "from",
    "has", "have", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "of", "on", "or",
    "our", "so", "than", "that", "the", "their", "then", "there", "these", "this", "those", "to",
    "was", "we", "were", "what", "when", "where", "which", "while", "who", "why", "will", "with",
    "you", "your",
];

/// Turns text into index terms.
pub struct Analyzer {
    stemmer: Stemmer,
}

impl Default for Analyzer {
    fn default() -> Self {
        Analyzer {
            stemmer: Stemmer::create(Algorithm::English),
        }
    }
}

/// One word of the input: where it is and the term it becomes (`None` for a stop word).
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    /// Byte range in the analyzed text.
    pub start: usize,
    pub end: usize,
    pub term: Option<String>,
}

impl Analyzer {
    /// Every word of `text` in order, stop words included (as `term: None`), so phrase checks
    /// and highlights can see positions.
    pub fn tokens(&self, text: &str) -> Vec<Token> {
        text.split_word_bound_indices()
            .filter(|(_, w)| w.chars().any(char::is_alphanumeric))
            .flat_map(|(start, word)| split_identifier(start, word))
            .map(|(start, word)| Token {
                start,
                end: start + word.len(),
                term: self.term(word),
            })
            .collect()
    }

    /// Index terms of `text`, stop words dropped.
    pub fn terms(&self, text: &str) -> Vec<String> {
        self.tokens(text)
            .into_iter()
            .filter_map(|t| t.term)
            .collect()
    }

    /// The term for one word, or `None` for a stop word.
    pub fn term(&self, word: &str) -> Option<String> {
        let lower = word.to_lowercase();
        if STOP_WORDS.binary_search(&lower.as_str()).is_ok() {
            return None;
        }
        Some(self.stemmer.stem(&lower).into_owned())
    }
}

/// Word segmentation keeps `snake_case` and `a.b` together; docs readers search for the parts
/// too, so an identifier yields itself and, when it has parts, each part.
fn split_identifier(start: usize, word: &str) -> Vec<(usize, &str)> {
    let is_sep = |c: char| matches!(c, '_' | '.' | '\'' | '\u{2019}');
    let mut out = vec![(start, word)];
    if !word.contains(is_sep) {
        return out;
    }
    let mut part_start = 0;
    for (i, c) in word.char_indices().chain([(word.len(), '_')]) {
        if is_sep(c) {
            let part = &word[part_start..i];
            if part.len() < word.len() && part.chars().any(char::is_alphanumeric) {
                out.push((start + part_start, part));
            }
            part_start = i + c.len_utf8();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
            a.terms("The Builders are Running the tests"),
            vec!["builder", "run", "test"]
        );
    }

    #[test]
    fn positions_cover_the_original_words() {
        let a = Analyzer::default();
        let text = "Héllo, wörld: of";
        let toks = a.tokens(text);
        let words: Vec<&str> = toks.iter().map(|t| &text[t.start..t.end]).collect();
        assert_eq!(words, vec!["Héllo", "wörld", "of"]);
        assert_eq!(toks[2].term, None);
    }

    #[test]
    fn identifiers_yield_whole_and_parts() {
        let a = Analyzer::default();
        let terms = a.terms("use max_tokens here");
        assert!(
            terms.contains(&"max_token".to_string()) || terms.contains(&"max_tokens".to_string())
        );
        assert!(terms.contains(&"max".to_string()));
        assert!(terms.contains(&"token".to_string()));
    }

    #[test]
    fn multibyte_separators_keep_positions_on_char_boundaries() {
        let a = Analyzer::default();
        let text = "the mutex\u{2019}s lock and a_b\u{2019}c";
        for t in a.tokens(text) {
            assert!(text.is_char_boundary(t.start) && text.is_char_boundary(t.end));
            assert!(!text[t.start..t.end].is_empty());
        }
        assert!(a.terms(text).contains(&"mutex".to_string()));
    }

    #[test]
    fn cjk_text_is_segmented_not_dropped() {
        let a = Analyzer::default();
        assert!(!a.terms("所有权规则").is_empty());
    }
}
