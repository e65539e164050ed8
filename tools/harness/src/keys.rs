//! The GBA's buttons and the input-script format.
//!
//! A script is one entry a line: `FRAMES KEYS`, where FRAMES is `N` or `FIRST-LAST` (inclusive, counted from 0
//! after load or reset) and KEYS is `+`-joined button names (`A`, `B`, `SELECT`, `START`, `RIGHT`, `LEFT`, `UP`,
//! `DOWN`, `R`, `L`). Keys are held on exactly the frames named; `#` starts a comment. Example:
//! ```text
//! 60 START        # leave the title screen
//! 90-149 RIGHT+A  # fly right, firing
//! ```

/// Button names in the bit order of the KEYINPUT register (GBATEK), which is also mGBA's order.
pub const NAMES: [&str; 10] = ["A", "B", "SELECT", "START", "RIGHT", "LEFT", "UP", "DOWN", "R", "L"];

/// The mask bit of a button named as in [`NAMES`] (case-insensitive).
pub fn bit(name: &str) -> Option<u32> {
    NAMES.iter().position(|n| n.eq_ignore_ascii_case(name)).map(|i| 1 << i)
}

/// A parsed input script: which keys are held on which frames.
#[derive(Clone, Debug, Default)]
pub struct Script {
    spans: Vec<(u64, u64, u32)>,
}

impl Script {
    pub fn parse(text: &str) -> Result<Script, String> {
        let mut spans = Vec::new();
        for (number, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let fail = |what: &str| format!("input script line {}: {what}: `{raw}`", number + 1);
            let (frames, keys) = line.split_once(char::is_whitespace).ok_or_else(|| fail("expected FRAMES KEYS"))?;
            let (first, last) = match frames.split_once('-') {
                Some((a, b)) => (a.parse(), b.parse()),
                None => (frames.parse(), frames.parse()),
            };
            let (first, last): (u64, u64) =
                (first.map_err(|_| fail("bad frame"))?, last.map_err(|_| fail("bad frame"))?);
            if last < first {
                return Err(fail("the range ends before it starts"));
            }
            let mut mask = 0;
            for name in keys.trim().split('+') {
                mask |= bit(name.trim()).ok_or_else(|| fail(&format!("unknown key `{name}`")))?;
            }
            spans.push((first, last, mask));
        }
        Ok(Script { spans })
    }

    /// The keys held on `frame`.
    pub fn keys_at(&self, frame: u64) -> u32 {
        self.spans.iter().filter(|(a, b, _)| (*a..=*b).contains(&frame)).fold(0, |m, (_, _, k)| m | k)
    }

    /// The last frame on which the script holds a key.
    pub fn last_frame(&self) -> u64 {
        self.spans.iter().map(|&(_, b, _)| b).max().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ranges_and_combinations() {
        let s = Script::parse("# title\n60 START\n90-92 right+A  # fire\n").unwrap();
        assert_eq!(s.keys_at(59), 0);
        assert_eq!(s.keys_at(60), bit("START").unwrap());
        assert_eq!(s.keys_at(91), bit("RIGHT").unwrap() | bit("A").unwrap());
        assert_eq!(s.keys_at(93), 0);
        assert_eq!(s.last_frame(), 92);
    }

    #[test]
    fn rejects_bad_lines_with_their_number() {
        let e = Script::parse("1 A\n2 JUMP\n").unwrap_err();
        assert!(e.contains("line 2") && e.contains("JUMP"), "{e}");
        assert!(Script::parse("5-3 A").is_err());
        assert!(Script::parse("x A").is_err());
    }
}
