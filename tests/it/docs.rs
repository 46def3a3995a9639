//! The README and the book hold together: the commands they show run as shown, every page is
//! in the table of contents, every relative link resolves.

use std::path::PathBuf;

use crate::common::keyshard;

/// The `sh` blocks of a Markdown file: their lines that start with `keyshard `, comments cut.
fn documented_commands(file: &str) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap();
    let mut in_sh = false;
    let mut commands = Vec::new();
    for line in text.lines() {
        if line.starts_with("```") {
            in_sh = line == "```sh";
            continue;
        }
        if in_sh && line.starts_with("keyshard ") {
            let command = line.split(" # ").next().unwrap_or(line).trim_end();
            commands.push(command.to_string());
        }
    }
    commands
}

/// Splits a command line as a shell would for the quoting the docs use: words, and text
/// inside single quotes as one word.
fn words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let (mut quoted, mut started) = (false, false);
    for c in line.chars() {
        match c {
            '\'' => (quoted, started) = (!quoted, true),
            ' ' if !quoted => {
                if started {
                    words.push(std::mem::take(&mut word));
                }
                started = false;
            }
            c => (word, started) = (word + c.encode_utf8(&mut [0; 4]), true),
        }
    }
    if started {
        words.push(word);
    }
    words
}

/// Every command the README and the book show with nothing left to fill in runs as shown
/// (from the workspace root, on the default configuration) and prints something.
#[test]
fn the_documented_commands_run() {
    let mut ran = 0;
    for file in ["README.md", "docs/src/commands.md"] {
        for line in documented_commands(file) {
            // Placeholders ([options], FILE, NAME, …) are for the reader to fill in.
            if line.contains(['[', '…']) || line.contains("FILE") || line.contains("NAME") {
                continue;
            }
            let args = words(&line);
            let output = keyshard(&args.iter().skip(1).map(String::as_str).collect::<Vec<_>>());
            assert!(
                output.status.success() && !output.stdout.is_empty(),
                "{file}: `{line}` failed: {}",
                String::from_utf8_lossy(&output.stderr)
            );
            ran += 1;
        }
    }
    assert!(ran >= 4, "only {ran} documented commands ran");
}

/// The book's pages are all in its table of contents, and every relative link in the README
/// and the book names a file that exists.
#[test]
fn the_book_and_its_links_hold_together() {
    let summary = std::fs::read_to_string("docs/src/SUMMARY.md").unwrap();
    let mut files = vec![PathBuf::from("README.md")];
    for entry in std::fs::read_dir("docs/src").unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.ends_with(".md") && name != "SUMMARY.md" {
            assert!(
                summary.contains(&format!("({name})")),
                "{name} is not in SUMMARY.md"
            );
        }
        files.push(path);
    }
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let mut in_code = false;
        for line in text.lines() {
            if line.starts_with("```") {
                in_code = !in_code;
            }
            if in_code {
                continue;
            }
            for link in line.split("](").skip(1) {
                let target = link.split(')').next().unwrap_or("");
                if target.starts_with("http") || target.starts_with('#') {
                    continue;
                }
                let path = target.split('#').next().unwrap_or(target);
                let resolved = file.parent().unwrap().join(path);
                assert!(
                    resolved.exists(),
                    "{}: broken link {target}",
                    file.display()
                );
            }
        }
    }
}
