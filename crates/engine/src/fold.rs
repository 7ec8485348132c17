//! Accent folding: lowercase, then compatibility decomposition (NFKD) with every combining mark
//! dropped, so `naïve`, `NAÏVE` and `ﬁle` meet `naive` and `file`.
//!
//! The result is exactly `unicode-normalization`'s `to_lowercase().nfkd()` without marks (a
//! test checks every code point), but from a table of only what folding needs, generated from
//! that crate: its full normalization tables cost the browser's search core 49 KB of its
//! 225 KB (brotli), this one about 13 KB. NFKD of a string is the concatenation of each
//! character's decomposition up to the reordering of combining marks, and every character that
//! reordering moves is a mark (also checked), so folding character by character is exact.

include!("fold_table.rs");

const HANGUL_FIRST: u32 = 0xAC00;
const HANGUL_COUNT: u32 = 11_172;

/// Lowercase without accents: what a reader's typing is compared with.
pub fn fold(word: &str) -> String {
    if word.is_ascii() {
        return word.to_ascii_lowercase();
    }
    let lower = word.to_lowercase();
    let mut out = String::with_capacity(lower.len());
    for c in lower.chars() {
        push_folded(c, &mut out);
    }
    out
}

fn push_folded(c: char, out: &mut String) {
    let cp = c as u32;
    if cp < 0x80 {
        out.push(c);
        return;
    }
    if in_ranges(&MARKS, cp) {
        return;
    }
    // Hangul syllables decompose by arithmetic into leading, vowel and trailing jamo.
    if (HANGUL_FIRST..HANGUL_FIRST + HANGUL_COUNT).contains(&cp) {
        let s = cp - HANGUL_FIRST;
        let jamo = [0x1100 + s / 588, 0x1161 + (s % 588) / 28, 0x11A7 + s % 28];
        let n = if s.is_multiple_of(28) { 2 } else { 3 };
        out.extend(jamo[..n].iter().filter_map(|&j| char::from_u32(j)));
        return;
    }
    let run = RUN_START.partition_point(|&s| s <= cp);
    if run > 0 && cp < RUN_START[run - 1] + u32::from(RUN_LEN[run - 1]) {
        let mapped = cp.checked_add_signed(RUN_DELTA[run - 1]);
        out.extend(mapped.and_then(char::from_u32));
        return;
    }
    if let Ok(i) = MULTI_KEY.binary_search(&cp) {
        let start = if i == 0 { 0 } else { MULTI_END[i - 1] as usize };
        out.push_str(&MULTI_POOL[start..MULTI_END[i] as usize]);
        return;
    }
    out.push(c);
}

fn in_ranges(ranges: &[(u32, u32)], cp: u32) -> bool {
    let i = ranges.partition_point(|&(first, _)| first <= cp);
    i > 0 && cp <= ranges[i - 1].1
}

#[cfg(test)]
mod tests {
    use super::*;
    use unicode_normalization::char::{canonical_combining_class, is_combining_mark};
    use unicode_normalization::UnicodeNormalization;

    fn reference(s: &str) -> String {
        s.to_lowercase()
            .nfkd()
            .filter(|&c| !is_combining_mark(c))
            .collect()
    }

    fn chars() -> impl Iterator<Item = char> {
        (0..=0x10FFFFu32).filter_map(char::from_u32)
    }

    /// The table, as `fold_table.rs` holds it, computed from `unicode-normalization`.
    fn generate() -> String {
        let decomposed = |c: char| -> String {
            std::iter::once(c)
                .nfkd()
                .filter(|&m| !is_combining_mark(m))
                .collect()
        };
        let mut marks: Vec<(u32, u32)> = Vec::new();
        let mut runs: Vec<(u32, u16, i32)> = Vec::new();
        let mut multi: Vec<(u32, String)> = Vec::new();
        for c in chars() {
            let cp = c as u32;
            if is_combining_mark(c) {
                match marks.last_mut() {
                    Some((_, last)) if *last + 1 == cp => *last = cp,
                    _ => marks.push((cp, cp)),
                }
                continue;
            }
            if cp < 0x80 || (HANGUL_FIRST..HANGUL_FIRST + HANGUL_COUNT).contains(&cp) {
                continue;
            }
            let d = decomposed(c);
            if d == c.to_string() {
                continue;
            }
            let mut it = d.chars();
            match (it.next(), it.next()) {
                (Some(one), None) => {
                    let delta = one as i32 - cp as i32;
                    match runs.last_mut() {
                        Some((s, n, dl))
                            if *s + u32::from(*n) == cp && *dl == delta && *n < u16::MAX =>
                        {
                            *n += 1
                        }
                        _ => runs.push((cp, 1, delta)),
                    }
                }
                _ => multi.push((cp, d)),
            }
        }
        let list = |items: Vec<String>| -> String {
            items
                .chunks(12)
                .map(|l| format!("    {},\n", l.join(", ")))
                .collect()
        };
        let mut pool = String::new();
        let mut ends = Vec::new();
        for (_, s) in &multi {
            pool.push_str(s);
            ends.push(pool.len().to_string());
        }
        assert!(pool.len() <= u16::MAX as usize);
        let (maj, min, patch) = unicode_normalization::UNICODE_VERSION;
        format!(
            "// Generated from unicode-normalization (Unicode {maj}.{min}.{patch}) by the test in fold.rs:\n\
             // LANTERN_WRITE_FOLD_TABLE=1 cargo test -p lantern-engine fold. Do not edit.\n\n\
             /// Combining marks (dropped), as inclusive ranges.\n\
             static MARKS: [(u32, u32); {}] = [\n{}];\n\n\
             /// Runs of characters that fold to one character at a fixed distance: starts, lengths, distances.\n\
             static RUN_START: [u32; {}] = [\n{}];\n\
             static RUN_LEN: [u16; {}] = [\n{}];\n\
             static RUN_DELTA: [i32; {}] = [\n{}];\n\n\
             /// Characters that fold to several, and where each one's text ends in `MULTI_POOL`.\n\
             static MULTI_KEY: [u32; {}] = [\n{}];\n\
             static MULTI_END: [u16; {}] = [\n{}];\n\
             static MULTI_POOL: &str = {:?};\n",
            marks.len(),
            list(marks.iter().map(|(a, b)| format!("({a}, {b})")).collect()),
            runs.len(),
            list(runs.iter().map(|r| r.0.to_string()).collect()),
            runs.len(),
            list(runs.iter().map(|r| r.1.to_string()).collect()),
            runs.len(),
            list(runs.iter().map(|r| r.2.to_string()).collect()),
            multi.len(),
            list(multi.iter().map(|m| m.0.to_string()).collect()),
            ends.len(),
            list(ends),
            pool,
        )
    }

    #[test]
    fn fold_table_is_generated_from_the_unicode_tables() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/fold_table.rs");
        let fresh = generate();
        if std::env::var_os("LANTERN_WRITE_FOLD_TABLE").is_some() {
            std::fs::write(path, &fresh).unwrap();
        }
        let current = std::fs::read_to_string(path).unwrap();
        assert!(
            current == fresh,
            "src/fold_table.rs is stale: run LANTERN_WRITE_FOLD_TABLE=1 cargo test -p lantern-engine fold"
        );
    }

    #[test]
    fn fold_equals_nfkd_without_marks_for_every_code_point() {
        let mut buf = [0u8; 4];
        for c in chars() {
            let s = c.encode_utf8(&mut buf);
            assert_eq!(fold(s), reference(s), "U+{:04X}", c as u32);
        }
    }

    #[test]
    fn only_marks_are_reordered_so_folding_per_character_is_exact() {
        for c in chars() {
            if canonical_combining_class(c) != 0 {
                assert!(is_combining_mark(c), "U+{:04X}", c as u32);
            }
        }
        for s in [
            "ÉCOLE naïve Ångström",
            "ﬁle ＡＢＣ ½ ℡ Ⅻ",
            "한국어 문서 が ガ ｶﾞ",
            "ΣΑΣ İstanbul Straße",
            "e\u{301}\u{323} q\u{307}\u{323}",
            "mixed ascii and ünïcödé",
        ] {
            assert_eq!(fold(s), reference(s), "{s}");
        }
    }

    #[test]
    fn accents_and_compatibility_forms_fold_to_what_readers_type() {
        assert_eq!(fold("ÉCOLE"), "ecole");
        assert_eq!(fold("naïve"), "naive");
        assert_eq!(fold("ﬁle"), "file");
        assert_eq!(fold("ＡＢＣ"), "abc");
        assert_eq!(fold("Straße"), "straße");
    }
}
