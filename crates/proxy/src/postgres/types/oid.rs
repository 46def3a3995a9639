//! Type OIDs from PostgreSQL's `pg_type`, the ones Keyshard speaks.

pub const BOOL: u32 = 16;
pub const BYTEA: u32 = 17;
pub const NAME: u32 = 19;
pub const INT8: u32 = 20;
pub const INT2: u32 = 21;
pub const INT4: u32 = 23;
pub const TEXT: u32 = 25;
pub const OID: u32 = 26;
pub const FLOAT4: u32 = 700;
pub const FLOAT8: u32 = 701;
pub const UNKNOWN: u32 = 705;
pub const MONEY: u32 = 790;
pub const BPCHAR: u32 = 1042;
pub const VARCHAR: u32 = 1043;
pub const NUMERIC: u32 = 1700;
pub const TEXT_ARRAY: u32 = 1009;
