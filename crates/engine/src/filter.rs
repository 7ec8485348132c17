//! Filters: the `key:value` pairs a site puts on its pages (`data-lantern-filter`), and the
//! rule a search applies with them. Within one key any listed value matches; every key listed
//! must match (Pagefind's semantics).

use std::collections::{BTreeMap, BTreeSet};

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
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Filter {
    // Sets: a filter made from many values (an MCP client's, say) stays linear to build and
    // logarithmic to test.
    by_key: BTreeMap<String, BTreeSet<String>>,
}

impl Filter {
    /// Adds `value` to the values accepted for `key`.
    pub fn with(mut self, key: &str, value: &str) -> Self {
        self.by_key
            .entry(key.to_string())
            .or_default()
            .insert(value.to_string());
        self
    }

    /// Adds `value` for `key`, or removes it when present (a facet clicked on and off).
    pub fn toggle(&mut self, key: &str, value: &str) {
        let values = self.by_key.entry(key.to_string()).or_default();
        if !values.remove(value) {
            values.insert(value.to_string());
        }
        if values.is_empty() {
            self.by_key.remove(key);
        }
    }

    /// Is `value` one of the values accepted for `key`?
    pub fn contains(&self, key: &str, value: &str) -> bool {
        self.by_key.get(key).is_some_and(|v| v.contains(value))
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
        self.by_key.values().all(BTreeSet::is_empty)
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
        for key in self.by_key.keys() {
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
                        .any(|(pk, pv)| pk == k && values.contains(pv))
            });
        }
        Ok(pass)
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
