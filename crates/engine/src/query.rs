//! What a reader typed, taken apart: free words, quoted phrases, and whether the last word is
//! still being typed (no trailing space), so it may match as a prefix.

/// Words and phrases read from a query; the rest is ignored so that pasted text cannot make a
/// search expensive.
const MAX_WORDS: usize = 256;
const MAX_PHRASES: usize = 8;

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Query {
    /// Words outside quotes, in order.
    pub words: Vec<String>,
    /// Each quoted phrase as its words.
    pub phrases: Vec<Vec<String>>,
    /// The last free word has no space after it: the reader may still be typing it.
    pub last_is_prefix: bool,
}

impl Query {
    pub fn parse(text: &str) -> Query {
        let mut q = Query::default();
        // Split on double quotes: odd segments are phrases. An unclosed quote runs to the end.
        for (i, seg) in text.split('"').enumerate() {
            let room = MAX_WORDS.saturating_sub(q.words.len());
            let words: Vec<String> = words(seg).into_iter().take(room).collect();
            if i % 2 == 1 {
                if !words.is_empty() && q.phrases.len() < MAX_PHRASES {
                    q.phrases.push(words);
                }
            } else {
                q.words.extend(words);
            }
        }
        let quotes = text.matches('"').count();
        q.last_is_prefix = quotes.is_multiple_of(2)
            && !text.ends_with(|c: char| c.is_whitespace() || c == '"')
            && !q.words.is_empty()
            && text
                .trim_end()
                .ends_with(q.words.last().map(String::as_str).unwrap_or("\u{0}"));
        q
    }
}

fn words(s: &str) -> Vec<String> {
    crate::analyze::split_words(s)
        .into_iter()
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phrases_words_and_prefix() {
        let q = Query::parse("rebuild \"embedding cache\" conf");
        assert_eq!(q.words, vec!["rebuild", "conf"]);
        assert_eq!(
            q.phrases,
            vec![vec!["embedding".to_string(), "cache".to_string()]]
        );
        assert!(q.last_is_prefix);
        assert!(!Query::parse("rebuild ").last_is_prefix);
        assert!(!Query::parse("\"exact phrase\"").last_is_prefix);
        assert!(!Query::parse("what?").last_is_prefix);
    }

    #[test]
    fn huge_queries_are_bounded() {
        let q = Query::parse(&"word ".repeat(9000));
        assert_eq!(q.words.len(), MAX_WORDS);
        let q = Query::parse(&"\"a b\" ".repeat(50));
        assert_eq!(q.phrases.len(), MAX_PHRASES);
    }

    #[test]
    fn unclosed_quote_is_a_phrase_to_the_end() {
        let q = Query::parse("a \"b c");
        assert_eq!(q.phrases, vec![vec!["b".to_string(), "c".to_string()]]);
    }
}
