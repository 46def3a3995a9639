//! PostgreSQL's text form of arrays (`{1,2,3}`, `{{"a b",NULL},{c,d}}`): read for array
//! literals the router routes by (`order_id = ANY('{1,2}')`) and for array parameters sent as
//! text, written for array results and literals. One reader and one writer, so every layer
//! quotes alike.

use std::fmt::Write as _;

use crate::value::{Array, Dim, Value};

/// The most dimensions an array has: PostgreSQL's MAXDIM, which also bounds the reader's
/// recursion over nested braces.
pub const MAX_DIMS: usize = 6;

/// Why a text is not an array literal, worded as PostgreSQL words it after
/// "malformed array literal".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArrayTextError {
    /// The text breaks the array syntax.
    #[error("malformed array literal: \"{text}\": {detail}")]
    Malformed {
        /// The text (cut to a readable length).
        text: String,
        /// What is wrong.
        detail: &'static str,
    },
    /// More nesting than [`MAX_DIMS`].
    #[error("number of array dimensions exceeds the maximum allowed ({MAX_DIMS})")]
    TooDeep,
}

/// An array literal read from text: each element as its unquoted text, `None` for NULL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArrayText {
    /// Each dimension's length and lower bound, outermost first; none when empty.
    pub dims: Vec<Dim>,
    /// The elements in row-major order.
    pub elements: Vec<Option<String>>,
}

/// Reads PostgreSQL's text form of an array, with dimension decorations (`[0:1]={7,8}`, as
/// PostgreSQL writes an array whose lower bound is not 1) or without.
pub fn parse_text(text: &str) -> Result<ArrayText, ArrayTextError> {
    let malformed = |detail| ArrayTextError::Malformed {
        text: text.chars().take(64).collect(),
        detail,
    };
    let (bounds, trimmed) = decorations(text.trim_start()).map_err(|e| match e {
        Problem::Syntax(detail) => malformed(detail),
        Problem::TooDeep => ArrayTextError::TooDeep,
    })?;
    if !trimmed.starts_with('{') {
        return Err(malformed(
            "Array value must start with \"{\" or dimension information.",
        ));
    }
    let mut reader = Reader {
        bytes: trimmed.as_bytes(),
        at: 0,
        elements: Vec::new(),
        lens: [None; MAX_DIMS],
        leaf_depth: None,
    };
    reader.array(0).map_err(|e| match e {
        Problem::Syntax(detail) => malformed(detail),
        Problem::TooDeep => ArrayTextError::TooDeep,
    })?;
    reader.skip_space();
    if reader.at != reader.bytes.len() {
        return Err(malformed("Junk after closing right brace."));
    }
    let mut dims: Vec<Dim> = match reader.leaf_depth {
        Some(leaf) if !reader.elements.is_empty() => reader.lens[..=leaf]
            .iter()
            .map(|len| Dim {
                len: len.unwrap_or(0),
                lower: 1,
            })
            .collect(),
        _ => Vec::new(),
    };
    if !bounds.is_empty() {
        let fits = bounds.len() == dims.len()
            && bounds.iter().zip(&dims).all(|((lower, upper), dim)| {
                i64::from(*upper) - i64::from(*lower) + 1 == dim.len as i64
            });
        if !fits {
            return Err(malformed(
                "Specified array dimensions do not match array contents.",
            ));
        }
        for (dim, (lower, _)) in dims.iter_mut().zip(&bounds) {
            dim.lower = *lower;
        }
    }
    Ok(ArrayText {
        dims,
        elements: reader.elements,
    })
}

enum Problem {
    Syntax(&'static str),
    TooDeep,
}

/// Each decorated dimension's lower and upper bound.
type Bounds = Vec<(i32, i32)>;

/// The dimension decorations before an array's braces (`[0:1][1:2]=`; `[3]` is `[1:3]`):
/// each dimension's bounds, and the text after the `=`. None without them.
fn decorations(text: &str) -> Result<(Bounds, &str), Problem> {
    let mut bounds = Vec::new();
    let mut rest = text;
    while let Some(after) = rest.strip_prefix('[') {
        if bounds.len() >= MAX_DIMS {
            return Err(Problem::TooDeep);
        }
        let (inside, after) = after
            .split_once(']')
            .ok_or(Problem::Syntax("Missing \"]\" in array dimensions."))?;
        let bound = |s: &str| {
            s.trim()
                .parse::<i32>()
                .map_err(|_| Problem::Syntax("Malformed array dimensions."))
        };
        let (lower, upper) = match inside.split_once(':') {
            Some((lower, upper)) => (bound(lower)?, bound(upper)?),
            None => (1, bound(inside)?),
        };
        if upper < lower {
            return Err(Problem::Syntax(
                "Upper bound cannot be less than lower bound.",
            ));
        }
        bounds.push((lower, upper));
        rest = after.trim_start();
    }
    if bounds.is_empty() {
        return Ok((bounds, text));
    }
    let body = rest
        .strip_prefix('=')
        .ok_or(Problem::Syntax("Missing \"=\" after array dimensions."))?;
    Ok((bounds, body.trim_start()))
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    elements: Vec<Option<String>>,
    /// The length of each dimension seen so far; every sub-array must match it.
    lens: [Option<usize>; MAX_DIMS],
    /// The depth of the innermost braces, which hold the elements: the same in every branch.
    leaf_depth: Option<usize>,
}

impl Reader<'_> {
    fn skip_space(&mut self) {
        while self.bytes.get(self.at).is_some_and(u8::is_ascii_whitespace) {
            self.at += 1;
        }
    }

    /// One `{…}` at nesting `depth`, the reader on its `{`.
    fn array(&mut self, depth: usize) -> Result<(), Problem> {
        if depth >= MAX_DIMS {
            return Err(Problem::TooDeep);
        }
        self.at += 1; // the `{`
        self.skip_space();
        let mut count = 0usize;
        let mut nested = None;
        if self.bytes.get(self.at) == Some(&b'}') {
            self.at += 1;
            // `{}` is the empty array only at the top; `{{},{}}` has no shape PostgreSQL takes.
            return if depth == 0 {
                Ok(())
            } else {
                Err(Problem::Syntax("Unexpected \"}\" character."))
            };
        }
        loop {
            self.skip_space();
            let is_array = self.bytes.get(self.at) == Some(&b'{');
            if *nested.get_or_insert(is_array) != is_array {
                return Err(Problem::Syntax(
                    "Multidimensional arrays must have sub-arrays with matching dimensions.",
                ));
            }
            if is_array {
                self.array(depth + 1)?;
            } else {
                let element = self.element()?;
                self.elements.push(element);
            }
            count += 1;
            self.skip_space();
            match self.bytes.get(self.at) {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    break;
                }
                _ => return Err(Problem::Syntax("Unexpected end of input.")),
            }
        }
        let mismatch = Problem::Syntax(
            "Multidimensional arrays must have sub-arrays with matching dimensions.",
        );
        if nested == Some(false) && *self.leaf_depth.get_or_insert(depth) != depth {
            return Err(mismatch);
        }
        match self.lens.get_mut(depth) {
            Some(Some(len)) if *len != count => Err(mismatch),
            Some(slot) => {
                *slot = Some(count);
                Ok(())
            }
            None => Err(Problem::TooDeep),
        }
    }

    /// One element, quoted or not; an unquoted `NULL` is SQL NULL.
    /// A backslash keeps the byte after it as it is.
    fn take_escaped(&mut self, out: &mut Vec<u8>) -> Result<(), Problem> {
        let escaped = self
            .bytes
            .get(self.at + 1)
            .ok_or(Problem::Syntax("Unexpected end of input."))?;
        out.push(*escaped);
        self.at += 2;
        Ok(())
    }

    fn element(&mut self) -> Result<Option<String>, Problem> {
        let mut out = Vec::new();
        if self.bytes.get(self.at) == Some(&b'"') {
            self.at += 1;
            loop {
                match self.bytes.get(self.at) {
                    None => return Err(Problem::Syntax("Unexpected end of input.")),
                    Some(b'"') => {
                        self.at += 1;
                        break;
                    }
                    Some(b'\\') => self.take_escaped(&mut out)?,
                    Some(&b) => {
                        out.push(b);
                        self.at += 1;
                    }
                }
            }
            return String::from_utf8(out)
                .map(Some)
                .map_err(|_| Problem::Syntax("not valid UTF-8"));
        }
        // Unquoted: up to the delimiter or brace, trailing white space dropped; a backslash
        // keeps the next character (and keeps it from being trimmed or read as NULL).
        let mut escaped_len = 0;
        let mut any_escape = false;
        loop {
            match self.bytes.get(self.at) {
                None => return Err(Problem::Syntax("Unexpected end of input.")),
                Some(b',' | b'}') => break,
                Some(b'{' | b'"') => return Err(Problem::Syntax("Unexpected character.")),
                Some(b'\\') => {
                    self.take_escaped(&mut out)?;
                    escaped_len = out.len();
                    any_escape = true;
                }
                Some(&b) => {
                    out.push(b);
                    self.at += 1;
                }
            }
        }
        while out.len() > escaped_len && out.last().is_some_and(u8::is_ascii_whitespace) {
            out.pop();
        }
        if out.is_empty() {
            return Err(Problem::Syntax("Unexpected \",\" character."));
        }
        if !any_escape && out.eq_ignore_ascii_case(b"null") {
            return Ok(None);
        }
        String::from_utf8(out)
            .map(Some)
            .map_err(|_| Problem::Syntax("not valid UTF-8"))
    }
}

/// Writes `array` in PostgreSQL's text form, each non-NULL element as `element_text` spells it,
/// quoted where the reader needs it; lower bounds other than 1 as a dimension decoration.
pub fn write_text(array: &Array, mut element_text: impl FnMut(&Value) -> String) -> String {
    let mut out = String::new();
    if array.dims.iter().any(|d| d.lower != 1) {
        for dim in &array.dims {
            let upper = i64::from(dim.lower) + dim.len as i64 - 1;
            let _ = write!(out, "[{}:{upper}]", dim.lower);
        }
        out.push('=');
    }
    if array.dims.is_empty() || array.elements.is_empty() {
        out.push_str("{}");
        return out;
    }
    let mut elements = array.elements.iter();
    write_level(&mut out, &array.dims, &mut elements, &mut element_text);
    out
}

fn write_level<'a>(
    out: &mut String,
    dims: &[Dim],
    elements: &mut impl Iterator<Item = &'a Value>,
    element_text: &mut impl FnMut(&Value) -> String,
) {
    let Some((dim, inner)) = dims.split_first() else {
        return;
    };
    out.push('{');
    for i in 0..dim.len {
        if i > 0 {
            out.push(',');
        }
        if inner.is_empty() {
            match elements.next() {
                None | Some(Value::Null) => out.push_str("NULL"),
                Some(value) => push_quoted(out, &element_text(value)),
            }
        } else {
            write_level(out, inner, elements, element_text);
        }
    }
    out.push('}');
}

fn push_quoted(out: &mut String, text: &str) {
    let needs_quotes = text.is_empty()
        || text.eq_ignore_ascii_case("null")
        || text
            .chars()
            .any(|c| matches!(c, '{' | '}' | ',' | '"' | '\\') || c.is_ascii_whitespace());
    if !needs_quotes {
        out.push_str(text);
        return;
    }
    out.push('"');
    for c in text.chars() {
        if matches!(c, '"' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
}

/// The text of an element as the router writes it into SQL (literals, MySQL results).
pub fn plain_element_text(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::Int(v) => v.to_string(),
        Value::UInt(v) => v.to_string(),
        Value::Double(v) => v.to_string(),
        Value::Bool(b) => if *b { "t" } else { "f" }.to_owned(),
        Value::Text(s) => s.clone(),
        Value::Bytes(b) => {
            let mut out = String::from("\\x");
            for byte in b {
                let _ = write!(out, "{byte:02x}");
            }
            out
        }
        Value::Array(inner) => write_text(inner, plain_element_text),
        Value::Wire(wire) => wire.text().unwrap_or_default().to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn elements(text: &str) -> Vec<Option<String>> {
        parse_text(text).unwrap().elements
    }

    fn some(items: &[&str]) -> Vec<Option<String>> {
        items.iter().map(|s| Some((*s).to_owned())).collect()
    }

    #[test]
    fn reads_plain_quoted_null_and_nested() {
        assert_eq!(elements("{1,2,3}"), some(&["1", "2", "3"]));
        assert_eq!(elements(" { 1 , 2 } "), some(&["1", "2"]));
        assert_eq!(
            elements(r#"{"a b","x\"y",NULL,"NULL",c\,d}"#),
            vec![
                Some("a b".into()),
                Some("x\"y".into()),
                None,
                Some("NULL".into()),
                Some("c,d".into())
            ]
        );
        let nested = parse_text("{{1,2},{3,4},{5,6}}").unwrap();
        assert_eq!(
            nested.dims,
            [Dim { len: 3, lower: 1 }, Dim { len: 2, lower: 1 }]
        );
        assert_eq!(nested.elements.len(), 6);
        let empty = parse_text("{}").unwrap();
        assert!(empty.dims.is_empty() && empty.elements.is_empty());
    }

    #[test]
    fn refuses_malformed_text() {
        for bad in [
            "",
            "1,2",
            "{1,2",
            "{1,,2}",
            "{1,2}x",
            "{{1},{2,3}}",
            "{{1},2}",
            "{1,{2}}",
            "{\"a}",
            "[0:2]={1,2}",
            "[1:2][1:1]={1,2}",
            "[2:1]={}",
            "[0:1]{1,2}",
            "[0:1={1,2}",
            "[a:1]={1,2}",
            "{{}}",
            "{1\\",
        ] {
            assert!(parse_text(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_text("{{{{{{{1}}}}}}}"), Err(ArrayTextError::TooDeep));
        assert!(parse_text("{{{{{{1}}}}}}").is_ok());
    }

    #[test]
    fn writes_what_it_reads() {
        let array = Array {
            element: 25,
            dims: vec![Dim { len: 2, lower: 1 }, Dim { len: 2, lower: 1 }],
            elements: vec![
                Value::Text("a b".into()),
                Value::Null,
                Value::Text("q\"\\".into()),
                Value::Text("null".into()),
            ],
        };
        let text = write_text(&array, plain_element_text);
        assert_eq!(text, r#"{{"a b",NULL},{"q\"\\","null"}}"#);
        let back = parse_text(&text).unwrap();
        assert_eq!(back.dims, array.dims);
        assert_eq!(
            back.elements,
            vec![
                Some("a b".into()),
                None,
                Some("q\"\\".into()),
                Some("null".into())
            ]
        );
        assert_eq!(
            write_text(&Array::new(20, Vec::new()), plain_element_text),
            "{}"
        );
        let shifted = Array {
            element: 23,
            dims: vec![Dim { len: 2, lower: 0 }],
            elements: vec![Value::Int(1), Value::Int(2)],
        };
        assert_eq!(write_text(&shifted, plain_element_text), "[0:1]={1,2}");
        let back = parse_text("[0:1]={1,2}").unwrap();
        assert_eq!(back.dims, shifted.dims);
        let nested = parse_text(" [-1:0] [3] = {{1,2,3},{4,5,6}}").unwrap();
        assert_eq!(
            nested.dims,
            [Dim { len: 2, lower: -1 }, Dim { len: 3, lower: 1 }]
        );
    }
}
