//! The state the components share (provided as context by the root component in `search`),
//! and what it does: running a query as typed, upgrading it when meaning arrives, asking.

use leptos::prelude::*;
use leptos::task::spawn_local;

use lantern_engine::{Facet, Filter, Mode, Results};

use crate::labels::{fill, Labels};
use crate::recent;
use crate::runtime::{self, Bridge, Progress, Runtime};
use crate::state::{
    fetch_delay, flat_hits, keep_active, needs_model, Answer, Stage, K, MEANING_AFTER_MS,
};

/// State shared by the components; every field is a cheap, copyable handle.
#[derive(Clone, Copy)]
pub struct Ctx {
    pub query: RwSignal<String>,
    pub mode: RwSignal<Mode>,
    pub stage: RwSignal<Stage>,
    pub results: RwSignal<Option<Results>>,
    /// Index of the highlighted option in display order.
    pub active: RwSignal<usize>,
    /// The chunk whose "why?" is open.
    pub why: RwSignal<Option<u32>>,
    pub recents: RwSignal<Vec<String>>,
    pub answer: RwSignal<Answer>,
    /// The site's filters, shown as facets when it has any.
    pub facets: RwSignal<Vec<Facet>>,
    /// The facet values chosen.
    pub filter: RwSignal<Filter>,
    runtime: StoredValue<Option<Runtime>, LocalStorage>,
    bridge: StoredValue<Bridge, LocalStorage>,
    seq: StoredValue<u64>,
    /// The query table has been asked for.
    table: StoredValue<bool>,
    /// The query and filter the shown results answer.
    shown: StoredValue<Option<(String, Filter)>>,
    /// What the dialog says, in the page's language.
    pub labels: &'static Labels,
}

impl Ctx {
    /// Fresh state for a dialog whose box starts with `initial`.
    pub fn new(initial: String, bridge: StoredValue<Bridge, LocalStorage>) -> Self {
        Self {
            query: RwSignal::new(initial),
            mode: RwSignal::new(Mode::Hybrid),
            stage: RwSignal::new(Stage::Idle),
            results: RwSignal::new(None),
            active: RwSignal::new(0),
            why: RwSignal::new(None),
            recents: RwSignal::new(recent::load()),
            answer: RwSignal::new(Answer::None),
            facets: RwSignal::new(Vec::new()),
            filter: RwSignal::new(Filter::default()),
            runtime: StoredValue::new_local(None),
            bridge,
            seq: StoredValue::new(0),
            table: StoredValue::new(false),
            shown: StoredValue::new(None),
            labels: page_labels(),
        }
    }

    /// Runs the current query; answers to older queries are dropped when they arrive late.
    pub fn run(self) {
        spawn_local(self.search(0));
    }

    /// Runs the query as typed: answered at once from what is loaded, while what it lacks is
    /// fetched only if no keystroke follows within [`fetch_delay`].
    pub fn run_typed(self) {
        let wait = fetch_delay(&self.query.get_untracked());
        spawn_local(self.search(wait));
    }

    /// [`Ctx::run`], finished when its results are shown (or a newer search superseded it).
    async fn search(self, wait: u32) {
        let q = self.query.get_untracked();
        let Some(rt) = self.runtime.get_value() else {
            return;
        };
        if q.trim().is_empty() {
            self.results.set(None);
            return;
        }
        let mode = self.mode.get_untracked();
        let filter = self.filter.get_untracked();
        let n = self.seq.get_value() + 1;
        self.seq.set_value(n);
        match runtime::search(&rt, &q, mode, K, &filter, wait).await {
            Ok(Some(r)) if self.seq.get_value() == n => {
                let asked = Some((q, filter));
                // The same question answered better (quick meaning, then the model): the
                // selected section stays selected. A new question starts at the top. Only an
                // upgrade pays for comparing the lists.
                let active = if self.shown.get_value() == asked {
                    keep_active(
                        self.active.get_untracked(),
                        &flat_hits(self.results.get_untracked()),
                        &flat_hits(Some(r.clone())),
                    )
                } else {
                    self.active
                        .get_untracked()
                        .min(r.hits.len().saturating_sub(1))
                };
                self.shown.set_value(asked);
                let wants_model = needs_model(&r, mode);
                self.results.set(Some(r));
                self.active.set(active);
                if wants_model {
                    self.want_meaning_after_pause();
                }
            }
            // A superseded search's failure is not the reader's concern: a newer one runs.
            Err(e) if self.seq.get_value() == n => self.stage.set(Stage::Failed(e)),
            _ => {}
        }
    }

    /// Opens a result (remembering the query).
    pub fn go(self, url: &str) {
        // Whatever a bundle says, only a path or an http(s) link is followed.
        if !lantern_engine::is_safe_link(url) {
            return;
        }
        recent::remember(&self.query.get_untracked());
        if let Some(w) = web_sys::window() {
            let _ = w.location().assign(url);
        }
    }

    /// Asks for a cited answer to the current query.
    pub fn ask(self) {
        let Some(rt) = self.runtime.get_value() else {
            return;
        };
        let q = self.query.get_untracked();
        let answer = self.answer;
        answer.set(Answer::Streaming(String::new()));
        let bridge = self.bridge.get_value();
        spawn_local(async move {
            let r = runtime::ask(&bridge, &rt, &q, move |t| answer.set(Answer::Streaming(t))).await;
            answer.set(match r {
                Ok(o) => Answer::Done(o),
                Err(e) => Answer::Failed(e),
            });
        });
    }

    /// Loads the bundle and shows keyword results; meaning (the query table's quick meaning,
    /// then the model) follows only for a question that needs it ([`Ctx::want_meaning`]), or
    /// at once when the service worker already holds the model.
    pub fn load(self) {
        self.stage.set(Stage::Bundle(Progress::default()));
        let stage = self.stage;
        spawn_local(async move {
            let b = self.bridge.get_value();
            let rt = match runtime::load_bundle(&b, move |p| stage.set(Stage::Bundle(p))).await {
                Ok(rt) => rt,
                Err(e) => {
                    stage.set(Stage::Failed(e));
                    return;
                }
            };
            self.runtime.set_value(Some(rt.clone()));
            self.facets.set(runtime::facets(&rt));
            stage.set(Stage::Keyword);
            // Keyword results first, with nothing else on the wire (the reader may still be
            // typing: the query as typed so far waits like a keystroke's).
            self.search(fetch_delay(&self.query.get_untracked())).await;
            if !runtime::has_model(&b) {
                stage.set(Stage::QuickOnly(false));
            } else if b.save_data() {
                stage.set(Stage::SaveData(false));
            } else {
                stage.set(Stage::Ready(false));
                if runtime::model_cached(&b).await {
                    self.load_model();
                }
            }
            let weak = self.results.with_untracked(|r| {
                r.as_ref()
                    .is_some_and(|r| needs_model(r, self.mode.get_untracked()))
            });
            if weak {
                self.want_meaning_after_pause();
            }
        });
    }

    /// [`Ctx::want_meaning`] once the reader has paused on the current query for
    /// [`MEANING_AFTER_MS`]; nothing if they typed on.
    fn want_meaning_after_pause(self) {
        let n = self.seq.get_value();
        set_timeout(
            move || {
                if self.seq.get_value() == n {
                    self.want_meaning();
                }
            },
            std::time::Duration::from_millis(MEANING_AFTER_MS),
        );
    }

    /// The query needs meaning: the query table (small: approximate meaning at once) and,
    /// unless the reader saves data, the model. Each is fetched once.
    pub fn want_meaning(self) {
        let Some(rt) = self.runtime.get_value() else {
            return;
        };
        if self
            .bridge
            .with_value(|b| runtime::has_model(b) && !b.save_data())
        {
            self.load_model();
        }
        if self.table.get_value() {
            return;
        }
        self.table.set_value(true);
        let stage = self.stage;
        spawn_local(async move {
            if runtime::load_query_table(&rt).await {
                let mut upgraded = false;
                stage.update(|s| {
                    if let Stage::Ready(quick)
                    | Stage::Model(_, quick)
                    | Stage::SaveData(quick)
                    | Stage::QuickOnly(quick) = s
                    {
                        *quick = true;
                        upgraded = true;
                    }
                });
                // Not once the model's results are in: they are better.
                if upgraded {
                    self.run();
                }
            }
        });
    }

    /// Starts the model's download unless it is loading, loaded or not to be loaded; the
    /// visible results are upgraded in place when it arrives.
    pub fn load_model(self) {
        let Stage::Ready(quick) = self.stage.get_untracked() else {
            return;
        };
        let Some(rt) = self.runtime.get_value() else {
            return;
        };
        let b = self.bridge.get_value();
        let stage = self.stage;
        stage.set(Stage::Model(Progress::default(), quick));
        spawn_local(async move {
            let progress = move |p| {
                stage.update(|s| {
                    if let Stage::Model(at, _) = s {
                        *at = p;
                    }
                })
            };
            match runtime::load_semantic(&b, &rt, progress).await {
                Ok(()) => {
                    stage.set(Stage::Hybrid);
                    self.run(); // upgrade the visible results in place
                }
                Err(e) => {
                    let why = fill(self.labels.semantic_failed, &[("e", &e.to_string())]);
                    stage.set(Stage::Failed(why))
                }
            }
        });
    }
}

/// The labels for the page's language (`<html lang>`).
fn page_labels() -> &'static Labels {
    let lang = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.document_element())
        .and_then(|e| e.get_attribute("lang"))
        .unwrap_or_default();
    crate::labels::for_lang(&lang)
}
