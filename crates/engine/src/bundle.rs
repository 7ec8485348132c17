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
//! settings made the bundle, so a runtime can refuse one built with another model. Bundles are
//! written by [`crate::BundleWriter`] and only read here.

use serde::{Deserialize, Serialize};

use crate::analyze::Lang;

use crate::bm25::{Bm25Params, LexicalIndex};
use crate::error::{Error, Result};
use crate::vector::{Quantization, VectorIndex};

const MAGIC: [u8; 8] = *b"LANTERN\0";
/// The bundle format version this build reads and writes.
pub const FORMAT_VERSION: u32 = 4;
const PREFIX_LEN: usize = 8 + 4 + 4 + 8 + 4;

/// Which embedding model produced the vectors.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ModelInfo {
    /// Human-readable model name.
    pub id: String,
    /// sha256 of the prepared ONNX file, hex.
    pub sha256: String,
    /// Vector dimensions.
    pub dim: u32,
    /// Tokens the model reads; longer chunks were split by the indexer.
    pub max_tokens: u32,
}

impl ModelInfo {
    /// Describes a model by name, file hash, dimensions and token limit.
    pub fn new(id: &str, sha256: &str, dim: u32, max_tokens: u32) -> Self {
        ModelInfo {
            id: id.to_string(),
            sha256: sha256.to_string(),
            dim,
            max_tokens,
        }
    }
}

/// Small, decoded first: what made this bundle and how big it is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Header {
    /// The model whose vectors the bundle holds.
    pub model: ModelInfo,
    /// How vectors were quantized to int8.
    pub quantization: Quantization,
    /// BM25 settings.
    pub bm25: Bm25Params,
    /// Version of the text analysis the postings were made with.
    pub analyzer_version: u32,
    /// Best dense cosine under which search reports "no good match" (absent strong keywords).
    pub abstain_cosine: f32,
    /// Number of pages.
    pub pages: u32,
    /// Number of chunks.
    pub chunks: u32,
    /// Number of distinct index terms.
    pub terms: u32,
}

/// A source page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Page {
    /// Site-relative URL, e.g. `/guide/install.html`.
    pub url: String,
    /// Page title.
    pub title: String,
    /// Path of the source file relative to the docs folder.
    pub source: String,
    /// The page's language: its words were stemmed for it.
    pub lang: Lang,
    /// `key:value` facts shown with its results (`data-lantern-meta`).
    pub meta: Vec<(String, String)>,
    /// `key:value` pairs searches can be restricted to (`data-lantern-filter`).
    pub filters: Vec<(String, String)>,
}

/// A searchable piece of one section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Chunk {
    /// Index of its page.
    pub page: u32,
    /// Page title, then each enclosing heading.
    pub breadcrumb: Vec<String>,
    /// Heading id within the page; empty for text before the first heading.
    pub anchor: String,
    /// The chunk's text (plain text, never markup).
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
pub(crate) struct Payload {
    pub(crate) pages: Vec<Page>,
    pub(crate) chunks: Vec<Chunk>,
    pub(crate) lexical: LexicalIndex,
    pub(crate) vectors: VectorIndex,
}

/// A loaded, validated bundle: every index search follows is known to be in range.
pub struct Bundle {
    pub(crate) header: Header,
    pub(crate) payload: Payload,
}

/// Encoded size of each part, for build summaries and benchmarks.
#[derive(Debug, Clone, Copy, Default)]
pub struct PartSizes {
    /// The header.
    pub header: usize,
    /// Pages and chunk text.
    pub text: usize,
    /// Terms and BM25 postings.
    pub postings: usize,
    /// int8 vectors and the HNSW graph.
    pub vectors_and_graph: usize,
    /// The whole file.
    pub total: usize,
}

impl Bundle {
    /// What made this bundle and how big it is.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Every page, in build order.
    pub fn pages(&self) -> &[Page] {
        &self.payload.pages
    }

    /// Every chunk, in build order.
    pub fn chunks(&self) -> &[Chunk] {
        &self.payload.chunks
    }

    /// One chunk by id.
    pub fn chunk(&self, id: u32) -> Option<&Chunk> {
        self.payload.chunks.get(id as usize)
    }

    /// The page a chunk belongs to.
    pub fn page_of(&self, chunk: &Chunk) -> &Page {
        // In range: checked when the bundle was loaded or written.
        &self.payload.pages[chunk.page as usize]
    }

    /// A chunk's link: its page's URL with the section anchor.
    pub fn section_url(&self, chunk: &Chunk) -> String {
        let page = self.page_of(chunk);
        if chunk.anchor.is_empty() {
            page.url.clone()
        } else {
            format!("{}#{}", page.url, chunk.anchor)
        }
    }

    /// The vector index (int8 vectors and their graph).
    pub fn vectors(&self) -> &VectorIndex {
        &self.payload.vectors
    }

    pub(crate) fn lexical(&self) -> &LexicalIndex {
        &self.payload.lexical
    }

    /// Encodes the bundle. Output depends only on the contents: same input, same bytes.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let enc = |e: postcard::Error| Error::Encode(e.to_string());
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
    pub fn read_header(bytes: &[u8]) -> Result<Header> {
        let (header, _) = split(bytes)?;
        postcard::from_bytes(header).map_err(|e| Error::Decode(format!("header: {e}")))
    }

    /// Decodes and validates a bundle; never panics on bad input.
    pub fn from_bytes(bytes: &[u8]) -> Result<Bundle> {
        let (header, payload) = split(bytes)?;
        let header: Header =
            postcard::from_bytes(header).map_err(|e| Error::Decode(format!("header: {e}")))?;
        let payload: Payload =
            postcard::from_bytes(payload).map_err(|e| Error::Decode(format!("payload: {e}")))?;
        let bundle = Bundle { header, payload };
        bundle.check_consistency()?;
        Ok(bundle)
    }

    /// Refuses a bundle whose vectors came from another model than the runtime's.
    pub fn check_model(&self, runtime_sha256: &str) -> Result<()> {
        if self.header.model.sha256 != runtime_sha256 {
            return Err(Error::ModelMismatch {
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
    pub(crate) fn check_consistency(&self) -> Result<()> {
        let h = &self.header;
        let p = &self.payload;
        let bad = |m: String| Err(Error::Inconsistent(m));
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
        p.lexical.validate(p.chunks.len())?;
        p.vectors.validate(p.chunks.len())?;
        if h.terms as usize != p.lexical.num_terms() {
            return bad("term count differs from the header".into());
        }
        Ok(())
    }

    /// Encoded size of each part.
    pub fn part_sizes(&self) -> PartSizes {
        let len =
            |r: std::result::Result<Vec<u8>, postcard::Error>| r.map(|v| v.len()).unwrap_or(0);
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
fn split(bytes: &[u8]) -> Result<(&[u8], &[u8])> {
    if bytes.len() < 8 || bytes[..8] != MAGIC {
        return Err(Error::BadMagic);
    }
    if bytes.len() < PREFIX_LEN {
        return Err(Error::Truncated {
            expected: PREFIX_LEN as u64,
            found: bytes.len() as u64,
        });
    }
    let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap_or([0; 4]));
    let version = u32_at(8);
    if version != FORMAT_VERSION {
        return Err(Error::UnsupportedVersion {
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
        return Err(Error::Truncated {
            expected,
            found: bytes.len() as u64,
        });
    }
    if (bytes.len() as u64) > expected {
        return Err(Error::Decode(format!(
            "{} unexpected bytes after the payload",
            bytes.len() as u64 - expected
        )));
    }
    let body = &bytes[PREFIX_LEN..];
    if crc32fast::hash(body) != crc {
        return Err(Error::Checksum);
    }
    Ok(body.split_at(header_len as usize))
}
