//! Excerpts as text segments: highlights are built from the engine's ranges as separate text
//! nodes, never by injecting HTML, so document text cannot become markup.

/// Splits `text` at the given UTF-16 ranges into (segment, highlighted) pairs.
pub fn segments(text: &str, ranges: &[(u32, u32)]) -> Vec<(String, bool)> {
    let units: Vec<u16> = text.encode_utf16().collect();
    let mut ranges: Vec<(usize, usize)> = ranges
        .iter()
        .map(|&(s, e)| (s as usize, (e as usize).min(units.len())))
        .filter(|(s, e)| s < e)
        .collect();
    ranges.sort_unstable();
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
        let s = segments("a café <b> here", &[(2, 6), (7, 10)]);
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
            segments("x", &[(0, 9), (0, 1)]),
            vec![("x".to_string(), true)]
        );
    }
}
