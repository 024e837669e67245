//! Serving connections so that no client holds the service: a client must send a request's
//! headers within a deadline (from the connection's start, or from the end of its previous
//! answer), its body without long pauses and within a total time, and take each answer's bytes
//! without stalling; open connections are capped, and when the cap is reached the connection
//! idle the longest (no request in progress) is closed to make room, so a flood of idle or
//! half-sent connections never keeps an agent's search or a sync from being answered.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::task::{Context, Poll, ready};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes, HttpBody};
use axum::http::Request;
use hyper::body::{Frame, Incoming};
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::{AbortHandle, JoinSet};
use tokio::time::Sleep;
use tower::ServiceExt;

/// The deadlines and the cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Connections open at once at most.
    pub max_connections: usize,
    /// Time a client has to send a request's headers, from the connection's start or from the
    /// end of its previous answer (so also the longest a kept-alive connection stays idle).
    pub header_timeout: Duration,
    /// Time a request's body may go without a byte.
    pub body_idle: Duration,
    /// Time a request's body may take in all.
    pub body_total: Duration,
    /// Time an answer may wait for its client to take a byte.
    pub write_stall: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            max_connections: 1024,
            header_timeout: Duration::from_secs(10),
            body_idle: Duration::from_secs(10),
            body_total: Duration::from_secs(60),
            write_stall: Duration::from_secs(20),
        }
    }
}

/// How long a connection must have been idle to be closed to make room: an answer's last
/// bytes leave within this.
const EVICTABLE_AFTER: Duration = Duration::from_millis(250);
/// How long the accept loop waits before looking for room again, or after a failed accept.
const RETRY: Duration = Duration::from_millis(50);

/// Serves `app` on `listener` within `limits` until `shutdown` resolves; then stops accepting,
/// lets each connection finish the request it is answering, and returns once all have closed
/// (the caller bounds that wait).
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()>,
) {
    let registry = Arc::new(Registry::default());
    let (stop, stopped) = watch::channel(false);
    let mut tasks = JoinSet::new();
    tokio::pin!(shutdown);
    let mut failed_accepts = Throttled::default();
    'accepting: loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of descriptors (or a connection reset before it was taken): make room
                    // and try again shortly.
                    failed_accepts.log(&e);
                    registry.evict_idle();
                    tokio::time::sleep(RETRY).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        // At the cap, the new connection waits for room: the connection idle the longest is
        // closed for it, or one ends.
        let cap = limits.max_connections.max(1);
        while registry.len() >= cap {
            // A closed connection leaves the count once its task has let go of its socket; one
            // is closed at a time for each connection waiting.
            let wait = if registry.staying() < cap || registry.evict_idle() {
                Duration::from_millis(1)
            } else {
                RETRY
            };
            tokio::select! {
                () = tokio::time::sleep(wait) => {}
                () = &mut shutdown => break 'accepting,
            }
        }
        while tasks.try_join_next().is_some() {}
        let tracked = registry.add();
        let abort = tasks.spawn(serve_one(
            stream,
            app.clone(),
            limits,
            stopped.clone(),
            tracked.clone(),
            registry.clone(),
        ));
        let _ = tracked.abort.set(abort);
    }
    drop(listener);
    let _ = stop.send(true);
    while tasks.join_next().await.is_some() {}
}

/// Serves one connection until it closes, is evicted, or the service stops (then after the
/// request it is answering).
async fn serve_one(
    stream: TcpStream,
    app: Router,
    limits: ConnectionLimits,
    mut stopped: watch::Receiver<bool>,
    tracked: Arc<Tracked>,
    registry: Arc<Registry>,
) {
    let _registered = Registered {
        registry,
        id: tracked.id,
    };
    let _ = stream.set_nodelay(true);
    let io = TokioIo::new(StallGuard::new(stream, limits.write_stall));
    let service = hyper::service::service_fn(move |request: Request<Incoming>| {
        let busy = Busy::begin(&tracked);
        let request = request.map(|body| Body::new(Deadline::new(body, limits)));
        let app = app.clone();
        async move {
            let response = app.oneshot(request).await?;
            Ok::<_, std::convert::Infallible>(response.map(|body| {
                Body::new(Holding {
                    inner: body,
                    _busy: busy,
                })
            }))
        }
    });
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .keep_alive(true);
    let connection = builder.serve_connection(io, service);
    tokio::pin!(connection);
    let stop = async move {
        let _ = stopped.wait_for(|stop| *stop).await;
    };
    tokio::select! {
        _ = connection.as_mut() => {}
        () = stop => {
            connection.as_mut().graceful_shutdown();
            let _ = connection.await;
        }
    }
}

/// The open connections.
#[derive(Default)]
struct Registry {
    open: Mutex<HashMap<u64, Arc<Tracked>>>,
    next_id: AtomicU64,
}

/// One open connection: how many requests it is answering, since when it has been idle, and
/// how to close it (once asked to, it counts until its task has ended and let go of its socket).
struct Tracked {
    id: u64,
    busy: AtomicUsize,
    idle_since: Mutex<Instant>,
    abort: OnceLock<AbortHandle>,
    closing: std::sync::atomic::AtomicBool,
}

impl Registry {
    /// Connections open (those closing included: their sockets are not yet let go).
    fn len(&self) -> usize {
        self.lock().len()
    }

    /// Connections open and not closing.
    fn staying(&self) -> usize {
        self.lock()
            .values()
            .filter(|t| !t.closing.load(Ordering::Acquire))
            .count()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Tracked>>> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn add(&self) -> Arc<Tracked> {
        let tracked = Arc::new(Tracked {
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            busy: AtomicUsize::new(0),
            idle_since: Mutex::new(Instant::now()),
            abort: OnceLock::new(),
            closing: std::sync::atomic::AtomicBool::new(false),
        });
        self.lock().insert(tracked.id, tracked.clone());
        tracked
    }

    /// Closes the connection idle the longest (answering nothing, for a while); false when
    /// there is none. It leaves the count when its task has ended.
    fn evict_idle(&self) -> bool {
        let open = self.lock();
        let now = Instant::now();
        let oldest = open
            .values()
            .filter(|t| t.busy.load(Ordering::Acquire) == 0 && !t.closing.load(Ordering::Acquire))
            .map(|t| (t.idle_for(now), t.id))
            .filter(|(idle, _)| *idle >= EVICTABLE_AFTER)
            .max();
        let Some((_, id)) = oldest else {
            return false;
        };
        if let Some(tracked) = open.get(&id) {
            tracked.closing.store(true, Ordering::Release);
            if let Some(abort) = tracked.abort.get() {
                abort.abort();
            }
        }
        tracing::debug!("an idle connection was closed to make room for a new one");
        true
    }
}

impl Tracked {
    fn idle_for(&self, now: Instant) -> Duration {
        now.saturating_duration_since(
            *self
                .idle_since
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }
}

/// Removes its connection from the registry when the connection's task ends.
struct Registered {
    registry: Arc<Registry>,
    id: u64,
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.registry.lock().remove(&self.id);
    }
}

/// A request in progress on a connection, until its answer's body is dropped.
struct Busy(Arc<Tracked>);

impl Busy {
    fn begin(tracked: &Arc<Tracked>) -> Busy {
        tracked.busy.fetch_add(1, Ordering::AcqRel);
        Busy(tracked.clone())
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        *self
            .0
            .idle_since
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Instant::now();
        self.0.busy.fetch_sub(1, Ordering::AcqRel);
    }
}

/// An answer's body holding its request's [`Busy`] until it is sent (or dropped).
struct Holding {
    inner: Body,
    _busy: Busy,
}

impl HttpBody for Holding {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.inner.size_hint()
    }
}

/// A request body that must keep coming: an error once it has sent nothing for `body_idle`, or
/// once it has taken `body_total` in all. A handler reading it then answers, and lets go of what
/// the request held.
struct Deadline {
    inner: Incoming,
    idle: Duration,
    pause: Pin<Box<Sleep>>,
    total: Pin<Box<Sleep>>,
}

impl Deadline {
    fn new(inner: Incoming, limits: ConnectionLimits) -> Deadline {
        Deadline {
            inner,
            idle: limits.body_idle,
            pause: Box::pin(tokio::time::sleep(limits.body_idle)),
            total: Box::pin(tokio::time::sleep(limits.body_total)),
        }
    }
}

impl HttpBody for Deadline {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        if let Poll::Ready(frame) = Pin::new(&mut self.inner).poll_frame(cx) {
            let next = tokio::time::Instant::now() + self.idle;
            self.pause.as_mut().reset(next);
            return Poll::Ready(frame.map(|f| f.map_err(io::Error::other)));
        }
        if self.total.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Some(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the request body took too long to arrive",
            ))));
        }
        if self.pause.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Some(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the request body stopped arriving",
            ))));
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.inner.size_hint()
    }
}

/// A connection whose writes fail once the client has taken nothing for `stall`: an answer its
/// client does not read never holds the connection (and what the answer holds) for long.
struct StallGuard {
    stream: TcpStream,
    stall: Duration,
    waiting: Option<Pin<Box<Sleep>>>,
}

impl StallGuard {
    fn new(stream: TcpStream, stall: Duration) -> StallGuard {
        StallGuard {
            stream,
            stall,
            waiting: None,
        }
    }

    /// The result of a write (or flush) `attempt`: as it is when it made progress; while it
    /// waits, an error once the client has taken nothing for the stall limit.
    fn guard<T>(
        &mut self,
        cx: &mut Context<'_>,
        attempt: Poll<io::Result<T>>,
    ) -> Poll<io::Result<T>> {
        if attempt.is_ready() {
            self.waiting = None;
            return attempt;
        }
        let stall = self.stall;
        let timer = self
            .waiting
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(stall)));
        ready!(timer.as_mut().poll(cx));
        Poll::Ready(Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "the client took nothing of the answer for too long",
        )))
    }
}

impl AsyncRead for StallGuard {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for StallGuard {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let attempt = Pin::new(&mut self.stream).poll_write(cx, buf);
        self.guard(cx, attempt)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let attempt = Pin::new(&mut self.stream).poll_flush(cx);
        self.guard(cx, attempt)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let attempt = Pin::new(&mut self.stream).poll_write_vectored(cx, bufs);
        self.guard(cx, attempt)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}

/// A failed accept logged at most once a second.
#[derive(Default)]
struct Throttled {
    last: Option<Instant>,
}

impl Throttled {
    fn log(&mut self, e: &io::Error) {
        if self
            .last
            .is_none_or(|t| t.elapsed() >= Duration::from_secs(1))
        {
            tracing::warn!(
                "a connection could not be accepted: {e}; idle connections are closed to make room"
            );
            self.last = Some(Instant::now());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::routing::post;
    use http_body_util::BodyExt;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn echo(body: Body) -> Result<Bytes, axum::http::StatusCode> {
        match body.collect().await {
            Ok(collected) => Ok(collected.to_bytes()),
            Err(_) => Err(axum::http::StatusCode::REQUEST_TIMEOUT),
        }
    }

    fn quick() -> ConnectionLimits {
        ConnectionLimits {
            max_connections: 4,
            header_timeout: Duration::from_millis(400),
            body_idle: Duration::from_millis(300),
            body_total: Duration::from_secs(2),
            write_stall: Duration::from_millis(500),
        }
    }

    async fn start(limits: ConnectionLimits) -> std::net::SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let app = Router::new().route("/", post(echo));
        tokio::spawn(serve(listener, app, limits, std::future::pending()));
        addr
    }

    async fn closed_within(stream: &mut TcpStream, limit: Duration) -> bool {
        let mut buf = [0u8; 1024];
        let started = Instant::now();
        loop {
            match tokio::time::timeout(limit, stream.read(&mut buf)).await {
                Ok(Ok(0) | Err(_)) => return started.elapsed() <= limit,
                Ok(Ok(_)) => {}
                Err(_) => return false,
            }
        }
    }

    #[tokio::test]
    async fn a_client_that_sends_nothing_or_half_a_header_is_cut_off() {
        let addr = start(quick()).await;
        let mut silent = TcpStream::connect(addr).await.expect("connect");
        let mut half = TcpStream::connect(addr).await.expect("connect");
        half.write_all(b"POST / HTTP/1.1\r\nHost: x\r\n")
            .await
            .expect("write");
        assert!(closed_within(&mut silent, Duration::from_secs(2)).await);
        assert!(closed_within(&mut half, Duration::from_secs(2)).await);
    }

    #[tokio::test]
    async fn a_stalled_body_is_answered_and_its_request_ends() {
        let addr = start(quick()).await;
        let mut stream = TcpStream::connect(addr).await.expect("connect");
        stream
            .write_all(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc")
            .await
            .expect("write");
        let mut answer = vec![0u8; 256];
        let n = tokio::time::timeout(Duration::from_secs(2), stream.read(&mut answer))
            .await
            .expect("answered in time")
            .expect("read");
        let text = String::from_utf8_lossy(&answer[..n]);
        assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    }

    #[tokio::test]
    async fn at_the_cap_the_longest_idle_connection_makes_room() {
        let addr = start(ConnectionLimits {
            header_timeout: Duration::from_secs(5),
            ..quick()
        })
        .await;
        let mut idle = Vec::new();
        for _ in 0..4 {
            idle.push(TcpStream::connect(addr).await.expect("connect"));
        }
        tokio::time::sleep(EVICTABLE_AFTER * 2).await;
        let mut fresh = TcpStream::connect(addr).await.expect("connect");
        fresh
            .write_all(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nok")
            .await
            .expect("write");
        let mut answer = vec![0u8; 256];
        let n = tokio::time::timeout(Duration::from_secs(1), fresh.read(&mut answer))
            .await
            .expect("answered at once, not after the header deadline")
            .expect("read");
        assert!(String::from_utf8_lossy(&answer[..n]).starts_with("HTTP/1.1 200"));
        let mut evicted = 0;
        for stream in &mut idle {
            if closed_within(stream, Duration::from_millis(100)).await {
                evicted += 1;
            }
        }
        assert_eq!(evicted, 1, "one idle connection made room");
    }
}
