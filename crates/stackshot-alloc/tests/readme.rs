//! The README shows the gba quick start (`crates/examples/gba-quickstart` in this repository) whole: every file
//! of it, as it is, so that a game copied from the README is the one the repository builds and runs in the
//! emulator. Reads the repository beside the crate, so it is left out of the packaged crate.
use std::path::Path;

/// The files the README shows whole: each fenced block right after a line `<!-- file: path -->`, by that path
/// (from the repository's root). A block ends at the first line that is only a fence: the files shown hold none.
fn shown_files(readme: &str) -> Vec<(&str, String)> {
    let mut shown = Vec::new();
    let mut lines = readme.lines();
    while let Some(line) = lines.next() {
        let Some(path) = line.strip_prefix("<!-- file: ").and_then(|rest| rest.strip_suffix(" -->")) else { continue };
        let fence = lines.next().unwrap_or_default();
        assert!(fence.starts_with("```"), "`{line}` is not followed by a fenced block but by `{fence}`");
        let body = lines.by_ref().take_while(|l| *l != "```").map(|l| format!("{l}\n")).collect();
        shown.push((path, body));
    }
    shown
}

/// The files of the folder `dir` and below (paths from `root`), but for what building it adds: `target/`, the
/// lock file and the linker script `make examples` copies in.
fn example_files(root: &Path, dir: &str) -> Vec<String> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(root.join(dir)).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let path = format!("{dir}{name}");
        if root.join(&path).is_dir() {
            if name != "target" {
                files.extend(example_files(root, &format!("{path}/")));
            }
        } else if name != "Cargo.lock" && name != "mono_boot.ld" {
            files.push(path);
        }
    }
    files
}

#[test]
#[cfg_attr(miri, ignore = "reads files, which Miri's isolation refuses; no unsafe code")]
fn the_readme_shows_the_gba_quickstart_as_it_is() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("crates/stackshot-alloc/README.md")).unwrap();
    let shown = shown_files(&readme);
    let mut paths: Vec<_> = shown.iter().map(|(path, _)| path.to_string()).collect();
    let mut files = example_files(&root, "crates/examples/gba-quickstart/");
    paths.sort();
    files.sort();
    assert_eq!(paths, files, "the files the README shows, and the example's");
    for (path, body) in shown {
        let file = std::fs::read_to_string(root.join(path)).unwrap();
        if body != file {
            let differs = body.lines().zip(file.lines()).position(|(a, b)| a != b);
            let n = differs.unwrap_or(body.lines().count().min(file.lines().count()));
            let at = |text: &str| text.lines().nth(n).unwrap_or("(the end)").to_string();
            panic!("{path} line {}: the README shows\n{}\nthe file has\n{}", n + 1, at(&body), at(&file));
        }
    }
}

#[test]
fn shown_files_reads_each_marked_block() {
    let readme = "<!-- note -->\n<!-- file: a.toml -->\n```toml\nx = 1\n\ny = 2\n```\n<!-- file: b -->\n```\n```\n```rust\nno\n```\n";
    assert_eq!(shown_files(readme), [("a.toml", "x = 1\n\ny = 2\n".to_string()), ("b", String::new())]);
}
