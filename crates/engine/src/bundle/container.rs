//! The bundle as a file: the fixed prefix, the checksum, the header and the payload, read and
//! written whole or as a split meta file with shards beside it.

use super::shards::{name_in, shard_counts};
use super::*;

impl Bundle {
    /// Assembles a complete bundle from its parts (the writer's way in) and checks it.
    pub(crate) fn assemble(
        header: Header,
        pages: Vec<Page>,
        chunks: Vec<Chunk>,
        lexical: LexicalIndex,
        vectors: VectorIndex,
    ) -> Result<Bundle> {
        let mut page_chunks = vec![0u32; pages.len()];
        let mut last = 0u32;
        for c in &chunks {
            if c.page < last {
                return Err(Error::Inconsistent("chunks are not in page order".into()));
            }
            last = c.page;
            match page_chunks.get_mut(c.page as usize) {
                Some(n) => *n += 1,
                None => {
                    return Err(Error::Inconsistent(format!(
                        "chunk points at missing page {}",
                        c.page
                    )))
                }
            }
        }
        let langs = page_langs(&pages);
        let mut fp = crate::checksum::crc32_digest();
        for t in lexical.terms() {
            fp.update(t.as_bytes());
            fp.update(&[0]);
        }
        let meta = Meta {
            filters: pages
                .iter()
                .enumerate()
                .filter(|(_, p)| !p.filters.is_empty())
                .map(|(i, p)| (i as u32, p.filters.clone()))
                .collect(),
            empty_pages: page_chunks
                .iter()
                .enumerate()
                .filter(|(_, &n)| n == 0)
                .map(|(i, _)| (i as u32, pages[i].clone()))
                .collect(),
            page_chunks,
            langs,
            terms_fingerprint: fp.finalize(),
            term_blocks: lexical.blocks.clone(),
            text_blocks: {
                let firsts = cut_text_blocks(&chunks);
                let ends = firsts.iter().skip(1).copied().chain([chunks.len() as u32]);
                firsts.iter().zip(ends).map(|(a, b)| b - a).collect()
            },
            vector_parts: vectors.partition_count() as u32,
            vector_probe: vectors.probe(),
            groups: Groups::default(),
        };
        // Placeholders until the shards are encoded below.
        let counts = shard_counts(&meta);
        let mut meta = meta;
        for k in ShardKind::ALL {
            *meta.groups.of_mut(k) = vec![Group::default(); counts[k as usize].div_ceil(GROUP)];
        }
        let mut bundle = Bundle::unloaded(header, meta)?;
        let n = bundle.text_loaded.len();
        bundle.pages = pages;
        bundle.chunks = chunks;
        bundle.text_loaded = vec![true; n];
        bundle.lexical = lexical;
        bundle.vectors = vectors;
        bundle.check_consistency()?;
        // Fill in the shard table, so the meta describes the shards as written.
        let (meta, _) = bundle.encode_shards()?;
        bundle.meta = meta;
        Ok(bundle)
    }

    /// A bundle with nothing but its meta part loaded; checks the meta.
    pub(super) fn unloaded(header: Header, meta: Meta) -> Result<Bundle> {
        let bad = |m: &str| Err(Error::Inconsistent(m.into()));
        if header.analyzer_version != crate::analyze::ANALYZER_VERSION {
            return bad(&format!(
                "analyzer version {} (this runtime has {})",
                header.analyzer_version,
                crate::analyze::ANALYZER_VERSION
            ));
        }
        let counts = shard_counts(&meta);
        if ShardKind::ALL
            .into_iter()
            .any(|k| meta.groups.of(k).len() != counts[k as usize].div_ceil(GROUP))
        {
            return bad("the shard groups do not match the blocks");
        }
        if meta.page_chunks.len() != header.pages as usize {
            return bad("page count differs from the header");
        }
        let mut page_ends = Vec::with_capacity(meta.page_chunks.len());
        let mut end = 0u64;
        for &n in &meta.page_chunks {
            end += n as u64;
            page_ends.push(end.min(u32::MAX as u64) as u32);
        }
        if end != header.chunks as u64 {
            return bad("chunk count differs from the header");
        }
        let chunks = header.chunks;
        if chunks > MAX_CHUNKS {
            return bad(&format!(
                "the header claims {chunks} chunks; a bundle holds at most {MAX_CHUNKS}"
            ));
        }
        let mut text_firsts = Vec::with_capacity(meta.text_blocks.len());
        let mut first = 0u64;
        for &n in &meta.text_blocks {
            if n == 0 {
                return bad("an empty text block");
            }
            text_firsts.push(first.min(u32::MAX as u64) as u32);
            first += n as u64;
        }
        if first != chunks as u64 {
            return bad("text blocks do not cover the chunks");
        }
        if meta.filters.iter().any(|(p, _)| *p >= header.pages)
            || !meta.filters.windows(2).all(|w| w[0].0 < w[1].0)
        {
            return bad("filters name a missing page");
        }
        if meta
            .empty_pages
            .iter()
            .any(|(p, _)| meta.page_chunks.get(*p as usize) != Some(&0))
        {
            return bad("an empty page has chunks");
        }
        let lexical = LexicalIndex::unloaded(
            header.bm25,
            chunks as usize,
            header.terms as usize,
            meta.term_blocks.to_vec(),
        );
        lexical.validate_blocks()?;
        let mut pages = vec![placeholder_page(); header.pages as usize];
        for (p, filters) in &meta.filters {
            pages[*p as usize].filters = filters.clone();
        }
        for (p, page) in &meta.empty_pages {
            pages[*p as usize] = page.clone();
        }
        let mut chunk_list = Vec::with_capacity(chunks as usize);
        for (p, &n) in meta.page_chunks.iter().enumerate() {
            for _ in 0..n {
                chunk_list.push(Chunk {
                    page: p as u32,
                    breadcrumb: Vec::new(),
                    anchor: String::new(),
                    text: String::new(),
                });
            }
        }
        let parts = meta.vector_parts as usize;
        if parts == 0
            || meta.vector_probe == 0
            || meta.vector_probe as usize > parts
            || parts > chunks.max(1) as usize
        {
            return bad("the vector partition table is malformed");
        }
        let text_loaded = vec![false; meta.text_blocks.len()];
        Ok(Bundle {
            vectors: VectorIndex::unloaded(
                header.quantization,
                header.model.dim,
                chunks,
                meta.vector_probe,
                parts,
            ),
            header,
            meta,
            page_ends,
            text_firsts,
            pages,
            chunks: chunk_list,
            lexical,
            text_loaded,
        })
    }

    /// Encodes every shard from the loaded parts; returns the meta describing them.
    pub(super) fn encode_shards(&self) -> Result<(Meta, Vec<Vec<u8>>)> {
        if !self.is_complete() {
            return Err(Error::Encode("the bundle is not fully loaded".into()));
        }
        let mut meta = self.meta.clone();
        let mut bodies: Vec<(ShardKind, Vec<u8>)> = Vec::new();
        for s in &self.lexical.shards {
            bodies.push((ShardKind::Terms, encode(s.as_ref().expect("complete"))?));
        }
        for b in 0..self.text_firsts.len() {
            let range = self.text_range(b);
            let chunks = self.chunks[range.start as usize..range.end as usize].to_vec();
            let mut pages: Vec<u32> = chunks.iter().map(|c| c.page).collect();
            pages.dedup();
            let pages = pages
                .into_iter()
                .map(|p| match self.pages.get(p as usize) {
                    Some(page) => Ok((p, page.clone())),
                    None => Err(Error::Encode(format!("chunk points at missing page {p}"))),
                })
                .collect::<Result<_>>()?;
            bodies.push((ShardKind::Text, encode(&TextShard { pages, chunks })?));
        }
        let (centroids, parts) = self.vectors.encode_parts()?;
        bodies.extend(centroids.map(|c| (ShardKind::Centroids, c)));
        bodies.extend(parts.into_iter().map(|p| (ShardKind::Vectors, p)));
        // Each kind's shards in groups of GROUP: every file carries its group's list.
        let mut files = Vec::with_capacity(bodies.len());
        for kind in ShardKind::ALL {
            let of_kind: Vec<&Vec<u8>> = bodies
                .iter()
                .filter(|(k, _)| *k == kind)
                .map(|(_, b)| b)
                .collect();
            let groups = meta.groups.of_mut(kind);
            groups.clear();
            for members in of_kind.chunks(GROUP) {
                let siblings: Vec<ShardRef> = members.iter().map(|b| shard_ref(b)).collect();
                let mut bytes = 0u32;
                for body in members {
                    let file = encode(&ShardFile {
                        siblings: siblings.clone(),
                        body,
                    })?;
                    bytes = bytes.saturating_add(file.len() as u32);
                    files.push(file);
                }
                groups.push(Group {
                    hash: shard_ref(&encode(&siblings)?).hash,
                    bytes,
                });
            }
        }
        Ok((meta, files))
    }

    pub(super) fn file(&self, payload: &Payload) -> Result<Vec<u8>> {
        let header = encode(&self.header)?;
        let payload = encode(payload)?;
        let mut crc = crate::checksum::crc32_digest();
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

    /// Encodes the bundle as one file with every shard inline. Output depends only on the
    /// contents: same input, same bytes.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let (meta, inline) = self.encode_shards()?;
        self.file(&Payload { meta, inline })
    }

    /// Encodes the bundle split: a meta file and one file per shard.
    pub fn to_split(&self) -> Result<Split> {
        let (meta, shards) = self.encode_shards()?;
        let counts = shard_counts(&meta);
        let names = ShardKind::ALL
            .into_iter()
            .flat_map(|k| (0..counts[k as usize]).map(move |i| (k, i)))
            .map(|(k, i)| name_in(&meta, k, i));
        let shards = names.zip(shards).collect();
        let meta = self.file(&Payload {
            meta,
            inline: Vec::new(),
        })?;
        Ok(Split { meta, shards })
    }

    /// Reads only the header, e.g. to check the model before decoding the rest.
    pub fn read_header(bytes: &[u8]) -> Result<Header> {
        let (header, _) = split(bytes)?;
        postcard::from_bytes(header).map_err(|e| Error::Decode(format!("header: {e}")))
    }

    /// Decodes and validates a bundle file: complete when its shards are inline, only the meta
    /// part loaded when it is the meta file of a split bundle. Never panics on bad input.
    pub fn from_bytes(bytes: &[u8]) -> Result<Bundle> {
        let (header, payload) = split(bytes)?;
        let header: Header =
            postcard::from_bytes(header).map_err(|e| Error::Decode(format!("header: {e}")))?;
        let payload: Payload =
            postcard::from_bytes(payload).map_err(|e| Error::Decode(format!("payload: {e}")))?;
        if let Some(&lang) = payload.meta.langs.iter().find(|l| !l.stemmed_here()) {
            return Err(Error::UnsupportedLanguage(lang));
        }
        // Every count that sizes an allocation is bounded first by the bytes that back it: the
        // shard groups' declared sizes, which each shard is checked against on arrival, and
        // which a whole file must hold.
        let declared = |k: ShardKind| {
            payload
                .meta
                .groups
                .of(k)
                .iter()
                .map(|g| g.bytes as u64)
                .sum::<u64>()
        };
        let all: u64 = ShardKind::ALL.into_iter().map(declared).sum();
        if !payload.inline.is_empty() && all > bytes.len() as u64 {
            return Err(Error::Inconsistent(format!(
                "the meta declares {all} bytes of shards in a file of {}",
                bytes.len()
            )));
        }
        let chunks = header.chunks as u64;
        if header.chunks <= MAX_CHUNKS
            && (chunks * MIN_CHUNK_TEXT_BYTES > declared(ShardKind::Text)
                || chunks * header.model.dim as u64 > declared(ShardKind::Vectors))
        {
            return Err(Error::Inconsistent(format!(
                "the header claims {chunks} chunks, more than its shards' declared bytes hold"
            )));
        }
        let mut bundle = Bundle::unloaded(header, payload.meta)?;
        if payload.inline.is_empty() {
            return Ok(bundle);
        }
        let ids = bundle.shard_ids();
        if ids.len() != payload.inline.len() {
            return Err(Error::Inconsistent(format!(
                "{} shards inline, the meta lists {}",
                payload.inline.len(),
                ids.len()
            )));
        }
        for ((kind, index), bytes) in ids.into_iter().zip(&payload.inline) {
            bundle.load_shard(kind, index, bytes)?;
        }
        bundle.check_consistency()?;
        Ok(bundle)
    }
}

/// Checks the fixed prefix and returns the header and payload slices.
pub(super) fn split(bytes: &[u8]) -> Result<(&[u8], &[u8])> {
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
    if crate::checksum::crc32(body) != crc {
        return Err(Error::Checksum);
    }
    Ok(body.split_at(header_len as usize))
}

/// The languages of `pages`, each once, in a fixed order (the meta part's list).
pub(crate) fn page_langs(pages: &[Page]) -> Vec<Lang> {
    let mut langs: Vec<Lang> = pages.iter().map(|p| p.lang).collect();
    crate::order::sort_by_key(&mut langs, |&l| l as u64);
    langs.dedup();
    langs
}
