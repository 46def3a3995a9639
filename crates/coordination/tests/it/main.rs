//! The coordination repositories (JDBC on SQLite, MariaDB and PostgreSQL; ZooKeeper) and the
//! keeper, one test binary.

mod jdbc;
mod keeper;
mod zookeeper;
