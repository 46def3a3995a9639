//! The one `t_order` fixture every crate's tests share: the embedded default configuration's
//! rule (`t_order` over `ds_${0..1}.t_order_${0..1}`, `user_id % 2` picks the data source,
//! `order_id % 2` the table, SNOWFLAKE keys) over other data sources. Included by path (as
//! `ports.rs` is) where a crate's tests cannot reach the root's.

/// The default configuration with its two data sources at `url_0` and `url_1` (as they are
/// written in YAML: a URL ending in `:` must be quoted), its listener
/// on a free port, and without its `mode:`, so the repository is the first data source
/// unless a test prepends its own.
pub fn yaml(url_0: &str, url_1: &str) -> String {
    let default = keyshard_config::embedded_default();
    let default = match (default.find("\nmode:\n"), default.find("\nserver:\n")) {
        (Some(start), Some(end)) if start < end => {
            format!("{}{}", &default[..start], &default[end..])
        }
        _ => default.to_owned(),
    };
    default
        .replace("sqlite://../data/ds_0.db", url_0)
        .replace("sqlite://../data/ds_1.db", url_1)
        .replace("listen: 127.0.0.1:3307", "listen: 127.0.0.1:0")
}
