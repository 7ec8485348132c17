//! Filters: the `key:value` pairs a site puts on its pages (`data-lantern-filter`), and the
//! rule a search applies with them. Within one key any listed value matches; every key listed
//! must match (Pagefind's semantics).

use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize};

use crate::bundle::Bundle;
use crate::error::{Error, Result};

/// Which pages a search may return.
///
/// ```
/// use lantern_engine::Filter;
/// let f = Filter::default().with("version", "2.0").with("version", "3.0").with("kind", "guide");
/// assert_eq!(f.to_string(), "kind=guide version=2.0|3.0");
/// let mut f = f;
/// f.toggle("kind", "guide");
/// assert!(!f.contains("kind", "guide") && f.contains("version", "3.0"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    // Sorted vectors, keys and each key's values, searched by bisection: a filter made from
    // many values (an MCP client's, say) stays logarithmic to test. Not B-trees, whose code
    // cost every reader's first download 7 KB (gzip) for the few facets a reader clicks.
    by_key: Vec<(String, Vec<String>)>,
}

impl Filter {
    /// Adds `value` to the values accepted for `key`.
    pub fn with(mut self, key: &str, value: &str) -> Self {
        let values = self.values_mut(key);
        if let Err(at) = values.binary_search_by(|v| v.as_str().cmp(value)) {
            values.insert(at, value.to_string());
        }
        self
    }

    /// Adds `value` for `key`, or removes it when present (a facet clicked on and off).
    pub fn toggle(&mut self, key: &str, value: &str) {
        let values = self.values_mut(key);
        match values.binary_search_by(|v| v.as_str().cmp(value)) {
            Ok(at) => {
                values.remove(at);
            }
            Err(at) => values.insert(at, value.to_string()),
        }
        self.by_key.retain(|(_, v)| !v.is_empty());
    }

    /// Is `value` one of the values accepted for `key`?
    pub fn contains(&self, key: &str, value: &str) -> bool {
        self.values(key)
            .is_some_and(|v| v.binary_search_by(|x| x.as_str().cmp(value)).is_ok())
    }

    fn values(&self, key: &str) -> Option<&Vec<String>> {
        let at = self
            .by_key
            .binary_search_by(|(k, _)| k.as_str().cmp(key))
            .ok()?;
        Some(&self.by_key[at].1)
    }

    fn values_mut(&mut self, key: &str) -> &mut Vec<String> {
        let at = match self.by_key.binary_search_by(|(k, _)| k.as_str().cmp(key)) {
            Ok(at) => at,
            Err(at) => {
                self.by_key.insert(at, (key.to_string(), Vec::new()));
                at
            }
        };
        &mut self.by_key[at].1
    }

    /// Reads `key=value` (or `key:value`), as written on a command line.
    pub fn parse_pair(spec: &str) -> Result<(String, String)> {
        let (k, v) = spec
            .split_once('=')
            .or_else(|| spec.split_once(':'))
            .ok_or_else(|| Error::BadFilter(format!("{spec:?} is not key=value")))?;
        let (k, v) = (k.trim(), v.trim());
        if k.is_empty() || v.is_empty() {
            return Err(Error::BadFilter(format!("{spec:?} is not key=value")));
        }
        Ok((k.to_string(), v.to_string()))
    }

    /// No restriction.
    pub fn is_empty(&self) -> bool {
        self.by_key.iter().all(|(_, v)| v.is_empty())
    }

    /// Which pages pass, by page id; an error names a key no page carries.
    pub(crate) fn pages(&self, bundle: &Bundle) -> Result<Vec<bool>> {
        // Runs on every filtered query: the facet listing is built only to name the known keys
        // in an error.
        let carried = |key: &str| {
            bundle
                .page_filters()
                .iter()
                .any(|(_, f)| f.iter().any(|(k, _)| k == key))
        };
        for (key, _) in &self.by_key {
            if !carried(key) {
                let facets = facets(bundle);
                let known: Vec<&str> = facets.iter().map(|f| f.key.as_str()).collect();
                return Err(Error::UnknownFilter {
                    key: key.clone(),
                    known: if known.is_empty() {
                        "this site defines no filters".into()
                    } else {
                        format!("known: {}", known.join(", "))
                    },
                });
            }
        }
        // Filters live in the meta part: a split bundle applies them before fetching a shard.
        let mut pass = vec![self.is_empty(); bundle.pages().len()];
        for (page, filters) in bundle.page_filters() {
            pass[*page as usize] = self.by_key.iter().all(|(k, values)| {
                values.is_empty()
                    || filters
                        .iter()
                        .any(|(pk, pv)| pk == k && values.binary_search(pv).is_ok())
            });
        }
        Ok(pass)
    }
}

/// `{ key: [values] }`, as the browser's API and `--json` take filters.
impl Serialize for Filter {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.by_key.len()))?;
        for (k, v) in &self.by_key {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl std::fmt::Display for Filter {
    /// `key=v1|v2 other=v`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self
            .by_key
            .iter()
            .filter(|(_, v)| !v.is_empty())
            .map(|(k, v)| {
                let v: Vec<&str> = v.iter().map(String::as_str).collect();
                format!("{k}={}", v.join("|"))
            })
            .collect();
        f.write_str(&parts.join(" "))
    }
}

/// One filter key of a bundle with each value and how many pages carry it.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Facet {
    /// The key, e.g. `version`.
    pub key: String,
    /// Values in order of first appearance, with their page counts.
    pub values: Vec<(String, u32)>,
}

/// Every filter key the bundle's pages carry, in order of first appearance.
pub(crate) fn facets(bundle: &Bundle) -> Vec<Facet> {
    let mut out: Vec<Facet> = Vec::new();
    for (_, filters) in bundle.page_filters() {
        for (k, v) in filters {
            let facet = match out.iter_mut().position(|f| &f.key == k) {
                Some(i) => &mut out[i],
                None => {
                    out.push(Facet {
                        key: k.clone(),
                        values: Vec::new(),
                    });
                    out.last_mut().expect("just pushed")
                }
            };
            match facet.values.iter_mut().find(|(value, _)| value == v) {
                Some((_, n)) => *n += 1,
                None => facet.values.push((v.clone(), 1)),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_filter_is_the_same_whatever_order_its_values_came_in() {
        let a = Filter::default()
            .with("version", "3.0")
            .with("kind", "guide")
            .with("version", "2.0")
            .with("version", "3.0");
        let b = Filter::default()
            .with("kind", "guide")
            .with("version", "2.0")
            .with("version", "3.0");
        assert_eq!(a, b);
        assert_eq!(a.to_string(), "kind=guide version=2.0|3.0");
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            r#"{"kind":["guide"],"version":["2.0","3.0"]}"#
        );
    }

    #[test]
    fn toggling_a_value_off_leaves_no_empty_key() {
        let mut f = Filter::default().with("kind", "guide");
        f.toggle("kind", "guide");
        assert!(f.is_empty());
        assert_eq!(f, Filter::default());
        f.toggle("kind", "api");
        assert!(f.contains("kind", "api") && !f.contains("kind", "guide"));
        assert!(!f.contains("version", "api"));
    }

    #[test]
    fn each_of_many_values_is_found() {
        let mut f = Filter::default();
        for i in (0..5000).rev() {
            f = f.with("tag", &format!("t{i}"));
        }
        assert!((0..5000).all(|i| f.contains("tag", &format!("t{i}"))));
        assert!(!f.contains("tag", "t5000"));
    }
}
