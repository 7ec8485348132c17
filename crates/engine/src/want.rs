//! What a query needs that is not loaded yet: the shards of the term dictionary, the text, the
//! vector centroids and partitions, by block. The keyword and vector sides and the bundle's
//! shard list all speak it; a browser fetches what it names and searches again.

/// Shards a query needs that are not loaded yet, by kind and block index.
#[derive(Debug, Default)]
pub(crate) struct Want {
    inner: std::cell::RefCell<WantSet>,
}

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct WantSet {
    pub(crate) terms: Blocks,
    pub(crate) text: Blocks,
    pub(crate) centroids: bool,
    pub(crate) vectors: Blocks,
}

/// Block indexes, ascending, each once: a sorted `Vec` rather than a `BTreeSet`, whose code
/// the browser's module would carry for a few dozen numbers.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Blocks(Vec<usize>);

impl Blocks {
    pub(crate) fn insert(&mut self, b: usize) {
        if let Err(at) = self.0.binary_search(&b) {
            self.0.insert(at, b);
        }
    }
    pub(crate) fn iter(&self) -> std::slice::Iter<'_, usize> {
        self.0.iter()
    }
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl IntoIterator for Blocks {
    type Item = usize;
    type IntoIter = std::vec::IntoIter<usize>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl Want {
    pub(crate) fn term_block(&self, b: usize) {
        self.inner.borrow_mut().terms.insert(b);
    }
    pub(crate) fn text_block(&self, b: usize) {
        self.inner.borrow_mut().text.insert(b);
    }
    pub(crate) fn centroids(&self) {
        self.inner.borrow_mut().centroids = true;
    }
    pub(crate) fn vector_part(&self, p: usize) {
        self.inner.borrow_mut().vectors.insert(p);
    }
    pub(crate) fn is_empty(&self) -> bool {
        let w = self.inner.borrow();
        w.terms.is_empty() && w.text.is_empty() && !w.centroids && w.vectors.is_empty()
    }
    pub(crate) fn take(&self) -> WantSet {
        std::mem::take(&mut *self.inner.borrow_mut())
    }
}
