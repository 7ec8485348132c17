//! Extraction: a source file becomes a page title and its sections, each with a breadcrumb
//! and an anchor. One module per input format; everything after this (chunking, embedding,
//! the bundle) is the same for all of them. A new format adds a module here and a branch in
//! [`extract`].

mod markdown;

pub use markdown::{clean_source, parser, title_from_path, FrontMatter};

use crate::config::SlugStyle;

/// One heading's worth of a page.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    /// Page title, then the enclosing headings down to this one.
    pub breadcrumb: Vec<String>,
    /// The heading's id; empty for text before the first heading.
    pub anchor: String,
    pub text: String,
}

/// A parsed page.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedPage {
    pub title: String,
    /// The language front matter names (`lang`/`language`), if any.
    pub lang: Option<String>,
    pub sections: Vec<Section>,
    /// The id of every heading in document order, empty sections' included.
    pub anchors: Vec<String>,
}

/// Reads one source file. `fallback_title` names a page that states no title of its own.
pub fn extract(text: &str, fallback_title: &str, slugs: SlugStyle) -> ParsedPage {
    markdown::parse_markdown(text, fallback_title, slugs)
}
