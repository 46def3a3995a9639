//! The metrics endpoint (`server.metrics.listen`): `GET /metrics` over plain HTTP/1.1, one
//! request per connection, as Prometheus scrapes. Requests are small and bounded in size,
//! time and number, like everything else a client can send.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, watch};

use crate::engine::Databases;

/// Scrapes answered at once; more connections are closed unanswered.
const MAX_SCRAPES: usize = 8;
/// The longest request head read.
const MAX_REQUEST: usize = 8 * 1024;
/// How long one scrape may take, request to response.
const TIMEOUT: Duration = Duration::from_secs(5);

/// Answers scrapes on `listener` until the server stops.
pub(crate) async fn serve(
    listener: TcpListener,
    databases: Arc<Databases>,
    mut stopping: watch::Receiver<bool>,
) {
    let scrapes = Arc::new(Semaphore::new(MAX_SCRAPES));
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    tracing::warn!("metrics: accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = stopping.changed() => return,
        };
        let Ok(permit) = Arc::clone(&scrapes).try_acquire_owned() else {
            continue;
        };
        let databases = Arc::clone(&databases);
        tokio::spawn(async move {
            let _permit = permit;
            if let Ok(Err(e)) = tokio::time::timeout(TIMEOUT, answer(stream, &databases)).await {
                tracing::debug!("metrics: {e}");
            }
        });
    }
}

async fn answer(mut stream: TcpStream, databases: &Databases) -> std::io::Result<()> {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        if head.len() > MAX_REQUEST {
            return respond(&mut stream, "431 Request Header Fields Too Large", "").await;
        }
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            return Ok(());
        }
        head.extend_from_slice(&buf[..n]);
    }
    let line = head.split(|&b| b == b'\r').next().unwrap_or_default();
    let line = String::from_utf8_lossy(line);
    let mut words = line.split(' ');
    match (words.next(), words.next()) {
        (Some("GET"), Some("/metrics")) => {
            respond(&mut stream, "200 OK", &databases.render_metrics()).await
        }
        (Some("GET"), _) => respond(&mut stream, "404 Not Found", "").await,
        _ => respond(&mut stream, "405 Method Not Allowed", "").await,
    }
}

async fn respond(stream: &mut TcpStream, status: &str, body: &str) -> std::io::Result<()> {
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(response.as_bytes()).await?;
    stream.shutdown().await
}
