//! The router's tests, one binary; `memory.rs` stays its own, since its counting allocator
//! must see one test at a time.

mod algorithms;
mod behaviour;
mod common;
mod properties;
mod queries;
mod shapes;
mod shardingsphere_cases;
