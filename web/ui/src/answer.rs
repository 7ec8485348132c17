//! The answer panel: streamed text while it arrives, then the verified answer with each cited
//! passage linked to its section, or the reason there is none. All text, never HTML; citations
//! are read by the engine's own parser, the one that verified them.

use web_sys::Element;

use lantern_engine::answer::{segments, Segment};
use lantern_engine::{Abstention, AskOutcome, Passage};

use crate::ctx::Ctx;
use crate::dom::{self, el, Build};
use crate::labels::{fill, Labels};
use crate::results::safe_href;
use crate::state::Answer;

impl Ctx {
    /// Redraws the panel for the current answer; nothing when no question was asked.
    pub fn show_answer(&self) {
        let holder = &self.view().answer;
        let s = self.state();
        let l = self.labels();
        // While it streams only the draft changes: the "writing" status is read once.
        if let Answer::Streaming(t) = &s.answer {
            if let Ok(Some(draft)) = holder.query_selector(".answer-draft") {
                dom::set_text(&draft, t);
                return;
            }
        }
        dom::clear(holder);
        let body: Vec<Element> = match &s.answer {
            Answer::None => return,
            Answer::Streaming(t) => vec![
                el("p")
                    .attr("class", "answer-status")
                    .attr("role", "status")
                    .text(l.writing),
                el("p").attr("class", "answer-draft").text(t),
            ],
            Answer::Failed(e) => vec![el("p")
                .attr("class", "answer-status")
                .attr("role", "alert")
                .text(&fill(l.no_answer, &[("e", e)]))],
            Answer::Done(AskOutcome::Answered { text, passages, .. }) => {
                answered(text, passages, l)
            }
            Answer::Done(AskOutcome::Abstained { reason, .. }) => {
                let why = match reason {
                    Abstention::NoGoodMatch => l.not_found,
                    Abstention::NotInContext => l.not_in_passages,
                    Abstention::UnverifiableCitations => l.unverified,
                };
                vec![el("p")
                    .attr("class", "answer-status abstained")
                    .attr("role", "status")
                    .text(why)]
            }
        };
        let section = el("section")
            .attr("class", "answer")
            .attr("aria-label", l.answer);
        for n in &body {
            let _ = section.append_child(n);
        }
        let _ = holder.append_child(&section);
    }
}

fn answered(text: &str, passages: &[Passage], l: &Labels) -> Vec<Element> {
    let paras = el("div").attr("class", "answer-text");
    for p in text.split("\n\n").filter(|p| !p.trim().is_empty()) {
        let para = el("p");
        for s in segments(p) {
            let _ = match s {
                Segment::Cite(n) => match passages.iter().find(|x| x.n == n) {
                    Some(x) => para.append_child(
                        &el("a")
                            .attr("class", "cite")
                            .attr("href", &safe_href(&x.url))
                            .attr("title", &x.breadcrumb)
                            .text(&format!("[{n}]")),
                    ),
                    None => para.append_child(&dom::text(&format!("[{n}]"))),
                },
                Segment::Text(t) => para.append_child(&dom::text(&t)),
            };
        }
        let _ = paras.append_child(&para);
    }
    let list = el("ol").attr("class", "passages").attr("hidden", "");
    for x in passages {
        let _ = list.append_child(
            &el("li")
                .child(
                    &el("a")
                        .attr("href", &safe_href(&x.url))
                        .text(&format!("[{}] {}", x.n, x.breadcrumb)),
                )
                .child(&el("p").text(&x.text)),
        );
    }
    let toggle = el("button")
        .attr("type", "button")
        .attr("class", "why")
        .attr("data-act", "passages")
        .attr("aria-expanded", "false")
        .text(l.passages);
    vec![paras, toggle, list]
}
