//! The bundle: a small meta part plus content-addressed shards, in one file or split.
//!
//! Layout of a bundle file (all integers little-endian):
//!
//! ```text
//! magic "LANTERN\0" | format version u32 | header length u32 | payload length u64
//! | crc32 of header+payload u32 | header (postcard) | payload (postcard: meta, inline shards)
//! ```
//!
//! The fixed prefix lets a loader reject a foreign, newer or truncated file before decoding
//! anything, and the checksum catches corruption. The header is small and says which model and
//! settings made the bundle, so a runtime can refuse one built with another model.
//!
//! The meta part describes every shard (its kind, key or chunk range, xxh3 hash and length):
//! term blocks (BM25 postings by key range), text blocks (chunks and their pages by chunk
//! range), and the vectors: one partition, or for large bundles k-means partitions and their
//! centroids (an inverted file). The single file carries every shard inline; the split form
//! ([`Bundle::to_split`]) is the same file with none inline plus one file per shard named
//! `kind-<hash>.bin`, so a browser fetches only the shards a query needs
//! ([`Bundle::add_shard`]) and hosts can cache them forever. Bundles are written by
//! [`crate::BundleWriter`] and only read here.
//!
//! This file holds the types and what a search asks of a loaded bundle; `container` the file
//! (prefix, checksum, header, payload, whole or split); `shards` the shards' names and their
//! loading as they arrive.

mod container;
pub(crate) use container::page_langs;
mod shards;

use serde::{Deserialize, Serialize};

use crate::analyze::Lang;

use crate::bm25::{Bm25Params, LexicalIndex, TermShard};
use crate::error::{Error, Result};
use crate::model::Manifest;
use crate::vector::{Quantization, VectorIndex};

const MAGIC: [u8; 8] = *b"LANTERN\0";
/// The bundle format version this build reads and writes.
pub const FORMAT_VERSION: u32 = 9;
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
    /// The site's declared synonyms, analyzed: a query term (sorted, once each) and the
    /// terms it also matches, each with the weight of its match.
    pub synonyms: Vec<(String, Vec<(String, f32)>)>,
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

/// A shard's contents as checked: the xxh3-64 hash and the length of its body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub(crate) struct ShardRef {
    pub(crate) hash: u64,
    pub(crate) len: u32,
}

/// Shards of one kind are named and checked in groups of this many consecutive blocks, so the
/// meta part lists one hash per group rather than per shard: at 64 times the Rust book that is
/// about 700 hashes instead of 11,000, and the meta stays a few tens of KB.
pub(crate) const GROUP: usize = 16;

/// A group of shards: the xxh3-64 hash of its members' [`ShardRef`] list (postcard), which is
/// also in every member's file name, and the members' total length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub(crate) struct Group {
    pub(crate) hash: u64,
    pub(crate) bytes: u32,
}

/// A shard file: the list of its group's members (its own entry at its place in the group)
/// and its body. The list hashes to the group's hash in the meta and the body to its entry, so
/// each file is checked alone, without its siblings.
#[derive(Serialize, Deserialize)]
struct ShardFile<'a> {
    siblings: Vec<ShardRef>,
    #[serde(borrow)]
    body: &'a [u8],
}

/// Shard groups of each kind.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Groups {
    terms: Vec<Group>,
    text: Vec<Group>,
    centroids: Vec<Group>,
    vectors: Vec<Group>,
}

impl Groups {
    fn of(&self, kind: ShardKind) -> &Vec<Group> {
        match kind {
            ShardKind::Terms => &self.terms,
            ShardKind::Text => &self.text,
            ShardKind::Centroids => &self.centroids,
            ShardKind::Vectors => &self.vectors,
        }
    }
    fn of_mut(&mut self, kind: ShardKind) -> &mut Vec<Group> {
        match kind {
            ShardKind::Terms => &mut self.terms,
            ShardKind::Text => &mut self.text,
            ShardKind::Centroids => &mut self.centroids,
            ShardKind::Vectors => &mut self.vectors,
        }
    }
}

/// The kinds of shard, in the order the meta lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ShardKind {
    Terms,
    Text,
    Centroids,
    Vectors,
}

impl ShardKind {
    fn prefix(self) -> &'static str {
        match self {
            ShardKind::Terms => "terms",
            ShardKind::Text => "text",
            ShardKind::Centroids => "centroids",
            ShardKind::Vectors => "vectors",
        }
    }

    const ALL: [ShardKind; 4] = [
        ShardKind::Terms,
        ShardKind::Text,
        ShardKind::Centroids,
        ShardKind::Vectors,
    ];

    fn from_prefix(p: &str) -> Option<ShardKind> {
        ShardKind::ALL.into_iter().find(|k| k.prefix() == p)
    }
}

/// What the meta part holds: enough to plan a query and to check every shard.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Meta {
    /// Chunks of each page; chunks are numbered page after page.
    pub(crate) page_chunks: Vec<u32>,
    /// The languages of the pages.
    pub(crate) langs: Vec<Lang>,
    /// Filters of the pages that have any (filters apply before any shard is fetched).
    pub(crate) filters: Vec<(u32, Vec<(String, String)>)>,
    /// Pages without chunks, which no text block carries.
    pub(crate) empty_pages: Vec<(u32, Page)>,
    /// Identifies the term list (a query table's rows follow it).
    pub(crate) terms_fingerprint: u32,
    /// Term blocks: first key, first term id.
    pub(crate) term_blocks: Vec<(String, u32)>,
    /// Text blocks: the number of chunks in each (blocks follow each other in chunk order).
    pub(crate) text_blocks: Vec<u32>,
    /// Vector partitions; more than one have centroids, in a shard of their own.
    pub(crate) vector_parts: u32,
    /// Partitions a query vector reads (the nearest centroids').
    pub(crate) vector_probe: u32,
    /// The shards' groups, by kind.
    pub(crate) groups: Groups,
}

/// A text block: chunks `first..next block's first`, and the pages they belong to.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct TextShard {
    pub(crate) pages: Vec<(u32, Page)>,
    pub(crate) chunks: Vec<Chunk>,
}

/// Everything after the header: the meta part and the shards carried inline (all or none).
#[derive(Serialize, Deserialize)]
struct Payload {
    meta: Meta,
    inline: Vec<Vec<u8>>,
}

/// The meta file's name in a split bundle's folder: the one file a reader names.
pub const SPLIT_META: &str = "meta.bin";
/// A split bundle's folder is the bundle file's name with this added: `site.lantern.d`.
pub const SPLIT_DIR_SUFFIX: &str = ".d";

/// The folder of a bundle's split form: `site.lantern` -> `site.lantern.d`.
pub fn split_dir(bundle: &std::path::Path) -> std::path::PathBuf {
    let mut dir = bundle.as_os_str().to_owned();
    dir.push(SPLIT_DIR_SUFFIX);
    dir.into()
}

/// A bundle as separate files: the meta file (a bundle file with no shard inline) and each
/// shard with its file name.
pub struct Split {
    /// The meta file.
    pub meta: Vec<u8>,
    /// `(file name, bytes)` of each shard.
    pub shards: Vec<(String, Vec<u8>)>,
}

/// A loaded, validated bundle, complete or with only some shards loaded: every index search
/// follows is known to be in range, and what is not loaded yet is known to be missing.
pub struct Bundle {
    pub(crate) header: Header,
    pub(crate) meta: Meta,
    /// One past each page's last chunk.
    page_ends: Vec<u32>,
    /// First chunk of each text block.
    text_firsts: Vec<u32>,
    /// Placeholders (empty title and URL) until the page's text block is loaded.
    pub(crate) pages: Vec<Page>,
    /// Placeholders (empty text) until the chunk's text block is loaded.
    pub(crate) chunks: Vec<Chunk>,
    pub(crate) lexical: LexicalIndex,
    /// Partitions arrive one by one in a split bundle.
    pub(crate) vectors: VectorIndex,
    text_loaded: Vec<bool>,
}

/// Encoded size of each part, for build summaries and benchmarks.
#[derive(Debug, Clone, Copy, Default)]
pub struct PartSizes {
    /// The header.
    pub header: usize,
    /// The meta part (shard table, page sizes, filters).
    pub meta: usize,
    /// Text blocks: pages and chunk text.
    pub text: usize,
    /// Term blocks: terms and BM25 postings.
    pub postings: usize,
    /// int8 vectors in their partitions, and the centroids.
    pub vectors: usize,
    /// Number of shards.
    pub shards: usize,
    /// The whole single file.
    pub total: usize,
}

/// Raw chunk text per text block, at least: a shown result fetches its block, so blocks stay
/// small.
const TEXT_BLOCK_BYTES: usize = 4 * 1024;
/// Larger sites get larger blocks, `sqrt(text x TEXT_BLOCK_GROWTH)` bytes up to
/// [`TEXT_BLOCK_MAX_BYTES`], so their file count grows with the square root of their text, not
/// with it (hosts limit files per site): the Cargo book's 1.3 MiB of text makes blocks of
/// about 8 KB, a site of 4,000 such pages blocks of about 50 KB; a site of Lantern's docs' size
/// keeps 4 KB.
const TEXT_BLOCK_GROWTH: usize = 48;
const TEXT_BLOCK_MAX_BYTES: usize = 64 * 1024;

/// Most chunks a bundle may hold: 2^22, two thousand times the Rust book. Its placeholders
/// cost 80 bytes a chunk before any shard loads, so a header may not ask for more than this.
pub const MAX_CHUNKS: u32 = 1 << 22;

/// Fewest bytes a chunk takes in its text shard (page, breadcrumb, anchor and text lengths).
const MIN_CHUNK_TEXT_BYTES: u64 = 4;

/// First chunk of each text block, cutting after about [`text_block_bytes`] of text.
pub(crate) fn cut_text_blocks(chunks: &[Chunk]) -> Vec<u32> {
    let bytes = |c: &Chunk| {
        c.text.len() + c.anchor.len() + c.breadcrumb.iter().map(String::len).sum::<usize>()
    };
    let block = text_block_bytes(chunks.iter().map(bytes).sum());
    let mut firsts = Vec::new();
    let mut size = block;
    for (i, c) in chunks.iter().enumerate() {
        if size >= block {
            firsts.push(i as u32);
            size = 0;
        }
        size += bytes(c);
    }
    firsts
}

/// The text block size for a site of `text` bytes of chunk text.
fn text_block_bytes(text: usize) -> usize {
    let grown = ((text as f64) * TEXT_BLOCK_GROWTH as f64).sqrt() as usize;
    grown.clamp(TEXT_BLOCK_BYTES, TEXT_BLOCK_MAX_BYTES)
}

fn placeholder_page() -> Page {
    Page {
        url: String::new(),
        title: String::new(),
        source: String::new(),
        lang: Lang::None,
        meta: Vec::new(),
        filters: Vec::new(),
    }
}

fn encode<T: Serialize + ?Sized>(v: &T) -> Result<Vec<u8>> {
    postcard::to_allocvec(v).map_err(|e| Error::Encode(e.to_string()))
}

/// Bytes of a postcard varint holding `n`.
fn varint_len(n: u64) -> u64 {
    (64 - n.max(1).leading_zeros() as u64).div_ceil(7)
}

fn shard_ref(bytes: &[u8]) -> ShardRef {
    ShardRef {
        hash: xxhash_rust::xxh3::xxh3_64(bytes),
        len: bytes.len() as u32,
    }
}

impl Bundle {
    /// What made this bundle and how big it is.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Sets the best cosine under which search reports "no good match" (a build measures it
    /// on the site once the vectors are in).
    pub fn set_abstain_cosine(&mut self, cosine: f32) -> Result<()> {
        if !(cosine.is_finite() && (-1.0..=1.0).contains(&cosine)) {
            return Err(Error::Encode(format!(
                "abstain_cosine {cosine} is not a cosine from -1 to 1"
            )));
        }
        self.header.abstain_cosine = cosine;
        Ok(())
    }

    /// Every page, in build order (a page whose text block is not loaded has an empty title
    /// and URL).
    pub fn pages(&self) -> &[Page] {
        &self.pages
    }

    /// Every chunk, in build order (a chunk whose text block is not loaded has empty text).
    pub fn chunks(&self) -> &[Chunk] {
        &self.chunks
    }

    /// One chunk by id, if its text block is loaded.
    pub fn chunk(&self, id: u32) -> Option<&Chunk> {
        self.text_loaded
            .get(self.text_block_of(id)?)
            .filter(|&&loaded| loaded)?;
        self.chunks.get(id as usize)
    }

    /// The page a chunk belongs to.
    pub fn page_of(&self, chunk: &Chunk) -> &Page {
        // In range: checked when the bundle was loaded or written.
        &self.pages[chunk.page as usize]
    }

    /// The page of chunk `id`, known without its text.
    pub(crate) fn page_id_of(&self, id: u32) -> u32 {
        self.page_ends.partition_point(|&e| e <= id) as u32
    }

    /// The first chunk of page `page` (its top: text under the title, or its first section),
    /// known without its text.
    pub fn page_top(&self, page: u32) -> u32 {
        match page {
            0 => 0,
            p => self.page_ends.get(p as usize - 1).copied().unwrap_or(0),
        }
    }

    /// The text block holding chunk `id`.
    pub(crate) fn text_block_of(&self, id: u32) -> Option<usize> {
        if id >= self.header.chunks {
            return None;
        }
        Some(
            self.text_firsts
                .partition_point(|&f| f <= id)
                .saturating_sub(1),
        )
    }

    /// Chunk `id` if loaded; otherwise its block is added to `want`.
    pub(crate) fn chunk_or_want(&self, id: u32, want: &crate::want::Want) -> Option<&Chunk> {
        let b = self.text_block_of(id)?;
        if !self.text_loaded[b] {
            want.text_block(b);
            return None;
        }
        self.chunks.get(id as usize)
    }

    /// The vector partitions a query reads (every one with `all`, else the nearest centroids'),
    /// once all are loaded; otherwise what is missing is added to `want`.
    pub(crate) fn vector_probes(
        &self,
        query: &[f32],
        all: bool,
        want: &crate::want::Want,
    ) -> Option<Vec<usize>> {
        let probes = if all {
            self.vectors.all_partitions()
        } else {
            match self.vectors.probes(query) {
                Some(p) => p,
                None => {
                    want.centroids();
                    return None;
                }
            }
        };
        let lacking = self.vectors.lacking(&probes);
        if lacking.is_empty() {
            return Some(probes);
        }
        lacking.into_iter().for_each(|p| want.vector_part(p));
        None
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

    /// The vector index (int8 vectors in partitions); a partition is empty until its shard is
    /// loaded.
    pub fn vectors(&self) -> &VectorIndex {
        &self.vectors
    }

    pub(crate) fn lexical(&self) -> &LexicalIndex {
        &self.lexical
    }

    /// Every shard is loaded.
    pub fn is_complete(&self) -> bool {
        self.vectors.is_complete()
            && self.text_loaded.iter().all(|&l| l)
            && self.lexical.is_complete()
    }

    /// Identifies the term list (a query table is fitted to it).
    pub(crate) fn terms_fingerprint(&self) -> u32 {
        self.meta.terms_fingerprint
    }

    /// The languages of the pages.
    pub(crate) fn langs(&self) -> &[Lang] {
        &self.meta.langs
    }

    /// The pages that carry filters, with them.
    pub(crate) fn page_filters(&self) -> &[(u32, Vec<(String, String)>)] {
        &self.meta.filters
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

    /// Reads a model folder's manifest (JSON) and accepts it if its model is the one this
    /// bundle was built with: what a browser checks before downloading the model.
    pub fn accept_manifest(&self, json: &[u8]) -> Result<Manifest> {
        let manifest = Manifest::from_json(json)?;
        self.check_model(&manifest.sha256)?;
        Ok(manifest)
    }

    /// Cross-references of a complete bundle that the shard checks alone cannot guarantee.
    pub(crate) fn check_consistency(&self) -> Result<()> {
        let h = &self.header;
        let bad = |m: String| Err(Error::Inconsistent(m));
        if self.pages.len() != h.pages as usize || self.chunks.len() != h.chunks as usize {
            return bad("page or chunk count differs from the header".into());
        }
        if self.lexical.num_docs() != self.chunks.len() || self.vectors.len() != self.chunks.len() {
            return bad("index sizes differ from the chunk count".into());
        }
        if self.vectors.dim != h.model.dim {
            return bad("vector dimension differs from the model's".into());
        }
        if let Some(c) = self
            .chunks
            .iter()
            .find(|c| c.page as usize >= self.pages.len())
        {
            return bad(format!("chunk points at missing page {}", c.page));
        }
        for (b, s) in self.lexical.shards.iter().enumerate() {
            if let Some(s) = s {
                self.lexical.validate_shard(b, s)?;
            }
        }
        self.vectors.validate()?;
        if h.terms as usize != self.lexical.num_terms() {
            return bad("term count differs from the header".into());
        }
        Ok(())
    }

    /// Encoded size of each part.
    pub fn part_sizes(&self) -> PartSizes {
        let Ok((meta, shards)) = self.encode_shards() else {
            return PartSizes::default();
        };
        let header = encode(&self.header).map(|v| v.len()).unwrap_or(0);
        let meta_len = encode(&meta).map(|v| v.len()).unwrap_or(0);
        let nt = meta.term_blocks.len();
        let nx = meta.text_blocks.len();
        let sum = |r: std::ops::Range<usize>| shards[r].iter().map(Vec::len).sum::<usize>();
        let postings = sum(0..nt);
        let text = sum(nt..nt + nx);
        let vectors = sum(nt + nx..shards.len());
        PartSizes {
            header,
            meta: meta_len,
            text,
            postings,
            vectors,
            shards: shards.len(),
            total: PREFIX_LEN + header + meta_len + text + postings + vectors,
        }
    }
}

fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BundleWriter, Lang, ModelInfo};

    const DIM: usize = 8;

    #[test]
    fn text_blocks_grow_with_the_square_root_of_the_text() {
        assert_eq!(text_block_bytes(0), TEXT_BLOCK_BYTES);
        assert_eq!(text_block_bytes(100_000), TEXT_BLOCK_BYTES);
        let cargo_book = text_block_bytes(1_374_000);
        assert!((7_500..9_000).contains(&cargo_book), "{cargo_book}");
        // Four times the text, twice the block: half as many files per byte of text.
        assert_eq!(text_block_bytes(4 * 1_374_000) / 2, cargo_book);
        assert_eq!(text_block_bytes(usize::MAX / 64), TEXT_BLOCK_MAX_BYTES);
    }

    fn small() -> Bundle {
        let mut w = BundleWriter::new(ModelInfo::new("toy", &"0".repeat(64), DIM as u32, 64), 0.3);
        let page = w.add_page("/a.html", "A", "a.md", Lang::English);
        for c in 0..5 {
            w.add_chunk(
                page,
                vec!["A".into()],
                &format!("s{c}"),
                &format!("text number {c}"),
            );
        }
        w.finish((0..5).map(|i| crate::vector::unit(i, DIM)).collect())
            .unwrap()
    }

    /// The split meta file of `b` after `edit` (the checksum made valid again).
    fn forged_meta(b: &mut Bundle, edit: impl FnOnce(&mut Header, &mut Meta)) -> Vec<u8> {
        let (mut meta, _) = b.encode_shards().unwrap();
        let saved = b.header.clone();
        edit(&mut b.header, &mut meta);
        let file = b.file(&Payload {
            meta,
            inline: Vec::new(),
        });
        b.header = saved;
        file.unwrap()
    }

    fn claim_chunks(h: &mut Header, m: &mut Meta, chunks: u32) {
        let extra = chunks - h.chunks;
        h.chunks = chunks;
        *m.page_chunks.last_mut().unwrap() += extra;
        *m.text_blocks.last_mut().unwrap() += extra;
    }

    #[test]
    fn the_format_version_the_docs_state_is_the_one_written() {
        let doc = include_str!("../../../../site/docs/bundle-format.md");
        let stated = doc
            .split("(currently ")
            .nth(1)
            .and_then(|rest| rest.split(')').next())
            .expect("bundle-format.md states the current version");
        assert_eq!(stated, FORMAT_VERSION.to_string());
    }

    #[test]
    fn a_header_claiming_more_chunks_than_bytes_back_is_refused_before_allocating() {
        let mut b = small();
        assert!(Bundle::from_bytes(&forged_meta(&mut b, |_, _| {})).is_ok());
        for (chunks, why) in [
            (4_000_000_000, "at most"),
            (MAX_CHUNKS + 1, "at most"),
            (MAX_CHUNKS, "declared bytes"),
            (100_000, "declared bytes"),
        ] {
            let bytes = forged_meta(&mut b, |h, m| claim_chunks(h, m, chunks));
            let err = Bundle::from_bytes(&bytes)
                .err()
                .expect("refused")
                .to_string();
            assert!(err.contains(why), "{chunks} chunks: {err}");
        }
    }

    #[test]
    fn a_group_whose_declared_size_is_false_is_refused_when_its_shard_arrives() {
        let mut b = small();
        let split = b.to_split().unwrap();
        let (name, file) = split
            .shards
            .iter()
            .find(|(n, _)| n.starts_with("text-"))
            .unwrap();
        assert_eq!(b.shard_max_len(name), Some(file.len() as u64));
        assert_eq!(b.shard_max_len("text-0000000000000000-0.bin"), None);
        let mut claims = 0;
        let meta = forged_meta(&mut b, |h, m| {
            // The text group claims a byte more than its files hold (and so backs 0 more chunks).
            m.groups.text[0].bytes += 1;
            claims = h.chunks;
        });
        let mut read = Bundle::from_bytes(&meta).unwrap();
        assert_eq!(read.header().chunks, claims);
        assert_eq!(read.shard_max_len(name), Some(file.len() as u64 + 1));
        let err = read.add_shard(name, file).expect_err("refused").to_string();
        assert!(err.contains("group's size"), "{err}");
        // The true meta takes the same file.
        let mut good = Bundle::from_bytes(&split.meta).unwrap();
        good.add_shard(name, file).unwrap();
    }
}
