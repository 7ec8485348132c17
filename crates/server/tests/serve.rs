//! `lantern serve`'s router on a real socket: what a browser or a scanner can fetch.

use std::net::SocketAddr;

async fn start(root: &std::path::Path) -> SocketAddr {
    let app = lantern_server::serve::router(root).unwrap();
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(l, app).await.unwrap() });
    addr
}

#[tokio::test]
async fn only_the_sites_own_visible_files_are_served() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("index.html"), "home").unwrap();
    std::fs::create_dir(root.join("sub")).unwrap();
    std::fs::write(root.join("sub/index.html"), "sub").unwrap();
    std::fs::write(root.join(".env"), "SECRET=1").unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("x.txt"), "outside").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(outside.path(), root.join("link")).unwrap();
    let addr = start(root).await;
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let get = |path: String| {
        let c = client.clone();
        async move {
            let r = c.get(format!("http://{addr}{path}")).send().await.unwrap();
            let status = r.status().as_u16();
            let location = r
                .headers()
                .get("location")
                .map(|v| v.to_str().unwrap_or("").to_string());
            (status, location, r.text().await.unwrap_or_default())
        }
    };
    assert_eq!(get("/".into()).await.2, "home");
    assert_eq!(get("/sub/".into()).await.2, "sub");
    assert_eq!(get("/.env".into()).await.0, 404);
    assert_eq!(get(format!("/{}", "a".repeat(300))).await.0, 404);
    #[cfg(unix)]
    assert_eq!(get("/link/x.txt".into()).await.0, 404);
    // An absurd path is refused as one, not a failed open.
    assert_eq!(get("/a".repeat(8_000)).await.0, 414);
    #[cfg(unix)]
    {
        // A compressed copy that links out is not sent, even to a client asking for it.
        std::fs::write(root.join("page.html"), "page").unwrap();
        std::os::unix::fs::symlink(outside.path().join("x.txt"), root.join("page.html.gz"))
            .unwrap();
        let r = client
            .get(format!("http://{addr}/page.html"))
            .header("accept-encoding", "gzip")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 404);
    }
    let (status, location, _) = get("//sub".into()).await;
    assert!(
        status == 404 && location.is_none(),
        "no redirect to another host: {status} {location:?}"
    );
}

#[tokio::test]
async fn precompressed_files_are_sent_to_clients_that_accept_them() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let body = "fn main() {}\n".repeat(200);
    std::fs::write(root.join("app.js"), &body).unwrap();
    // Stand-ins whose bytes say which file was sent.
    std::fs::write(root.join("app.js.br"), b"brotli bytes").unwrap();
    std::fs::write(root.join("app.js.gz"), b"gzip bytes").unwrap();
    let addr = start(root).await;
    let client = reqwest::Client::new();
    let fetch = |accept: &'static str| {
        let c = client.clone();
        async move {
            let r = c
                .get(format!("http://{addr}/app.js"))
                .header("accept-encoding", accept)
                .send()
                .await
                .unwrap();
            let enc = r
                .headers()
                .get("content-encoding")
                .map(|v| v.to_str().unwrap().to_string());
            let ty = r.headers()["content-type"].to_str().unwrap().to_string();
            (enc, ty, r.bytes().await.unwrap().to_vec())
        }
    };
    let (enc, ty, bytes) = fetch("gzip, deflate, br").await;
    assert_eq!(
        (enc.as_deref(), bytes.as_slice()),
        (Some("br"), &b"brotli bytes"[..])
    );
    assert!(ty.starts_with("text/javascript"), "{ty}");
    let (enc, _, bytes) = fetch("gzip").await;
    assert_eq!(
        (enc.as_deref(), bytes.as_slice()),
        (Some("gzip"), &b"gzip bytes"[..])
    );
    let (enc, _, bytes) = fetch("identity").await;
    assert_eq!((enc, bytes), (None, body.into_bytes()));
}

#[tokio::test]
async fn content_addressed_files_are_immutable_and_the_rest_is_revalidated() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("search.lantern.d")).unwrap();
    for f in [
        "index.html",
        "notes-20241231235959.html",
        "app-0123456789ab.wasm",
        "app.wasm",
        "search.lantern.d/terms-0123456789abcdef-3.bin",
        "search.lantern.d/meta.bin",
    ] {
        std::fs::write(root.join(f), "x").unwrap();
    }
    let addr = start(root).await;
    let client = reqwest::Client::new();
    let policy = |path: &'static str| {
        let c = client.clone();
        async move {
            let r = c.get(format!("http://{addr}/{path}")).send().await.unwrap();
            r.headers()
                .get("cache-control")
                .map(|v| v.to_str().unwrap().to_string())
        }
    };
    let year = Some("public, max-age=31536000, immutable".to_string());
    let revalidate = Some("no-cache".to_string());
    assert_eq!(policy("app-0123456789ab.wasm").await, year);
    assert_eq!(
        policy("search.lantern.d/terms-0123456789abcdef-3.bin").await,
        year
    );
    assert_eq!(policy("app.wasm").await, revalidate);
    assert_eq!(policy("search.lantern.d/meta.bin").await, revalidate);
    assert_eq!(policy("index.html").await, revalidate);
    assert_eq!(policy("notes-20241231235959.html").await, revalidate);
    assert_eq!(
        policy("missing-0123456789ab.wasm").await,
        None,
        "not for a 404"
    );
}

#[tokio::test]
async fn a_client_that_never_finishes_its_headers_is_cut_off() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("index.html"), "home").unwrap();
    let app = lantern_server::serve::router(dir.path()).unwrap();
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let timeout = std::time::Duration::from_millis(300);
    tokio::spawn(lantern_server::serve::serve_on(
        l,
        app,
        timeout,
        std::future::pending(),
    ));
    // A whole request is answered.
    let body = reqwest::get(format!("http://{addr}/"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(body, "home");
    // Half a request, then silence (slowloris): the server closes the connection.
    let mut c = tokio::net::TcpStream::connect(addr).await.unwrap();
    c.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n").await.unwrap();
    let mut buf = Vec::new();
    let read =
        tokio::time::timeout(std::time::Duration::from_secs(20), c.read_to_end(&mut buf)).await;
    assert!(read.is_ok(), "the connection was still open after 20 s");
    assert!(
        !String::from_utf8_lossy(&buf).contains("home"),
        "no answer to half a request"
    );
}

#[tokio::test]
async fn conditional_and_range_requests_follow_http() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "0123456789").unwrap();
    let addr = start(dir.path()).await;
    let client = reqwest::Client::new();
    let url = format!("http://{addr}/a.txt");
    let get = |headers: &[(&str, &str)]| {
        let mut r = client.get(&url).header("accept-encoding", "identity");
        for (k, v) in headers {
            r = r.header(*k, *v);
        }
        r.send()
    };
    let plain = get(&[]).await.unwrap();
    let vary = plain
        .headers()
        .get("vary")
        .map(|v| v.to_str().unwrap().to_string());
    assert_eq!(vary.as_deref(), Some("accept-encoding"));
    let modified = plain.headers()["last-modified"]
        .to_str()
        .unwrap()
        .to_string();
    // A file that exists matches `*`.
    assert_eq!(get(&[("if-none-match", "*")]).await.unwrap().status(), 304);
    // A range under a current validator is served; under a stale date or any tag, the whole file.
    let r = get(&[("range", "bytes=2-4"), ("if-range", &modified)])
        .await
        .unwrap();
    assert_eq!(r.status(), 206);
    assert_eq!(r.text().await.unwrap(), "234");
    for stale in ["Mon, 01 Jan 2001 00:00:00 GMT", "\"some-tag\""] {
        let r = get(&[("range", "bytes=2-4"), ("if-range", stale)])
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "{stale}");
        assert_eq!(r.text().await.unwrap(), "0123456789");
    }
    // Several ranges: the whole file, not 416.
    let r = get(&[("range", "bytes=0-1,4-5")]).await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.text().await.unwrap(), "0123456789");
}
