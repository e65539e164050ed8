//! The quick-start ROMs of `crates/examples/`, as `make examples` built them: each runs a pool
//! and the heap on its runtime and prints what they did; this checks every figure, and that the crate README
//! shows the gba one as it is.
mod common;

use std::path::Path;

/// IWRAM, where both examples put their pool and their heap.
const IWRAM: std::ops::Range<u64> = 0x0300_0000..0x0300_8000;

fn iwram_address(text: &str) -> u64 {
    let address = u64::from_str_radix(text.strip_prefix("0x").unwrap_or(text), 16).unwrap();
    assert!(IWRAM.contains(&address), "{text} is not in IWRAM");
    address
}

/// What both examples compute: five bullets at y = 0, 10 .. 40 move up 15, the two above the screen are freed
/// and the first freed again; a vector of the squares 1..=10 and a boxed 42 come from the heap, then go back.
fn check_quickstart(rom: &Path) {
    let lines = common::log_of(rom);
    assert!(!lines.iter().any(|l| l.contains("panic")), "the ROM panicked:\n{}", lines.join("\n"));

    let pool = common::line_like(&lines, "pool: {} live, y sum {}, second free {}, slots at {}");
    assert_eq!(pool[..3], ["3", "45", "Err(DoubleFree)"], "live bullets, their y sum, the double free");
    iwram_address(pool[3]);

    let heap = common::line_like(&lines, "heap: vec sum {} at {}, box {} at {}, {} of {} bytes used");
    assert_eq!([heap[0], heap[2]], ["385", "42"], "the vector's sum and the box");
    let (vec, boxed) = (iwram_address(heap[1]), iwram_address(heap[3]));
    assert!(boxed + 4 <= vec || vec + 40 <= boxed, "the vector at {vec:#x} and the box at {boxed:#x} overlap");
    let (used, capacity): (u32, u32) = (heap[4].parse().unwrap(), heap[5].parse().unwrap());
    assert!((40 + 4..capacity).contains(&used), "{used} of {capacity} bytes used for 10 u32s and one");

    assert_eq!(common::line_like(&lines, "heap: {} bytes used after drop"), ["0"], "the heap is empty again");
}

#[test]
fn gba_quickstart_prints_its_pool_and_heap_results() {
    check_quickstart(&common::gba_quickstart());
}

#[test]
fn agb_quickstart_prints_its_pool_and_heap_results() {
    check_quickstart(&common::agb_quickstart());
}

/// The files the crate README shows whole: each fenced block right after a line `<!-- file: path -->`, by that
/// path (from the repository's root). A block ends at the first line that is only a fence: the files shown hold
/// none.
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

/// The crate README's gba quick start is the example that `make examples` builds and the test above runs: every
/// file of it, as it is.
#[test]
fn the_crate_readme_shows_the_gba_quickstart_as_it_is() {
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

#[test]
fn capture_takes_the_fields_between_the_literals() {
    assert_eq!(common::capture("a 1 b 22 c", "a {} b {} c"), Some(vec!["1", "22"]));
    assert_eq!(common::capture("a 1 b 22", "a {} b {}"), Some(vec!["1", "22"]));
    assert_eq!(common::capture("a 1 b 22 c!", "a {} b {} c"), None);
    assert_eq!(common::capture("x 1", "a {}"), None);
}
