//! The goal tables, generated from the figures of each build, comparing figures of one build only.

use crate::{Build, Table};

/// Our heap's row in every heap table, and our byte-index pool's in the pool table, inlined and called.
const OURS: &str = "tree-heap (ours)";
const POOL: &str = "`IndexPool<u8>`";
const POOL_CALLED: &str = "`IndexPool<u8>`, called (`iwram::pool_alloc` / `pool_free`)";

pub fn tables(builds: &[Build]) -> Result<Vec<Table>, String> {
    let mut pools = Table {
        id: "goals".into(),
        title: "Pool and space goals".into(),
        columns: ["goal", "build", "measured", "met?"].map(String::from).to_vec(),
        ..Table::default()
    };
    let mut heap = Table {
        id: "heap-goals".into(),
        title: "Tree-heap against the best peer of the same build (ours / best peer, cycles)".into(),
        columns: ["build", "trace", "alloc median", "alloc max", "free median", "free max"].map(String::from).to_vec(),
        ..Table::default()
    };
    let mut missed_max = Vec::new();
    for build in builds {
        let table = |id: &str| build.tables.iter().find(|t| t.id == id).ok_or(format!("{}: no {id} table", build.name));
        let p = table("pools")?;
        let sum = |row: &str| Ok::<_, String>(p.number(row, "alloc median")? + p.number(row, "free median")?);
        // Each against the reference timed the same way.
        for (how, pool, reference) in
            [("called", POOL_CALLED, "assembly reference, called"), ("inline", POOL, "assembly reference, inline")]
        {
            let (ours, asm) = (sum(pool)?, sum(reference)?);
            pools.rows.push(vec![
                format!("byte-index pool (`IndexPool<u8>`) allocate + free within 1.5× the assembly reference, {how}"),
                build.name.into(),
                format!("{ours} vs. {asm} cycles: {:.2}×", f64::from(ours) / f64::from(asm)),
                yes(ours * 2 <= asm * 3),
            ]);
        }
        let space = table("space")?;
        let share = space.cell(OURS, "share of region")?;
        let percent: f64 = share.trim_end_matches('%').parse().map_err(|_| format!("space: bad share `{share}`"))?;
        pools.rows.push(vec![
            "tree-heap header + map at most 3.2% of 4 KB".into(),
            build.name.into(),
            share.into(),
            yes(percent <= 3.2),
        ]);
        let (row, why) = filled_goal(build.name, space)?;
        pools.rows.push(row);
        if let Some(why) = why.filter(|w| !pools.notes.contains(w)) {
            pools.notes.push(why);
        }

        let traces: Vec<&Table> =
            build.tables.iter().filter(|t| t.columns.iter().any(|c| c == "failed median")).collect();
        if let Some(missing) = MAX_AT_BEST.iter().find(|id| !traces.iter().any(|t| t.id == **id)) {
            return Err(format!("{}: no trace table {missing}", build.name));
        }
        for t in traces {
            let mut row = vec![build.name.to_string(), t.id.clone()];
            for column in ["alloc median", "alloc max", "free median", "free max"] {
                let mine = t.number(OURS, column)?;
                let mut best: Option<(u32, &str)> = None;
                for peer in t.rows.iter().map(|r| r[0].as_str()).filter(|n| *n != OURS) {
                    let theirs = t.number(peer, column)?;
                    if best.is_none_or(|(b, _)| theirs < b) {
                        best = Some((theirs, peer));
                    }
                }
                let (theirs, who) = best.ok_or(format!("{}: no peer", t.id))?;
                let met = match column.strip_suffix(" max") {
                    None => mine < theirs,
                    Some(op) => {
                        let limit = max_limit(&t.id, theirs);
                        if mine > limit {
                            missed_max.push(slowest(build.name, t, table(by_trace(op))?, limit)?);
                        }
                        mine <= limit
                    }
                };
                let ratio = f64::from(mine) / f64::from(theirs);
                let met = if met { "**yes**" } else { "no" };
                row.push(format!("{mine} / {theirs} ({who}), {ratio:.2}×: {met}"));
            }
            heap.rows.push(row);
        }
    }
    pools.notes.splice(0..0, POOL_NOTES.iter().map(|s| s.to_string()));
    heap.notes = HEAP_NOTES.iter().map(|s| s.to_string()).collect();
    for build in builds {
        for op in ["alloc", "free"] {
            heap.notes.push(cheapest(build, op)?);
        }
        heap.notes.push(common_free(build)?);
    }
    heap.items_lead = "Each maximum missed: the sorts of that operation (a free's path, an allocation's alignment) \
                       whose slowest, in brackets, is above the goal, then the others (from the tables of frees and \
                       allocations by trace)."
        .into();
    heap.items = missed_max;
    Ok(vec![pools, heap])
}

/// The most cycles ours' slowest operation may take on `trace`, the best peer's slowest taking `theirs`: as many
/// on the traces of [`MAX_AT_BEST`], else 1.5× as many (rounded down: cycles are whole).
fn max_limit(trace: &str, theirs: u32) -> u32 {
    if MAX_AT_BEST.contains(&trace) { theirs } else { theirs * 3 / 2 }
}

/// The benchmark's table of our `op`s ("alloc" or "free") by trace and by sort (alignment, path): the trace, the
/// sort, the count, then the four figures.
fn by_trace(op: &str) -> &'static str {
    if op == "free" { "free paths by trace" } else { "alloc kinds by trace" }
}

/// Why ours' slowest operation on the trace table `trace` of `build` is above the goal's `limit`, from `by`, the
/// allocations' or the frees' table by trace (its last column names the operation): the sorts of operation whose
/// slowest is above the limit, and the others'. `by` must account for every operation of ours in `trace`, its
/// count and its slowest, or this is an error.
fn slowest(build: &str, trace: &Table, by: &Table, limit: u32) -> Result<String, String> {
    let column = by.columns.last().ok_or(format!("{}: no columns", by.id))?;
    let op = column.strip_suffix(" max").ok_or(format!("{}: last column {column}", by.id))?;
    let mine = trace.number(OURS, column)?;
    let count = trace.number(OURS, &format!("{op}s"))?;
    let (mut above, mut below, mut slowest, mut counted) = (Vec::new(), Vec::new(), 0, 0);
    for row in by.rows.iter().filter(|r| r[0] == trace.id) {
        let max = by.number_in(row, column)?;
        slowest = slowest.max(max);
        counted += by.number_in(row, &by.columns[2])?;
        // The sort's name up to its explanation: "two binned neighbours, …: both unlinked" -> "two binned
        // neighbours, …".
        let name = row[1].split([':', '(']).next().unwrap_or(&row[1]).trim();
        if max > limit { &mut above } else { &mut below }.push(format!("{name} ({max})"));
    }
    if (slowest, counted) != (mine, count) {
        return Err(format!(
            "{}: {}'s {op}s by sort come to {counted}, the slowest {slowest}; the trace table has {count}, the \
             slowest {mine}",
            by.id, trace.id
        ));
    }
    let what = if op == "free" { "free" } else { "allocation" };
    let mut why =
        format!("{build}, {}: ours' slowest {what} {mine} cycles. Above {limit}: {}.", trace.id, above.join("; "));
    if !below.is_empty() {
        why += &format!(" At or below: {}.", below.join("; "));
    }
    Ok(why)
}

/// The space table's column of what each allocator held when a request first failed.
const FILLED: &str = "bytes in use at first failure (8–128 B requests)";
/// The space table's column of the region bytes the empty heap's largest block leaves outside it.
const OUTSIDE: &str = "region bytes outside that block";

/// The goal that ours holds at least as many bytes as every peer when a request first fails, from `build`'s
/// space table; and, when it is missed, why.
fn filled_goal(build: &str, space: &Table) -> Result<(Vec<String>, Option<String>), String> {
    let ours = space.number(OURS, FILLED)?;
    let peers = space
        .rows
        .iter()
        .map(|r| r[0].as_str())
        .filter(|n| *n != OURS)
        .map(|peer| Ok((space.number(peer, FILLED)?, peer)))
        .collect::<Result<Vec<_>, String>>()?;
    let &(theirs, who) = peers.iter().max_by_key(|(bytes, _)| *bytes).ok_or("space: no peer")?;
    let row = vec![
        "tree-heap bytes in use at the first failure (8–128 B requests) at least every peer's".into(),
        build.into(),
        format!("{ours} vs. {theirs} B ({who})"),
        yes(ours >= theirs),
    ];
    if ours >= theirs {
        return Ok((row, None));
    }
    // Our heap's capacity: its blocks after the header and map, all one free run in the empty heap.
    let capacity = space.number(OURS, "largest first block")?;
    let bookkeeping = space.number(OURS, OUTSIDE)?;
    let mut why = format!(
        "Space: when a request first fails, {who} holds {theirs} bytes of the 4 KB region, our heap {ours}. Our \
         heap keeps {bookkeeping} bytes of the region for its header and 2-bit map; {who}'s largest block in the \
         empty heap leaves {} bytes of it outside. Our heap also rounds every request up to a whole 8-byte block.",
        space.number(who, OUTSIDE)?
    );
    let fewer: Vec<String> =
        peers.iter().filter(|(bytes, _)| *bytes < ours).map(|(bytes, peer)| format!("{peer}: {bytes}")).collect();
    if !fewer.is_empty() {
        why += &format!(" It holds more than the others ({}).", fewer.join("; "));
    }
    // The blocks `theirs` bytes take, and their 2-bit map, against what the region leaves beside them.
    let blocks = theirs.div_ceil(8);
    let map = blocks.div_ceil(4);
    let left = (capacity + bookkeeping).saturating_sub(blocks * 8);
    if map > left {
        why += &format!(
            " Holding {theirs} bytes takes at least {blocks} blocks, whose 2-bit map alone is {map} bytes, more than \
             the {left} the region would have left: with the map, this goal cannot be met."
        );
    }
    Ok((row, Some(why)))
}

/// A sentence comparing ours' cheapest `op` ("alloc" or "free") with the peers' medians of it, over every trace
/// of `build`.
fn cheapest(build: &Build, op: &str) -> Result<String, String> {
    let traces: Vec<&Table> = build.tables.iter().filter(|t| t.columns.iter().any(|c| c == "failed median")).collect();
    let (min, median) = (format!("{op} min"), format!("{op} median"));
    let mut ours = u32::MAX;
    let (mut below, mut all) = (0, 0);
    for t in &traces {
        ours = ours.min(t.number(OURS, &min)?);
    }
    for t in &traces {
        for peer in t.rows.iter().map(|r| r[0].as_str()).filter(|n| *n != OURS) {
            all += 1;
            if t.number(peer, &median)? < ours {
                below += 1;
            }
        }
    }
    let what = if op == "alloc" { "allocation" } else { "free" };
    Ok(format!(
        "{}: ours' cheapest {what} on any trace takes {ours} cycles; {below} of the peers' {all} {op} medians \
         (three peers, {} traces) are below it.",
        build.name,
        traces.len()
    ))
}

/// A sentence comparing the median of ours' most common free path (the free-paths table) with the peers' free
/// medians, over every trace of `build`.
fn common_free(build: &Build) -> Result<String, String> {
    let paths = build.tables.iter().find(|t| t.id == "free paths").ok_or("no free paths table")?;
    let mut common = ("", 0);
    let mut all_frees = 0;
    for row in &paths.rows {
        let frees = paths.number(&row[0], "frees")?;
        all_frees += frees;
        if frees > common.1 {
            common = (row[0].as_str(), frees);
        }
    }
    let ours = paths.number(common.0, "free median")?;
    let (mut below, mut all) = (0, 0);
    for t in build.tables.iter().filter(|t| t.columns.iter().any(|c| c == "failed median")) {
        for peer in t.rows.iter().map(|r| r[0].as_str()).filter(|n| *n != OURS) {
            all += 1;
            if t.number(peer, "free median")? < ours {
                below += 1;
            }
        }
    }
    Ok(format!(
        "{}: ours' most common free ({}: {} of {all_frees}) has a median of {ours} cycles; {below} of the peers' \
         {all} free medians are below it.",
        build.name, common.0, common.1
    ))
}

/// The traces whose maxima must be at or below the best peer's; on the others, within 1.5× of it.
const MAX_AT_BEST: &[&str] = &["AI scratch", "agb Vec<u8>"];

fn yes(met: bool) -> String {
    if met { "yes" } else { "no" }.into()
}

const POOL_NOTES: &[&str] =
    &["What the pool does beyond the reference's bare pop and push: `IndexPool` also stores the object, counts the \
     slot's generation and builds the handle from it on allocate; on free one halfword compare of the handle's \
     stamp (generation and pool id) with the slot's refuses stale and foreign handles, a compare refuses double \
     frees (pos[i] < free), and four byte stores keep the live/free partition that makes iteration O(live). \
     Where a row misses, that is the difference. `ValueStack<u8>`, the bare stack with an overflow check, is the \
     row closest to the reference."];

const HEAP_NOTES: &[&str] = &[
    "A median is met (**yes**) when ours is below every peer's of the same build on that trace; a maximum when ours \
     is at or below the best peer's on the AI scratch and agb traces, and within 1.5× of it on the others (the ratio \
     is ours over the best peer's). Where a cell is not met, the ratio says by how much ours misses it. Why: every \
     operation pays for the map and for checking its input. An allocation rounds the size, takes the head of the \
     smallest bin that fits (runs of up to 31 blocks, one list per size) or the front of the top (the run that ends \
     the heap), marks the 2-bit map with masks and counts the blocks in use; only runs of 32 blocks or more go through \
     the red-black tree. A free validates the pointer against the map (outside, not a run start, double free: every \
     bad free is refused), finds the end of the run in the map, keeps the peak (the use is at its highest just before \
     a free), merges with free neighbours (binned ones are unlinked in O(1), the top grows in place, a tree \
     neighbour's node takes the merged run) and files the run (the free-paths table gives each path's cost). That \
     fixed work is why even ours' cheapest free (free \
     min) costs more than some peers' free medians (counted below, with the same count for allocation): \
     linked_list_allocator takes the first hole of a free list that stays short on these traces and trusts the \
     caller's layout on free, talc and rlsf find a size class with a bit scan and keep their headers next to the \
     block. Ours' slowest frees (merges) and allocations (splits) reach the tree (insert and remove with \
     rebalancing), which the worst-case table bounds by the number of tree runs; but the tree is not the whole cost \
     of a missed maximum: the list below names, for each missed maximum, the sorts of that operation whose \
     slowest is above the goal (a merge of binned neighbours reaches the tree only when the merged run has more than 31 \
     blocks). A fifth of the random mix's requests ask for 16-byte alignment, which a run gives from its \
     first aligned block: they leave the fast path to search the bins and the tree for a run that holds them after \
     that padding (the table of allocations by trace and alignment gives their cost apart); most of their cost is \
     that search and the split around the padding, not the tree. Measured \
     against peers compiled as Thumb in ROM, as this report did before, ours (ARM in IWRAM) seemed to win some of \
     these: the build won them, not the allocator.",
];

/// The frame goals, from the game table: the two-minute session and the bullet-hell scene, worst frame, and the
/// overlay's own worst frame.
pub fn frames(game: &Table) -> Result<Table, String> {
    let mut goals = Table {
        id: "frame-goals".into(),
        title: "Frame goals (worst frame, share of the 280,896 cycles of a frame)".into(),
        columns: ["goal", "measured", "met?"].map(String::from).to_vec(),
        ..Table::default()
    };
    let goals_of = [
        (crate::SESSION, "max", "worst frame", 25.0),
        (crate::SCENE, "max", "worst frame", 35.0),
        (crate::OVERLAY, crate::OVERLAY_OWN, "its own worst frame", 10.0),
        (crate::SESSION, crate::WITH_MUSIC, "worst frame and the music's worst VBlank", 30.0),
        (crate::SCENE, crate::WITH_MUSIC, "worst frame and the music's worst VBlank", 45.0),
    ];
    for (session, column, what, limit) in goals_of {
        let row = game.rows.iter().find(|r| r[0].starts_with(session)).ok_or(format!("game: no row {session}"))?;
        let max = game.cell_in(row, column)?;
        let percent: f64 = max
            .split_once('(')
            .and_then(|(_, p)| p.trim_end_matches("%)").parse().ok())
            .ok_or(format!("game: bad {column} `{max}`"))?;
        goals.rows.push(vec![format!("{session}: {what} at most {limit}%"), max.into(), yes(percent <= limit)]);
    }
    // The scene refills its pools from empty outside the game's frame (its first frame, and the one after the
    // bomb), which may miss a VBlank that is not the game's: its count is in the table, without a goal.
    for row in game.rows.iter().filter(|r| !r[0].starts_with(crate::SCENE)) {
        let missed = game.cell_in(row, crate::MISSED)?;
        let session = row[0].split(':').next().unwrap_or_default();
        goals.rows.push(vec![format!("{session}: no frame missed"), missed.into(), yes(missed == "0")]);
    }
    Ok(goals)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A space table: our heap's and two peers' rows, the second peer holding `second` bytes at the failure.
    fn space(ours: &str, second: &str) -> Table {
        let columns = ["allocator", "largest first block", OUTSIDE, FILLED];
        Table {
            id: "space".into(),
            columns: columns.map(String::from).to_vec(),
            rows: [[OURS, "3968", "128", ours], ["tlsf", "3832", "264", "3373"], ["list", "4096", "0", second]]
                .map(|r| r.map(String::from).to_vec())
                .to_vec(),
            ..Table::default()
        }
    }

    /// The trace table "AI": ours' count and slowest of allocations and of frees, and a peer's row.
    fn trace(allocs: [&str; 2], frees: [&str; 2]) -> Table {
        // The benchmark's trace table (bench/src/heaps.rs, `compare`).
        let columns = "allocator,allocs,alloc min,alloc median,alloc p99,alloc max,failed,failed median,failed max,\
                       frees,free min,free median,free p99,free max";
        let [a, a_max] = allocs;
        let [f, f_max] = frees;
        let ours = [OURS, a, "1", "2", "3", a_max, "0", "–", "–", f, "1", "2", "3", f_max];
        let peer = ["list", "9", "1", "2", "3", "187", "0", "–", "–", "9", "1", "2", "3", "187"];
        Table {
            id: "AI".into(),
            columns: columns.split(',').map(String::from).collect(),
            rows: vec![ours.map(String::from).to_vec(), peer.map(String::from).to_vec()],
            ..Table::default()
        }
    }

    /// A table of ours' `op`s by trace: another trace's row, then the AI trace's sorts (name, count, slowest).
    fn by_sort(op: &str, sorts: &[(&str, &str, &str)]) -> Table {
        let columns = ["trace", "sort", &format!("{op}s"), &format!("{op} min"), "", "", &format!("{op} max")];
        let mut rows = vec![["other", "a", "7", "1", "2", "999", "999"].map(String::from).to_vec()];
        for (name, count, max) in sorts {
            rows.push(["AI", name, count, "1", "2", "3", max].map(String::from).to_vec());
        }
        Table { id: by_trace(op).into(), columns: columns.map(String::from).to_vec(), rows, ..Table::default() }
    }

    #[test]
    fn a_missed_maximum_names_the_sorts_above_the_limit() {
        let frees = by_sort(
            "free",
            &[
                ("joins the top (the free run that ends the heap)", "5", "180"),
                ("one binned neighbour, into its bin: unlinked", "5", "188"),
                ("two binned neighbours, into its bin: both unlinked", "5", "252"),
            ],
        );
        let t = trace(["1", "100"], ["15", "252"]);
        assert_eq!(
            slowest("ARM/IWRAM", &t, &frees, 187).unwrap(),
            "ARM/IWRAM, AI: ours' slowest free 252 cycles. Above 187: one binned neighbour, into its bin (188); two \
             binned neighbours, into its bin (252). At or below: joins the top (180)."
        );
        // A sort at the limit meets it; with none at or below it, no such clause.
        let t = trace(["1", "100"], ["10", "190"]);
        let why = slowest("ARM/IWRAM", &t, &by_sort("free", &[("a", "5", "187"), ("b", "5", "190")]), 187).unwrap();
        assert!(why.ends_with("Above 187: b (190). At or below: a (187)."), "{why}");
        let why = slowest("ARM/IWRAM", &t, &by_sort("free", &[("b", "10", "190")]), 187).unwrap();
        assert!(why.ends_with("Above 187: b (190)."), "{why}");
        // Allocations, from their own columns.
        let allocs =
            by_sort("alloc", &[("aligned to more than 8 bytes: out", "2", "595"), ("8 bytes or less", "3", "487")]);
        let why = slowest("ARM/IWRAM", &trace(["5", "595"], ["1", "100"]), &allocs, 429).unwrap();
        assert_eq!(
            why,
            "ARM/IWRAM, AI: ours' slowest allocation 595 cycles. Above 429: aligned to more than 8 bytes (595); 8 \
             bytes or less (487)."
        );
        // A breakdown that does not account for the trace's operations (their count or their slowest) is refused:
        // it would explain other figures than the table's.
        for (count, max) in [("16", "252"), ("15", "251")] {
            let t = trace(["1", "100"], [count, max]);
            assert!(slowest("ARM/IWRAM", &t, &frees, 187).is_err(), "{count} frees, slowest {max}");
        }
        assert!(slowest("ARM/IWRAM", &trace(["3", "7"], ["15", "252"]), &frees, 187).is_ok());
        assert!(slowest("ARM/IWRAM", &trace(["15", "252"], ["15", "252"]), &allocs, 429).is_err());
    }

    #[test]
    fn the_maximum_goal_is_the_best_peer_or_one_and_a_half_times_it() {
        assert_eq!(max_limit("AI scratch", 187), 187);
        assert_eq!(max_limit("agb Vec<u8>", 277), 277);
        assert_eq!(max_limit("random mix", 286), 429);
        // For an odd figure, the whole cycles within 1.5×: 277 × 1.5 = 415.5.
        assert_eq!(max_limit("random mix", 277), 415);
        for theirs in 1..600 {
            for mine in theirs..2 * theirs {
                assert_eq!(mine <= max_limit("adversarial", theirs), 2 * mine <= 3 * theirs, "{mine} / {theirs}");
            }
        }
    }

    #[test]
    fn filled_goal_is_met_only_at_or_above_the_best_peer() {
        let (row, why) = filled_goal("ARM/IWRAM", &space("3783", "3991")).unwrap();
        assert_eq!(row[1..], ["ARM/IWRAM", "3783 vs. 3991 B (list)", "no"]);
        let why = why.expect("a missed goal says why");
        assert!(
            why.contains("for its header and 2-bit map; list's largest block in the empty heap leaves 0 bytes"),
            "{why}"
        );
        assert!(why.contains("more than the others (tlsf: 3373)."), "{why}");
        // 499 blocks (3992 bytes) and their 125-byte map, with the header, are more than 4096 bytes.
        assert!(why.contains("at least 499 blocks, whose 2-bit map alone is 125 bytes, more than the 104"), "{why}");

        let (row, why) = filled_goal("Thumb/ROM", &space("3900", "3900")).unwrap();
        assert_eq!(row[1..], ["Thumb/ROM", "3900 vs. 3900 B (list)", "yes"]);
        assert!(why.is_none());

        // The best peer is found wherever it is in the table.
        let (row, _) = filled_goal("ARM/IWRAM", &space("3600", "3000")).unwrap();
        assert_eq!(row[2..], ["3600 vs. 3373 B (tlsf)", "yes"]);

        // Missed, but with room for the blocks and their map: no claim that it cannot be met. 3964 bytes take
        // 496 blocks (3968 bytes), whose 124-byte map fits in the 128 left.
        let (_, why) = filled_goal("ARM/IWRAM", &space("3783", "3964")).unwrap();
        assert!(!why.unwrap().contains("cannot be met"));
    }
}
