//! `lantern serve`: a small static file server for the demo site and the browser tests, so a
//! newcomer needs nothing but this binary to see search working.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::{Context, Result};
use axum::Router;
use tower_http::compression::CompressionLayer;
use tower_http::services::ServeDir;

/// Serves `root` at `addr` until Ctrl-C. Port 0 picks a free port; the address actually bound is
/// printed as the first line, for scripts and tests.
pub fn serve(root: PathBuf, addr: SocketAddr) -> Result<()> {
    if !root.is_dir() {
        anyhow::bail!("{} is not a folder", root.display());
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let app = Router::new()
            .fallback_service(ServeDir::new(&root).append_index_html_on_directories(true))
            .layer(CompressionLayer::new());
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("binding {addr}"))?;
        let bound = listener.local_addr()?;
        println!("serving {} at http://{bound}/", root.display());
        axum::serve(listener, app)
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await?;
        Ok(())
    })
}
