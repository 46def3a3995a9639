//! TLS on both frontends: the certificate of `server.tls`, and the stream a connection is
//! served over, which the client may turn from plain into TLS during its handshake (MySQL's
//! CLIENT_SSL, PostgreSQL's SSLRequest).

use std::future::Future;
use std::io::{self, Cursor};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, Chain, Join, ReadBuf};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::pki_types::pem::{self, PemObject};
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::{self, ServerConfig};
use tokio_rustls::server::TlsStream;

/// Why `server.tls` could not be used.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A PEM file could not be read or holds nothing usable.
    #[error("server.tls: cannot read {what} from {path}: {source}")]
    Pem {
        /// `certificate` or `key`.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        source: pem::Error,
    },
    /// The certificate file holds no certificate.
    #[error("server.tls: {0} holds no PEM certificate")]
    NoCertificate(PathBuf),
    /// rustls refused the pair (a key that does not match the certificate, say).
    #[error("server.tls: {0}")]
    Rustls(#[from] rustls::Error),
}

/// What both frontends offer clients that ask for TLS.
#[derive(Clone)]
pub struct Tls {
    acceptor: TlsAcceptor,
    /// Clients that do not ask for TLS are refused.
    pub required: bool,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tls")
            .field("required", &self.required)
            .finish_non_exhaustive()
    }
}

impl Tls {
    /// Reads the certificate chain and key of `config`.
    pub fn load(config: &keyshard_config::Tls) -> Result<Self, TlsError> {
        let pem_error = |what, path: &Path| {
            let path = path.to_owned();
            move |source| TlsError::Pem { what, path, source }
        };
        let chain = CertificateDer::pem_file_iter(&config.certificate)
            .and_then(|certificates| certificates.collect::<Result<Vec<_>, _>>())
            .map_err(pem_error("certificate", &config.certificate))?;
        if chain.is_empty() {
            return Err(TlsError::NoCertificate(config.certificate.clone()));
        }
        let key =
            PrivateKeyDer::from_pem_file(&config.key).map_err(pem_error("key", &config.key))?;
        // ring, as pgwire already uses: no second crypto library in the build.
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let server = ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .with_no_client_auth()
            .with_single_cert(chain, key)?;
        Ok(Self {
            acceptor: TlsAcceptor::from(Arc::new(server)),
            required: config.required,
        })
    }
}

/// A client connection, plain or TLS.
#[derive(Debug)]
pub enum Stream {
    /// As accepted.
    Plain(TcpStream),
    /// After the client asked for TLS.
    Tls(Box<TlsStream<Rewind>>),
    /// Only while the TLS handshake runs; a failed handshake leaves it, and the connection
    /// is closed.
    Upgrading,
}

impl Stream {
    /// Whether the client is served over TLS.
    pub fn is_tls(&self) -> bool {
        matches!(self, Self::Tls(_))
    }
}

/// A connection that can turn to TLS in the middle of its handshake.
pub trait Upgrade: AsyncRead + AsyncWrite + Unpin {
    /// Runs the server side of the TLS handshake. `buffered` holds what was read past the
    /// client's request for TLS: a MySQL client sends its TLS hello without waiting.
    fn start_tls(
        &mut self,
        tls: &Tls,
        buffered: Vec<u8>,
    ) -> impl Future<Output = io::Result<()>> + Send;
}

impl Upgrade for Stream {
    async fn start_tls(&mut self, tls: &Tls, buffered: Vec<u8>) -> io::Result<()> {
        let Self::Plain(tcp) = std::mem::replace(self, Self::Upgrading) else {
            return Err(io::Error::other("TLS was already started"));
        };
        let stream = tls.acceptor.accept(rewind(tcp, buffered)).await?;
        *self = Self::Tls(Box::new(stream));
        Ok(())
    }
}

fn upgrading() -> io::Error {
    io::Error::new(io::ErrorKind::NotConnected, "TLS handshake failed")
}

/// What a [`Stream`] reads and writes through, whichever it is now.
trait Io: AsyncRead + AsyncWrite + Unpin {}

impl<T: AsyncRead + AsyncWrite + Unpin> Io for T {}

impl Stream {
    fn io(self: Pin<&mut Self>) -> io::Result<Pin<&mut dyn Io>> {
        match self.get_mut() {
            Self::Plain(s) => Ok(Pin::new(s)),
            Self::Tls(s) => Ok(Pin::new(s.as_mut())),
            Self::Upgrading => Err(upgrading()),
        }
    }
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        self.io()?.poll_read(cx, buf)
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.io()?.poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.io()?.poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.io() {
            Ok(io) => io.poll_shutdown(cx),
            // Nothing is open to shut down.
            Err(_) => Poll::Ready(Ok(())),
        }
    }
}

/// A TCP stream that first gives back bytes already read from it.
pub type Rewind = Join<Chain<Cursor<Vec<u8>>, OwnedReadHalf>, OwnedWriteHalf>;

fn rewind(tcp: TcpStream, buffered: Vec<u8>) -> Rewind {
    let (read, write) = tcp.into_split();
    tokio::io::join(Cursor::new(buffered).chain(read), write)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unreadable_or_empty_files_are_named() {
        let dir = std::env::temp_dir().join(format!("keyshard_tls_unit_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let empty = dir.join("empty.pem");
        std::fs::write(&empty, "").unwrap();
        let config = |certificate: &Path| keyshard_config::Tls {
            certificate: certificate.to_owned(),
            key: dir.join("missing.key"),
            required: false,
        };
        let missing = Tls::load(&config(&dir.join("missing.pem"))).unwrap_err();
        assert!(missing.to_string().contains("missing.pem"), "{missing}");
        let none = Tls::load(&config(&empty)).unwrap_err();
        assert!(matches!(none, TlsError::NoCertificate(_)), "{none}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
