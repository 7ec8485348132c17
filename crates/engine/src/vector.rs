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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

/// The vector index: HNSW graph whose points are the chunk vectors and whose values are chunk ids.
#[derive(Serialize, Deserialize)]
pub struct VectorIndex {
    /// How the stored vectors were quantized.
    pub quantization: Quantization,
    /// Dimensions of every vector.
    pub dim: u32,
    graph: HnswMap<Vector, u32>,
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
    /// Builds the graph. instant-distance inserts in parallel, which makes the graph depend on
    /// thread timing; the caller runs this in a one-thread pool when output must be byte-stable.
    pub fn build(vectors: &[Vec<f32>], dim: usize) -> Self {
        let quantization = Quantization::fit(vectors.iter().map(|v| v.as_slice()));
        let points: Vec<Vector> = vectors.iter().map(|v| quantization.quantize(v)).collect();
        let ids: Vec<u32> = (0..points.len() as u32).collect();
        let graph = Builder::default()
            .ef_construction(EF_CONSTRUCTION)
            .ef_search(EF_SEARCH)
            .seed(SEED)
            .build(points, ids);
        VectorIndex {
            quantization,
            dim: dim as u32,
            graph,
        }
    }

    /// Checks what decoding cannot: ids in range and vectors of the declared length.
    pub(crate) fn validate(&self, chunks: usize) -> Result<()> {
        let bad = |m: &str| Err(Error::Inconsistent(m.into()));
        self.check_graph()?;
        if self.graph.values.iter().any(|&v| v as usize >= chunks) {
            return bad("vector index names a missing chunk");
        }
        if self
            .graph
            .iter()
            .any(|(_, p)| p.0.len() != self.dim as usize)
        {
            return bad("a vector has the wrong dimension");
        }
        if !(self.quantization.scale.is_finite() && self.quantization.scale > 0.0) {
            return bad("invalid quantization scale");
        }
        Ok(())
    }

    /// The graph's own indexes (points, neighbour lists, layers) are private to
    /// instant-distance and trusted by its search, so a crafted file could make it index out of
    /// range. Its serde form is read back here through a mirror of that layout and every id
    /// checked.
    fn check_graph(&self) -> Result<()> {
        let bad = |m: String| Err(Error::Inconsistent(m));
        let bytes = postcard::to_allocvec(&self.graph).map_err(|e| Error::Encode(e.to_string()))?;
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
        let bytes = postcard::to_allocvec(&self.graph).expect("encode");
        let mut g: shape::Map = postcard::from_bytes(&bytes).expect("mirror");
        f(&mut g);
        let bytes = postcard::to_allocvec(&g).expect("encode mirror");
        self.graph = postcard::from_bytes(&bytes).expect("same layout");
    }

    /// Every stored vector with its chunk id, in graph order.
    pub fn vectors(&self) -> impl Iterator<Item = (u32, &Vector)> {
        self.graph
            .iter()
            .map(|(pid, p)| (self.graph.values[pid.into_inner() as usize], p))
    }

    /// Number of vectors.
    pub fn len(&self) -> usize {
        self.graph.values.len()
    }

    /// True when the index holds no vector.
    pub fn is_empty(&self) -> bool {
        self.graph.values.is_empty()
    }

    /// Approximate nearest chunks by walking the graph.
    pub fn search_graph(&self, query: &[f32], k: usize) -> Vec<VectorHit> {
        if self.is_empty() {
            return Vec::new();
        }
        let q = self.quantization.quantize(query);
        let mut search = Search::default();
        self.graph
            .search(&q, &mut search)
            .take(k)
            .map(|item| VectorHit {
                chunk: *item.value,
                cosine: self.quantization.cosine_f32(query, item.point),
            })
            .collect()
    }

    /// Exact nearest chunks by scanning every vector.
    pub fn search_exact(&self, query: &[f32], k: usize) -> Vec<VectorHit> {
        let mut hits: Vec<VectorHit> = self
            .graph
            .iter()
            .map(|(pid, point)| VectorHit {
                chunk: self.graph.values[pid.into_inner() as usize],
                cosine: self.quantization.cosine_f32(query, point),
            })
            .collect();
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

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(seed: u64, dim: usize) -> Vec<f32> {
        // A small xorshift so the test needs no rand dependency.
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
        let index = VectorIndex::build(&vs, 64);
        for probe in [0usize, 17, 299] {
            assert_eq!(index.search_exact(&vs[probe], 1)[0].chunk, probe as u32);
            assert_eq!(index.search_graph(&vs[probe], 1)[0].chunk, probe as u32);
        }
    }

    #[test]
    fn the_graph_mirror_reads_real_graphs() {
        for n in [0usize, 1, 40, 300] {
            let vs: Vec<Vec<f32>> = (0..n as u64).map(|i| unit(i, 16)).collect();
            VectorIndex::build(&vs, 16).check_graph().unwrap();
        }
    }

    #[test]
    fn empty_index_returns_nothing() {
        let index = VectorIndex::build(&[], 8);
        assert!(index.search_graph(&[0.0; 8], 5).is_empty());
        assert!(index.search_exact(&[0.0; 8], 5).is_empty());
    }
}
