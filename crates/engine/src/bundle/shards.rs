//! The split bundle's shards: their names, which are loaded, and loading one that arrives
//! (checked against the meta before it is decoded).

use super::*;

impl Bundle {
    /// File name of shard `index` of a kind: its kind, its group's hash and its place there.
    pub(super) fn shard_name(&self, kind: ShardKind, index: usize) -> String {
        name_in(&self.meta, kind, index)
    }

    /// Every shard in the meta's order: kind and index.
    pub(super) fn shard_ids(&self) -> Vec<(ShardKind, usize)> {
        let counts = shard_counts(&self.meta);
        ShardKind::ALL
            .into_iter()
            .flat_map(|k| (0..counts[k as usize]).map(move |i| (k, i)))
            .collect()
    }

    pub(super) fn is_loaded(&self, kind: ShardKind, i: usize) -> bool {
        match kind {
            ShardKind::Terms => self.lexical.shards[i].is_some(),
            ShardKind::Text => self.text_loaded[i],
            ShardKind::Centroids => self.vectors.centroids_loaded(),
            ShardKind::Vectors => self.vectors.partition_loaded(i),
        }
    }

    /// Every shard's file name, in the meta's order.
    pub fn shard_files(&self) -> Vec<String> {
        self.shard_ids()
            .into_iter()
            .map(|(k, i)| self.shard_name(k, i))
            .collect()
    }

    /// The shards not loaded yet, by file name, in the meta's order.
    pub fn unloaded_shards(&self) -> Vec<String> {
        self.shard_ids()
            .into_iter()
            .filter(|&(k, i)| !self.is_loaded(k, i))
            .map(|(k, i)| self.shard_name(k, i))
            .collect()
    }

    /// Bytes of the shards not loaded yet, at most (counted by whole groups).
    pub fn unloaded_bytes(&self) -> u64 {
        let counts = shard_counts(&self.meta);
        ShardKind::ALL
            .into_iter()
            .flat_map(|k| {
                self.meta
                    .groups
                    .of(k)
                    .iter()
                    .enumerate()
                    .filter_map(move |(g, grp)| {
                        let members = g * GROUP..((g + 1) * GROUP).min(counts[k as usize]);
                        members
                            .into_iter()
                            .any(|i| !self.is_loaded(k, i))
                            .then_some(grp.bytes as u64)
                    })
            })
            .sum()
    }

    /// The file names of the shards in `want`.
    pub(crate) fn wanted_names(&self, want: crate::want::WantSet) -> Vec<String> {
        let m = &self.meta;
        let terms = want.terms.iter().filter(|&&b| b < m.term_blocks.len());
        let text = want.text.iter().filter(|&&b| b < m.text_blocks.len());
        let parts = want
            .vectors
            .iter()
            .filter(|&&p| p < m.vector_parts as usize);
        let mut out: Vec<String> = terms
            .map(|&b| self.shard_name(ShardKind::Terms, b))
            .chain(text.map(|&b| self.shard_name(ShardKind::Text, b)))
            .collect();
        if want.centroids && m.vector_parts > 1 {
            out.push(self.shard_name(ShardKind::Centroids, 0));
        }
        out.extend(parts.map(|&p| self.shard_name(ShardKind::Vectors, p)));
        out.dedup();
        out
    }

    /// Loads one shard of a split bundle, by file name; checks it against its group's hash and
    /// checks its contents. Loading a shard twice is harmless.
    pub fn add_shard(&mut self, name: &str, bytes: &[u8]) -> Result<()> {
        let not_ours = || Error::Shard(format!("{name:?} is not a shard of this bundle"));
        let (kind, hash, member) = parse_shard_name(name).ok_or_else(not_ours)?;
        let count = shard_counts(&self.meta)[kind as usize];
        // Identical groups share names (and bytes): the file loads into each.
        let indexes: Vec<usize> = self
            .meta
            .groups
            .of(kind)
            .iter()
            .enumerate()
            .filter(|(_, g)| g.hash == hash)
            .map(|(g, _)| g * GROUP + member)
            .filter(|&i| i < count)
            .collect();
        if indexes.is_empty() {
            return Err(not_ours());
        }
        for index in indexes {
            self.load_shard(kind, index, bytes)
                .map_err(|e| Error::Shard(format!("{name}: {e}")))?;
        }
        Ok(())
    }

    /// The most bytes shard file `name` can hold (its group's declared size), or `None` when
    /// the meta names no such shard: a reader stops reading there.
    pub fn shard_max_len(&self, name: &str) -> Option<u64> {
        let (kind, hash, _) = parse_shard_name(name)?;
        self.meta
            .groups
            .of(kind)
            .iter()
            .filter(|g| g.hash == hash)
            .map(|g| g.bytes as u64)
            .max()
    }

    /// Checks a shard file against its group and returns its body.
    pub(super) fn open_shard<'a>(
        &self,
        kind: ShardKind,
        index: usize,
        bytes: &'a [u8],
    ) -> Result<&'a [u8]> {
        let g = index / GROUP;
        let group = self.meta.groups.of(kind)[g];
        let members = (shard_counts(&self.meta)[kind as usize] - g * GROUP).min(GROUP);
        let (file, rest): (ShardFile, _) =
            postcard::take_from_bytes(bytes).map_err(|e| Error::Decode(e.to_string()))?;
        if !rest.is_empty() || file.siblings.len() != members {
            return Err(Error::Inconsistent("the shard file is malformed".into()));
        }
        if shard_ref(&encode(&file.siblings)?).hash != group.hash {
            return Err(Error::Checksum);
        }
        // The group's size bounded what was allocated before any shard arrived: it must be
        // true. Every member's file is the same sibling list and its own body.
        let list = (bytes.len() - rest.len() - file.body.len()) as u64
            - varint_len(file.body.len() as u64);
        let total = file
            .siblings
            .iter()
            .map(|r| list + varint_len(r.len as u64) + r.len as u64)
            .sum::<u64>()
            .min(u32::MAX as u64);
        if total != group.bytes as u64 {
            return Err(Error::Inconsistent(
                "the shard group's size differs from the meta's".into(),
            ));
        }
        let own = file.siblings[index % GROUP];
        if file.body.len() as u64 != own.len as u64 {
            return Err(Error::Truncated {
                expected: own.len as u64,
                found: file.body.len() as u64,
            });
        }
        if shard_ref(file.body).hash != own.hash {
            return Err(Error::Checksum);
        }
        Ok(file.body)
    }

    pub(super) fn load_shard(&mut self, kind: ShardKind, index: usize, bytes: &[u8]) -> Result<()> {
        if self.is_loaded(kind, index) {
            return Ok(());
        }
        let bytes = self.open_shard(kind, index, bytes)?;
        let dec = |e: postcard::Error| Error::Decode(e.to_string());
        match kind {
            ShardKind::Terms => {
                let s: TermShard = postcard::from_bytes(bytes).map_err(dec)?;
                self.lexical.validate_shard(index, &s)?;
                self.lexical.shards[index] = Some(s);
            }
            ShardKind::Text => {
                let s: TextShard = postcard::from_bytes(bytes).map_err(dec)?;
                self.install_text(index, s)?;
            }
            ShardKind::Centroids => self.vectors.install_centroids(bytes)?,
            // No chunk may be in two partitions (nor, once all are in, in none).
            ShardKind::Vectors => self.vectors.install_partition(index, bytes)?,
        }
        Ok(())
    }

    pub(super) fn text_range(&self, b: usize) -> std::ops::Range<u32> {
        let t = &self.text_firsts;
        t[b]..t.get(b + 1).copied().unwrap_or(self.header.chunks)
    }

    pub(super) fn install_text(&mut self, b: usize, s: TextShard) -> Result<()> {
        let bad = |m: &str| Err(Error::Inconsistent(m.into()));
        let range = self.text_range(b);
        if s.chunks.len() != range.len() {
            return bad("a text block's size differs from the block table");
        }
        let mut wanted: Vec<u32> = range.clone().map(|c| self.page_id_of(c)).collect();
        wanted.dedup();
        if s.pages.len() != wanted.len() || s.pages.iter().zip(&wanted).any(|(p, w)| p.0 != *w) {
            return bad("a text block's pages differ from its chunks'");
        }
        if s.chunks
            .iter()
            .zip(range.clone())
            .any(|(c, id)| c.page != self.page_id_of(id))
        {
            return bad("a chunk's page differs from the page table");
        }
        // Page links are followed by readers: a tampered bundle may not send them to script.
        if s.pages.iter().any(|(_, p)| !crate::is_safe_link(&p.url)) {
            return bad("a page's URL is not a path or an http(s) link");
        }
        for (id, page) in s.pages {
            let filters = std::mem::take(&mut self.pages[id as usize].filters);
            self.pages[id as usize] = page;
            if self.pages[id as usize].filters.is_empty() {
                self.pages[id as usize].filters = filters;
            }
        }
        for (c, id) in s.chunks.into_iter().zip(range) {
            self.chunks[id as usize] = c;
        }
        self.text_loaded[b] = true;
        Ok(())
    }
}

/// How many shards of each kind a meta describes, indexed by [`ShardKind`].
pub(super) fn shard_counts(m: &Meta) -> [usize; 4] {
    [
        m.term_blocks.len(),
        m.text_blocks.len(),
        (m.vector_parts > 1) as usize,
        m.vector_parts as usize,
    ]
}

/// Kind, group hash and place in the group of a shard file's name (see [`name_in`]).
pub(super) fn parse_shard_name(name: &str) -> Option<(ShardKind, u64, usize)> {
    let (rest, member) = name.strip_suffix(".bin")?.rsplit_once('-')?;
    let (kind, hash) = rest.split_once('-')?;
    let member: usize = member.parse().ok().filter(|&m| m < GROUP)?;
    let hash = u64::from_str_radix(hash, 16)
        .ok()
        .filter(|_| hash.len() == 16)?;
    Some((ShardKind::from_prefix(kind)?, hash, member))
}

/// File name of shard `index` of a kind: its kind, its group's hash and its place there.
pub(super) fn name_in(m: &Meta, kind: ShardKind, index: usize) -> String {
    let hash = m.groups.of(kind)[index / GROUP].hash;
    crate::content_address::shard_name(kind.prefix(), hash, index % GROUP)
}
