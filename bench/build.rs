//! Links the benchmark ROM with the project's linker script, and turns the recorded AI trace
//! (traces/ai-scratch.txt, written by `make record-trace`) into Rust for `traces.rs`.
use std::fmt::Write;
use std::path::Path;

fn main() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let script = here.join("../linker.ld");
    println!("cargo:rustc-link-arg=-T{}", script.display());
    println!("cargo:rerun-if-changed={}", script.display());

    let trace = here.join("traces/ai-scratch.txt");
    println!("cargo:rerun-if-changed={}", trace.display());
    let text = std::fs::read_to_string(&trace).unwrap_or_else(|e| panic!("{}: {e} (make record-trace)", trace.display()));
    let mut ops = String::from("&[\n");
    for (n, line) in text.lines().enumerate() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        match fields.as_slice() {
            [] => {}
            [comment, ..] if comment.starts_with('#') => {}
            ["a", id, size, align] => writeln!(ops, "Op::Alloc {{ id: {id}, size: {size}, align: {align} }},").unwrap(),
            ["f", id] => writeln!(ops, "Op::Free {{ id: {id} }},").unwrap(),
            _ => panic!("{}:{}: expected `a ID SIZE ALIGN` or `f ID`: `{line}`", trace.display(), n + 1),
        }
    }
    ops.push(']');
    let out = Path::new(&std::env::var("OUT_DIR").unwrap()).join("ai_trace.rs");
    std::fs::write(out, ops).unwrap();
}
