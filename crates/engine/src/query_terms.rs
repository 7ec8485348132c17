//! The engine's side of the query table: the index terms a query pools (both when the table
//! is fitted and when a reader types), and attaching a table to the engine.

use crate::error::Result;
use crate::query_table::QueryTable;
use crate::search::Engine;
use crate::want::Want;

impl Engine {
    /// The query's index terms with weights summing to one: each distinct word counts
    /// equally, shared among the terms it expands to (prefixes while typed, typo neighbours).
    /// What the query table pools, both when fitted and when a reader types.
    pub fn query_terms(&self, text: &str) -> Vec<(usize, f32)> {
        // Terms whose block is not loaded yet are left out: keyword search fetches them first.
        let want = Want::default();
        let (expanded, _) = self
            .keywords()
            .expand(&crate::query::Query::parse(text), &want);
        let n = expanded.len() as f32;
        let mut out = Vec::new();
        for e in &expanded {
            let total: f32 = e.ids.iter().map(|&(_, w)| w).sum();
            if total > 0.0 {
                out.extend(e.ids.iter().map(|&(id, w)| (id, w / total / n)));
            }
        }
        out
    }

    /// Identifies the bundle's term list, which a query table's rows are indexed by.
    pub fn terms_fingerprint(&self) -> u32 {
        self.bundle.terms_fingerprint()
    }

    /// A word as written for each index term (its shortest surface form, else the term):
    /// what the model is shown to give each term a meaning of its own.
    pub fn term_words(&self) -> Vec<String> {
        let lex = self.bundle.lexical();
        let mut words: Vec<String> = lex.terms().cloned().collect();
        let mut set = vec![false; words.len()];
        for (surface, id) in lex.surfaces() {
            let id = *id as usize;
            if id >= words.len() {
                continue; // a partly loaded bundle: the query table is fitted on whole ones
            }
            if !set[id] || surface.len() < words[id].len() {
                words[id] = surface.clone();
                set[id] = true;
            }
        }
        words
    }

    /// Chunks each index term occurs in, by term id (a whole bundle's; what a query table's
    /// fit ranks terms by).
    pub fn term_doc_freqs(&self) -> Vec<usize> {
        let lex = self.bundle.lexical();
        let want = Want::default();
        (0..lex.num_terms())
            .map(|id| lex.doc_freq(id, &want))
            .collect()
    }

    /// Number of index terms (rows a query table needs).
    pub fn num_terms(&self) -> usize {
        self.bundle.lexical().num_terms()
    }

    /// Uses `table` to embed queries ([`Engine::table_vector`]); refused when it was fitted to
    /// another bundle or another model's dimensions.
    pub fn set_query_table(&mut self, table: QueryTable) -> Result<()> {
        table.check_fits(
            self.terms_fingerprint(),
            self.num_terms(),
            self.bundle.header().model.dim,
        )?;
        self.query_table = Some(table);
        Ok(())
    }

    /// Whether a query table is attached.
    pub fn has_query_table(&self) -> bool {
        self.query_table.is_some()
    }

    /// The query vector from the attached query table, without the model; `None` without a
    /// table or when no word of the query is an index term.
    pub fn table_vector(&self, text: &str) -> Option<Vec<f32>> {
        self.query_table.as_ref()?.encode(&self.query_terms(text))
    }
}
