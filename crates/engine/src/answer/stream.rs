//! The answer service's event stream, both ends of it.
//!
//! `lantern proxy` sends server-sent events: `data: {"delta":"..."}` for each piece of answer
//! text, `event: error` with `data: {"code":"..."}` when the language model's stream breaks, and
//! `event: done` at the end. [`SseDecoder`] reads any event stream (the proxy reads its upstream
//! with it too) and [`AnswerStream`] reads Lantern's protocol on top; the functions below write
//! it. Keeping both ends here is what keeps the proxy, the CLI and the browser in agreement.
//!
//! The decoder is a few lines written against the WHATWG event-stream rules rather than a
//! crate: the well-kept SSE crates decode an async `Stream`, and this one must also run in the
//! synchronous wasm search core, fed with whatever chunks the browser's fetch delivers.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Most bytes the decoder buffers for one event (its pending data and the line being read);
/// more is an error, not an allocation: an upstream sending `data:` lines without ever ending
/// the event would otherwise grow it without limit.
pub const MAX_EVENT_BYTES: usize = 1 << 20;

/// One server-sent event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Event {
    /// The `event:` field; empty for the default `message` type.
    pub event: String,
    /// The `data:` lines, joined with newlines.
    pub data: String,
}

/// Incremental event-stream decoder: feed bytes as they arrive, in chunks of any size.
#[derive(Debug, Default)]
pub struct SseDecoder {
    line: Vec<u8>,
    pending: Event,
    has_data: bool,
}

impl SseDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Decodes `bytes` and returns the events they complete.
    pub fn feed(&mut self, bytes: &[u8]) -> Result<Vec<Event>> {
        let mut out = Vec::new();
        for part in bytes.split_inclusive(|&b| b == b'\n') {
            let complete = part.ends_with(b"\n");
            let body = if complete {
                &part[..part.len() - 1]
            } else {
                part
            };
            if self.pending.data.len() + self.line.len() + body.len() > MAX_EVENT_BYTES {
                return Err(Error::AnswerStream(format!(
                    "an event-stream event is longer than {MAX_EVENT_BYTES} bytes"
                )));
            }
            self.line.extend_from_slice(body);
            if complete {
                let line = std::mem::take(&mut self.line);
                if let Some(e) = self.line_done(&line) {
                    out.push(e);
                }
            }
        }
        Ok(out)
    }

    fn line_done(&mut self, line: &[u8]) -> Option<Event> {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            let e = std::mem::take(&mut self.pending);
            let dispatch = std::mem::take(&mut self.has_data);
            return dispatch.then_some(e);
        }
        if line.starts_with(b":") {
            return None; // comment
        }
        let line = String::from_utf8_lossy(line);
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line.as_ref(), ""),
        };
        match field {
            "event" => self.pending.event = value.to_string(),
            "data" => {
                if self.has_data {
                    self.pending.data.push('\n');
                }
                self.pending.data.push_str(value);
                self.has_data = true;
            }
            _ => {}
        }
        None
    }
}

#[derive(Serialize, Deserialize)]
struct Delta {
    delta: String,
}

#[derive(Serialize, Deserialize)]
struct Failure {
    code: String,
}

/// The event carrying one piece of answer text.
pub fn delta_event(text: &str) -> String {
    let json = serde_json::to_string(&Delta {
        delta: text.to_string(),
    })
    .unwrap_or_default();
    format!("data: {json}\n\n")
}

/// The event saying the answer broke off; `code` names why.
pub fn error_event(code: &str) -> String {
    let json = serde_json::to_string(&Failure {
        code: code.to_string(),
    })
    .unwrap_or_default();
    format!("event: error\ndata: {json}\n\n")
}

/// The last event of a complete answer.
pub const DONE_EVENT: &str = "event: done\ndata: {}\n\n";

/// Reads the proxy's stream: answer text so far, whether it ended, and errors as errors.
#[derive(Debug, Default)]
pub struct AnswerStream {
    decoder: SseDecoder,
    text: String,
    done: bool,
}

impl AnswerStream {
    /// A reader at the start of an answer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads `bytes`; returns whether the answer text grew. An `error` event, a malformed
    /// event or anything after `done` is an error.
    pub fn feed(&mut self, bytes: &[u8]) -> Result<bool> {
        let mut grew = false;
        for e in self.decoder.feed(bytes)? {
            if self.done {
                return Err(Error::AnswerStream(
                    "the answer stream went on after it was done".into(),
                ));
            }
            match e.event.as_str() {
                "" | "message" => {
                    let d: Delta = serde_json::from_str(&e.data).map_err(|_| {
                        Error::AnswerStream("the answer stream sent a malformed event".into())
                    })?;
                    grew |= !d.delta.is_empty();
                    self.text.push_str(&d.delta);
                }
                "error" => {
                    let code = serde_json::from_str::<Failure>(&e.data)
                        .map(|f| f.code)
                        .unwrap_or_else(|_| "unknown".into());
                    return Err(Error::AnswerStream(format!(
                        "the answer stream failed ({code})"
                    )));
                }
                "done" => self.done = true,
                _ => {} // unknown event types are for later versions
            }
        }
        Ok(grew)
    }

    /// The answer text received so far.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Call when the connection closed: the complete text, or an error if `done` never came.
    pub fn finish(self) -> Result<String> {
        if self.done {
            Ok(self.text)
        } else {
            Err(Error::AnswerStream(
                "the answer stream ended before it was done".into(),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_survive_any_chunking() {
        let wire = format!(
            ": comment\r\n{}{}{}",
            delta_event("Ké [1]"),
            delta_event("\nmore"),
            DONE_EVENT
        );
        let bytes = wire.as_bytes();
        for size in [1, 2, 3, 7, bytes.len()] {
            let mut s = AnswerStream::new();
            for part in bytes.chunks(size) {
                s.feed(part).unwrap();
            }
            assert_eq!(s.finish().unwrap(), "Ké [1]\nmore", "chunks of {size}");
        }
    }

    #[test]
    fn multi_line_data_and_fields() {
        let mut d = SseDecoder::new();
        let e = d.feed(b"event: x\ndata: a\ndata:b\nid: 3\n\n").unwrap();
        assert_eq!(
            e,
            vec![Event {
                event: "x".into(),
                data: "a\nb".into()
            }]
        );
        assert!(
            d.feed(b"event: only\n\n").unwrap().is_empty(),
            "no data, no event"
        );
    }

    #[test]
    fn errors_and_early_ends_are_errors() {
        let mut s = AnswerStream::new();
        s.feed(delta_event("partial").as_bytes()).unwrap();
        let e = s
            .feed(error_event("upstream_stream").as_bytes())
            .unwrap_err();
        assert!(e.to_string().contains("upstream_stream"), "{e}");

        let mut s = AnswerStream::new();
        s.feed(delta_event("partial").as_bytes()).unwrap();
        assert!(s.finish().is_err(), "no done event");

        let mut s = AnswerStream::new();
        assert!(s.feed(b"data: not json\n\n").is_err());
    }

    #[test]
    fn an_endless_line_is_refused() {
        let mut d = SseDecoder::new();
        let block = vec![b'x'; 64 * 1024];
        let mut failed = false;
        for _ in 0..40 {
            if d.feed(&block).is_err() {
                failed = true;
                break;
            }
        }
        assert!(failed);
    }

    #[test]
    fn an_endless_event_is_refused() {
        // Lines each well under the cap, never a blank line to end the event.
        let mut d = SseDecoder::new();
        let line = format!("data: {}\n", "x".repeat(100 * 1024));
        let fed = (0..40).position(|_| d.feed(line.as_bytes()).is_err());
        assert!(matches!(fed, Some(9 | 10)), "refused after {fed:?} lines");
        // Events of the same lines, ended, are fine.
        let mut d = SseDecoder::new();
        for _ in 0..40 {
            assert_eq!(d.feed(format!("{line}\n").as_bytes()).unwrap().len(), 1);
        }
    }
}
