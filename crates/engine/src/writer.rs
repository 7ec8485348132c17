//! Writing bundles: the one way to make a [`Bundle`], so the indexer never assembles the file's
//! parts itself and every bundle it writes passes the same checks a reader applies.

use crate::analyze::{Analyzer, Lang, ANALYZER_VERSION};
use crate::bm25::{Bm25Params, LexicalDoc, LexicalIndex};
use crate::bundle::{Bundle, Chunk, Header, ModelInfo, Page};
use crate::error::{Error, Result};
use crate::vector::VectorIndex;

/// Collects pages and chunks, then builds the indexes over them.
///
/// ```
/// use lantern_engine::{BundleWriter, Lang, ModelInfo};
/// let mut w = BundleWriter::new(ModelInfo::new("toy", "00", 2, 16), 0.3);
/// let page = w.add_page("/a.html", "A", "a.md", Lang::English);
/// w.add_chunk(page, vec!["A".into()], "", "Some text.");
/// let bundle = w.finish(vec![vec![0.6, 0.8]]).unwrap();
/// assert_eq!(bundle.chunks().len(), 1);
/// ```
pub struct BundleWriter {
    model: ModelInfo,
    abstain_cosine: f32,
    pages: Vec<Page>,
    chunks: Vec<Chunk>,
    partitions: usize,
    probe: u32,
    synonyms: Vec<(String, Vec<String>)>,
}

impl BundleWriter {
    /// Starts a bundle for vectors of `model`; `abstain_cosine` is the best-cosine threshold
    /// under which search reports "no good match".
    pub fn new(model: ModelInfo, abstain_cosine: f32) -> Self {
        BundleWriter {
            model,
            abstain_cosine,
            pages: Vec::new(),
            chunks: Vec::new(),
            partitions: 0,
            probe: 0,
            synonyms: Vec::new(),
        }
    }

    /// Words readers type that the docs say otherwise: a query word `from` also matches the
    /// words of each of `to` (one way; declare both to go both ways). A multi-word value shares
    /// the match among its words. Analyzed as the pages are, in their languages.
    pub fn synonyms(mut self, synonyms: Vec<(String, Vec<String>)>) -> Self {
        self.synonyms = synonyms;
        self
    }

    /// Splits the vectors into about `partitions` partitions, of which a query reads the
    /// nearest `probe`. 0 keeps the default: one partition up to [`crate::PARTITION_ABOVE`]
    /// chunks, about one per 128 beyond; [`crate::DEFAULT_PROBE`] read.
    pub fn vector_partitions(mut self, partitions: usize, probe: u32) -> Self {
        self.partitions = partitions;
        self.probe = probe;
        self
    }

    /// Adds a page in language `lang` and returns its id.
    pub fn add_page(&mut self, url: &str, title: &str, source: &str, lang: Lang) -> u32 {
        self.pages.push(Page {
            url: url.to_string(),
            title: title.to_string(),
            source: source.to_string(),
            lang,
            meta: Vec::new(),
            filters: Vec::new(),
        });
        self.pages.len() as u32 - 1
    }

    /// Sets a page's meta (shown with its results) and filters (to restrict searches by).
    /// Unknown page ids are ignored.
    pub fn set_page_facets(
        &mut self,
        page: u32,
        meta: Vec<(String, String)>,
        filters: Vec<(String, String)>,
    ) {
        if let Some(p) = self.pages.get_mut(page as usize) {
            p.meta = meta;
            p.filters = filters;
        }
    }

    /// Adds a chunk of page `page` and returns its id; chunks are added page after page. Its
    /// vector is given to [`Self::finish`]
    /// at the same position.
    pub fn add_chunk(
        &mut self,
        page: u32,
        breadcrumb: Vec<String>,
        anchor: &str,
        text: &str,
    ) -> u32 {
        self.chunks.push(Chunk {
            page,
            breadcrumb,
            anchor: anchor.to_string(),
            text: text.to_string(),
        });
        self.chunks.len() as u32 - 1
    }

    /// The chunks added so far, in order (to embed them).
    pub fn chunks(&self) -> &[Chunk] {
        &self.chunks
    }

    /// Builds the BM25 postings and the vector partitions and checks the result as a reader
    /// would. `vectors[i]` is chunk `i`'s unit-length embedding. The same input gives the same
    /// bytes.
    pub fn finish(self, vectors: Vec<Vec<f32>>) -> Result<Bundle> {
        if vectors.len() != self.chunks.len() {
            return Err(Error::Inconsistent(format!(
                "{} vectors for {} chunks",
                vectors.len(),
                self.chunks.len()
            )));
        }
        let dim = self.model.dim as usize;
        if let Some(v) = vectors
            .iter()
            .find(|v| v.len() != dim || v.iter().any(|x| !x.is_finite()))
        {
            return Err(Error::Inconsistent(format!(
                "a vector of {} values (the model has {dim}, all finite)",
                v.len()
            )));
        }
        let analyzer = Analyzer::default();
        let bm25 = Bm25Params::default();
        // The fields of each chunk: the title on its page's top chunk, its own heading, the
        // headings above it once.
        let fields: Vec<(&str, &str, String)> = self
            .chunks
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let top = i == 0 || self.chunks[i - 1].page != c.page;
                let (own, above) = match c.breadcrumb.split_last() {
                    Some((own, above)) if !above.is_empty() => (own.as_str(), above),
                    // Text under the title alone: the title is its heading.
                    _ => ("", &c.breadcrumb[..]),
                };
                let title = if top {
                    c.breadcrumb.first().map_or("", String::as_str)
                } else {
                    ""
                };
                let path = if top {
                    &above[above.len().min(1)..]
                } else {
                    above
                };
                (title, own, path.join(" "))
            })
            .collect();
        let lexical = LexicalIndex::build(
            self.chunks
                .iter()
                .zip(&fields)
                .map(|(c, (title, heading, path))| LexicalDoc {
                    title,
                    heading,
                    path,
                    body: &c.text,
                    lang: self
                        .pages
                        .get(c.page as usize)
                        .map_or(Lang::None, |p| p.lang),
                }),
            &analyzer,
            bm25,
        );
        let mut vectors = match self.partitions {
            0 => VectorIndex::build(&vectors, dim),
            k => VectorIndex::with_partitions(&vectors, dim, k),
        };
        if self.probe > 0 {
            vectors.set_probe(self.probe);
        }
        let synonyms = analyze_synonyms(
            &analyzer,
            &crate::analyze::query_langs(&crate::bundle::page_langs(&self.pages)),
            &self.synonyms,
        );
        let header = Header {
            model: self.model,
            quantization: vectors.quantization,
            bm25,
            analyzer_version: ANALYZER_VERSION,
            abstain_cosine: self.abstain_cosine,
            pages: self.pages.len() as u32,
            chunks: self.chunks.len() as u32,
            terms: lexical.num_terms() as u32,
            synonyms,
        };
        Bundle::assemble(header, self.pages, self.chunks, lexical, vectors)
    }
}

/// A declared synonym's match counts this much of the word itself: the page that uses the
/// reader's own word still comes first.
const SYNONYM_WEIGHT: f32 = 0.9;

/// Declared synonyms as query terms: each key word's terms (one per language) map to the
/// terms of its values' words. Words that analyze to nothing (stop words, punctuation) drop.
fn analyze_synonyms(
    analyzer: &Analyzer,
    langs: &[Lang],
    declared: &[(String, Vec<String>)],
) -> Vec<(String, Vec<(String, f32)>)> {
    let mut out: Vec<(String, Vec<(String, f32)>)> = Vec::new();
    for (from, to) in declared {
        let mut targets: Vec<(String, f32)> = Vec::new();
        for value in to {
            let terms: Vec<String> = crate::analyze::surface_words(value)
                .into_iter()
                .flat_map(|w| analyzer.alternatives(&w, langs))
                .collect();
            let weight = SYNONYM_WEIGHT / terms.len().max(1) as f32;
            for t in terms {
                if !targets.iter().any(|(x, _)| *x == t) {
                    targets.push((t, weight));
                }
            }
        }
        for key in crate::analyze::surface_words(from)
            .into_iter()
            .flat_map(|w| analyzer.alternatives(&w, langs))
        {
            let extra: Vec<(String, f32)> =
                targets.iter().filter(|(t, _)| *t != key).cloned().collect();
            if extra.is_empty() {
                continue;
            }
            match out.binary_search_by(|(k, _)| k.as_str().cmp(&key)) {
                Ok(at) => {
                    for e in extra {
                        if !out[at].1.iter().any(|(x, _)| *x == e.0) {
                            out[at].1.push(e);
                        }
                    }
                }
                Err(at) => out.insert(at, (key, extra)),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn writer() -> BundleWriter {
        let mut w = BundleWriter::new(ModelInfo::new("toy", "abc", 2, 16), 0.3);
        let p = w.add_page("/a.html", "A", "a.md", Lang::English);
        w.add_chunk(
            p,
            vec!["A".into(), "Caching".into()],
            "caching",
            "Results are kept.",
        );
        w.add_chunk(p, vec!["A".into()], "", "Nothing else here.");
        w
    }

    #[test]
    fn written_bundles_read_back_identically() {
        let b = writer()
            .finish(vec![vec![1.0, 0.0], vec![0.0, 1.0]])
            .unwrap();
        let bytes = b.to_bytes().unwrap();
        let again = Bundle::from_bytes(&bytes).unwrap();
        assert_eq!(again.to_bytes().unwrap(), bytes);
        assert_eq!(again.header().chunks, 2);
        assert_eq!(again.chunk(0).unwrap().anchor, "caching");
        assert_eq!(again.page_of(again.chunk(1).unwrap()).url, "/a.html");
    }

    #[test]
    fn a_split_bundle_loads_shard_by_shard_to_the_same_bundle() {
        let b = writer()
            .finish(vec![vec![1.0, 0.0], vec![0.0, 1.0]])
            .unwrap();
        let split = b.to_split().unwrap();
        let mut partial = Bundle::from_bytes(&split.meta).unwrap();
        assert!(!partial.is_complete());
        assert!(partial.chunk(0).is_none(), "no text before its block");
        assert_eq!(partial.unloaded_shards(), b.shard_files());
        assert!(partial
            .add_shard("terms-0000000000000000.bin", b"x")
            .is_err());
        let (name, bytes) = &split.shards[0];
        let mut damaged = bytes.clone();
        damaged[0] ^= 1;
        assert!(matches!(
            partial.add_shard(name, &damaged),
            Err(Error::Shard(_))
        ));
        assert!(partial.add_shard(name, &bytes[..bytes.len() - 1]).is_err());
        for (name, bytes) in &split.shards {
            partial.add_shard(name, bytes).unwrap();
            partial.add_shard(name, bytes).unwrap();
        }
        assert!(partial.is_complete() && partial.unloaded_shards().is_empty());
        assert_eq!(partial.to_bytes().unwrap(), b.to_bytes().unwrap());
        assert_eq!(b.shard_files().len(), split.shards.len());
    }

    /// Searches a partial engine as a browser does: fetch the shards it names, search again.
    fn fetching(
        partial: &mut crate::search::Engine,
        split: &crate::bundle::Split,
        text: &str,
        vector: Option<&[f32]>,
        mode: crate::results::Mode,
    ) -> crate::results::Results {
        for _ in 0..8 {
            let r = partial.search(text, vector, mode, 10);
            if r.missing.is_empty() {
                return r;
            }
            for name in &r.missing {
                let bytes = &split.shards.iter().find(|(n, _)| n == name).unwrap().1;
                partial.add_shard(name, bytes).unwrap();
            }
        }
        panic!("the search keeps asking");
    }

    #[test]
    fn declared_synonyms_reach_a_split_bundle_s_term_blocks() {
        use crate::results::Mode;
        use crate::search::Engine;
        let mut w = BundleWriter::new(ModelInfo::new("toy", "abc", 2, 16), 0.3).synonyms(vec![(
            "monorepo".to_string(),
            vec!["workspace".to_string()],
        )]);
        // Enough pages for several term blocks.
        for p in 0..400u32 {
            let page = w.add_page(&format!("/{p}.html"), "P", "p.md", Lang::English);
            w.add_chunk(page, vec![], "", &format!("word{p} filler{p} text"));
        }
        let ws = w.add_page("/ws.html", "W", "w.md", Lang::English);
        w.add_chunk(ws, vec![], "", "a workspace shares one lock file");
        let whole = w.finish(vec![vec![0.6, 0.8]; 401]).unwrap();
        let split = whole.to_split().unwrap();
        let whole = Engine::new(whole);
        let mut partial = Engine::new(Bundle::from_bytes(&split.meta).unwrap());
        let got = fetching(&mut partial, &split, "monorepo", None, Mode::Keyword);
        let urls = |r: &crate::results::Results| -> Vec<String> {
            r.pages.iter().map(|p| p.url.clone()).collect()
        };
        assert_eq!(urls(&got), ["/ws.html"]);
        assert_eq!(
            urls(&got),
            urls(&whole.search("monorepo", None, Mode::Keyword, 10))
        );
        assert!(
            !partial.bundle().unloaded_shards().is_empty(),
            "only what it needed"
        );
    }

    #[test]
    fn an_identifier_the_docs_never_write_whole_finds_its_parts_split_or_whole() {
        use crate::results::Mode;
        use crate::search::Engine;
        let mut w = BundleWriter::new(ModelInfo::new("toy", "abc", 2, 16), 0.3);
        for p in 0..400u32 {
            let page = w.add_page(&format!("/{p}.html"), "P", "p.md", Lang::English);
            w.add_chunk(page, vec![], "", &format!("word{p} filler{p} text"));
        }
        let codes = w.add_page("/codes.html", "Codes", "c.md", Lang::English);
        w.add_chunk(codes, vec![], "", "the status code of a created item");
        let named = w.add_page("/named.html", "Named", "n.md", Lang::English);
        w.add_chunk(named, vec![], "", "return status.HTTP_404_NOT_FOUND here");
        let whole = w.finish(vec![vec![0.6, 0.8]; 402]).unwrap();
        let split = whole.to_split().unwrap();
        let whole = Engine::new(whole);
        let urls = |r: &crate::results::Results| -> Vec<String> {
            r.pages.iter().map(|p| p.url.clone()).collect()
        };
        // Written whole nowhere: its parts (`status`, `created`) find the page.
        let q = "status.HTTP_201_CREATED ";
        let expect = whole.search(q, None, Mode::Keyword, 10);
        assert_eq!(urls(&expect)[0], "/codes.html");
        let mut partial = Engine::new(Bundle::from_bytes(&split.meta).unwrap());
        assert_eq!(
            urls(&fetching(&mut partial, &split, q, None, Mode::Keyword)),
            urls(&expect)
        );
        // Written whole: the name alone, not its parts.
        let named = whole.search("status.HTTP_404_NOT_FOUND ", None, Mode::Keyword, 10);
        assert_eq!(urls(&named), ["/named.html"]);
    }

    #[test]
    fn a_partitioned_split_bundle_searches_shard_by_shard_as_the_whole() {
        use crate::results::Mode;
        use crate::search::Engine;
        let mut w =
            BundleWriter::new(ModelInfo::new("toy", "abc", 16, 16), 0.3).vector_partitions(8, 2);
        let mut vectors = Vec::new();
        for p in 0..20u64 {
            let page = w.add_page(&format!("/{p}.html"), "P", "p.md", Lang::English);
            for c in 0..10u64 {
                w.add_chunk(page, vec![], "", &format!("topic{p} item{c} common words"));
                vectors.push(crate::vector::unit(p * 3 + c % 2, 16));
            }
        }
        let whole = w.finish(vectors.clone()).unwrap();
        assert!(whole.vectors().partition_count() > 2);
        let split = whole.to_split().unwrap();
        assert!(split
            .shards
            .iter()
            .any(|(n, _)| n.starts_with("centroids-")));
        let whole = Engine::new(whole);
        let mut partial = Engine::new(Bundle::from_bytes(&split.meta).unwrap());
        for (q, text) in [(3usize, "topic1"), (77, "item4 common"), (150, "nothing")] {
            let expect = whole.search(text, Some(&vectors[q]), Mode::Hybrid, 10);
            let got = fetching(&mut partial, &split, text, Some(&vectors[q]), Mode::Hybrid);
            let ids = |r: &crate::results::Results| -> Vec<(u32, u32)> {
                r.hits
                    .iter()
                    .map(|h| (h.chunk, h.score.to_bits()))
                    .collect()
            };
            assert_eq!(ids(&got), ids(&expect), "{text}");
        }
        let read = partial.bundle().unloaded_shards().len();
        assert!(read > 0, "the searches read only some partitions");
    }

    #[test]
    fn chunks_out_of_page_order_are_refused() {
        let mut w = BundleWriter::new(ModelInfo::new("toy", "abc", 2, 16), 0.3);
        let a = w.add_page("/a.html", "A", "a.md", Lang::English);
        let b = w.add_page("/b.html", "B", "b.md", Lang::English);
        w.add_chunk(b, vec![], "", "second page");
        w.add_chunk(a, vec![], "", "first page");
        assert!(matches!(
            w.finish(vec![vec![1.0, 0.0]; 2]),
            Err(Error::Inconsistent(_))
        ));
    }

    #[test]
    fn wrong_vectors_are_refused() {
        assert!(matches!(
            writer().finish(vec![vec![1.0, 0.0]]),
            Err(Error::Inconsistent(_))
        ));
        assert!(matches!(
            writer().finish(vec![vec![1.0, 0.0], vec![0.0, 1.0, 0.0]]),
            Err(Error::Inconsistent(_))
        ));
        assert!(matches!(
            writer().finish(vec![vec![1.0, 0.0], vec![f32::NAN, 1.0]]),
            Err(Error::Inconsistent(_))
        ));
    }

    #[test]
    fn a_chunk_of_a_missing_page_is_refused() {
        let mut w = writer();
        w.add_chunk(7, vec![], "", "orphan");
        let r = w.finish(vec![vec![1.0, 0.0]; 3]);
        assert!(matches!(r, Err(Error::Inconsistent(_))), "{:?}", r.err());
    }
}
