//! What a StackShot ROM tells the harness, and how the harness answers. The ROM side is `crates/stackshot-platform/src/testing.rs`.
//!
//! The ROM prints through mGBA's debug log; lines starting with `@@` are for the harness:
//! - `@@tests N`: this test ROM holds N tests;
//! - `@@run I NAME`: test I starts;
//! - `@@ok I CYCLES`: test I passed, taking CYCLES CPU cycles (timers 2+3 cascaded);
//! - `@@done`: every test has run;
//! - `@@panic MESSAGE`: the ROM panicked (any ROM, test or game).
//!
//! A panic stops the CPU, so after a failed test the harness loads the ROM again and asks it, through the
//! mailbox, to start at the next test.

/// The mailbox the harness writes after a reset, before the first frame: where to start.
pub use stackshot_protocol::{MAILBOX, MAILBOX_MAGIC};

/// One protocol message, or a line of ordinary output.
#[derive(Debug, PartialEq, Eq)]
pub enum Message<'a> {
    Tests(usize),
    Run(usize, &'a str),
    Ok(usize, u64),
    Done,
    Panic(&'a str),
    Output(&'a str),
}

impl<'a> Message<'a> {
    pub fn parse(line: &'a str) -> Message<'a> {
        let Some(rest) = line.strip_prefix("@@") else { return Message::Output(line) };
        let (word, args) = rest.split_once(' ').unwrap_or((rest, ""));
        let mut nums = args.split(' ').map(str::parse::<u64>);
        let parsed = match word {
            "tests" => nums.next().and_then(Result::ok).map(|n| Message::Tests(n as usize)),
            "run" => args.split_once(' ').and_then(|(i, name)| Some(Message::Run(i.parse().ok()?, name))),
            "ok" => match (nums.next(), nums.next()) {
                (Some(Ok(i)), Some(Ok(c))) => Some(Message::Ok(i as usize, c)),
                _ => None,
            },
            "done" => Some(Message::Done),
            "panic" => Some(Message::Panic(args)),
            _ => None,
        };
        parsed.unwrap_or(Message::Output(line))
    }
}

#[cfg(test)]
mod tests {
    use super::Message::{self, *};

    #[test]
    fn parses_every_message() {
        assert_eq!(Message::parse("@@tests 12"), Tests(12));
        assert_eq!(Message::parse("@@run 3 pool::full_pool"), Run(3, "pool::full_pool"));
        assert_eq!(Message::parse("@@ok 3 4521"), Ok(3, 4521));
        assert_eq!(Message::parse("@@done"), Done);
        assert_eq!(Message::parse("@@panic at src/a.rs:1:2: boom"), Panic("at src/a.rs:1:2: boom"));
    }

    #[test]
    fn anything_malformed_is_plain_output() {
        assert_eq!(Message::parse("hello"), Output("hello"));
        assert_eq!(Message::parse("@@ok x"), Output("@@ok x"));
        assert_eq!(Message::parse("@@tests"), Output("@@tests"));
    }
}
