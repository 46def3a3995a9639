//! A wire value's place in its type's order ([`SortKey`]), with floats ordered as PostgreSQL
//! orders them.

/// A wire value's place in its type's order.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SortKey<'a> {
    /// One number: microseconds, days or a year.
    Number(i128),
    /// `timetz`: the instant in UTC, then the zone.
    Pair(i128, i128),
    /// Bytes compared as they are.
    Bytes(&'a [u8]),
    /// A float, in PostgreSQL's order: -0 equals 0, NaN equals NaN and sorts above every
    /// number.
    Float(Float),
    /// An `inet` or `cidr` in `network_cmp`'s order: the family, the network (the address
    /// under its own mask), the mask length, then the whole address.
    Network {
        /// 2 for IPv4, 3 for IPv6, as `inet_send` numbers them.
        family: u8,
        /// The address under its own mask.
        network: [u8; 16],
        /// The mask length.
        bits: u8,
        /// The whole address.
        address: [u8; 16],
    },
}

/// A float ordered and compared as PostgreSQL's `float8_cmp` does (MySQL stores neither NaN
/// nor -0).
#[derive(Debug, Clone, Copy)]
pub struct Float(pub f64);

impl Float {
    fn canonical(self) -> f64 {
        if self.0.is_nan() {
            f64::NAN
        } else if self.0 == 0.0 {
            0.0
        } else {
            self.0
        }
    }
}

impl PartialEq for Float {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Float {}

impl PartialOrd for Float {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Float {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.canonical().total_cmp(&other.canonical())
    }
}
