//! CRC-32 (ISO-HDLC, as zlib and crc32fast compute it) of bundle and query-table files.
//!
//! Natively with sixteen tables (fast on large bundles); in the browser with one 1 KB table,
//! because sixteen are 16 KB of incompressible data in the download before a reader's first
//! result, for files that are small there (shards of a few KB).

use crc::{Crc, Digest, Table, CRC_32_ISO_HDLC};

#[cfg(target_arch = "wasm32")]
type Slices = Table<1>;
#[cfg(not(target_arch = "wasm32"))]
type Slices = Table<16>;

static CRC32: Crc<u32, Slices> = Crc::<u32, Slices>::new(&CRC_32_ISO_HDLC);

/// The CRC-32 of `bytes`.
pub(crate) fn crc32(bytes: &[u8]) -> u32 {
    CRC32.checksum(bytes)
}

/// A CRC-32 computed over several pieces.
pub(crate) fn crc32_digest() -> Digest<'static, u32, Slices> {
    CRC32.digest()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_zlib_crc32_bundles_were_written_with() {
        // The standard check value of CRC-32/ISO-HDLC.
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        let mut d = crc32_digest();
        d.update(b"1234");
        d.update(b"56789");
        assert_eq!(d.finalize(), 0xCBF4_3926);
    }
}
