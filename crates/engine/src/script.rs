//! Writing systems: which ones a model reads (its manifest says), and whether a question is
//! written mostly in one it does not. A model trained on English text gives a Chinese
//! question cosines that measure nothing, so "no good match" cannot rest on them.

use serde::{Deserialize, Serialize};

/// A writing system, as far as telling a model's readable questions from the rest needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Script {
    /// Latin letters (English, German, Vietnamese...).
    Latin,
    /// Greek.
    Greek,
    /// Cyrillic.
    Cyrillic,
    /// Hebrew.
    Hebrew,
    /// Arabic.
    Arabic,
    /// Devanagari.
    Devanagari,
    /// Thai.
    Thai,
    /// Chinese characters, Japanese kana and Korean Hangul.
    Cjk,
    /// Any other letter; also what a manifest names that this build does not know.
    #[serde(other)]
    Other,
}

impl Script {
    /// The script of a letter; `None` for anything else (digits, punctuation, symbols).
    pub fn of(c: char) -> Option<Script> {
        if !c.is_alphabetic() {
            return None;
        }
        if crate::analyze::is_cjk(c) {
            return Some(Script::Cjk);
        }
        Some(match c as u32 {
            0..=0x24F | 0x1E00..=0x1EFF | 0x2C60..=0x2C7F | 0xA720..=0xA7FF | 0xFF21..=0xFF5A => {
                Script::Latin
            }
            0x370..=0x3FF | 0x1F00..=0x1FFF => Script::Greek,
            0x400..=0x52F | 0x1C80..=0x1C8F | 0x2DE0..=0x2DFF | 0xA640..=0xA69F => Script::Cyrillic,
            0x590..=0x5FF => Script::Hebrew,
            0x600..=0x6FF | 0x750..=0x77F | 0x8A0..=0x8FF => Script::Arabic,
            0x900..=0x97F => Script::Devanagari,
            0xE00..=0xE7F => Script::Thai,
            0x1100..=0x11FF | 0x3130..=0x318F | 0x31F0..=0x31FF | 0xFF66..=0xFFDC => Script::Cjk,
            _ => Script::Other,
        })
    }
}

/// Is `text` written mostly (more than half its letters) in scripts outside `reads`? A model
/// that states no scripts reads everything.
pub(crate) fn mostly_unread(text: &str, reads: &[Script]) -> bool {
    if reads.is_empty() {
        return false;
    }
    let (mut letters, mut unread) = (0usize, 0usize);
    for s in text.chars().filter_map(Script::of) {
        letters += 1;
        if !reads.contains(&s) {
            unread += 1;
        }
    }
    unread * 2 > letters
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters_fall_in_their_scripts() {
        assert_eq!(Script::of('a'), Some(Script::Latin));
        assert_eq!(Script::of('é'), Some(Script::Latin));
        assert_eq!(Script::of('ß'), Some(Script::Latin));
        assert_eq!(Script::of('ж'), Some(Script::Cyrillic));
        assert_eq!(Script::of('λ'), Some(Script::Greek));
        assert_eq!(Script::of('ש'), Some(Script::Hebrew));
        assert_eq!(Script::of('ب'), Some(Script::Arabic));
        assert_eq!(Script::of('क'), Some(Script::Devanagari));
        assert_eq!(Script::of('ก'), Some(Script::Thai));
        for c in ['所', 'の', 'カ', '한'] {
            assert_eq!(Script::of(c), Some(Script::Cjk), "{c}");
        }
        for c in ['1', ' ', '?', '？', '_', '<', '😀'] {
            assert_eq!(Script::of(c), None, "{c:?}");
        }
    }

    #[test]
    fn a_question_is_unread_when_most_of_its_letters_are() {
        let latin = [Script::Latin];
        assert!(mostly_unread("所有權的規則是什麼？", &latin));
        // An identifier in a Chinese question does not make it English.
        assert!(mostly_unread("怎麼用 HashMap 儲存鍵值對？", &latin));
        assert!(!mostly_unread("HashMap 的用法", &latin));
        assert!(!mostly_unread(
            "Wie installiere ich neue Versionen?",
            &latin
        ));
        assert!(mostly_unread("Как установить?", &latin));
        // Nothing stated: every question is read. No letters: nothing is unread.
        assert!(!mostly_unread("所有權的規則是什麼？", &[]));
        assert!(!mostly_unread("1 / (60 + 2)", &latin));
        assert!(!mostly_unread("", &latin));
        assert!(!mostly_unread("規則", &[Script::Latin, Script::Cjk]));
    }

    #[test]
    fn manifests_name_scripts_in_lowercase_and_unknown_names_are_other() {
        let s: Vec<Script> = serde_json::from_str(r#"["latin", "cjk", "klingon"]"#).unwrap();
        assert_eq!(s, [Script::Latin, Script::Cjk, Script::Other]);
        assert_eq!(
            serde_json::to_string(&Script::Cyrillic).unwrap(),
            "\"cyrillic\""
        );
    }
}
