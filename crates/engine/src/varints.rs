//! Delta-coded varints: the format of the Unicode tables generated from a reference and checked
//! against it at every code point (`fold_table.bin`, `case_table.bin`). Small in the browser's
//! first download where the same tables as Rust arrays are several times larger.

/// Reads a table: LEB128 varints, and the ranges and signed changes made of them.
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, at: 0 }
    }

    /// The next varint; None past the end or over 32 bits.
    pub(crate) fn next(&mut self) -> Option<u32> {
        let mut v: u32 = 0;
        for shift in (0..35).step_by(7) {
            let b = *self.bytes.get(self.at)?;
            self.at += 1;
            v |= u32::from(b & 0x7f).checked_shl(shift)?;
            if b < 0x80 {
                return Some(v);
            }
        }
        None
    }

    /// A signed change, zigzag-coded.
    pub(crate) fn change(&mut self) -> Option<i32> {
        let z = self.next()?;
        Some(((z >> 1) as i32) ^ -((z & 1) as i32))
    }

    /// `n` inclusive ranges, each written as its gap from the previous one's end and its length.
    pub(crate) fn ranges(&mut self, n: u32) -> Option<Vec<(u32, u32)>> {
        let mut out = Vec::with_capacity(n.min(4096) as usize);
        let mut prev = 0u32;
        for _ in 0..n {
            let first = prev.checked_add(self.next()?)?;
            prev = first.checked_add(self.next()?)?;
            out.push((first, prev));
        }
        Some(out)
    }

    /// The bytes not read yet.
    pub(crate) fn rest(&self) -> &'a [u8] {
        &self.bytes[self.at..]
    }
}

/// Is `cp` in one of `ranges` (inclusive, ascending)?
pub(crate) fn within(ranges: &[(u32, u32)], cp: u32) -> bool {
    let i = ranges.partition_point(|&(first, _)| first <= cp);
    i > 0 && cp <= ranges[i - 1].1
}

/// Writing tables, and checking the committed ones: for the tests that generate them.
#[cfg(test)]
pub(crate) mod write {
    pub(crate) fn varint(mut v: u32, out: &mut Vec<u8>) {
        while v >= 0x80 {
            out.push((v as u8 & 0x7f) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }

    pub(crate) fn change(d: i32, out: &mut Vec<u8>) {
        varint(((d << 1) ^ (d >> 31)) as u32, out);
    }

    pub(crate) fn ranges(set: &[(u32, u32)], out: &mut Vec<u8>) {
        let mut prev = 0;
        for &(first, last) in set {
            varint(first - prev, out);
            varint(last - first, out);
            prev = last;
        }
    }

    /// Fails when `src/{file}` differs from `fresh` (written first when the environment sets
    /// `env`), or when `decodes` accepts a cut copy of it: a damaged table is refused.
    pub(crate) fn check_generated(
        file: &str,
        env: &str,
        fresh: &[u8],
        decodes: impl Fn(&'static [u8]) -> bool,
    ) {
        let path = format!("{}/src/{file}", env!("CARGO_MANIFEST_DIR"));
        if std::env::var_os(env).is_some() {
            std::fs::write(&path, fresh).unwrap();
        }
        let current = std::fs::read(&path).unwrap();
        assert!(
            current == fresh,
            "src/{file} is stale: run {env}=1 cargo test -p lantern-engine"
        );
        assert!(decodes(current.clone().leak()));
        for cut in [0, 1, current.len() / 2, current.len() - 1] {
            assert!(!decodes(current[..cut].to_vec().leak()), "cut at {cut}");
        }
    }
}
