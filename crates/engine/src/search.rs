//! Hybrid search over a loaded bundle: keyword (BM25 with phrases, prefix and typo tolerance),
//! vector, and their fusion ([`Fusion`]), grouped by page ([`PageScore`]) with excerpts.
//!
//! The query vector comes from outside (the embedder), so this module stays free of the model:
//! in the browser keyword results can be shown before the model has loaded.

use std::collections::{HashMap, HashSet};

use crate::analyze::{Analyzer, Lang};
use crate::bundle::Bundle;
use crate::error::Error;
use crate::filter::{Facet, Filter};
use crate::fusion::{page_scores, Evidence, Fusion, PageScore};
use crate::model::Manifest;
use crate::query::Query;
use crate::script::{mostly_unread, Script};
use crate::vector::VectorHit;
use crate::want::Want;

use crate::results::{Hit, Mode, PageGroup, Results, Signal, PER_PAGE};

/// How many vector hits take part in fusion (and set the min-max range of cosines).
const FUSION_DEPTH: usize = 50;
/// How many keyword hits take part in fusion: more than vector hits, because a keyword hit's
/// cosine can be looked up while a vector hit's BM25 beyond this depth counts as zero.
const KEYWORD_DEPTH: usize = 200;

/// Which chunks a search may return.
#[derive(Clone, Copy)]
enum Scope<'a> {
    All,
    /// Chunks of the pages marked true.
    Pages(&'a [bool]),
}

/// A query's vector and where it came from.
#[derive(Clone, Copy)]
struct QueryVector<'a> {
    values: &'a [f32],
    /// From the query table rather than the model.
    approximate: bool,
}

impl<'a> QueryVector<'a> {
    fn model(values: &'a [f32]) -> Self {
        QueryVector {
            values,
            approximate: false,
        }
    }

    fn approximate(values: &'a [f32]) -> Self {
        QueryVector {
            values,
            approximate: true,
        }
    }
}

/// A bundle ready to search.
pub struct Engine {
    pub(crate) bundle: Bundle,
    pub(crate) analyzer: Analyzer,
    /// The languages of the bundle's pages: a query word may mean any of them.
    pub(crate) langs: Vec<Lang>,
    fusion: Fusion,
    page_score: PageScore,
    pub(crate) query_table: Option<crate::query_table::QueryTable>,
    /// Scripts the accepted model reads (empty: not stated, or no model accepted).
    model_scripts: Vec<Script>,
}

impl Engine {
    /// What keyword search reads (keyword.rs).
    pub(crate) fn keywords(&self) -> crate::keyword::Keywords<'_> {
        crate::keyword::Keywords {
            bundle: &self.bundle,
            analyzer: &self.analyzer,
            langs: &self.langs,
        }
    }

    /// Wraps a loaded bundle.
    pub fn new(bundle: Bundle) -> Self {
        let langs = crate::analyze::query_langs(bundle.langs());
        Engine {
            bundle,
            analyzer: Analyzer::default(),
            langs,
            fusion: Fusion::default(),
            page_score: PageScore::default(),
            query_table: None,
            model_scripts: Vec::new(),
        }
    }

    /// Accepts the model that embeds queries, if it is the one the bundle was built with
    /// ([`crate::Error::ModelMismatch`] otherwise), and takes from its manifest what search
    /// needs to know about it: the scripts it reads.
    pub fn accept_model(&mut self, manifest: &Manifest) -> Result<(), Error> {
        self.accept_model_facts(&manifest.sha256, manifest.scripts.clone())
    }

    /// [`Engine::accept_model`] from the two facts search reads of a manifest: the model's
    /// sha256 and the scripts it reads. A browser's page passes them, while the worker that
    /// builds the model reads and checks the whole manifest.
    pub fn accept_model_facts(&mut self, sha256: &str, scripts: Vec<Script>) -> Result<(), Error> {
        self.bundle.check_model(sha256)?;
        self.model_scripts = scripts;
        Ok(())
    }

    /// [`Engine::accept_model`] from a model folder's `manifest.json` bytes, as a browser
    /// fetches them ([`Bundle::accept_manifest`]): the manifest, once accepted.
    pub fn accept_manifest(&mut self, json: &[u8]) -> Result<Manifest, Error> {
        let manifest = self.bundle.accept_manifest(json)?;
        self.model_scripts = manifest.scripts.clone();
        Ok(manifest)
    }

    /// Uses another fusion in hybrid mode (evaluation compares them).
    pub fn with_fusion(mut self, fusion: Fusion, page_score: PageScore) -> Self {
        self.fusion = fusion;
        self.page_score = page_score;
        self
    }

    /// The fusion hybrid mode uses.
    pub fn fusion(&self) -> (Fusion, PageScore) {
        (self.fusion, self.page_score)
    }

    /// The bundle being searched.
    pub fn bundle(&self) -> &Bundle {
        &self.bundle
    }

    /// Loads one shard of a split bundle ([`Bundle::add_shard`]): what [`Results::missing`]
    /// named.
    pub fn add_shard(&mut self, name: &str, bytes: &[u8]) -> Result<(), Error> {
        self.bundle.add_shard(name, bytes)
    }

    /// The bundle, giving up the engine.
    pub fn into_bundle(self) -> Bundle {
        self.bundle
    }

    /// Dense hits for a query vector among the chunks `keep` accepts, and the partitions
    /// read: the nearest centroids' partitions, or every partition for a search restricted to
    /// some pages (the nearest chunks overall may all be out of scope, so the scan is exact).
    fn vector(
        &self,
        query_vector: &[f32],
        k: usize,
        keep: Option<&dyn Fn(u32) -> bool>,
        want: &Want,
    ) -> (Vec<VectorHit>, Vec<usize>) {
        if query_vector.len() != self.bundle.header.model.dim as usize {
            return (Vec::new(), Vec::new());
        }
        let Some(probes) = self
            .bundle
            .vector_probes(query_vector, keep.is_some(), want)
        else {
            return (Vec::new(), Vec::new());
        };
        let hits =
            self.bundle
                .vectors()
                .search_in(query_vector, &probes, keep.unwrap_or(&|_| true), k);
        (hits, probes)
    }

    /// Runs a search. Without a query vector, hybrid and vector modes fall back to keyword.
    pub fn search(
        &self,
        text: &str,
        query_vector: Option<&[f32]>,
        mode: Mode,
        k: usize,
    ) -> Results {
        self.search_with(text, query_vector, mode, k, (self.fusion, self.page_score))
    }

    /// [`Engine::search`] restricted to the pages `filter` accepts. A key no page carries is
    /// an error (a typo would otherwise silently return nothing).
    pub fn search_filtered(
        &self,
        text: &str,
        query_vector: Option<&[f32]>,
        mode: Mode,
        k: usize,
        filter: &Filter,
    ) -> Result<Results, Error> {
        if filter.is_empty() {
            return Ok(self.search(text, query_vector, mode, k));
        }
        let pages = filter.pages(&self.bundle)?;
        let scope = Scope::Pages(&pages);
        Ok(self.run(
            text,
            query_vector.map(QueryVector::model),
            mode,
            k,
            (self.fusion, self.page_score),
            scope,
        ))
    }

    /// The bundle's filter keys and values, with page counts, for facets.
    pub fn facets(&self) -> Vec<Facet> {
        crate::filter::facets(&self.bundle)
    }

    /// [`Engine::search`] with another fusion than the engine's (evaluation compares them).
    pub fn search_with(
        &self,
        text: &str,
        query_vector: Option<&[f32]>,
        mode: Mode,
        k: usize,
        fusion: (Fusion, PageScore),
    ) -> Results {
        let v = query_vector.map(QueryVector::model);
        self.run(text, v, mode, k, fusion, Scope::All)
    }

    /// [`Engine::search_filtered`] with the query embedded by the bundle's query table
    /// ([`Engine::set_query_table`]) instead of the model: meaning before (or without) the
    /// model download. Without a table, or when no word of the query is an index term, the
    /// search is keyword-only and the result says so.
    pub fn search_table(
        &self,
        text: &str,
        mode: Mode,
        k: usize,
        filter: &Filter,
    ) -> Result<Results, Error> {
        let vector = self.table_vector(text);
        let pages = if filter.is_empty() {
            None
        } else {
            Some(filter.pages(&self.bundle)?)
        };
        let scope = pages.as_deref().map_or(Scope::All, Scope::Pages);
        let fusion = (self.fusion, self.page_score);
        let v = vector.as_deref().map(QueryVector::approximate);
        Ok(self.run(text, v, mode, k, fusion, scope))
    }

    /// [`Engine::search_with`] for a vector from an approximate query encoder (one fitted to
    /// the bundle, as the query table is): its cosines are put on the model's scale by the
    /// attached table's calibration, and "no good match" judged as for the table's own.
    pub fn search_approximate_with(
        &self,
        text: &str,
        query_vector: Option<&[f32]>,
        mode: Mode,
        k: usize,
        fusion: (Fusion, PageScore),
    ) -> Results {
        let v = query_vector.map(QueryVector::approximate);
        self.run(text, v, mode, k, fusion, Scope::All)
    }

    /// The `k` best cosines a vector search of the whole bundle finds for `query_vector`,
    /// best first, as the model gives them: what a query table is calibrated on.
    pub fn best_cosines(&self, query_vector: &[f32], k: usize) -> Vec<f32> {
        let (hits, _) = self.vector(query_vector, k, None, &Want::default());
        hits.iter().map(|h| h.cosine).collect()
    }

    fn run(
        &self,
        text: &str,
        query_vector: Option<QueryVector<'_>>,
        mode: Mode,
        k: usize,
        (fusion, page_score): (Fusion, PageScore),
        scope: Scope<'_>,
    ) -> Results {
        let approximate = query_vector.is_some_and(|v| v.approximate);
        let query_vector = query_vector.map(|v| v.values);
        let query = Query::parse(text);
        let mode = match (mode, query_vector) {
            (Mode::Hybrid | Mode::Vector, None) => Mode::Keyword,
            (m, _) => m,
        };
        let bundle = &self.bundle;
        let page_of = |c: u32| bundle.page_id_of(c);
        let in_scope = |c: u32| match scope {
            Scope::All => true,
            Scope::Pages(pages) => pages.get(page_of(c) as usize) == Some(&true),
        };
        // What a split bundle lacks is collected on the way; the search stops at the first
        // step that lacks something and names it.
        let want = Want::default();
        // A query table's cosines on the model's scale (query_table.rs), so that fusion and
        // "no good match" weigh them as they weigh the model's.
        let table = self.query_table.as_ref().filter(|_| approximate);
        let on_scale = |cos: f32| table.map_or(cos, |t| t.calibrated(cos));
        let (mut dense, probes) = match (mode, query_vector) {
            (Mode::Keyword, _) | (_, None) => (Vec::new(), Vec::new()),
            (_, Some(q)) => match scope {
                Scope::All => self.vector(q, FUSION_DEPTH.max(k), None, &want),
                Scope::Pages(_) => self.vector(q, FUSION_DEPTH.max(k), Some(&in_scope), &want),
            },
        };
        let (keyword, keyword_strength) = if mode != Mode::Vector {
            self.keywords()
                .keyword(&query, KEYWORD_DEPTH.max(k), &in_scope, &want)
        } else {
            (Vec::new(), 0.0)
        };
        if !want.is_empty() {
            return self.incomplete(mode, &want);
        }
        dense.iter_mut().for_each(|h| h.cosine = on_scale(h.cosine));
        let best_cosine = dense.first().map(|h| h.cosine);

        let signals = |list: &mut dyn Iterator<Item = (u32, f32)>| -> HashMap<u32, Signal> {
            list.enumerate()
                .map(|(i, (c, score))| {
                    let rank = i as u32 + 1;
                    (c, Signal { rank, score })
                })
                .collect()
        };
        let kw = signals(&mut keyword.iter().copied());
        let vector_list: Vec<(u32, f32)> = dense.iter().map(|h| (h.chunk, h.cosine)).collect();
        let vs = signals(&mut vector_list.iter().copied());

        let vectors = self.bundle.vectors();
        let extra_cosine: HashMap<u32, f32> = match (mode, query_vector) {
            (Mode::Hybrid, Some(q)) if !matches!(fusion, Fusion::Rrf { .. }) => keyword
                .iter()
                .filter(|(c, _)| !vs.contains_key(c))
                // Only the partitions the query read: the same query ranks the same whatever
                // else a reader's browser has loaded.
                .filter_map(|&(c, _)| Some((c, on_scale(vectors.cosine_in(q, &probes, c)?))))
                .collect(),
            _ => HashMap::new(),
        };
        let evidence = Evidence {
            keyword: &keyword,
            keyword_strength,
            vector: &vector_list,
            extra_cosine: &extra_cosine,
        };
        let fused: Vec<(u32, f32)> = match mode {
            Mode::Keyword => keyword.clone(),
            Mode::Vector => vector_list.clone(),
            Mode::Hybrid => fusion.fuse(&evidence),
        };
        let page_scores = page_scores(mode, (fusion, page_score), &evidence, &fused, page_of);
        let mut shown = self.shown(&fused, &page_scores, k, &query, &want);
        // Every shown hit's text, and the best keyword hit's, is needed from here on.
        for &(c, _) in shown.iter().chain(keyword.first()) {
            self.bundle.chunk_or_want(c, &want);
        }
        if !want.is_empty() {
            return self.incomplete(mode, &want);
        }
        let more = self.one_row_per_section(&mut shown, &fused);
        let fused = shown;

        let all_words = keyword
            .first()
            .is_some_and(|&(c, _)| self.matches_all_words(c, &query));
        // A question the model cannot read gets cosines that measure nothing: only its words
        // can vouch for the results.
        let unread_script = best_cosine.is_some() && mostly_unread(text, &self.model_scripts);
        let uncalibrated = table.is_some_and(|t| !t.is_calibrated());
        let no_good_match = self.no_good_match(
            mode,
            (uncalibrated, unread_script, all_words),
            &keyword,
            best_cosine,
        );
        let highlight_terms = crate::excerpt::highlight_terms(&self.analyzer, &self.langs, &query);
        let hits: Vec<Hit> = fused
            .iter()
            .map(|&(c, score)| {
                self.hit(
                    c,
                    score,
                    kw.get(&c).copied(),
                    vs.get(&c).copied(),
                    &highlight_terms,
                    &query,
                )
            })
            .collect();
        let pages = group_by_page(hits, &page_scores, &more, &self.bundle);
        // One ranking: the flat list follows the pages.
        let hits: Vec<Hit> = pages.iter().flat_map(|g| g.hits.iter().cloned()).collect();
        Results {
            mode,
            hits,
            pages,
            no_good_match,
            best_cosine,
            all_words,
            keyword_strength,
            approximate: approximate && mode != Mode::Keyword,
            unread_script,
            missing: Vec::new(),
        }
    }

    /// The sections shown, from the fused list, best first: at most [`PER_PAGE`] of a page, so
    /// other pages stay on the first screen, until `k` are chosen; then the best section of
    /// each of the `k` best pages that has none. A page whose title holds every word of the
    /// query is what the reader asked for: its top is shown first, so the result opens the page
    /// rather than a section deep in it. The page's title is read once its text is loaded
    /// (a split bundle then fetches the top's text and searches again).
    fn shown(
        &self,
        fused: &[(u32, f32)],
        page_scores: &HashMap<u32, f32>,
        k: usize,
        query: &Query,
        want: &Want,
    ) -> Vec<(u32, f32)> {
        let page_of = |c: u32| self.bundle.page_id_of(c);
        let mut per_page: HashMap<u32, usize> = HashMap::new();
        let mut shown: Vec<(u32, f32)> = Vec::new();
        for &(c, score) in fused {
            if shown.len() >= k {
                break;
            }
            let n = per_page.entry(page_of(c)).or_default();
            if *n < PER_PAGE {
                *n += 1;
                shown.push((c, score));
            }
        }
        let mut pages: Vec<(u32, f32)> = page_scores.iter().map(|(&p, &s)| (p, s)).collect();
        crate::order::rank(&mut pages);
        for &(page, _) in pages.iter().take(k) {
            if let std::collections::hash_map::Entry::Vacant(slot) = per_page.entry(page) {
                if let Some(&best) = fused.iter().find(|&&(c, _)| page_of(c) == page) {
                    slot.insert(1);
                    shown.push(best);
                }
            }
        }
        // Landing: the top of a page named by the query goes first among its sections.
        let mut pages_shown: Vec<u32> = shown.iter().map(|&(c, _)| page_of(c)).collect();
        pages_shown.dedup();
        for page in pages_shown {
            let top = self.bundle.page_top(page);
            let Some(&(first, _)) = shown.iter().find(|&&(c, _)| page_of(c) == page) else {
                continue;
            };
            if first == top {
                continue;
            }
            let Some(&(_, top_score)) = fused.iter().find(|&&(c, _)| c == top) else {
                continue;
            };
            let Some(c) = self.bundle.chunk_or_want(first, want) else {
                continue;
            };
            let title = &self.bundle.page_of(c).title;
            if !self.holds_all_words(title, self.bundle.page_of(c).lang, query) {
                continue;
            }
            shown.retain(|&(c, _)| c != top);
            let at = shown.iter().position(|&(c, _)| c == first).unwrap_or(0);
            let first_score = shown[at].1;
            // The top takes its page's first place and its score, so the group stays in order.
            shown.insert(at, (top, top_score.max(first_score)));
            let mut seen = 0;
            shown.retain(|&(c, _)| {
                if page_of(c) != page {
                    return true;
                }
                seen += 1;
                seen <= PER_PAGE
            });
        }
        shown
    }

    /// The result of a search that needs shards which are not loaded: only their names.
    fn incomplete(&self, mode: Mode, want: &Want) -> Results {
        Results {
            mode,
            hits: Vec::new(),
            pages: Vec::new(),
            no_good_match: false,
            best_cosine: None,
            all_words: false,
            keyword_strength: 0.0,
            approximate: false,
            unread_script: false,
            missing: self.bundle.wanted_names(want.take()),
        }
    }

    /// Keeps one row per section among `shown`: the parts of one long section share its link
    /// and breadcrumb, so its best part stands for it. Returns, per page, its sections in
    /// `fused` beyond those shown ("N more on this page").
    fn one_row_per_section(
        &self,
        shown: &mut Vec<(u32, f32)>,
        fused: &[(u32, f32)],
    ) -> HashMap<u32, u32> {
        let mut links: HashSet<(u32, &str)> = HashSet::new();
        let mut parts: Vec<u32> = Vec::new();
        shown.retain(|&(c, _)| match self.bundle.chunk(c) {
            Some(chunk) if !links.insert((chunk.page, chunk.anchor.as_str())) => {
                parts.push(c);
                false
            }
            _ => true,
        });
        let mut more: HashMap<u32, u32> = HashMap::new();
        for &(c, _) in fused {
            if !shown.iter().any(|&(s, _)| s == c) && !parts.contains(&c) {
                *more.entry(self.bundle.page_id_of(c)).or_default() += 1;
            }
        }
        more
    }

    /// Whether to say "no good match": a question in a script the model cannot read, or
    /// cosines from an uncalibrated table, are judged by their words alone; otherwise
    /// [`Engine::weak_evidence`].
    fn no_good_match(
        &self,
        mode: Mode,
        (uncalibrated, unread_script, all_words): (bool, bool, bool),
        keyword: &[(u32, f32)],
        best_cosine: Option<f32>,
    ) -> bool {
        match (uncalibrated, unread_script, mode) {
            (_, true, Mode::Vector) => true,
            (_, true, _) => keyword.is_empty(),
            // A table without a calibration gives cosines on a scale of its own.
            (true, _, Mode::Vector) => best_cosine.is_none(),
            (true, _, _) => keyword.is_empty(),
            (false, false, _) => self.weak_evidence(keyword, all_words, best_cosine, mode),
        }
    }

    /// "No good match": the best dense cosine is under the bundle's threshold and no chunk
    /// matches all the query's words. In keyword mode, only an empty result is weak.
    fn weak_evidence(
        &self,
        keyword: &[(u32, f32)],
        strong_lexical: bool,
        best_cosine: Option<f32>,
        mode: Mode,
    ) -> bool {
        match (mode, best_cosine) {
            (Mode::Keyword, _) | (_, None) => keyword.is_empty(),
            (_, Some(cos)) => cos < self.bundle.header.abstain_cosine && !strong_lexical,
        }
    }

    fn matches_all_words(&self, chunk: u32, query: &Query) -> bool {
        let Some(c) = self.bundle.chunk(chunk) else {
            return false;
        };
        let lang = self.bundle.page_of(c).lang;
        self.holds_all_words(
            &format!("{} {}", c.breadcrumb.join(" "), c.text),
            lang,
            query,
        )
    }

    /// Does `text` hold every word of the query (as index terms, in any of the bundle's
    /// languages)? False for a query without words.
    fn holds_all_words(&self, text: &str, lang: Lang, query: &Query) -> bool {
        let terms: HashSet<String> = self.analyzer.terms(text, lang).into_iter().collect();
        let wanted: Vec<Vec<String>> = self
            .analyzer
            .query_units(&query.words)
            .iter()
            .map(|w| self.analyzer.alternatives(w, &self.langs))
            .filter(|alts| !alts.is_empty())
            .collect();
        !wanted.is_empty()
            && wanted
                .iter()
                .all(|alts| alts.iter().any(|t| terms.contains(t)))
    }

    fn hit(
        &self,
        chunk: u32,
        score: f32,
        keyword: Option<Signal>,
        vector: Option<Signal>,
        highlight: &crate::excerpt::HighlightTerms,
        query: &Query,
    ) -> Hit {
        let c = &self.bundle.chunks()[chunk as usize];
        let page = self.bundle.page_of(c);
        // A page's top opens the page itself, title first, when it is text under the title or
        // the query names the page; a first section found by its own heading opens there.
        let opens_page = chunk == self.bundle.page_top(c.page)
            && (c.breadcrumb.len() <= 1 || self.holds_all_words(&page.title, page.lang, query));
        let url = if opens_page {
            page.url.clone()
        } else {
            self.bundle.section_url(c)
        };
        let (excerpt, highlights) =
            crate::excerpt::excerpt(&self.analyzer, &c.text, page.lang, highlight);
        Hit {
            chunk,
            page: c.page,
            title: page.title.clone(),
            breadcrumb: c.breadcrumb_text(),
            url,
            score,
            keyword,
            vector,
            excerpt,
            highlights,
        }
    }
}

/// Groups hits by page, pages in order of their score (then of their best hit).
fn group_by_page(
    hits: Vec<Hit>,
    page_scores: &HashMap<u32, f32>,
    more: &HashMap<u32, u32>,
    bundle: &Bundle,
) -> Vec<PageGroup> {
    let mut order: Vec<u32> = Vec::new();
    let mut groups: HashMap<u32, Vec<Hit>> = HashMap::new();
    for h in hits {
        if !groups.contains_key(&h.page) {
            order.push(h.page);
        }
        groups.entry(h.page).or_default().push(h);
    }
    // A stable sort keeps best-hit order among pages that score the same.
    let score = |p: &u32| page_scores.get(p).copied().unwrap_or(f32::MIN);
    crate::order::sort_by_key(&mut order, |p| crate::order::best_first(score(p), 0));
    order
        .into_iter()
        .map(|p| {
            let hits = groups.remove(&p).unwrap_or_default();
            let first = &hits[0];
            PageGroup {
                page: p,
                title: first.title.clone(),
                url: first.url.split('#').next().unwrap_or_default().to_string(),
                meta: bundle
                    .pages()
                    .get(p as usize)
                    .map(|page| page.meta.clone())
                    .unwrap_or_default(),
                hits,
                more: more.get(&p).copied().unwrap_or(0),
            }
        })
        .collect()
}
