//! Chunks: sections too long for the model are split on paragraph, then line, then word
//! boundaries, with a little overlap; the budget is counted in the model's own tokens.

use crate::extract::Section;

/// A piece of a section, sized for the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkText {
    /// Index of the section it was cut from.
    pub section: usize,
    /// The chunk's text.
    pub text: String,
}

/// The text the model embeds for a chunk: breadcrumb first, so the section's context counts.
pub fn embedding_text(breadcrumb: &[String], text: &str) -> String {
    format!("{}\n{}", breadcrumb.join(" > "), text)
}

/// Splits each section so that breadcrumb + text fits `budget` model tokens (special tokens
/// included). `count` gives the tokens of a piece of text without special tokens; WordPiece
/// tokenizes whitespace-separated pieces independently, so counts of pieces add up.
pub fn split_sections(
    sections: &[Section],
    budget: usize,
    specials: usize,
    count: &dyn Fn(&str) -> usize,
) -> Vec<ChunkText> {
    let mut out = Vec::new();
    for (i, s) in sections.iter().enumerate() {
        let head = count(&s.breadcrumb.join(" > ")) + specials;
        let room = budget.saturating_sub(head).max(budget / 4);
        for text in split_text(&s.text, room, count) {
            out.push(ChunkText { section: i, text });
        }
    }
    out
}

/// Texts longer than this are split before their tokens are counted: the tokenizer's memory grows
/// with the text (a 50 MB page peaked at 4.8 GB counted whole), and no text this long fits the
/// model anyway.
const MAX_COUNTED_BYTES: usize = 64 * 1024;

/// Tokens in `text`, or `usize::MAX` without counting when it is too long to fit.
fn tokens(text: &str, count: &dyn Fn(&str) -> usize) -> usize {
    if text.len() > MAX_COUNTED_BYTES {
        usize::MAX
    } else {
        count(text)
    }
}

/// Greedy packing of paragraphs (then lines, words, characters) into pieces of at most `room`
/// tokens; each piece after the first starts with the previous piece's last unit when that is
/// short, so a thought cut at a boundary is still found whole in one of them.
fn split_text(text: &str, room: usize, count: &dyn Fn(&str) -> usize) -> Vec<String> {
    if tokens(text, count) <= room {
        return vec![text.to_string()];
    }
    let mut units: Vec<(String, usize, &'static str)> = Vec::new();
    for para in text.split("\n\n") {
        explode(para, room, count, "\n\n", &mut units);
    }
    let mut pieces = Vec::new();
    let mut cur: Vec<(String, usize, &'static str)> = Vec::new();
    let mut used = 0;
    for unit in units {
        if used + unit.1 > room && !cur.is_empty() {
            pieces.push(join_units(&cur));
            let last = cur.pop().expect("non-empty");
            cur.clear();
            used = 0;
            if last.2 != " " && last.1 * 4 <= room && last.1 + unit.1 <= room {
                used = last.1;
                cur.push(last);
            }
        }
        used += unit.1;
        cur.push(unit);
    }
    if !cur.is_empty() {
        pieces.push(join_units(&cur));
    }
    pieces
}

/// Breaks a unit that alone exceeds `room` into lines, words, then characters.
fn explode(
    unit: &str,
    room: usize,
    count: &dyn Fn(&str) -> usize,
    sep: &'static str,
    out: &mut Vec<(String, usize, &'static str)>,
) {
    let n = tokens(unit, count);
    if n <= room {
        if !unit.trim().is_empty() {
            out.push((unit.to_string(), n, sep));
        }
        return;
    }
    match sep {
        "\n\n" => unit
            .lines()
            .for_each(|l| explode(l, room, count, "\n", out)),
        "\n" => unit
            .split_inclusive(' ')
            .for_each(|w| explode(w.trim_end(), room, count, " ", out)),
        _ => {
            // One "word" longer than the budget (a hash, base64): cut by characters. A character
            // is at most one token, so `room` characters always fit when the count is unknown.
            let chars: Vec<char> = unit.chars().collect();
            let step = if n == usize::MAX {
                room
            } else {
                (chars.len() * room / n.max(1)).max(1)
            };
            for piece in chars.chunks(step) {
                let s: String = piece.iter().collect();
                let c = count(&s);
                out.push((s, c, " "));
            }
        }
    }
}

fn join_units(units: &[(String, usize, &'static str)]) -> String {
    let mut s = String::new();
    for (i, (text, _, sep)) in units.iter().enumerate() {
        if i > 0 {
            s.push_str(sep);
        }
        s.push_str(text);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> usize {
        s.split_whitespace().count()
    }

    #[test]
    fn huge_texts_are_never_counted_whole() {
        let guarded = |s: &str| {
            assert!(
                s.len() <= MAX_COUNTED_BYTES,
                "counted {} bytes at once",
                s.len()
            );
            words(s)
        };
        let one_paragraph = "word ".repeat(400_000); // 2 MB, no breaks
        let one_word = "x".repeat(300_000);
        for text in [
            one_paragraph,
            one_word,
            format!("a\n\n{}", "b ".repeat(200_000)),
        ] {
            let s = Section {
                breadcrumb: vec!["T".into()],
                anchor: String::new(),
                text,
            };
            let chunks = split_sections(std::slice::from_ref(&s), 100, 2, &guarded);
            assert!(!chunks.is_empty());
            assert!(chunks.iter().all(|c| guarded(&c.text) <= 100));
        }
    }

    #[test]
    fn long_sections_split_within_budget_with_overlap() {
        let para = |i: usize| format!("para{i} {}", "word ".repeat(30));
        let text: Vec<String> = (0..10).map(para).collect();
        let s = Section {
            breadcrumb: vec!["T".into(), "S".into()],
            anchor: "s".into(),
            text: text.join("\n\n"),
        };
        let chunks = split_sections(std::slice::from_ref(&s), 100, 2, &words);
        assert!(chunks.len() > 3);
        for c in &chunks {
            assert!(
                words(&c.text) + words("T > S") + 2 <= 100,
                "{}",
                words(&c.text)
            );
        }
        for i in 0..10 {
            assert!(chunks.iter().any(|c| c.text.contains(&format!("para{i} "))));
        }
        // A huge line without paragraph breaks still splits.
        let long = Section {
            text: "x ".repeat(1000),
            ..s
        };
        let chunks = split_sections(&[long], 100, 2, &words);
        assert!(chunks.iter().all(|c| words(&c.text) <= 100));
        assert_eq!(chunks.iter().map(|c| words(&c.text)).sum::<usize>(), 1000);
    }
}
