//! The dialog's state and what it does: running a query as typed, upgrading it when meaning
//! arrives, asking. Every change goes through a method here, which then redraws the part of
//! the dialog that shows it (`search`, `results`, `answer`): state flows one way, to the DOM.

use std::cell::{Ref, RefCell};
use std::rc::Rc;

use wasm_bindgen_futures::spawn_local;

use lantern_engine::{Facet, Filter, Mode, Results};

use crate::dom;
use crate::labels::{fill, Labels};
use crate::recent;
use crate::runtime::{self, Bridge, Progress, Runtime};
use crate::search::View;
use crate::state::{
    fetch_delay, flat_hits, keep_active, needs_model, Answer, Stage, K, K_FIRST, MEANING_AFTER_MS,
};

/// What the dialog holds.
pub struct State {
    pub open: bool,
    pub query: String,
    pub mode: Mode,
    pub stage: Stage,
    pub results: Option<Results>,
    /// Index of the highlighted option in display order.
    pub active: usize,
    /// The chunk whose "why?" is open.
    pub why: Option<u32>,
    pub recents: Vec<String>,
    pub answer: Answer,
    /// The site's filters, shown as facets when it has any.
    pub facets: Vec<Facet>,
    /// The facet values chosen.
    pub filter: Filter,
    runtime: Option<Runtime>,
    seq: u64,
    /// The query table has been asked for.
    table: bool,
    /// The query and filter the shown results answer.
    shown: Option<(String, Filter)>,
    /// What had focus before the dialog opened, given it back on close.
    opener: Option<web_sys::HtmlElement>,
    /// The results shown are the first screen; the rest are being fetched.
    pub more_coming: bool,
}

/// A cheap handle on the dialog: its state, its nodes and its bridge to the runtime.
#[derive(Clone)]
pub struct Ctx(Rc<Inner>);

struct Inner {
    state: RefCell<State>,
    view: View,
    bridge: Bridge,
    /// What the dialog says, in the page's language.
    labels: &'static Labels,
    /// A search page, not a dialog.
    page: bool,
}

impl Ctx {
    /// A dialog over `view` whose box starts with `initial`.
    pub fn new(
        view: View,
        bridge: Bridge,
        labels: &'static Labels,
        page: bool,
        initial: String,
    ) -> Self {
        let state = State {
            open: false,
            query: initial,
            mode: Mode::Hybrid,
            stage: Stage::Idle,
            results: None,
            active: 0,
            why: None,
            recents: recent::load(),
            answer: Answer::None,
            facets: Vec::new(),
            filter: Filter::default(),
            runtime: None,
            seq: 0,
            table: false,
            shown: None,
            opener: None,
            more_coming: false,
        };
        Self(Rc::new(Inner {
            state: RefCell::new(state),
            view,
            bridge,
            labels,
            page,
        }))
    }

    /// The state, to read (never held across an await or a redraw).
    pub fn state(&self) -> Ref<'_, State> {
        self.0.state.borrow()
    }

    fn update<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        f(&mut self.0.state.borrow_mut())
    }

    pub fn view(&self) -> &View {
        &self.0.view
    }

    pub fn labels(&self) -> &'static Labels {
        self.0.labels
    }

    pub fn is_page(&self) -> bool {
        self.0.page
    }

    /// Opens or closes the dialog. Nothing is downloaded before the first open; focus moves to
    /// the box on open and back to what had it on close, as a dialog should leave a keyboard
    /// where it found it.
    pub fn set_open(&self, open: bool) {
        let was = self.update(|s| std::mem::replace(&mut s.open, open));
        self.show_open();
        if open && !was {
            let idle = self.state().stage == Stage::Idle;
            if idle {
                self.load();
            }
            let opener = focused_element();
            self.update(|s| s.opener = opener);
            let _ = self.view().input.focus();
        } else if !open && was {
            if let Some(el) = self.update(|s| s.opener.take()) {
                let _ = el.focus();
            }
        }
    }

    /// The reader typed: the query as it now stands.
    pub fn set_query(&self, query: String) {
        self.update(|s| {
            s.query = query;
            s.active = 0;
        });
        self.show_query();
        self.show_results();
    }

    pub fn set_mode(&self, mode: Mode) {
        self.update(|s| s.mode = mode);
        self.show_modes();
        self.run();
    }

    pub fn toggle_filter(&self, key: &str, value: &str) {
        self.update(|s| {
            s.filter.toggle(key, value);
            s.active = 0;
        });
        self.show_facets();
        self.run();
    }

    pub fn set_active(&self, active: usize) {
        if self.update(|s| std::mem::replace(&mut s.active, active)) != active {
            self.show_active();
        }
    }

    pub fn toggle_why(&self, chunk: u32) {
        self.update(|s| {
            s.why = if s.why == Some(chunk) {
                None
            } else {
                Some(chunk)
            }
        });
        self.show_results();
    }

    fn set_stage(&self, stage: Stage) {
        self.update(|s| s.stage = stage);
        self.show_stage();
    }

    fn set_answer(&self, answer: Answer) {
        self.update(|s| s.answer = answer);
        self.show_answer();
        self.show_ask();
    }

    /// Runs the current query; answers to older queries are dropped when they arrive late.
    pub fn run(&self) {
        spawn_local(self.clone().search(0));
    }

    /// Runs the query as typed: answered at once from what is loaded, while what it lacks is
    /// fetched only if no keystroke follows within [`fetch_delay`].
    pub fn run_typed(&self) {
        let wait = fetch_delay(&self.state().query);
        spawn_local(self.clone().search(wait));
    }

    /// [`Ctx::run`], finished when its results are shown (or a newer search superseded it).
    async fn search(self, wait: u32) {
        let Some((rt, q, mode, filter, n)) = self.update(|s| {
            let rt = s.runtime.clone()?;
            if s.query.trim().is_empty() {
                s.results = None;
                return None;
            }
            s.seq += 1;
            Some((rt, s.query.clone(), s.mode, s.filter.clone(), s.seq))
        }) else {
            self.show_results();
            return;
        };
        let current = move |c: &Ctx| c.state().seq == n;
        let asked = (q.clone(), filter.clone());
        let early = self.clone();
        let on_first = move |r: Results| {
            if current(&early) {
                early.adopt(asked, r, true);
            }
        };
        match runtime::search(&rt, &q, mode, (K_FIRST, K), &filter, wait, on_first).await {
            Ok(Some(r)) if current(&self) => {
                let wants_model = needs_model(&r, mode);
                self.adopt((q, filter), r, false);
                if wants_model {
                    self.want_meaning_after_pause();
                }
            }
            // A superseded search's failure is not the reader's concern: a newer one runs.
            Err(e) if current(&self) => self.set_stage(Stage::Failed(e)),
            _ => {}
        }
    }

    /// Shows results for `asked`; `more_coming`: the first screen of them, the rest on its way.
    fn adopt(&self, asked: (String, Filter), r: Results, more_coming: bool) {
        self.update(|s| {
            let asked = Some(asked);
            // The same question answered better (the rest of the list, quick meaning, then
            // the model): the selected section stays selected. A new question starts at the
            // top. Only an upgrade pays for comparing the lists.
            s.active = if s.shown == asked {
                keep_active(
                    s.active,
                    &flat_hits(s.results.take()),
                    &flat_hits(Some(r.clone())),
                )
            } else {
                s.active.min(r.hits.len().saturating_sub(1))
            };
            s.shown = asked;
            s.results = Some(r);
            s.more_coming = more_coming;
        });
        self.show_results();
    }

    /// Opens a result (remembering the query).
    pub fn go(&self, url: &str) {
        // Whatever a bundle says, only a path or an http(s) link is followed.
        if !lantern_engine::is_safe_link(url) {
            return;
        }
        recent::remember(&self.state().query);
        if let Some(w) = web_sys::window() {
            let _ = w.location().assign(url);
        }
    }

    /// Asks for a cited answer to the current query.
    pub fn ask(&self) {
        let Some((rt, q)) = self.update(|s| Some((s.runtime.clone()?, s.query.clone()))) else {
            return;
        };
        self.set_answer(Answer::Streaming(String::new()));
        let ctx = self.clone();
        spawn_local(async move {
            let c = ctx.clone();
            let r = runtime::ask(&ctx.0.bridge, &rt, &q, move |t| {
                c.set_answer(Answer::Streaming(t))
            })
            .await;
            ctx.set_answer(match r {
                Ok(o) => Answer::Done(o),
                Err(e) => Answer::Failed(e),
            });
        });
    }

    /// Loads the bundle and shows keyword results; meaning (the query table's quick meaning,
    /// then the model) follows only for a question that needs it ([`Ctx::want_meaning`]), or
    /// at once when the service worker already holds the model.
    fn load(&self) {
        self.set_stage(Stage::Bundle(Progress::default()));
        let ctx = self.clone();
        spawn_local(async move {
            let c = ctx.clone();
            let b = &ctx.0.bridge;
            let rt = match runtime::load_bundle(b, move |p| c.set_stage(Stage::Bundle(p))).await {
                Ok(rt) => rt,
                Err(e) => {
                    ctx.set_stage(Stage::Failed(e));
                    return;
                }
            };
            let facets = runtime::facets(&rt);
            ctx.update(|s| {
                s.runtime = Some(rt);
                s.facets = facets;
            });
            ctx.show_facets();
            ctx.set_stage(Stage::Keyword);
            // Keyword results first, with nothing else on the wire (the reader may still be
            // typing: the query as typed so far waits like a keystroke's).
            let wait = fetch_delay(&ctx.state().query);
            ctx.clone().search(wait).await;
            if !runtime::has_model(b) {
                ctx.set_stage(Stage::QuickOnly(false));
            } else if b.save_data() {
                ctx.set_stage(Stage::SaveData(false));
            } else {
                ctx.set_stage(Stage::Ready(false));
                if runtime::model_cached(b).await {
                    ctx.load_model();
                }
            }
            let weak = {
                let s = ctx.state();
                s.results.as_ref().is_some_and(|r| needs_model(r, s.mode))
            };
            if weak {
                ctx.want_meaning_after_pause();
            }
        });
    }

    /// [`Ctx::want_meaning`] once the reader has paused on the current query for
    /// [`MEANING_AFTER_MS`]; nothing if they typed on.
    fn want_meaning_after_pause(&self) {
        let n = self.state().seq;
        let ctx = self.clone();
        dom::set_timeout(MEANING_AFTER_MS as u32, move || {
            if ctx.state().seq == n {
                ctx.want_meaning();
            }
        });
    }

    /// The query needs meaning: the query table (small: approximate meaning at once) and,
    /// unless the reader saves data, the model. Each is fetched once.
    fn want_meaning(&self) {
        let Some(rt) = self.state().runtime.clone() else {
            return;
        };
        let b = &self.0.bridge;
        if runtime::has_model(b) && !b.save_data() {
            self.load_model();
        }
        if self.update(|s| std::mem::replace(&mut s.table, true)) {
            return;
        }
        let ctx = self.clone();
        spawn_local(async move {
            if runtime::load_query_table(&rt).await {
                let upgraded = ctx.update(|s| {
                    if let Stage::Ready(quick)
                    | Stage::Model(_, quick)
                    | Stage::SaveData(quick)
                    | Stage::QuickOnly(quick) = &mut s.stage
                    {
                        *quick = true;
                        return true;
                    }
                    false
                });
                ctx.show_stage();
                // Not once the model's results are in: they are better.
                if upgraded {
                    ctx.run();
                }
            }
        });
    }

    /// Starts the model's download unless it is loading, loaded or not to be loaded; the
    /// visible results are upgraded in place when it arrives.
    pub fn load_model(&self) {
        let Some((rt, quick)) = self.update(|s| match (&s.stage, &s.runtime) {
            (Stage::Ready(quick), Some(rt)) => Some((rt.clone(), *quick)),
            _ => None,
        }) else {
            return;
        };
        self.set_stage(Stage::Model(Progress::default(), quick));
        let ctx = self.clone();
        spawn_local(async move {
            let c = ctx.clone();
            let progress = move |p| {
                c.update(|s| {
                    if let Stage::Model(at, _) = &mut s.stage {
                        *at = p;
                    }
                });
                c.show_stage();
            };
            match runtime::load_semantic(&ctx.0.bridge, &rt, progress).await {
                Ok(()) => {
                    ctx.set_stage(Stage::Hybrid);
                    ctx.run(); // upgrade the visible results in place
                }
                Err(e) => {
                    let why = fill(ctx.labels().semantic_failed, &[("e", &e.to_string())]);
                    ctx.set_stage(Stage::Failed(why))
                }
            }
        });
    }
}

/// The element with focus, looking into shadow roots (the widget's trigger lives in one).
fn focused_element() -> Option<web_sys::HtmlElement> {
    use wasm_bindgen::JsCast;
    let mut el = dom::document().active_element()?;
    while let Some(inner) = el.shadow_root().and_then(|r| r.active_element()) {
        el = inner;
    }
    el.dyn_into::<web_sys::HtmlElement>().ok()
}
