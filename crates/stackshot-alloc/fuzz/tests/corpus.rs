//! The fuzz target's logic as a plain test, without libFuzzer: every input of the committed corpus (`seeds/`,
//! inputs the fuzzer kept for the code they reach) decoded as the fuzz target decodes its bytes and run against
//! the models. `make test` runs this; `make test-long` fuzzes from the same seeds (`tools/fuzz`).
use arbitrary::{Arbitrary, Unstructured};
use stackshot_alloc_fuzz::{Input, run};
use std::path::Path;

#[test]
fn every_seed_of_the_corpus_matches_the_models() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds");
    let mut seeds: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .collect();
    seeds.sort();
    assert!(seeds.len() >= 20, "only {} seeds in {}", seeds.len(), dir.display());
    let mut failed = Vec::new();
    for seed in &seeds {
        let bytes = std::fs::read(seed).unwrap();
        // As `fuzz_target!` does with a typed input: the whole of the bytes, the last field taking the rest.
        let input = Input::arbitrary_take_rest(Unstructured::new(&bytes))
            .unwrap_or_else(|e| panic!("{} does not decode: {e}", seed.display()));
        if std::panic::catch_unwind(|| run(input)).is_err() {
            failed.push(seed.file_name().unwrap().to_string_lossy().into_owned());
        }
    }
    assert!(failed.is_empty(), "{} of {} seeds differ from the models: {failed:?}", failed.len(), seeds.len());
}
