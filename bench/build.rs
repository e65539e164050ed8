//! Links the benchmark ROM with the project's linker script, and turns the trace files in traces/ (their format
//! is in traces/README.md) into Rust for `traces.rs`, checked: ids in range, a free only of a live id.
use std::fmt::Write;
use std::path::Path;

/// The traces, in the report's order.
const FILES: [&str; 5] = ["ai-scratch.txt", "bullet-hell.txt", "agb-vec.txt", "random-mix.txt", "adversarial.txt"];
/// Ids are below this (traces/README.md).
const MAX_LIVE: usize = 128;

fn main() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let script = here.join("../linker.ld");
    println!("cargo:rustc-link-arg=-T{}", script.display());
    println!("cargo:rerun-if-changed={}", script.display());

    let mut out = format!("pub const MAX_LIVE: usize = {MAX_LIVE};\npub const ALL: [Trace; {}] = [\n", FILES.len());
    for file in FILES {
        let path = here.join("traces").join(file);
        println!("cargo:rerun-if-changed={}", path.display());
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        out += &trace(&text).unwrap_or_else(|e| panic!("{}:{e}", path.display()));
    }
    out += "];\n";
    std::fs::write(Path::new(&std::env::var("OUT_DIR").unwrap()).join("traces.rs"), out).unwrap();
}

/// One `Trace { .. }` expression from a trace file, or `LINE: what is wrong`.
fn trace(text: &str) -> Result<String, String> {
    let (mut name, mut what) = (None, None);
    let mut live = [false; MAX_LIVE];
    let mut ops = String::new();
    for (n, line) in text.lines().enumerate() {
        let fail = |e: &str| format!("{}: {e}: `{line}`", n + 1);
        if let Some(comment) = line.strip_prefix('#') {
            if let Some(v) = comment.trim().strip_prefix("name:") {
                name = Some(v.trim().to_string());
            } else if let Some(v) = comment.trim().strip_prefix("what:") {
                what = Some(v.trim().to_string());
            }
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let number = |s: &str| s.parse::<usize>().map_err(|_| fail("not a number"));
        match fields.as_slice() {
            [] => {}
            ["a", id, size, align] => {
                let (id, size, align) = (number(id)?, number(size)?, number(align)?);
                if id >= MAX_LIVE || live[id] {
                    return Err(fail("the id is out of range or already live"));
                }
                if size == 0 || size > usize::from(u16::MAX) || !align.is_power_of_two() || align > 64 {
                    return Err(fail("size must be 1..=65535, align a power of two up to 64"));
                }
                live[id] = true;
                writeln!(ops, "Op::Alloc {{ id: {id}, size: {size}, align: {align} }},").unwrap();
            }
            ["f", id] => {
                let id = number(id)?;
                if id >= MAX_LIVE || !live[id] {
                    return Err(fail("the id is not live"));
                }
                live[id] = false;
                writeln!(ops, "Op::Free {{ id: {id} }},").unwrap();
            }
            _ => return Err(fail("expected `a ID SIZE ALIGN` or `f ID`")),
        }
    }
    let (Some(name), Some(what)) = (name, what) else { return Err("0: no `# name:` or `# what:` line".into()) };
    Ok(format!("Trace {{ name: {name:?}, what: {what:?}, ops: &[\n{ops}] }},\n"))
}
