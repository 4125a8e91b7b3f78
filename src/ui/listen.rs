//! The server's connections: hyper's HTTP/1 on each accepted socket, with a cap on open
//! connections (past it the server stops accepting and the system queues the rest), a
//! timeout on reading a request's head that also closes idle kept-alive connections, a
//! timeout on an answer that the client stops reading (or reads a byte at a time), and the
//! two-step stop on Ctrl-C.
//! `axum::serve` offers none of these timeouts, hence this loop over hyper's own builder.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use anyhow::{Context as _, Result};
use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::time::Sleep;

use super::Limits;

/// Largest request head (request line and headers; 431 past it), and largest buffer hyper
/// keeps for a connection: room for a browser's cookies for `localhost`, which every local
/// server shares.
const BUF_BYTES: usize = 64 * 1024;

/// How the server stopped after Ctrl-C.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// Every open connection ended within the grace period.
    Finished,
    /// A second Ctrl-C, or the grace period over: connections still open were dropped.
    Cut,
}

/// Serves `router` on `listener` until Ctrl-C: the first stops accepting and gives open
/// connections [`Limits::shutdown_grace`] to finish; a second, or the grace period over,
/// stops at once.
pub(crate) async fn run(
    listener: TcpListener,
    router: Router,
    limits: &Limits,
    mut interrupts: Interrupts,
) -> Result<Stop> {
    let open = Arc::new(Semaphore::new(limits.max_connections));
    let graceful = GracefulShutdown::new();
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .max_header_size(BUF_BYTES)
        .max_buf_size(BUF_BYTES);
    loop {
        // Past the cap, nothing is accepted until a connection ends (each ends within the
        // timeouts): the system queues new ones, which are served in turn, not refused.
        let permit = tokio::select! {
            permit = Arc::clone(&open).acquire_owned() => permit.context("the connection cap")?,
            () = interrupts.next() => break,
        };
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    pause_after(&e).await;
                    continue;
                }
            },
            () = interrupts.next() => break,
        };
        let _ = stream.set_nodelay(true);
        let io = TokioIo::new(Stalling::new(stream, limits.write_timeout));
        let service = TowerToHyperService::new(router.clone());
        let connection = graceful.watch(http.serve_connection(io, service));
        tokio::spawn(async move {
            // A connection's errors (a timeout, a reset) end only that connection.
            let _ = connection.await;
            drop(permit);
        });
    }
    drop(listener);
    let still_open = limits.max_connections - open.available_permits();
    let _ = io::Write::write_all(
        &mut io::stderr(),
        format!(
            "stepcost ui: stopping; {still_open} open connection(s) get up to {} s to finish \
             (Ctrl-C again stops at once)\n",
            limits.shutdown_grace.as_secs_f64()
        )
        .as_bytes(),
    );
    Ok(tokio::select! {
        () = graceful.shutdown() => Stop::Finished,
        () = tokio::time::sleep(limits.shutdown_grace) => Stop::Cut,
        () = interrupts.next() => Stop::Cut,
    })
}

/// After a failed accept: a connection that went away before it was accepted is nothing to
/// wait for; anything else (out of file descriptors) gets a short pause, not a busy loop.
async fn pause_after(error: &io::Error) {
    use io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if !matches!(
        error.kind(),
        ConnectionAborted | ConnectionRefused | ConnectionReset
    ) {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Ctrl-C, each time it is pressed: one registration for the server's life, made before the
/// address is printed (a Ctrl-C as soon as it is, is caught), so that a second press between
/// two waits is not lost either.
pub(crate) struct Interrupts {
    #[cfg(unix)]
    signal: tokio::signal::unix::Signal,
}

impl Interrupts {
    pub(crate) fn new() -> Result<Interrupts> {
        Ok(Interrupts {
            #[cfg(unix)]
            signal: tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
                .context("cannot listen for Ctrl-C")?,
        })
    }

    async fn next(&mut self) {
        #[cfg(unix)]
        let _ = self.signal.recv().await;
        #[cfg(not(unix))]
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// A socket whose writes fail once what was handed to it has not moved on by
/// [`PROGRESS_BYTES`] (or to its end) within `limit`: a client that stops reading its answer,
/// or reads it a byte at a time, is dropped, and the answer's memory with it.
struct Stalling<S> {
    inner: S,
    limit: Duration,
    /// Runs from the first write that could not proceed; cleared by enough progress, or by a
    /// flush (hyper flushes once everything it holds is written).
    stalled: Option<Pin<Box<Sleep>>>,
    /// Bytes written since `stalled` started.
    moved: usize,
}

/// The progress that clears a stall: a client reading at least this much every write
/// timeout (6.4 KB/s at 10 s) keeps its connection, however long its answer.
const PROGRESS_BYTES: usize = 64 * 1024;

impl<S> Stalling<S> {
    fn new(inner: S, limit: Duration) -> Stalling<S> {
        Stalling {
            inner,
            limit,
            stalled: None,
            moved: 0,
        }
    }

    /// A write's result: enough progress clears the stall; a stall past the limit is an
    /// error.
    fn watch(
        &mut self,
        cx: &mut Context<'_>,
        result: Poll<io::Result<usize>>,
    ) -> Poll<io::Result<usize>> {
        match result {
            Poll::Ready(Ok(n)) => {
                self.moved = self.moved.saturating_add(n);
                if self.moved >= PROGRESS_BYTES {
                    self.stalled = None;
                }
                Poll::Ready(Ok(n))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => self.pending(cx),
        }
    }

    /// A write that could not proceed: starts the timer if none runs; its end is an error.
    fn pending<T>(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<T>> {
        let limit = self.limit;
        if self.stalled.is_none() {
            self.moved = 0;
        }
        let timer = (self.stalled).get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client read too little of its answer within the write timeout",
            ))),
            Poll::Pending => Poll::Pending,
        }
    }

    /// The result of a flush: once everything handed over is written, no stall runs.
    fn flushed(
        &mut self,
        cx: &mut Context<'_>,
        result: Poll<io::Result<()>>,
    ) -> Poll<io::Result<()>> {
        match result {
            Poll::Ready(result) => {
                self.stalled = None;
                Poll::Ready(result)
            }
            Poll::Pending => self.pending(cx),
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Stalling<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Stalling<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let result = Pin::new(&mut this.inner).poll_write(cx, buf);
        this.watch(cx, result)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let result = Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        this.watch(cx, result)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let result = Pin::new(&mut this.inner).poll_flush(cx);
        this.flushed(cx, result)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let result = Pin::new(&mut this.inner).poll_shutdown(cx);
        this.flushed(cx, result)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;

    /// A client that reads `per_read` bytes of its answer every 10 ms (none: never reads).
    struct Reader {
        per_read: usize,
        last: Instant,
    }

    impl AsyncWrite for Reader {
        fn poll_write(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            if self.per_read == 0 || self.last.elapsed() < Duration::from_millis(10) {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            self.last = Instant::now();
            Poll::Ready(Ok(buf.len().min(self.per_read)))
        }

        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }

        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    /// Whether a 1-MiB answer written for 600 ms to `per_read`'s reader, under a 200-ms
    /// write timeout, failed.
    fn dropped(per_read: usize) -> bool {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        runtime.block_on(async {
            let reader = Reader {
                per_read,
                last: Instant::now(),
            };
            let mut io = Stalling::new(reader, Duration::from_millis(200));
            let answer = vec![0u8; 1 << 20];
            let start = Instant::now();
            while start.elapsed() < Duration::from_millis(600) {
                let write = std::future::poll_fn(|cx| Pin::new(&mut io).poll_write(cx, &answer));
                if write.await.is_err() {
                    return true;
                }
            }
            false
        })
    }

    #[test]
    fn an_answer_must_move_on_by_64_kib_per_write_timeout() {
        assert!(dropped(0), "a client that never reads");
        assert!(dropped(100), "100 bytes every 10 ms: 2 KB per timeout");
        assert!(!dropped(PROGRESS_BYTES), "64 KiB every 10 ms");
    }
}
