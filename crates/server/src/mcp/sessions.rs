//! MCP sessions over HTTP, bounded: at most [`MAX_SESSIONS`] at once, each closed after
//! [`IDLE`] without a request. rmcp's local session manager keeps every session a client
//! opens until the client closes it, so `initialize` calls alone could fill the memory.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use futures_util::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    ServerSseMessage, SessionId, SessionManager,
};

/// Most sessions open at once; a new one beyond is refused until others close or expire.
pub const MAX_SESSIONS: usize = 1024;
/// A session without a request for this long is closed.
pub const IDLE: Duration = Duration::from_secs(5 * 60);

/// Why a session call failed.
#[derive(Debug, thiserror::Error)]
pub enum BoundedError {
    /// Every slot is taken.
    #[error("too many MCP sessions are open ({MAX_SESSIONS}); close one or try again later")]
    Full,
    /// From rmcp's session manager.
    #[error(transparent)]
    Local(#[from] LocalSessionManagerError),
}

/// rmcp's local sessions with a cap and an idle expiry.
pub struct BoundedSessions {
    inner: LocalSessionManager,
    used: Mutex<HashMap<SessionId, Instant>>,
    max: usize,
    idle: Duration,
}

impl BoundedSessions {
    /// At most `max` sessions, each closed after `idle` without a request.
    pub fn new(max: usize, idle: Duration) -> Self {
        let mut inner = LocalSessionManager::default();
        inner.session_config.keep_alive = Some(idle);
        BoundedSessions {
            inner,
            used: Mutex::new(HashMap::new()),
            max,
            idle,
        }
    }

    fn touch(&self, id: &SessionId) {
        if let Ok(mut used) = self.used.lock() {
            if let Some(t) = used.get_mut(id) {
                *t = Instant::now();
            }
        }
    }

    /// Whether a new session would be refused (idle ones closed first).
    pub async fn is_full(&self) -> bool {
        self.expire().await >= self.max
    }

    /// Closes the sessions idle too long; returns how many remain.
    async fn expire(&self) -> usize {
        let stale: Vec<SessionId> = match self.used.lock() {
            Ok(mut used) => {
                let now = Instant::now();
                let stale = used
                    .iter()
                    .filter(|(_, t)| now.duration_since(**t) >= self.idle)
                    .map(|(id, _)| id.clone())
                    .collect::<Vec<_>>();
                stale.iter().for_each(|id| {
                    used.remove(id);
                });
                stale
            }
            Err(_) => Vec::new(),
        };
        for id in stale {
            let _ = self.inner.close_session(&id).await;
        }
        // Sessions whose worker ended were removed by rmcp: forget them too.
        let live = self.inner.sessions.read().await;
        match self.used.lock() {
            Ok(mut used) => {
                used.retain(|id, _| live.contains_key(id));
                used.len()
            }
            Err(_) => self.max,
        }
    }
}

impl SessionManager for BoundedSessions {
    type Error = BoundedError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        if self.expire().await >= self.max {
            return Err(BoundedError::Full);
        }
        let (id, transport) = self.inner.create_session().await?;
        if let Ok(mut used) = self.used.lock() {
            used.insert(id.clone(), Instant::now());
        }
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.touch(id);
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        if let Ok(mut used) = self.used.lock() {
            used.remove(id);
        }
        Ok(self.inner.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        Ok(self.inner.create_stream(id, message).await?)
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.touch(id);
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        Ok(self.inner.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        Ok(self.inner.resume(id, last_event_id).await?)
    }
}

/// Answers a request that would open a session (a POST without `Mcp-Session-Id`) with 503 and
/// `Retry-After` while every slot is taken: rmcp turns the session manager's refusal into a
/// 500, which tells a client the server broke rather than that it should come back.
pub async fn refuse_when_full(
    axum::extract::State(sessions): axum::extract::State<std::sync::Arc<BoundedSessions>>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let opens =
        req.method() == axum::http::Method::POST && !req.headers().contains_key("mcp-session-id");
    if opens && sessions.is_full().await {
        return (
            axum::http::StatusCode::SERVICE_UNAVAILABLE,
            [(axum::http::header::RETRY_AFTER, "60")],
            BoundedError::Full.to_string(),
        )
            .into_response();
    }
    next.run(req).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_session_past_the_cap_is_told_to_come_back() {
        // A real socket each, with the middleware in front of a stand-in for rmcp's service.
        let start = |max: usize| async move {
            let app = axum::Router::new()
                .route("/mcp", axum::routing::post(|| async { "opened" }))
                .layer(axum::middleware::from_fn_with_state(
                    std::sync::Arc::new(BoundedSessions::new(max, IDLE)),
                    refuse_when_full,
                ));
            let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = l.local_addr().unwrap();
            tokio::spawn(async move { axum::serve(l, app).await.unwrap() });
            format!("http://{addr}/mcp")
        };
        let client = reqwest::Client::new();
        let full = start(0).await;
        let r = client.post(&full).send().await.unwrap();
        assert_eq!(r.status(), 503);
        assert_eq!(r.headers()["retry-after"], "60");
        // A session already open is not refused, and a free slot opens one.
        let r = client
            .post(&full)
            .header("mcp-session-id", "abc")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let r = client.post(start(1).await).send().await.unwrap();
        assert_eq!(r.status(), 200);
    }
}
