//! `lantern ask`'s loop against proxies that never finish. The proxies here are test doubles
//! (small HTTP servers written for the test), standing in for a broken or hostile `lantern
//! proxy`; the loop under test is the real one.

use std::net::SocketAddr;
use std::time::Duration;

use axum::response::IntoResponse;
use axum::routing::post;
use futures_util::StreamExt;
use lantern_engine::{AnswerRequest, AskSession, Passage};
use lantern_server::ask::{run_with, AskLimits};

/// Serves `POST /answer` with an endless event stream: `piece` every 20 ms.
async fn endless(piece: &'static str) -> SocketAddr {
    let app = axum::Router::new().route(
        "/answer",
        post(move || async move {
            let ticks = futures_util::stream::unfold((), move |()| async move {
                tokio::time::sleep(Duration::from_millis(20)).await;
                Some((Ok::<_, std::io::Error>(piece), ()))
            });
            let body = axum::body::Body::from_stream(ticks.map(|r| r.map(str::to_string)));
            ([("content-type", "text/event-stream")], body).into_response()
        }),
    );
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(l, app).await.unwrap() });
    addr
}

fn session() -> AskSession {
    AskSession::from_request(AnswerRequest {
        question: "How do I rebuild?".into(),
        passages: vec![Passage {
            n: 1,
            chunk: 0,
            url: "/a.html".into(),
            breadcrumb: "A".into(),
            text: "Run lantern build again.".into(),
        }],
        correction: None,
    })
}

#[tokio::test]
async fn a_proxy_that_only_keeps_the_connection_alive_is_stopped() {
    // A comment every 20 ms: never idle, never an answer.
    let addr = endless(": keep-alive\n\n").await;
    let limits = AskLimits {
        idle: Duration::from_secs(5),
        total: Duration::from_millis(600),
        max_bytes: 1 << 20,
    };
    let err = run_with(session(), &format!("http://{addr}"), limits)
        .await
        .expect_err("stopped");
    assert!(err.to_string().contains("longer than"), "{err:#}");
}

#[tokio::test]
async fn an_answer_stream_past_its_byte_limit_is_stopped() {
    let addr = endless("data: {\"delta\":\"more words \"}\n\n").await;
    let limits = AskLimits {
        idle: Duration::from_secs(5),
        total: Duration::from_secs(60),
        max_bytes: 4 << 10,
    };
    let err = run_with(session(), &format!("http://{addr}"), limits)
        .await
        .expect_err("stopped");
    assert!(err.to_string().contains("bytes"), "{err:#}");
}

#[tokio::test]
async fn a_proxy_that_accepts_and_says_nothing_is_given_up_on() {
    // Accepts every connection and never writes a byte.
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((conn, _)) = l.accept().await {
            held.push(conn);
        }
    });
    let limits = AskLimits {
        idle: Duration::from_millis(400),
        total: Duration::from_secs(60),
        max_bytes: 1 << 20,
    };
    let started = std::time::Instant::now();
    let err = run_with(session(), &format!("http://user:secret@{addr}"), limits)
        .await
        .expect_err("stopped");
    let err = format!("{err:#}");
    assert!(err.contains("did not answer"), "{err}");
    assert!(!err.contains("secret"), "credentials printed: {err}");
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[tokio::test]
async fn a_huge_error_body_is_cut_and_its_escapes_are_shown_not_run() {
    let app = axum::Router::new().route(
        "/answer",
        post(|| async {
            let body = format!("\u{1b}]0;pwned\u{7}\u{1b}[2J{}", "x".repeat(8 << 20));
            (axum::http::StatusCode::INTERNAL_SERVER_ERROR, body).into_response()
        }),
    );
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(l, app).await.unwrap() });
    let err = run_with(session(), &format!("http://{addr}"), AskLimits::default())
        .await
        .expect_err("an error");
    let err = format!("{err:#}");
    assert!(err.contains("500"), "{}", &err[..200.min(err.len())]);
    assert!(
        !err.contains('\u{1b}') && !err.contains('\u{7}'),
        "escapes left"
    );
    assert!(err.contains("]0;pwned"), "the rest shown");
    assert!(err.len() < 10_000, "{} bytes", err.len());
}
