//! The `keyshard` binary run as users run it (commands, fleets, memory bounds, XA crashes),
//! one test binary.

mod cli;
mod common;
mod docs;
mod fleet;
mod memory;
mod xa;
