//! Dense retrieval: int8 chunk vectors and the HNSW graph over them (instant-distance).
//!
//! Vectors are unit length, so cosine is a dot product. Components of MiniLM vectors rarely pass
//! +-0.25, so the scale is chosen from the data rather than mapping +-1 to +-127; that keeps far
//! more precision per byte.

use instant_distance::{Builder, HnswMap, Search};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

// HNSW build parameters; the seed makes graphs reproducible.
const EF_CONSTRUCTION: usize = 100;
const EF_SEARCH: usize = 100;
const SEED: u64 = 0x004c_414e_5445_524e;

/// How float components map to int8: `q = round(x * scale)`, clamped to +-127.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Quantization {
    /// Multiplier from float component to int8 step.
    pub scale: f32,
}

impl Quantization {
    /// Picks the scale so the 99.9th percentile of |component| maps to 127.
    pub fn fit<'a>(vectors: impl IntoIterator<Item = &'a [f32]>) -> Self {
        let mut mags: Vec<f32> = vectors
            .into_iter()
            .flat_map(|v| v.iter().map(|x| x.abs()))
            .filter(|x| x.is_finite())
            .collect();
        if mags.is_empty() {
            return Quantization { scale: 127.0 };
        }
        let idx = ((mags.len() as f64) * 0.999) as usize;
        let idx = idx.min(mags.len() - 1);
        let (_, q, _) = mags.select_nth_unstable_by(idx, f32::total_cmp);
        let limit = q.max(1e-3);
        Quantization {
            scale: 127.0 / limit,
        }
    }

    /// The int8 form of a vector.
    pub fn quantize(&self, v: &[f32]) -> Vector {
        Vector(
            v.iter()
                .map(|x| (x * self.scale).round().clamp(-127.0, 127.0) as i8)
                .collect(),
        )
    }

    /// Cosine of two quantized unit vectors.
    pub fn cosine(&self, a: &Vector, b: &Vector) -> f32 {
        a.dot(b) as f32 / (self.scale * self.scale)
    }

    /// Cosine between a float query and a quantized vector (asymmetric: the query keeps its
    /// precision).
    pub fn cosine_f32(&self, query: &[f32], v: &Vector) -> f32 {
        let s: f32 = query.iter().zip(&v.0).map(|(q, &x)| q * x as f32).sum();
        s / self.scale
    }
}

/// One chunk's quantized vector.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Vector(pub Vec<i8>);

impl Vector {
    /// Integer dot product.
    pub fn dot(&self, other: &Vector) -> i32 {
        self.0
            .iter()
            .zip(&other.0)
            .map(|(&a, &b)| a as i32 * b as i32)
            .sum()
    }
}

impl instant_distance::Point for Vector {
    /// Any decreasing function of the dot product orders neighbours the same; the scale is
    /// applied when results are reported.
    fn distance(&self, other: &Self) -> f32 {
        -(self.dot(other) as f32)
    }
}

/// Up to this many chunks the index is a flat list scanned in full, with no graph: measured
/// natively on real MiniLM vectors (BENCHMARKS.md), a scan costs about 0.3 ms at 1.4k chunks and
/// 1.1 ms at 5.4k with perfect recall, while the graph's recall@10 was 0.98-0.99 and its build
/// cost milliseconds a chunk; past ~10k the scan's cost grows faster than the graph's.
pub const EXACT_SCAN_MAX: usize = 10_000;

/// The vector index: int8 chunk vectors, scanned in full or, for large bundles, reached through
/// an HNSW graph.
#[derive(Serialize, Deserialize)]
pub struct VectorIndex {
    /// How the stored vectors were quantized.
    pub quantization: Quantization,
    /// Dimensions of every vector.
    pub dim: u32,
    layout: Layout,
}

#[derive(Serialize, Deserialize)]
enum Layout {
    /// Every chunk's vector, by chunk id.
    Flat(Vec<Vector>),
    /// A graph over the distinct vectors; its values index `groups`, the chunks that share the
    /// vector (identical sections are one point, not thousands of equal ones).
    Graph {
        graph: HnswMap<Vector, u32>,
        groups: Vec<Vec<u32>>,
    },
}

/// One dense hit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VectorHit {
    /// Chunk id.
    pub chunk: u32,
    /// Cosine between the query and the chunk's (quantized) vector.
    pub cosine: f32,
}

impl VectorIndex {
    /// An index with no vectors (a split bundle's, until its vector shard is loaded).
    pub(crate) fn empty(dim: u32) -> Self {
        VectorIndex {
            quantization: Quantization { scale: 127.0 },
            dim,
            layout: Layout::Flat(Vec::new()),
        }
    }

    /// Builds the index for chunk vectors (`vectors[i]` is chunk `i`'s): flat up to
    /// [`EXACT_SCAN_MAX`] chunks, a graph beyond.
    pub fn build(vectors: &[Vec<f32>], dim: usize) -> Self {
        if vectors.len() <= EXACT_SCAN_MAX {
            let quantization = Quantization::fit(vectors.iter().map(|v| v.as_slice()));
            let flat = vectors.iter().map(|v| quantization.quantize(v)).collect();
            VectorIndex {
                quantization,
                dim: dim as u32,
                layout: Layout::Flat(flat),
            }
        } else {
            Self::with_graph(vectors, dim)
        }
    }

    /// Builds the graph layout whatever the size (for measuring it against the scan).
    /// instant-distance inserts in parallel, which makes the graph depend on thread timing; the
    /// caller runs this in a one-thread pool when output must be byte-stable.
    pub fn with_graph(vectors: &[Vec<f32>], dim: usize) -> Self {
        let quantization = Quantization::fit(vectors.iter().map(|v| v.as_slice()));
        let mut group_of: std::collections::HashMap<Vector, u32> = Default::default();
        let mut points = Vec::new();
        let mut groups: Vec<Vec<u32>> = Vec::new();
        for (chunk, v) in vectors.iter().enumerate() {
            let q = quantization.quantize(v);
            let g = *group_of.entry(q.clone()).or_insert_with(|| {
                points.push(q);
                groups.push(Vec::new());
                groups.len() as u32 - 1
            });
            groups[g as usize].push(chunk as u32);
        }
        let ids: Vec<u32> = (0..points.len() as u32).collect();
        let graph = Builder::default()
            .ef_construction(EF_CONSTRUCTION)
            .ef_search(EF_SEARCH)
            .seed(SEED)
            .build(points, ids);
        VectorIndex {
            quantization,
            dim: dim as u32,
            layout: Layout::Graph { graph, groups },
        }
    }

    /// Checks what decoding cannot: every chunk present once, every id in range, vectors of the
    /// declared length.
    pub(crate) fn validate(&self, chunks: usize) -> Result<()> {
        let bad = |m: &str| Err(Error::Inconsistent(m.into()));
        if !(self.quantization.scale.is_finite() && self.quantization.scale > 0.0) {
            return bad("invalid quantization scale");
        }
        let dim = self.dim as usize;
        match &self.layout {
            Layout::Flat(v) => {
                if v.len() != chunks {
                    return bad("the number of vectors differs from the chunk count");
                }
                if v.iter().any(|p| p.0.len() != dim) {
                    return bad("a vector has the wrong dimension");
                }
            }
            Layout::Graph { graph, groups } => {
                self.check_graph()?;
                if graph.values.len() != groups.len()
                    || graph.values.iter().any(|&g| g as usize >= groups.len())
                {
                    return bad("vector graph names a missing group");
                }
                let mut seen = vec![false; chunks];
                for &c in groups.iter().flatten() {
                    match seen.get_mut(c as usize) {
                        Some(s) if !*s => *s = true,
                        _ => return bad("vector groups name a chunk twice or a missing one"),
                    }
                }
                if seen.iter().any(|s| !s) || groups.iter().any(Vec::is_empty) {
                    return bad("vector groups leave a chunk out");
                }
                if graph.iter().any(|(_, p)| p.0.len() != dim) {
                    return bad("a vector has the wrong dimension");
                }
            }
        }
        Ok(())
    }

    /// The graph's own indexes (points, neighbour lists, layers) are private to
    /// instant-distance and trusted by its search, so a crafted file could make it index out of
    /// range. Its serde form is read back here through a mirror of that layout and every id
    /// checked.
    fn check_graph(&self) -> Result<()> {
        let Layout::Graph { graph, .. } = &self.layout else {
            return Ok(());
        };
        let bad = |m: String| Err(Error::Inconsistent(m));
        let bytes = postcard::to_allocvec(graph).map_err(|e| Error::Encode(e.to_string()))?;
        let g: shape::Map = postcard::from_bytes(&bytes)
            .map_err(|e| Error::Decode(format!("vector graph: {e}")))?;
        let n = g.hnsw.points.len();
        if g.values.len() != n || g.hnsw.zero.len() != n {
            return bad(format!(
                "vector graph has {n} points, {} values and {} nodes",
                g.values.len(),
                g.hnsw.zero.len()
            ));
        }
        if g.hnsw.ef_search == 0 || g.hnsw.ef_search > shape::MAX_EF {
            return bad(format!("vector graph ef_search {}", g.hnsw.ef_search));
        }
        let in_range = |ids: &[u32], len: usize| {
            ids.iter()
                .all(|&id| id == shape::INVALID || (id as usize) < len)
        };
        if !g.hnsw.zero.iter().all(|node| in_range(&node.0, n)) {
            return bad("vector graph names a missing neighbour".into());
        }
        let mut above = n;
        for layer in &g.hnsw.layers {
            // Upper layers hold the first points; each is no larger than the one below.
            if layer.len() > above || !layer.iter().all(|node| in_range(&node.0, layer.len())) {
                return bad("vector graph has a malformed layer".into());
            }
            above = layer.len();
        }
        Ok(())
    }

    /// Rewrites the graph through its mirror (for tests that damage it on purpose).
    #[cfg(test)]
    pub(crate) fn edit_graph(&mut self, f: impl FnOnce(&mut shape::Map)) {
        let Layout::Graph { graph, .. } = &mut self.layout else {
            panic!("no graph to edit");
        };
        let bytes = postcard::to_allocvec(&*graph).expect("encode");
        let mut g: shape::Map = postcard::from_bytes(&bytes).expect("mirror");
        f(&mut g);
        let bytes = postcard::to_allocvec(&g).expect("encode mirror");
        *graph = postcard::from_bytes(&bytes).expect("same layout");
    }

    /// For tests that damage the flat list or the groups on purpose.
    #[cfg(test)]
    pub(crate) fn edit_lists(
        &mut self,
        f: impl FnOnce(Option<&mut Vec<Vector>>, Option<&mut Vec<Vec<u32>>>),
    ) {
        match &mut self.layout {
            Layout::Flat(v) => f(Some(v), None),
            Layout::Graph { groups, .. } => f(None, Some(groups)),
        }
    }

    /// Every stored vector with its chunk id.
    pub fn vectors(&self) -> Vec<(u32, &Vector)> {
        match &self.layout {
            Layout::Flat(v) => v.iter().enumerate().map(|(i, p)| (i as u32, p)).collect(),
            Layout::Graph { graph, groups } => graph
                .iter()
                .flat_map(|(pid, p)| {
                    let g = graph.values[pid.into_inner() as usize] as usize;
                    groups[g].iter().map(move |&c| (c, p))
                })
                .collect(),
        }
    }

    /// Cosine between the query and one chunk's vector, where the layout can reach it directly
    /// (flat bundles; a graph is searched, not indexed by chunk).
    pub fn cosine(&self, query: &[f32], chunk: u32) -> Option<f32> {
        match &self.layout {
            Layout::Flat(v) if query.len() == self.dim as usize => v
                .get(chunk as usize)
                .map(|p| self.quantization.cosine_f32(query, p)),
            _ => None,
        }
    }

    /// Number of chunks with a vector.
    pub fn len(&self) -> usize {
        match &self.layout {
            Layout::Flat(v) => v.len(),
            Layout::Graph { groups, .. } => groups.iter().map(Vec::len).sum(),
        }
    }

    /// True when the index holds no vector.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether searches walk a graph (large bundles) rather than scan.
    pub fn has_graph(&self) -> bool {
        matches!(self.layout, Layout::Graph { .. })
    }

    /// The nearest chunks: a full scan of a flat index, a graph walk otherwise.
    pub fn search(&self, query: &[f32], k: usize) -> Vec<VectorHit> {
        match self.layout {
            Layout::Flat(_) => self.search_exact(query, k),
            Layout::Graph { .. } => self.search_graph(query, k),
        }
    }

    /// Approximate nearest chunks by walking the graph (a flat index is scanned instead).
    pub fn search_graph(&self, query: &[f32], k: usize) -> Vec<VectorHit> {
        let Layout::Graph { graph, groups } = &self.layout else {
            return self.search_exact(query, k);
        };
        if groups.is_empty() {
            return Vec::new();
        }
        let q = self.quantization.quantize(query);
        let mut search = Search::default();
        let mut hits = Vec::new();
        for item in graph.search(&q, &mut search) {
            let cosine = self.quantization.cosine_f32(query, item.point);
            for &chunk in groups.get(*item.value as usize).into_iter().flatten() {
                hits.push(VectorHit { chunk, cosine });
            }
            if hits.len() >= k {
                break;
            }
        }
        hits.truncate(k);
        hits
    }

    /// Exact nearest chunks by scanning every vector.
    pub fn search_exact(&self, query: &[f32], k: usize) -> Vec<VectorHit> {
        let hit = |(chunk, point): (u32, &Vector)| VectorHit {
            chunk,
            cosine: self.quantization.cosine_f32(query, point),
        };
        // The flat layout is scanned in place: this runs on every query of most bundles.
        let mut hits: Vec<VectorHit> = match &self.layout {
            Layout::Flat(v) => v.iter().zip(0..).map(|(p, i)| hit((i, p))).collect(),
            Layout::Graph { .. } => self.vectors().into_iter().map(hit).collect(),
        };
        hits.sort_by(|a, b| b.cosine.total_cmp(&a.cosine).then(a.chunk.cmp(&b.chunk)));
        hits.truncate(k);
        hits
    }
}

/// A mirror of instant-distance 0.6's serialized graph, read to check it (and, in tests, to
/// damage it).
pub(crate) mod shape {
    use serde::de::{Deserializer, Error as _, SeqAccess, Visitor};
    use serde::ser::{SerializeTuple, Serializer};
    use serde::{Deserialize, Serialize};

    /// Neighbours per node on upper layers (instant-distance's `M`); the zero layer has twice.
    const M: usize = 32;
    /// instant-distance's invalid point id.
    pub const INVALID: u32 = u32::MAX;
    /// Largest search width accepted from a file.
    pub const MAX_EF: usize = 10_000;

    #[derive(Serialize, Deserialize)]
    pub struct Map {
        pub hnsw: Hnsw,
        pub values: Vec<u32>,
    }

    #[derive(Serialize, Deserialize)]
    pub struct Hnsw {
        pub ef_search: usize,
        pub points: Vec<Vec<i8>>,
        pub zero: Vec<Ids<{ M * 2 }>>,
        pub layers: Vec<Vec<Ids<M>>>,
    }

    /// A fixed-size neighbour list, serialized as a tuple.
    pub struct Ids<const N: usize>(pub Vec<u32>);

    impl<const N: usize> Serialize for Ids<N> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let mut t = s.serialize_tuple(N)?;
            for i in 0..N {
                t.serialize_element(&self.0.get(i).copied().unwrap_or(INVALID))?;
            }
            t.end()
        }
    }

    impl<'de, const N: usize> Deserialize<'de> for Ids<N> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V<const N: usize>;
            impl<'de, const N: usize> Visitor<'de> for V<N> {
                type Value = Ids<N>;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    write!(f, "{N} point ids")
                }
                fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Ids<N>, A::Error> {
                    let mut ids = Vec::with_capacity(N);
                    for i in 0..N {
                        ids.push(
                            seq.next_element()?
                                .ok_or_else(|| A::Error::invalid_length(i, &self))?,
                        );
                    }
                    Ok(Ids(ids))
                }
            }
            d.deserialize_tuple(N, V::<N>)
        }
    }
}

/// A seeded unit vector for tests (a small xorshift, so tests need no rand dependency).
#[cfg(test)]
pub(crate) fn unit(seed: u64, dim: usize) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut v: Vec<f32> = (0..dim)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s % 2000) as f32 / 1000.0 - 1.0
        })
        .collect();
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter_mut().for_each(|x| *x /= n);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantized_cosine_tracks_float_cosine() {
        let a = unit(1, 384);
        let b = unit(2, 384);
        let exact: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        let q = Quantization::fit([a.as_slice(), b.as_slice()]);
        let approx = q.cosine(&q.quantize(&a), &q.quantize(&b));
        assert!((exact - approx).abs() < 0.02, "{exact} vs {approx}");
        let self_cos = q.cosine_f32(&a, &q.quantize(&a));
        assert!((self_cos - 1.0).abs() < 0.02, "{self_cos}");
    }

    #[test]
    fn graph_and_exact_search_find_the_query_itself() {
        let vs: Vec<Vec<f32>> = (0..300).map(|i| unit(i, 64)).collect();
        let index = VectorIndex::with_graph(&vs, 64);
        assert!(index.has_graph());
        for probe in [0usize, 17, 299] {
            assert_eq!(index.search_exact(&vs[probe], 1)[0].chunk, probe as u32);
            assert_eq!(index.search_graph(&vs[probe], 1)[0].chunk, probe as u32);
        }
    }

    #[test]
    fn the_graph_mirror_reads_real_graphs() {
        for n in [0usize, 1, 40, 300] {
            let vs: Vec<Vec<f32>> = (0..n as u64).map(|i| unit(i, 16)).collect();
            VectorIndex::with_graph(&vs, 16).check_graph().unwrap();
        }
    }

    #[test]
    fn identical_vectors_share_one_point_and_all_are_found() {
        let mut vs: Vec<Vec<f32>> = (0..50).map(|i| unit(i, 16)).collect();
        vs.extend(std::iter::repeat_n(unit(7, 16), 500));
        let index = VectorIndex::with_graph(&vs, 16);
        index.validate(vs.len()).unwrap();
        assert_eq!(index.len(), 550);
        let hits = index.search_graph(&unit(7, 16), 600);
        let mut chunks: Vec<u32> = hits.iter().map(|h| h.chunk).collect();
        chunks.sort_unstable();
        chunks.dedup();
        assert!(
            chunks.len() >= 501,
            "every copy and the original are reachable"
        );
        assert!(
            !VectorIndex::build(&vs, 16).has_graph(),
            "small indexes scan"
        );
    }

    #[test]
    fn empty_index_returns_nothing() {
        let index = VectorIndex::with_graph(&[], 8);
        assert!(index.search_graph(&[0.0; 8], 5).is_empty());
        let index = VectorIndex::build(&[], 8);
        assert!(index.search_exact(&[0.0; 8], 5).is_empty());
    }
}
