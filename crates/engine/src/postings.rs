//! A term's postings as the bundle stores them: delta-coded chunk ids and scores in LEB128
//! varints.

/// One chunk's entry in a term's postings: the term's weighted field scores before idf, in
/// sixteenths, the title's apart (a query weighs it by how much it looks like a page's name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Posting {
    pub(crate) chunk: u32,
    /// Heading, headings above and body.
    pub(crate) section: u32,
    /// The page title (top chunks only; 0 elsewhere).
    pub(crate) title: u32,
}

/// Each posting is the chunk id's delta, then `section << 1 | has title`, then the title's
/// score if it has one: most chunks carry no title, so the flag costs less than a 0.
pub(crate) fn encode_postings(list: &[Posting]) -> Vec<u8> {
    let mut out = Vec::with_capacity(list.len() * 2);
    let mut prev = 0u32;
    for p in list {
        write_varint(&mut out, p.chunk - prev);
        write_varint(&mut out, p.section.saturating_mul(2) | (p.title > 0) as u32);
        if p.title > 0 {
            write_varint(&mut out, p.title);
        }
        prev = p.chunk;
    }
    out
}

/// One posting as (chunk id delta, posting with a relative chunk id), or None if malformed.
pub(crate) fn read_posting(bytes: &[u8], pos: &mut usize) -> Option<(u32, Posting)> {
    let delta = read_varint(bytes, pos)?;
    let v = read_varint(bytes, pos)?;
    let title = if v & 1 == 1 {
        read_varint(bytes, pos)?
    } else {
        0
    };
    Some((
        delta,
        Posting {
            chunk: delta,
            section: v >> 1,
            title,
        },
    ))
}

/// Decodes a postings list; a malformed tail (impossible after the bundle checksum) just ends it.
pub(crate) fn decode_postings(bytes: &[u8]) -> Vec<Posting> {
    let mut out = Vec::new();
    let mut pos = 0;
    let mut chunk = 0u32;
    while pos < bytes.len() {
        let Some((delta, mut p)) = read_posting(bytes, &mut pos) else {
            break;
        };
        chunk = chunk.saturating_add(delta);
        p.chunk = chunk;
        out.push(p);
    }
    out
}

fn write_varint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn read_varint(bytes: &[u8], pos: &mut usize) -> Option<u32> {
    let mut v = 0u32;
    for shift in (0..35).step_by(7) {
        let b = *bytes.get(*pos)?;
        *pos += 1;
        v |= ((b & 0x7f) as u32).checked_shl(shift)?;
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip() {
        let p = |chunk, section, title| Posting {
            chunk,
            section,
            title,
        };
        let list = vec![
            p(0, 1, 0),
            p(5, 300, 7),
            p(70_000, 0, 2),
            p(70_001, 300_000, 0),
        ];
        assert_eq!(decode_postings(&encode_postings(&list)), list);
    }
}
