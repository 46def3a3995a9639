use std::collections::HashMap;

/// What the router needs to know about a table's columns: for an INSERT without a column list,
/// the key is present exactly when each row has as many values as the table has visible columns.
pub trait Metadata {
    /// The logic table's visible columns in ordinal order (invisible columns left out), or
    /// `None` when they are not known.
    fn visible_columns(&self, logic_table: &str) -> Option<Vec<String>>;
}

/// No metadata at all: every INSERT must name its columns.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoMetadata;

impl Metadata for NoMetadata {
    fn visible_columns(&self, _logic_table: &str) -> Option<Vec<String>> {
        None
    }
}

/// Columns by lower-cased logic table name.
impl Metadata for HashMap<String, Vec<String>> {
    fn visible_columns(&self, logic_table: &str) -> Option<Vec<String>> {
        self.get(&logic_table.to_ascii_lowercase()).cloned()
    }
}
