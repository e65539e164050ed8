//! Runs an on-target test ROM to the end, reporting each test like `cargo test` does.

use crate::emulator::{Emulator, Level};
use crate::protocol::{MAILBOX, MAILBOX_MAGIC, Message};
use std::path::Path;
use std::time::Instant;

/// Limits that turn a hung ROM into a failed test instead of a hung run.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Frames one test may take (a frame is 1/60 s of GBA time).
    pub frames_per_test: u64,
    /// Frames the ROM may take to announce its tests.
    pub frames_to_start: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { frames_per_test: 3_600, frames_to_start: 60 }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Passed { cycles: u64 },
    Failed { reason: String },
}

#[derive(Clone, Debug)]
pub struct TestResult {
    pub name: String,
    pub outcome: Outcome,
}

/// What one ROM run ended with.
enum RunEnd {
    Done,
    /// Test `index` failed and stopped the CPU; the run resumes after it.
    Stopped {
        index: usize,
    },
}

/// Runs every test of the ROM at `path`, printing progress; `Err` if the ROM is not a test ROM or cannot load.
pub fn run_tests(path: &Path, limits: Limits) -> Result<Vec<TestResult>, String> {
    let started = Instant::now();
    let mut results: Vec<Option<TestResult>> = Vec::new();
    let mut next = 0;
    let mut announced = false;
    loop {
        let mut emu = Emulator::open(path)?;
        emu.write32(MAILBOX, MAILBOX_MAGIC);
        emu.write32(MAILBOX + 4, next as u32);
        match run_once(&mut emu, limits, &mut results, &mut announced)? {
            RunEnd::Done => break,
            RunEnd::Stopped { index } => next = index + 1,
        }
        if next >= results.len() {
            break;
        }
    }
    let results: Vec<TestResult> = results
        .into_iter()
        .enumerate()
        .map(|(i, r)| {
            r.unwrap_or(TestResult { name: format!("#{i}"), outcome: Outcome::Failed { reason: "never ran".into() } })
        })
        .collect();
    summarise(&results, started.elapsed().as_secs_f64());
    Ok(results)
}

fn run_once(
    emu: &mut Emulator,
    limits: Limits,
    results: &mut Vec<Option<TestResult>>,
    announced: &mut bool,
) -> Result<RunEnd, String> {
    let mut current: Option<(usize, String, u64)> = None;
    let mut seen_count = false;
    loop {
        emu.run_frame();
        let log = emu.take_log();
        for (n, line) in log.iter().enumerate() {
            match Message::parse(&line.text) {
                Message::Tests(n) => {
                    if !*announced {
                        println!("\nrunning {n} tests");
                        *announced = true;
                    }
                    results.resize(n.max(results.len()), None);
                    seen_count = true;
                }
                Message::Run(i, name) => current = Some((i, name.to_string(), emu.frames())),
                Message::Ok(i, cycles) => {
                    let name = current.take().map(|c| c.1).unwrap_or_else(|| format!("#{i}"));
                    println!("test {name} ... ok ({cycles} cycles)");
                    record(results, i, TestResult { name, outcome: Outcome::Passed { cycles } });
                }
                Message::Done => return Ok(RunEnd::Done),
                Message::Panic(first) => {
                    // A multi-line message (assert_eq!'s left/right) arrives as the lines that follow.
                    let rest: Vec<&str> = log[n + 1..].iter().map(|l| l.text.as_str()).collect();
                    let message = [first].into_iter().chain(rest).collect::<Vec<_>>().join("\n    ");
                    let Some((i, name, _)) = current.take() else {
                        return Err(format!("the ROM panicked outside any test: {message}"));
                    };
                    println!("test {name} ... FAILED\n    panicked {message}");
                    record(
                        results,
                        i,
                        TestResult { name, outcome: Outcome::Failed { reason: format!("panicked {message}") } },
                    );
                    return Ok(RunEnd::Stopped { index: i });
                }
                Message::Output(text) => {
                    let tag = if line.level == Level::Error || line.level == Level::Fatal { "!" } else { "|" };
                    println!("    {tag} {text}");
                }
            }
        }
        if !seen_count && emu.frames() >= limits.frames_to_start {
            return Err(format!(
                "no `@@tests` line within {} frames: not a StackShot test ROM?",
                limits.frames_to_start
            ));
        }
        if let Some((i, name, start)) = &current
            && emu.frames() - start >= limits.frames_per_test
        {
            let reason = format!("did not finish within {} frames", limits.frames_per_test);
            println!("test {name} ... FAILED\n    {reason}");
            let index = *i;
            record(results, index, TestResult { name: name.clone(), outcome: Outcome::Failed { reason } });
            return Ok(RunEnd::Stopped { index });
        }
    }
}

fn record(results: &mut Vec<Option<TestResult>>, index: usize, result: TestResult) {
    if index >= results.len() {
        results.resize(index + 1, None);
    }
    results[index] = Some(result);
}

/// Prints the failures and cargo's closing line, which CI reads.
fn summarise(results: &[TestResult], seconds: f64) {
    let failed: Vec<&TestResult> = results.iter().filter(|r| matches!(r.outcome, Outcome::Failed { .. })).collect();
    if !failed.is_empty() {
        println!("\nfailures:");
        for r in &failed {
            if let Outcome::Failed { reason } = &r.outcome {
                println!("    {}: {reason}", r.name);
            }
        }
    }
    let passed = results.len() - failed.len();
    let verdict = if failed.is_empty() { "ok" } else { "FAILED" };
    println!(
        "\ntest result: {verdict}. {passed} passed; {} failed; 0 ignored; 0 measured; 0 filtered out; finished in {seconds:.2}s\n",
        failed.len()
    );
}
