//! The answer panel: streamed text while it arrives, then the verified answer with each cited
//! passage linked to its section, or the reason there is none. All text, never HTML; citations
//! are read by the engine's own parser, the one that verified them.

use leptos::prelude::*;

use lantern_engine::answer::{segments, Segment};
use lantern_engine::{Abstention, AskOutcome, Passage};

use crate::labels::{fill, Labels};
use crate::state::Answer;

/// The panel for the current answer state; nothing when no question was asked.
pub fn answer_panel(a: Answer, l: &'static Labels) -> Option<impl IntoView> {
    let body = match a {
        Answer::None => return None,
        Answer::Streaming(t) => view! {
            <p class="answer-status" role="status">{l.writing}</p>
            <p class="answer-draft">{t}</p>
        }
        .into_any(),
        Answer::Failed(e) => {
            view! { <p class="answer-status" role="alert">{fill(l.no_answer, &[("e", &e)])}</p> }
                .into_any()
        }
        Answer::Done(AskOutcome::Answered { text, passages, .. }) => {
            answered(&text, passages, l).into_any()
        }
        Answer::Done(AskOutcome::Abstained { reason, .. }) => {
            let why = match reason {
                Abstention::NoGoodMatch => l.not_found,
                Abstention::NotInContext => l.not_in_passages,
                Abstention::UnverifiableCitations => l.unverified,
            };
            view! { <p class="answer-status abstained" role="status">{why}</p> }.into_any()
        }
    };
    Some(view! { <section class="answer" aria-label=l.answer>{body}</section> })
}

fn answered(text: &str, passages: Vec<Passage>, l: &'static Labels) -> impl IntoView {
    let show = RwSignal::new(false);
    let paras = text
        .split("\n\n")
        .filter(|p| !p.trim().is_empty())
        .map(|p| {
            let parts = segments(p)
                .into_iter()
                .map(|s| match s {
                    Segment::Cite(n) => match passages.iter().find(|x| x.n == n) {
                        Some(x) => view! {
                            <a class="cite" href=crate::results::safe_href(&x.url) title=x.breadcrumb.clone()>{format!("[{n}]")}</a>
                        }
                        .into_any(),
                        None => format!("[{n}]").into_any(),
                    },
                    Segment::Text(t) => t.into_any(),
                })
                .collect_view();
            view! { <p>{parts}</p> }
        })
        .collect_view();
    let list = passages
        .into_iter()
        .map(|x| view! { <li><a href=crate::results::safe_href(&x.url)>{format!("[{}] {}", x.n, x.breadcrumb)}</a><p>{x.text}</p></li> })
        .collect_view();
    view! {
        <div class="answer-text">{paras}</div>
        <button type="button" class="why" on:click=move |_| show.update(|s| *s = !*s) aria-expanded=move || show.get().to_string()>
            {l.passages}
        </button>
        <ol class="passages" hidden=move || !show.get()>{list}</ol>
    }
}
