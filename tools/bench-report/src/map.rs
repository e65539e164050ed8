//! The heap over time: where each allocator put a trace's blocks (the ROM's `@@map` lines), drawn as one strip
//! of the 4 KB region per step, stacked top to bottom, ours and the best peer side by side. Each allocator is
//! read the same way, from outside: the blocks it handed out, at the addresses it gave, and their sizes.

use crate::Build;
use plotters::prelude::*;
use std::path::Path;

const REGION_BYTES: usize = 4096;
/// Bytes a pixel column stands for: the tree-heap's block size.
const BYTES_PER_PIXEL: usize = 8;
const STRIP: u32 = (REGION_BYTES / BYTES_PER_PIXEL) as u32;
const GAP: u32 = 24;
const TOP: u32 = 56;
const USED: RGBColor = RGBColor(232, 163, 60);
const FREE: RGBColor = RGBColor(30, 42, 68);
const REFUSED: RGBColor = RGBColor(220, 40, 40);

/// What happened to the region at one step of a trace.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Event {
    Alloc { offset: usize, size: usize },
    Free { offset: usize },
    Failed,
}

/// One allocator's events on one trace.
pub struct Placements {
    pub trace: String,
    pub allocator: String,
    pub events: Vec<Event>,
}

/// Adds a `@@map` line's events (`+OFFSET:SIZE`, `-OFFSET`, `x`, space-separated).
pub fn add(maps: &mut Vec<Placements>, trace: &str, allocator: &str, events: &str) -> Result<(), String> {
    let i = match maps.iter().position(|m| m.trace == trace && m.allocator == allocator) {
        Some(i) => i,
        None => {
            maps.push(Placements { trace: trace.into(), allocator: allocator.into(), events: Vec::new() });
            maps.len() - 1
        }
    };
    let number = |s: &str| s.parse::<usize>().map_err(|_| format!("bad map event number `{s}`"));
    for event in events.split_whitespace() {
        let e = if event == "x" {
            Event::Failed
        } else if let Some(free) = event.strip_prefix('-') {
            Event::Free { offset: number(free)? }
        } else if let Some((offset, size)) = event.strip_prefix('+').and_then(|e| e.split_once(':')) {
            Event::Alloc { offset: number(offset)?, size: number(size)? }
        } else {
            return Err(format!("bad map event `{event}`"));
        };
        maps[i].events.push(e);
    }
    Ok(())
}

/// The region's use after each event: a row of `STRIP` columns, true where a live block covers any byte.
fn rows(events: &[Event]) -> Result<Vec<(Vec<bool>, bool)>, String> {
    let mut owner = vec![None::<usize>; REGION_BYTES];
    let mut sizes = std::collections::HashMap::new();
    let mut out = Vec::new();
    for (step, e) in events.iter().enumerate() {
        match *e {
            Event::Alloc { offset, size } => {
                let span =
                    owner.get_mut(offset..offset + size).ok_or(format!("step {step}: a block outside the region"))?;
                if span.iter().any(Option::is_some) {
                    return Err(format!("step {step}: a block at {offset} overlaps a live one"));
                }
                span.fill(Some(offset));
                sizes.insert(offset, size);
            }
            Event::Free { offset } => {
                let size = sizes.remove(&offset).ok_or(format!("step {step}: a free of {offset}, not live"))?;
                owner[offset..offset + size].fill(None);
            }
            Event::Failed => {}
        }
        let row = owner.chunks(BYTES_PER_PIXEL).map(|c| c.iter().any(Option::is_some)).collect();
        out.push((row, *e == Event::Failed));
    }
    Ok(out)
}

/// Draws the map of the first mapped trace for ours and the best peer of `build` (the lowest sum of alloc and
/// free medians on that trace) into `path`; returns a paragraph saying what it shows.
pub fn draw(path: &Path, build: &Build) -> Result<String, String> {
    let ours = build.maps.first().ok_or("the ROM printed no @@map lines")?;
    let table = build.tables.iter().find(|t| t.id == ours.trace).ok_or(format!("no table for trace {}", ours.trace))?;
    let mut best: Option<(u32, &str)> = None;
    for row in table.rows.iter().skip(1) {
        let sum = table.number(&row[0], "alloc median")? + table.number(&row[0], "free median")?;
        if best.is_none_or(|(b, _)| sum < b) {
            best = Some((sum, &row[0]));
        }
    }
    let (_, peer_name) = best.ok_or("a trace table with no peer")?;
    let peer = build
        .maps
        .iter()
        .find(|m| m.trace == ours.trace && m.allocator == peer_name)
        .ok_or(format!("no map of {peer_name}"))?;
    let panels = [(ours, rows(&ours.events)?), (peer, rows(&peer.events)?)];
    let steps = panels[0].1.len() as u32;

    crate::chart::register_font()?;
    let e = |e: DrawingAreaErrorKind<_>| e.to_string();
    let size = (2 * STRIP + 3 * GAP, TOP + steps + GAP);
    let root = BitMapBackend::new(path, size).into_drawing_area();
    root.fill(&WHITE).map_err(e)?;
    for (p, (placements, rows)) in panels.iter().enumerate() {
        let left = GAP + p as u32 * (STRIP + GAP);
        let title = placements.allocator.replace('`', "");
        root.draw(&Text::new(title, (left as i32, 12), ("sans-serif", 18))).map_err(e)?;
        for (y, (row, failed)) in rows.iter().enumerate() {
            for (x, used) in row.iter().enumerate() {
                let colour = if *used { USED } else { FREE };
                root.draw_pixel(((left + x as u32) as i32, (TOP + y as u32) as i32), &colour).map_err(e)?;
            }
            if *failed {
                root.draw_pixel(((left - 4) as i32, (TOP + y as u32) as i32), &REFUSED).map_err(e)?;
            }
        }
    }
    root.present().map_err(e)?;
    Ok(format!(
        "The {} trace, step by step from top to bottom (one pixel row an allocate or free, {steps} in all), in \
         ours and in the best peer on that trace in the ARM/IWRAM build ({peer_name}, by the sum of its alloc and \
         free medians). Each row is the 4 KB region, one pixel for {BYTES_PER_PIXEL} bytes, from its start at the \
         left: orange where a live block covers any of those bytes, dark where none does; a red mark at the left \
         is a refused request. Both are read the same way, from the addresses and sizes each allocator handed out \
         (its bookkeeping, in the region or not, is not drawn).",
        ours.trace
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_become_rows_and_bad_ones_are_refused() {
        let mut maps = Vec::new();
        add(&mut maps, "t", "a", "+0:9 +16:8 x -0").unwrap();
        let r = rows(&maps[0].events).unwrap();
        assert_eq!(r.len(), 4);
        assert_eq!(&r[1].0[..4], &[true, true, true, false]);
        assert!(r[2].1 && !r[3].1);
        assert_eq!(&r[3].0[..4], &[false, false, true, false]);
        add(&mut maps, "t", "b", "+0:8 +4:8").unwrap();
        assert!(rows(&maps[1].events).unwrap_err().contains("overlaps"));
        assert!(add(&mut maps, "t", "c", "?3").unwrap_err().contains("bad map event"));
    }
}
