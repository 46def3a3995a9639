//! `${NAME}` placeholders in secrets and URLs, so passwords need not live in the file.

use crate::error::Problem;

/// Replaces each `${NAME}` in `text` with the variable's value from `lookup`. A `$` not followed
/// by `{` is kept as is (passwords may contain one).
pub(crate) fn substitute(
    text: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<String, Problem> {
    if !text.contains("${") {
        return Ok(text.to_owned());
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find("${") {
        out.push_str(&rest[..open]);
        let after = &rest[open + 2..];
        let close = after.find('}').ok_or(Problem::UnclosedPlaceholder)?;
        let name = after[..close].trim();
        let value = lookup(name).ok_or_else(|| Problem::UnsetEnvVar(name.to_owned()))?;
        out.push_str(&value);
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// [`substitute`] against the process environment.
pub(crate) fn substitute_env(text: &str) -> Result<String, Problem> {
    substitute(text, &|name| std::env::var(name).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup(name: &str) -> Option<String> {
        (name == "PW").then(|| "s3cret".to_owned())
    }

    #[test]
    fn replaces_placeholders_and_keeps_lone_dollars() {
        assert_eq!(
            substitute("a${PW}b${ PW }", &lookup).unwrap(),
            "as3cretbs3cret"
        );
        assert_eq!(substitute("pa$$word", &lookup).unwrap(), "pa$$word");
    }

    #[test]
    fn names_unset_variables() {
        assert_eq!(
            substitute("${NOPE}", &lookup).unwrap_err(),
            Problem::UnsetEnvVar("NOPE".into())
        );
        assert_eq!(
            substitute("x${PW", &lookup).unwrap_err().to_string(),
            "unclosed '${' placeholder"
        );
    }
}
