//! A plugin's stdout and stderr: kept, not printed. The last bytes are what a panic prints, so
//! they go into the error message when the plugin crashes.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use bytes::Bytes;
use tokio::io::AsyncWrite;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamError};

/// Keeps the last `capacity` bytes written to it; older bytes are dropped, never an error.
#[derive(Clone)]
pub struct TailCapture {
    capacity: usize,
    buffer: Arc<Mutex<Vec<u8>>>,
}

impl TailCapture {
    /// A capture keeping at most `capacity` bytes.
    pub fn new(capacity: usize) -> Self {
        TailCapture {
            capacity,
            buffer: Arc::new(Mutex::new(Vec::new())),
        }
    }

    /// What was kept, as text (lossy), trimmed.
    pub fn text(&self) -> String {
        let buffer = self.buffer.lock().unwrap_or_else(PoisonError::into_inner);
        String::from_utf8_lossy(&buffer).trim().to_owned()
    }

    fn push(&self, bytes: &[u8]) {
        let mut buffer = self.buffer.lock().unwrap_or_else(PoisonError::into_inner);
        let tail = &bytes[bytes.len().saturating_sub(self.capacity)..];
        let overflow = (buffer.len() + tail.len()).saturating_sub(self.capacity);
        buffer.drain(..overflow);
        buffer.extend_from_slice(tail);
    }
}

impl IsTerminal for TailCapture {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for TailCapture {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

#[wasmtime_wasi::async_trait]
impl OutputStream for TailCapture {
    fn write(&mut self, bytes: Bytes) -> Result<(), StreamError> {
        self.push(&bytes);
        Ok(())
    }

    fn flush(&mut self) -> Result<(), StreamError> {
        Ok(())
    }

    fn check_write(&mut self) -> Result<usize, StreamError> {
        Ok(64 << 10)
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for TailCapture {
    async fn ready(&mut self) {}
}

impl AsyncWrite for TailCapture {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.push(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_only_the_tail() {
        let capture = TailCapture::new(8);
        capture.push(b"hello ");
        capture.push(b"world!");
        assert_eq!(capture.text(), "o world!");
        capture.push(b"0123456789");
        assert_eq!(capture.text(), "23456789");
    }
}
