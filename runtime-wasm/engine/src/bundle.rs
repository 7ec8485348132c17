//! The bundle: one versioned postcard file holding everything search needs.
//!
//! Layout (all integers little-endian):
//!
//! ```text
//! magic "LANTERN\0" | format version u32 | header length u32 | payload length u64
//! | crc32 of header+payload u32 | header (postcard) | payload (postcard)
//! ```
//!
//! The fixed prefix lets a loader reject a foreign, newer or truncated file before decoding
//! anything, and the checksum catches corruption. The header is small and says which model and
//! settings made the bundle, so a runtime can refuse one built with another model.

use serde::{Deserialize, Serialize};

use crate::bm25::{Bm25Params, LexicalIndex};
use crate::vector::{Quantization, VectorIndex};

pub const MAGIC: [u8; 8] = *b"LANTERN\0";
pub const FORMAT_VERSION: u32 = 1;
const PREFIX_LEN: usize = 8 + 4 + 4 + 8 + 4;

/// Why bytes are not a usable bundle.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum BundleError {
    #[error("not a Lantern bundle (bad magic bytes)")]
    BadMagic,
    #[error("bundle format version {found} is not supported (this build reads version {supported}); rebuild the bundle with a matching `lantern`")]
    UnsupportedVersion { found: u32, supported: u32 },
    #[error("bundle is truncated: expected {expected} bytes, found {found}")]
    Truncated { expected: u64, found: u64 },
    #[error("bundle checksum mismatch: the file is corrupt")]
    Checksum,
    #[error("bundle could not be decoded: {0}")]
    Decode(String),
    #[error("bundle was built with model {bundle} but this runtime has {runtime}; rebuild the bundle or load the matching model")]
    ModelMismatch { bundle: String, runtime: String },
    #[error("bundle is inconsistent: {0}")]
    Inconsistent(String),
}

/// Which embedding model produced the vectors.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelInfo {
    pub id: String,
    /// sha256 of the prepared ONNX file, hex.
    pub sha256: String,
    pub dim: u32,
    pub max_tokens: u32,
}

/// Small, decoded first: what made this bundle and how big it is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub model: ModelInfo,
    pub quantization: Quantization,
    pub bm25: Bm25Params,
    pub analyzer_version: u32,
    /// Best dense cosine under which search reports "no good match" (absent strong keywords).
    pub abstain_cosine: f32,
    pub pages: u32,
    pub chunks: u32,
    pub terms: u32,
}

/// A source page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Page {
    /// Site-relative URL, e.g. `/guide/install.html`.
    pub url: String,
    pub title: String,
    /// Path of the source file relative to the docs folder.
    pub source: String,
}

/// A searchable piece of one section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Chunk {
    pub page: u32,
    /// Page title, then each enclosing heading.
    pub breadcrumb: Vec<String>,
    /// Heading id within the page; empty for text before the first heading.
    pub anchor: String,
    pub text: String,
}

impl Chunk {
    /// "Page > Section > Subsection".
    pub fn breadcrumb_text(&self) -> String {
        self.breadcrumb.join(" > ")
    }
}

/// Everything after the header.
#[derive(Serialize, Deserialize)]
pub struct Payload {
    pub pages: Vec<Page>,
    pub chunks: Vec<Chunk>,
    pub lexical: LexicalIndex,
    pub vectors: VectorIndex,
}

/// A loaded, validated bundle.
pub struct Bundle {
    pub header: Header,
    pub payload: Payload,
}

/// Encoded size of each part, for build summaries and benchmarks.
#[derive(Debug, Clone, Copy, Default)]
pub struct PartSizes {
    pub header: usize,
    pub text: usize,
    pub postings: usize,
    pub vectors_and_graph: usize,
    pub total: usize,
}

impl Bundle {
    /// Encodes the bundle. Output depends only on the contents: same input, same bytes.
    pub fn to_bytes(&self) -> Result<Vec<u8>, BundleError> {
        let enc = |e: postcard::Error| BundleError::Decode(e.to_string());
        let header = postcard::to_allocvec(&self.header).map_err(enc)?;
        let payload = postcard::to_allocvec(&self.payload).map_err(enc)?;
        let mut crc = crc32fast::Hasher::new();
        crc.update(&header);
        crc.update(&payload);
        let mut out = Vec::with_capacity(PREFIX_LEN + header.len() + payload.len());
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        out.extend_from_slice(&(header.len() as u32).to_le_bytes());
        out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        out.extend_from_slice(&crc.finalize().to_le_bytes());
        out.extend_from_slice(&header);
        out.extend_from_slice(&payload);
        Ok(out)
    }

    /// Reads only the header, e.g. to check the model before decoding the rest.
    pub fn read_header(bytes: &[u8]) -> Result<Header, BundleError> {
        let (header, _) = split(bytes)?;
        postcard::from_bytes(header).map_err(|e| BundleError::Decode(format!("header: {e}")))
    }

    /// Decodes and validates a bundle; never panics on bad input.
    pub fn from_bytes(bytes: &[u8]) -> Result<Bundle, BundleError> {
        let (header, payload) = split(bytes)?;
        let header: Header = postcard::from_bytes(header)
            .map_err(|e| BundleError::Decode(format!("header: {e}")))?;
        let payload: Payload = postcard::from_bytes(payload)
            .map_err(|e| BundleError::Decode(format!("payload: {e}")))?;
        let bundle = Bundle { header, payload };
        bundle.check_consistency()?;
        Ok(bundle)
    }

    /// Refuses a bundle whose vectors came from another model than the runtime's.
    pub fn check_model(&self, runtime_sha256: &str) -> Result<(), BundleError> {
        if self.header.model.sha256 != runtime_sha256 {
            return Err(BundleError::ModelMismatch {
                bundle: format!(
                    "{} ({})",
                    self.header.model.id,
                    short(&self.header.model.sha256)
                ),
                runtime: short(runtime_sha256).to_string(),
            });
        }
        Ok(())
    }

    /// Cross-references that decoding alone cannot guarantee, so search can index freely.
    fn check_consistency(&self) -> Result<(), BundleError> {
        let h = &self.header;
        let p = &self.payload;
        let bad = |m: String| Err(BundleError::Inconsistent(m));
        if p.pages.len() != h.pages as usize || p.chunks.len() != h.chunks as usize {
            return bad("page or chunk count differs from the header".into());
        }
        if p.lexical.num_docs() != p.chunks.len() || p.vectors.len() != p.chunks.len() {
            return bad("index sizes differ from the chunk count".into());
        }
        if p.vectors.dim != h.model.dim {
            return bad("vector dimension differs from the model's".into());
        }
        if h.analyzer_version != crate::analyze::ANALYZER_VERSION {
            return bad(format!(
                "analyzer version {} (this runtime has {})",
                h.analyzer_version,
                crate::analyze::ANALYZER_VERSION
            ));
        }
        if let Some(c) = p.chunks.iter().find(|c| c.page as usize >= p.pages.len()) {
            return bad(format!("chunk points at missing page {}", c.page));
        }
        p.vectors
            .validate(p.chunks.len())
            .map_err(BundleError::Inconsistent)?;
        Ok(())
    }

    /// Encoded size of each part.
    pub fn part_sizes(&self) -> PartSizes {
        let len = |r: Result<Vec<u8>, postcard::Error>| r.map(|v| v.len()).unwrap_or(0);
        let p = &self.payload;
        let text = len(postcard::to_allocvec(&(&p.pages, &p.chunks)));
        let postings = len(postcard::to_allocvec(&p.lexical));
        let vectors_and_graph = len(postcard::to_allocvec(&p.vectors));
        let header = len(postcard::to_allocvec(&self.header));
        PartSizes {
            header,
            text,
            postings,
            vectors_and_graph,
            total: PREFIX_LEN + header + text + postings + vectors_and_graph,
        }
    }
}

fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

/// Checks the fixed prefix and returns the header and payload slices.
fn split(bytes: &[u8]) -> Result<(&[u8], &[u8]), BundleError> {
    if bytes.len() < 8 || bytes[..8] != MAGIC {
        return Err(BundleError::BadMagic);
    }
    if bytes.len() < PREFIX_LEN {
        return Err(BundleError::Truncated {
            expected: PREFIX_LEN as u64,
            found: bytes.len() as u64,
        });
    }
    let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap_or([0; 4]));
    let version = u32_at(8);
    if version != FORMAT_VERSION {
        return Err(BundleError::UnsupportedVersion {
            found: version,
            supported: FORMAT_VERSION,
        });
    }
    let header_len = u32_at(12) as u64;
    let payload_len = u64::from_le_bytes(bytes[16..24].try_into().unwrap_or([0; 8]));
    let crc = u32_at(24);
    let expected = (PREFIX_LEN as u64)
        .saturating_add(header_len)
        .saturating_add(payload_len);
    if (bytes.len() as u64) < expected {
        return Err(BundleError::Truncated {
            expected,
            found: bytes.len() as u64,
        });
    }
    if (bytes.len() as u64) > expected {
        return Err(BundleError::Decode(format!(
            "{} unexpected bytes after the payload",
            bytes.len() as u64 - expected
        )));
    }
    let body = &bytes[PREFIX_LEN..];
    if crc32fast::hash(body) != crc {
        return Err(BundleError::Checksum);
    }
    Ok(body.split_at(header_len as usize))
}
