//! The banner line over the play field: the stage number as a stage begins, WARNING before the boss, STAGE
//! CLEAR after it.

use super::hud;
use super::waves::{Phase, Stages};
use crate::text::Ink;

/// What the banner shows; redrawn when it changes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Banner {
    None,
    Stage(u32),
    Warning,
    Clear,
}

impl Banner {
    /// Shows what the stage's moment calls for, if it is not on screen already.
    pub fn update(&mut self, stages: &Stages) {
        let want = match stages.phase {
            Phase::Waves if stages.clock < 150 => Banner::Stage(stages.number()),
            Phase::Warning(n) if n / 16 % 2 == 0 => Banner::Warning,
            Phase::Clear(_) => Banner::Clear,
            _ => Banner::None,
        };
        if want == *self {
            return;
        }
        *self = want;
        match want {
            Banner::None => hud::banner(Ink::White, None),
            Banner::Stage(n) => {
                let mut line = *b"STAGE  ";
                line[6] = b'0' + (n % 10) as u8;
                hud::banner(Ink::Cyan, Some(&line));
            }
            Banner::Warning => hud::banner(Ink::Red, Some(b"WARNING")),
            Banner::Clear => hud::banner(Ink::Gold, Some(b"STAGE CLEAR")),
        }
    }
}
