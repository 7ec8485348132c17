//! Walking a parsed page without recursion (no nesting depth can exhaust the stack), leaving
//! out whole subtrees: what extraction and the chrome fingerprints both read.

use ego_tree::iter::Edge;
use ego_tree::{NodeId, NodeRef};
use scraper::node::Element;
use scraper::{ElementRef, Node};

/// The opening and closing edges under `root`, in document order, without the subtrees of
/// the elements `skip` names (their own edges included).
pub(crate) fn walk<'a>(
    root: ElementRef<'a>,
    skip: impl Fn(NodeRef<'a, Node>, &Element) -> bool + 'a,
) -> impl Iterator<Item = Edge<'a, Node>> + 'a {
    let mut skipping: Option<NodeId> = None;
    root.traverse().filter(move |edge| match edge {
        Edge::Open(node) => {
            if skipping.is_some() {
                return false;
            }
            if let Node::Element(el) = node.value() {
                if skip(*node, el) {
                    skipping = Some(node.id());
                    return false;
                }
            }
            true
        }
        Edge::Close(node) => match skipping {
            Some(id) => {
                if id == node.id() {
                    skipping = None;
                }
                false
            }
            None => true,
        },
    })
}
