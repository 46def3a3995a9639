//! `inet` and `cidr` values in PostgreSQL's `network_cmp` order.

use super::order::SortKey;

/// An `inet`'s or `cidr`'s place in `network_cmp`'s order, from `inet_send`'s form (family 2
/// or 3, mask length, cidr flag, address length, address) or the text (`10.0.0.1/8`, `::1`).
/// Comparing the network under each value's own mask orders as `network_cmp`'s comparison
/// of the bits both masks cover, then the mask lengths: the shorter mask's network has zeros
/// where the longer one may not.
pub(super) fn network_key(bytes: &[u8], binary: bool) -> Option<SortKey<'static>> {
    let mut address = [0u8; 16];
    let (family, bits) = if binary {
        let [family, bits, _, len, rest @ ..] = bytes else {
            return None;
        };
        let len = usize::from(*len);
        address.get_mut(..len)?.copy_from_slice(rest.get(..len)?);
        (*family, *bits)
    } else {
        let text = std::str::from_utf8(bytes).ok()?;
        let (host, mask) = match text.split_once('/') {
            Some((host, mask)) => (host, Some(mask.parse::<u8>().ok()?)),
            None => (text, None),
        };
        match host.parse::<std::net::IpAddr>().ok()? {
            std::net::IpAddr::V4(v4) => {
                address[..4].copy_from_slice(&v4.octets());
                (2, mask.unwrap_or(32))
            }
            std::net::IpAddr::V6(v6) => {
                address = v6.octets();
                (3, mask.unwrap_or(128))
            }
        }
    };
    let mut network = address;
    for (i, byte) in network.iter_mut().enumerate() {
        let kept = usize::from(bits).saturating_sub(i * 8).min(8);
        *byte &= !(0xffu8.checked_shr(kept as u32).unwrap_or(0));
    }
    Some(SortKey::Network {
        family,
        network,
        bits,
        address,
    })
}
