//! `lantern serve`: a small static file server for the demo site and the browser tests, so a
//! newcomer needs nothing but this binary to see search working.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::Router;
use tower_http::compression::CompressionLayer;
use tower_http::services::ServeDir;

/// Longest path segment served; file systems allow 255 bytes a name.
const MAX_SEGMENT_BYTES: usize = 255;
/// Longest request path served (Linux's PATH_MAX is 4096 bytes): longer is 414, not a failed open.
const MAX_PATH_BYTES: usize = 4096;

/// Whether `path` (the request's URL path) may be served from `root` (canonical): no hidden
/// files, no over-long names, no `//` (which would redirect to another host), and nothing that
/// a symlink takes outside the folder.
pub fn allowed(root: &Path, path: &str) -> bool {
    if path.starts_with("//") || path.contains('\\') {
        return false;
    }
    let mut on_disk = root.to_path_buf();
    for seg in path.split('/').filter(|s| !s.is_empty()) {
        let Ok(seg) = percent_decode(seg) else {
            return false;
        };
        if seg.starts_with('.') || seg.len() > MAX_SEGMENT_BYTES || seg.contains(['/', '\0']) {
            return false;
        }
        on_disk.push(seg);
    }
    // Every file the file server may open for this path (a folder's index.html, the copies
    // compressed ahead): a missing one is its 404, an existing one must resolve inside the root.
    let mut opened = vec![on_disk.clone()];
    if path.ends_with('/') || on_disk.is_dir() {
        opened.push(on_disk.join("index.html"));
    }
    let sibling = |p: &Path, ext: &str| {
        let mut s = p.as_os_str().to_owned();
        s.push(ext);
        PathBuf::from(s)
    };
    opened
        .iter()
        .flat_map(|p| [p.clone(), sibling(p, ".gz"), sibling(p, ".br")])
        .all(|p| match p.canonicalize() {
            Ok(real) => real.starts_with(root),
            Err(_) => true,
        })
}

fn percent_decode(s: &str) -> std::result::Result<String, ()> {
    percent_encoding::percent_decode_str(s)
        .decode_utf8()
        .map(|c| c.into_owned())
        .map_err(|_| ())
}

async fn guard(State(root): State<Arc<PathBuf>>, req: Request, next: Next) -> Response {
    if req.uri().path().len() > MAX_PATH_BYTES {
        return StatusCode::URI_TOO_LONG.into_response();
    }
    if allowed(&root, req.uri().path()) {
        next.run(req).await
    } else {
        StatusCode::NOT_FOUND.into_response()
    }
}

/// Content-addressed files may be kept for a year without asking; anything else (pages, the
/// bundle, manifests, the runtime's JavaScript) is revalidated on every use, so a rebuild shows.
async fn cache_policy(req: Request, next: Next) -> Response {
    let immutable = lantern_engine::is_content_addressed(req.uri().path());
    let mut res = next.run(req).await;
    let status = res.status();
    if status.is_success() || status == StatusCode::NOT_MODIFIED {
        let policy = if immutable {
            "public, max-age=31536000, immutable"
        } else {
            "no-cache"
        };
        res.headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static(policy));
    }
    res
}

/// What tower-http's file service leaves out of HTTP's conditional and range rules (RFC 9110):
/// `If-None-Match: *` on a file that exists is 304; `If-Range` keeps a range only while its
/// date is the file's `Last-Modified` (no ETag is sent, so a tag never matches), so a stale
/// copy is never patched with newer bytes; several ranges are answered with the whole file
/// rather than 416; and every file says `Vary: Accept-Encoding`, as one URL is sent plain,
/// gzip or brotli.
async fn conditional(mut req: Request, next: Next) -> Response {
    let safe = matches!(*req.method(), Method::GET | Method::HEAD);
    let header_text = |req: &Request, name| {
        req.headers()
            .get(name)
            .and_then(|v: &HeaderValue| v.to_str().ok())
            .map(str::to_owned)
    };
    let none_match_any = header_text(&req, header::IF_NONE_MATCH)
        .is_some_and(|v| v.split(',').any(|t| t.trim() == "*"));
    if header_text(&req, header::RANGE).is_some_and(|r| r.contains(',')) {
        req.headers_mut().remove(header::RANGE);
    }
    if let Some(if_range) = req.headers_mut().remove(header::IF_RANGE) {
        if safe && req.headers().contains_key(header::RANGE) {
            let probe = Request::builder()
                .method(Method::HEAD)
                .uri(req.uri().clone())
                .body(axum::body::Body::empty());
            let current = match probe {
                Ok(probe) => next.clone().run(probe).await,
                Err(_) => StatusCode::BAD_REQUEST.into_response(),
            };
            if current.headers().get(header::LAST_MODIFIED) != Some(&if_range) {
                req.headers_mut().remove(header::RANGE);
            }
        }
    }
    let mut res = next.run(req).await;
    let status = res.status();
    if status.is_success() || status == StatusCode::NOT_MODIFIED {
        res.headers_mut()
            .entry(header::VARY)
            .or_insert(HeaderValue::from_static("accept-encoding"));
    }
    if none_match_any && safe && status.is_success() {
        let (mut parts, _) = res.into_parts();
        parts.status = StatusCode::NOT_MODIFIED;
        for h in [
            header::CONTENT_LENGTH,
            header::CONTENT_RANGE,
            header::CONTENT_ENCODING,
        ] {
            parts.headers.remove(h);
        }
        return Response::from_parts(parts, axum::body::Body::empty());
    }
    res
}

/// The static site as a router (for tests and for `serve`).
pub fn router(root: &Path) -> Result<Router> {
    let canonical = Arc::new(
        root.canonicalize()
            .with_context(|| format!("opening {}", root.display()))?,
    );
    // Files the build compressed ahead (`x.wasm.br`, `x.wasm.gz`: brotli at its best level,
    // which no server can afford per request) go out as they are to clients that accept
    // them; anything else is gzipped on the fly.
    let files = ServeDir::new(canonical.as_ref())
        .append_index_html_on_directories(true)
        .precompressed_br()
        .precompressed_gzip();
    Ok(Router::new()
        .fallback_service(files)
        .layer(middleware::from_fn(conditional))
        .layer(middleware::from_fn(cache_policy))
        .layer(middleware::from_fn_with_state(canonical, guard))
        .layer(CompressionLayer::new()))
}

/// Serves `root` at `addr` until Ctrl-C. Port 0 picks a free port; the address actually bound is
/// printed as the first line, for scripts and tests.
pub fn serve(root: PathBuf, addr: SocketAddr) -> Result<()> {
    check_root(&root)?;
    if !addr.ip().is_loopback() {
        eprintln!(
            "note: serving on {addr}, not a loopback address: other machines that reach this one can read every file under {}",
            root.display()
        );
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let app = router(&root)?;
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("binding {addr}"))?;
        let bound = listener.local_addr()?;
        println!("serving {} at http://{bound}/", root.display());
        serve_on(listener, app, HEADER_READ_TIMEOUT, async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await;
        Ok(())
    })
}

/// Refuses a folder that is not one, and the file system's root or the user's home, which
/// would put every file in them (keys, `/etc/passwd`) on the network.
fn check_root(root: &std::path::Path) -> Result<()> {
    if !root.is_dir() {
        anyhow::bail!("{} is not a folder", root.display());
    }
    let real = root
        .canonicalize()
        .with_context(|| format!("opening {}", root.display()))?;
    if lantern_indexer::publish::is_root_or_home(&real) {
        anyhow::bail!(
            "refusing to serve {}: it would put every file in it on the network; serve the built site's folder",
            real.display()
        );
    }
    Ok(())
}

/// How long a connection may take to send a request's headers: a client sending them a byte
/// at a time (slowloris) would otherwise hold a connection for ever.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Serves `app` on `listener`, each connection closed when its request's headers take longer
/// than `header_timeout`, until `shutdown` completes.
pub async fn serve_on(
    listener: tokio::net::TcpListener,
    app: Router,
    header_timeout: Duration,
    shutdown: impl std::future::Future<Output = ()>,
) {
    use hyper_util::rt::{TokioIo, TokioTimer};
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                // A connection that failed before it was ours (reset, out of descriptors):
                // a moment's pause, so that a full descriptor table is not spun on.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => return,
        };
        let service = hyper_util::service::TowerToHyperService::new(app.clone());
        tokio::spawn(async move {
            let mut http = hyper::server::conn::http1::Builder::new();
            http.timer(TokioTimer::new())
                .header_read_timeout(header_timeout);
            // A client that goes away mid-request is not the server's error.
            let _ = http.serve_connection(TokioIo::new(stream), service).await;
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_and_home_folders_are_never_served() {
        for dir in ["/", "/tmp/.."] {
            let err = check_root(std::path::Path::new(dir))
                .unwrap_err()
                .to_string();
            assert!(err.contains("refusing to serve /"), "{err}");
        }
        if let Some(home) = std::env::var_os("HOME").filter(|h| std::path::Path::new(h).is_dir()) {
            assert!(check_root(std::path::Path::new(&home)).is_err());
        }
        let site = tempfile::tempdir().unwrap();
        assert!(check_root(site.path()).is_ok());
        assert!(check_root(&site.path().join("missing")).is_err());
    }

    #[test]
    fn hidden_long_double_slash_and_escaping_paths_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("ok.html"), "ok").unwrap();
        std::fs::write(root.join(".env"), "secret").unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("x.txt"), "outside").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(outside.path(), root.join("link")).unwrap();
        assert!(allowed(&root, "/ok.html"));
        assert!(
            allowed(&root, "/missing.html"),
            "a missing file is a plain 404"
        );
        assert!(!allowed(&root, "/.env"));
        assert!(!allowed(&root, "/%2eenv"));
        assert!(!allowed(&root, "//sub"));
        assert!(!allowed(&root, &format!("/{}", "a".repeat(300))));
        #[cfg(unix)]
        assert!(!allowed(&root, "/link/x.txt"));
    }

    #[cfg(unix)]
    #[test]
    fn links_out_through_compressed_copies_and_folder_indexes_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let secret = outside.path().join("secret.txt");
        std::fs::write(&secret, "secret").unwrap();
        std::fs::write(root.join("page.html"), "page").unwrap();
        std::os::unix::fs::symlink(&secret, root.join("page.html.gz")).unwrap();
        std::fs::write(root.join("app.js"), "js").unwrap();
        std::os::unix::fs::symlink(&secret, root.join("app.js.br")).unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
        std::os::unix::fs::symlink(&secret, root.join("sub/index.html")).unwrap();
        std::fs::create_dir(root.join("fine")).unwrap();
        std::fs::write(root.join("fine/index.html"), "fine").unwrap();
        std::fs::write(root.join("fine/index.html.gz"), "gz").unwrap();
        for refused in ["/page.html", "/app.js", "/sub/", "/sub"] {
            assert!(!allowed(&root, refused), "{refused}");
        }
        for ok in ["/fine/", "/fine", "/fine/index.html"] {
            assert!(allowed(&root, ok), "{ok}");
        }
    }
}
