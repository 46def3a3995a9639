//! Ports for servers a test starts as processes of their own (`keyshard serve`, a throwaway
//! `mariadbd`), which bind them after the test chose them.

use std::net::TcpListener;
use std::sync::atomic::{AtomicU16, Ordering};

/// The ports handed out, from [`FIRST`] on.
static NEXT: AtomicU16 = AtomicU16::new(0);

/// Below Linux's ephemeral range (32768 and up), where a port asked of the kernel with
/// `bind(:0)` comes from: there, an outgoing connection of a concurrent test could take the
/// port between the test choosing it and the server binding it (the server then never
/// listens). Processes start at places of their own, so that two test binaries at once rarely
/// try the same ports.
const FIRST: u16 = 20_000;
const SPAN: u16 = 12_000;

/// A port nothing listens on now, which no outgoing connection will take.
pub fn free_port() -> u16 {
    let start = (std::process::id() % u32::from(SPAN)) as u16;
    loop {
        let offset = (start + NEXT.fetch_add(1, Ordering::Relaxed)) % SPAN;
        let port = FIRST + offset;
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}
