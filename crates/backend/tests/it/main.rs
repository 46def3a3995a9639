//! The backend against SQLite and the database servers, one test binary.

mod common;
mod servers;
mod sqlite;
