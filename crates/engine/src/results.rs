//! What a search returns: sections ([`Hit`]) grouped by page ([`PageGroup`]) in the one order
//! every surface shows, with the evidence behind them ([`Results`]); and the modes that make
//! them ([`Mode`]).

use serde::{Deserialize, Serialize};

use crate::error::Error;

/// At most this many sections of one page are shown; the others are counted
/// ([`PageGroup::more`]).
pub const PER_PAGE: usize = 3;

/// Which retrievers run. The one place mode names are spelled: parsing, display and serde.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Keyword and vector results fused.
    #[default]
    Hybrid,
    /// Vector search only ("semantic" in the UI).
    Vector,
    /// BM25 only; needs no model.
    Keyword,
}

impl Mode {
    /// Every mode, in the order reports list them.
    pub const ALL: [Mode; 3] = [Mode::Keyword, Mode::Vector, Mode::Hybrid];

    /// The mode's name as parsed and serialized: `hybrid`, `vector` or `keyword`.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Hybrid => "hybrid",
            Mode::Vector => "vector",
            Mode::Keyword => "keyword",
        }
    }

    /// What a reader sees: `Hybrid`, `Semantic` or `Keyword`.
    pub fn label(self) -> &'static str {
        match self {
            Mode::Hybrid => "Hybrid",
            Mode::Vector => "Semantic",
            Mode::Keyword => "Keyword",
        }
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Mode {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        match s {
            "hybrid" => Ok(Mode::Hybrid),
            "vector" | "semantic" => Ok(Mode::Vector),
            "keyword" => Ok(Mode::Keyword),
            _ => Err(Error::UnknownMode(s.to_string())),
        }
    }
}

/// One retriever's view of a hit.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Signal {
    /// 1-based rank in that retriever's list.
    pub rank: u32,
    /// The retriever's own score (BM25, or cosine).
    pub score: f32,
}

/// One matching chunk.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Hit {
    /// Chunk id.
    pub chunk: u32,
    /// Page id.
    pub page: u32,
    /// Page title.
    pub title: String,
    /// "Page > Section > Subsection".
    pub breadcrumb: String,
    /// Page URL with the section anchor.
    pub url: String,
    /// Fused score in hybrid mode (see [`Fusion`]), the retriever's own score otherwise.
    pub score: f32,
    /// The keyword retriever's rank and score, if it found the chunk.
    pub keyword: Option<Signal>,
    /// The vector retriever's rank and score, if the chunk was in its top list.
    pub vector: Option<Signal>,
    /// Plain text around the matched words: escape before display.
    pub excerpt: String,
    /// `[start, end)` of matched words in `excerpt`, in UTF-16 code units (see
    /// [`crate::highlight_segments`]).
    pub highlights: Vec<(u32, u32)>,
}

/// Hits of one page, best section first.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PageGroup {
    /// Page id.
    pub page: u32,
    /// Page title.
    pub title: String,
    /// Page URL without anchor.
    pub url: String,
    /// The page's `data-lantern-meta` pairs (plain text).
    pub meta: Vec<(String, String)>,
    /// The page's hits, best first (at most [`PER_PAGE`]).
    pub hits: Vec<Hit>,
    /// How many more of its sections matched: "N more on this page".
    #[serde(default)]
    pub more: u32,
}

/// What a search returns.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Results {
    /// The mode actually used (hybrid falls back to keyword without a query vector).
    pub mode: Mode,
    /// The sections shown, in the one order every surface gives them (the widget, `lantern
    /// query`, `--json`, MCP, `lantern eval`): page by page as [`Results::pages`] ranks them,
    /// each page's sections best first.
    pub hits: Vec<Hit>,
    /// The same hits grouped by page, best page first (see [`PageScore`]).
    pub pages: Vec<PageGroup>,
    /// True when the evidence is weak; `hits` then holds the closest sources.
    pub no_good_match: bool,
    /// Cosine of the best vector hit, when vectors were searched.
    pub best_cosine: Option<f32>,
    /// The best keyword hit contains every word of the query: lexical evidence strong enough
    /// to answer whatever the cosine says.
    pub all_words: bool,
    /// The best keyword hit's BM25 over the most any section could score for this query, in
    /// `[0, 1]`: how much of the query (weighted by rarity) the docs' best match holds. A word
    /// the docs never use counts against it in full. 0 without keyword evidence.
    #[serde(default)]
    pub keyword_strength: f32,
    /// The query vector came from the bundle's query table, not the model
    /// ([`Engine::search_table`]): meaning is approximate and "no good match" rests on the
    /// keyword evidence alone.
    #[serde(default)]
    pub approximate: bool,
    /// The query is written mostly in a script the model does not read (its manifest's
    /// `scripts`): its cosines measure nothing, so "no good match" rests on the keyword
    /// evidence alone, as it does for [`Results::approximate`].
    #[serde(default)]
    pub unread_script: bool,
    /// Shards of a split bundle this query needs that are not loaded (file names): load them
    /// ([`crate::Bundle::add_shard`]) and search again. Empty for a complete bundle; when not
    /// empty, the other fields are empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
}
