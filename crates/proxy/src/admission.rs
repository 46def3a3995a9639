//! Which accepted connections the server keeps: at most `props.max-connections` in all, and of
//! those still logging in at most `props.max-unauthenticated-connections`, and
//! `props.max-unauthenticated-connections-per-address` from one address. Sockets that never
//! log in (a scanner, a flood of half-open connections) then cannot take every file descriptor
//! until the login timeout frees them: beyond the caps a connection is told so at once
//! (MySQL's ER_CON_COUNT_ERROR 1040, PostgreSQL's 53300 too_many_connections) and closed, and
//! clients from other addresses still get in.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};

use keyshard_config::Props;

/// The caps and what the server holds now.
#[derive(Debug)]
pub(crate) struct Admission {
    max_connections: usize,
    max_unauthenticated: usize,
    max_unauthenticated_per_address: usize,
    held: Mutex<Held>,
}

#[derive(Debug, Default)]
struct Held {
    open: usize,
    logging_in: usize,
    /// Connections logging in, by address; an address leaves when it has none, so the map is
    /// never larger than `max_unauthenticated`.
    by_address: HashMap<IpAddr, usize>,
}

/// Why a connection was not admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Refused {
    #[error("Too many connections: the proxy holds props.max-connections ({0}) already")]
    Connections(usize),
    #[error(
        "Too many connections: {0} connections are logging in already \
         (props.max-unauthenticated-connections)"
    )]
    LoggingIn(usize),
    #[error(
        "Too many connections from this address are logging in already ({0}, \
         props.max-unauthenticated-connections-per-address)"
    )]
    FromAddress(usize),
}

/// One admitted connection, counted until dropped.
#[derive(Debug)]
pub(crate) struct Ticket {
    admission: Arc<Admission>,
    address: IpAddr,
    logging_in: bool,
}

impl Admission {
    pub(crate) fn new(props: &Props) -> Self {
        Self {
            max_connections: props.max_connections,
            max_unauthenticated: props.max_unauthenticated_connections,
            max_unauthenticated_per_address: props.max_unauthenticated_per_address,
            held: Mutex::new(Held::default()),
        }
    }

    /// Counts a connection from `address`, logging in, unless a cap is reached.
    pub(crate) fn admit(self: &Arc<Self>, address: IpAddr) -> Result<Ticket, Refused> {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        if held.open >= self.max_connections {
            return Err(Refused::Connections(self.max_connections));
        }
        if held.logging_in >= self.max_unauthenticated {
            return Err(Refused::LoggingIn(self.max_unauthenticated));
        }
        let from_address = held.by_address.get(&address).copied().unwrap_or(0);
        if from_address >= self.max_unauthenticated_per_address {
            return Err(Refused::FromAddress(self.max_unauthenticated_per_address));
        }
        held.open += 1;
        held.logging_in += 1;
        held.by_address.insert(address, from_address + 1);
        Ok(Ticket {
            admission: Arc::clone(self),
            address,
            logging_in: true,
        })
    }

    fn done_logging_in(held: &mut Held, address: IpAddr) {
        held.logging_in = held.logging_in.saturating_sub(1);
        if let Some(count) = held.by_address.get_mut(&address) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                held.by_address.remove(&address);
            }
        }
    }
}

impl Ticket {
    /// The client logged in: it no longer counts as logging in.
    pub(crate) fn logged_in(&mut self) {
        if std::mem::take(&mut self.logging_in) {
            let admission = &self.admission;
            let mut held = admission
                .held
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            Admission::done_logging_in(&mut held, self.address);
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut held = self
            .admission
            .held
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        held.open = held.open.saturating_sub(1);
        if self.logging_in {
            Admission::done_logging_in(&mut held, self.address);
        }
    }
}

/// The refusal as the first bytes a MySQL client reads: an ERR packet in place of the greeting,
/// as MySQL sends it.
pub(crate) fn mysql_refusal(refused: Refused) -> Vec<u8> {
    let payload = crate::mysql::protocol::response::err(1040, "08004", &refused.to_string());
    let len = u32::try_from(payload.len()).unwrap_or(0).to_le_bytes();
    let mut packet = vec![len[0], len[1], len[2], 0];
    packet.extend_from_slice(&payload);
    packet
}

/// The refusal as a PostgreSQL ErrorResponse, which a client reads in place of the answer to
/// its startup (or SSL request) message.
pub(crate) fn postgres_refusal(refused: Refused) -> Vec<u8> {
    let mut fields = Vec::new();
    for (tag, value) in [
        (b'S', "FATAL"),
        (b'V', "FATAL"),
        (b'C', "53300"),
        (b'M', refused.to_string().as_str()),
    ] {
        fields.push(tag);
        fields.extend_from_slice(value.as_bytes());
        fields.push(0);
    }
    fields.push(0);
    let len = u32::try_from(fields.len() + 4).unwrap_or(0).to_be_bytes();
    let mut message = vec![b'E'];
    message.extend_from_slice(&len);
    message.extend_from_slice(&fields);
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    fn admission(total: usize, logging_in: usize, per_address: usize) -> Arc<Admission> {
        let props = Props {
            max_connections: total,
            max_unauthenticated_connections: logging_in,
            max_unauthenticated_per_address: per_address,
            ..Props::default()
        };
        Arc::new(Admission::new(&props))
    }

    #[test]
    fn caps_count_connections_until_they_log_in_or_go() {
        let gate = admission(4, 3, 2);
        let (a, b): (IpAddr, IpAddr) = ("10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap());
        let first = gate.admit(a).unwrap();
        let mut second = gate.admit(a).unwrap();
        assert_eq!(gate.admit(a).unwrap_err(), Refused::FromAddress(2));
        let third = gate.admit(b).unwrap();
        assert_eq!(gate.admit(b).unwrap_err(), Refused::LoggingIn(3));
        second.logged_in();
        let fourth = gate.admit(b).unwrap();
        assert_eq!(gate.admit(b).unwrap_err(), Refused::Connections(4));
        drop(first);
        drop(third);
        let _again = gate.admit(a).unwrap();
        drop(fourth);
        drop(second);
        let held = gate.held.lock().unwrap();
        assert_eq!(
            (held.open, held.logging_in, held.by_address.len()),
            (1, 1, 1)
        );
    }
}
