//! The allocator crate's gdb commands (`crates/stackshot-alloc/gdb/stackshot_alloc.py`) against the harness's own
//! GDB server. On the fixture ROM `fixtures/alloc_state.rs`, loaded as `make debug` loads them: what `pool`, `heap`,
//! `heap check` and the handle printer print must be what the harness decodes from the same memory (a second
//! emulator run to the same, deterministic, state) and what the crate's API reported; a heap corrupted through gdb
//! must make `heap check` name the block the crate's own `Heap::check` names on that memory. On the crate's quick
//! starts, loaded as the crate README tells a game to: what the game printed. And on ELFs with no program running.

mod common;

use harness::alloc_state::{self, Counters, HeapRegion, HeapView, NodeField, Report, SLOTS};
use harness::elf::Elf;
use harness::emulator::Emulator;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

fn fixture() -> PathBuf {
    let path = root().join("target/thumbv4t-none-eabi/release/examples/alloc_state");
    assert!(path.exists(), "{} is missing: cargo build --release --example alloc_state", path.display());
    path
}

/// The fixture's memory a few frames in: the state it holds at every checkpoint.
fn decoded(elf: &Elf) -> (HeapRegion, Report) {
    let mut emu = Emulator::open(&fixture()).unwrap();
    for _ in 0..3 {
        emu.run_frame();
    }
    let region = elf.symbol("AI_REGION").expect("AI_REGION in the fixture");
    (HeapRegion::read(&emu, region.address, region.size as usize), Report::read(&emu, elf).unwrap())
}

/// One corruption written through gdb: `(name, address, bytes before, bytes after)` of a 16-bit or 8-bit store.
struct Corruption {
    name: &'static str,
    address: u32,
    c_type: &'static str,
    old: u32,
    new: u32,
}

fn corrupt(heap: &HeapRegion, c: &Corruption) -> HeapRegion {
    let mut bytes = heap.bytes();
    let at = (c.address - heap.base) as usize;
    if c.c_type == "unsigned short" {
        bytes[at..at + 2].copy_from_slice(&(c.new as u16).to_le_bytes());
    } else {
        bytes[at] = c.new as u8;
    }
    HeapRegion::new(heap.base, &bytes)
}

/// The lines after `@@name` up to the next `@@` marker.
fn section<'a>(out: &'a str, name: &str) -> Vec<&'a str> {
    let marker = format!("@@{name}");
    let mut lines = out.lines().skip_while(|l| *l != marker);
    assert!(lines.next().is_some(), "no {marker} in gdb's output:\n{out}");
    lines.take_while(|l| !l.starts_with("@@")).collect()
}

/// gdb-multiarch in batch mode, without the user's gdbinit, in the repository's root (the paths of the files it
/// loads are relative to it).
fn gdb_batch() -> Command {
    if Command::new("gdb-multiarch").arg("--version").output().is_err() {
        panic!("gdb-multiarch is not installed: run tools/setup (or sudo apt-get install gdb-multiarch)");
    }
    let mut gdb = Command::new("gdb-multiarch");
    gdb.current_dir(root()).args(["-batch", "-nx"]);
    gdb
}

/// gdb in batch mode on `elf`, served by the harness: the `setup` file (relative to the repository's root), then
/// `script`, whose `@PORT@` is the server's port. Both are stopped after two minutes (a breakpoint never reached
/// would keep them running): the run then fails with what gdb printed.
fn run_gdb(elf: &Path, setup: &str, script: &str) -> String {
    let mut gdb = gdb_batch();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut server = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["gdb".as_ref(), elf.as_os_str(), "--port".as_ref(), port.to_string().as_ref()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The server says so once it listens.
    let mut line = String::new();
    BufReader::new(server.stderr.take().unwrap()).read_line(&mut line).unwrap();
    assert!(line.contains("serving gdb"), "harness gdb: {line}");
    let dir = root().join("target/gdb-test");
    std::fs::create_dir_all(&dir).unwrap();
    let script_path = dir.join(format!("script-{port}.gdb"));
    std::fs::write(&script_path, script.replace("@PORT@", &port.to_string())).unwrap();
    let (stdout, stderr) = (dir.join(format!("out-{port}.txt")), dir.join(format!("err-{port}.txt")));
    let mut gdb = gdb
        .args(["-x", setup, "-x"])
        .arg(&script_path)
        .arg(elf)
        .stdout(std::fs::File::create(&stdout).unwrap())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let gdb_status = loop {
        if let Some(status) = gdb.try_wait().unwrap() {
            break Some(status);
        }
        if std::time::Instant::now() > deadline {
            let _ = (gdb.kill(), server.kill());
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let status = server.wait().unwrap();
    let text = std::fs::read_to_string(&stdout).unwrap() + &std::fs::read_to_string(&stderr).unwrap();
    let gdb_status = gdb_status.unwrap_or_else(|| panic!("gdb still running after two minutes:\n{text}"));
    assert!(gdb_status.success() && status.success(), "gdb: {gdb_status}, harness: {status}\n{text}");
    text
}

fn crate_check_python() -> &'static str {
    // The crate's verdict on the memory as gdb left it, from the fixture's report.
    "python m = bytes(gdb.selected_inferior().read_memory(int(gdb.parse_and_eval('&alloc_state::ALLOC_STATE_REPORT.check')), 40)); print('crate: ' + m.split(b'\\0')[0].decode())"
}

#[test]
fn gdb_commands_show_what_the_memory_holds_and_heap_check_names_corrupted_blocks() {
    let elf = Elf::read(&fixture()).unwrap();
    let (heap, report) = decoded(&elf);
    let stats = report.heap_stats;
    let counters = Counters { used_blocks: stats[2] / 8, peak_used: stats[5] / 8, bins: report.heap_bins };
    let view = heap.view(counters);
    assert_eq!(view.check(), Ok(()), "the fixture's heap, copied out, is broken");
    assert_eq!(report.check, "ok");

    // Corruptions, each at a block the decoded map says holds what is corrupted.
    let runs: Vec<_> = view.runs().collect();
    // Free runs other than the top, which holds no size and whose map codes only end it where they stop.
    let top = view.top().map(|t| t.start);
    let free_runs = || runs.iter().filter(|r| !r.used && Some(r.start) != top);
    let free_run = free_runs().find(|r| r.blocks >= 2).expect("a free run of 2+ blocks");
    let big = free_runs().max_by_key(|r| r.blocks).unwrap();
    assert!(big.blocks > 5, "the fixture should leave a free run of 6+ blocks besides the top");
    let mut child = None;
    view.visit_tree(|n| child = child.or((n.depth > 0).then_some(n.block)));
    let child = child.expect("a non-root node");
    let size_copy = heap.base + HeapView::field_offset(free_run.start + free_run.blocks - 1, NodeField::Size) as u32;
    let inside = big.start + 5;
    let (map_byte, shift) = view.map_position(inside);
    let parent = heap.base + HeapView::field_offset(child, NodeField::Parent) as u32;
    let root = view.root();
    let root_colour = heap.base + HeapView::field_offset(root, NodeField::Colour) as u32;
    // Followed by another used run, so that no free run's start (which the tree and bin checks look at first)
    // changes with it.
    let used_run = runs
        .windows(2)
        .find(|w| w[0].used && w[0].blocks >= 2 && w[1].used)
        .map(|w| w[0])
        .expect("a used run of 2+ blocks before another used run");
    let (end_byte, end_shift) = view.map_position(used_run.start + used_run.blocks - 1);
    let bytes = heap.bytes();
    let cases = [
        (
            Corruption {
                name: "size-copy",
                address: size_copy,
                c_type: "unsigned short",
                old: free_run.blocks,
                new: free_run.blocks + 1,
            },
            ("SizeCopy", free_run.start + free_run.blocks - 1),
        ),
        (
            Corruption {
                name: "header",
                address: heap.base,
                c_type: "unsigned short",
                old: view.count(),
                new: view.count() + 1,
            },
            ("Header", 0),
        ),
        (
            Corruption {
                name: "parent",
                address: parent,
                c_type: "unsigned short",
                old: view.field(child, NodeField::Parent),
                new: child,
            },
            ("ParentLink", child),
        ),
        (
            // The root's colour byte, in its run's second block, made red.
            Corruption {
                name: "colour",
                address: root_colour,
                c_type: "unsigned char",
                old: view.field(root, NodeField::Colour),
                new: 1,
            },
            ("RedRoot", root),
        ),
        (
            Corruption {
                name: "map",
                address: heap.base + map_byte as u32,
                c_type: "unsigned char",
                old: u32::from(bytes[map_byte]),
                new: u32::from(bytes[map_byte] | (1 << shift)),
            },
            ("UsedInFreeRun", inside),
        ),
        (
            // A used run's end mark cleared: the run then meets a free code before its end.
            Corruption {
                name: "end-mark",
                address: heap.base + end_byte as u32,
                c_type: "unsigned char",
                old: u32::from(bytes[end_byte]),
                new: u32::from(bytes[end_byte] & !(3 << end_shift)),
            },
            ("Unterminated", used_run.start),
        ),
    ];

    let mut script = String::from(
        "target remote 127.0.0.1:@PORT@\nbreak alloc_state_checkpoint\nbreak alloc_state_checked\ncontinue\n\
         echo @@pool\\n\npool BULLETS\necho @@heap\\n\nheap AI_HEAP\necho @@check\\n\nheap check AI_HEAP\n\
         echo @@every-heap\\n\nheap check\n\
         echo @@in-c\\n\nset language c\npool BULLETS\nprint alloc_state::LIVE_BULLET\nprint &alloc_state::LIVE_BULLET\nshow language\nset language auto\n\
         echo @@handles\\n\nprint alloc_state::LIVE_BULLET\nprint alloc_state::FREED_BULLET\n\
         print alloc_state::STALE_BULLET\nprint &alloc_state::LIVE_BULLET\n",
    );
    // Each `heap check` runs in C, the language the corruption was written in: the commands work in Rust whatever
    // the language is.
    for (c, _) in &cases {
        script += &format!(
            "echo @@{}\\n\nset language c\nset var *({} *){:#x} = {:#x}\nheap check AI_HEAP\nset language auto\n\
             continue\n{}\nset language c\nset var *({} *){:#x} = {:#x}\nset language auto\ncontinue\n",
            c.name,
            c.c_type,
            c.address,
            c.new,
            crate_check_python(),
            c.c_type,
            c.address,
            c.old
        );
    }
    // A larger link back to the root, a cycle: `heap` still shows the heap (it looped for ever), the link marked bad.
    let larger = heap.base + HeapView::field_offset(root, NodeField::Larger) as u32;
    script += &format!(
        "echo @@cycle\\n\nset language c\nset var *(unsigned short *){larger:#x} = {root:#x}\nheap AI_HEAP\n\
         set var *(unsigned short *){larger:#x} = {:#x}\nset language auto\n",
        view.field(root, NodeField::Larger)
    );
    script += "echo @@end\\n\ndelete\ndisconnect\n";
    let out = run_gdb(&fixture(), "tools/gdb/init.gdb", &script);

    // pool: counts, the free stack top first, and every live handle's slot and value, as the crate's API says.
    let pool = section(&out, "pool");
    let live_count = report.pool_len as usize;
    assert_eq!(
        pool[1].trim(),
        format!("capacity {SLOTS}, in use {live_count}, free {}, peak {}", SLOTS - live_count, report.pool_peak)
    );
    let stack: Vec<String> = report.free_stack.iter().map(u8::to_string).collect();
    assert_eq!(pool[2].trim(), format!("free stack, top first: {}", stack.join(" ")));
    assert_eq!(pool[3].trim(), format!("live handles ({live_count}):"));
    let live: Vec<String> = report
        .live
        .iter()
        .zip(&report.live_generations)
        .map(|((slot, b), g)| {
            format!(
                "[{slot}] generation {g}: alloc_state::Bullet {{x: {}, y: {}, dx: {}, dy: {}}}",
                b.x, b.y, b.dx, b.dy
            )
        })
        .collect();
    assert_eq!(pool[4..].iter().map(|l| l.trim()).collect::<Vec<_>>(), live);

    // heap: header, runs and tree as the crate's view of the region's bytes has them, statistics as Heap::stats()
    // says.
    let lines = section(&out, "heap");
    assert!(
        lines[0].starts_with(&format!(
            "heap AI_HEAP: base {:#010x}, blocks {}..{}",
            heap.base,
            view.first(),
            view.end()
        )),
        "{}",
        lines[0]
    );
    assert_eq!(lines[1], format!("header: count {}, root {}", view.count(), view.root()));
    let map_end = lines.iter().position(|l| l.starts_with("free tree")).unwrap();
    let gdb_runs: String = lines[3..map_end].iter().map(|l| l.trim()).collect();
    let runs_text: String =
        runs.iter().map(|r| format!("[{} {} @{}]", if r.used { "used" } else { "free" }, r.blocks, r.start)).collect();
    assert_eq!(gdb_runs, runs_text);
    let top_at = lines.iter().position(|l| l.starts_with("top ")).unwrap();
    let gdb_tree: Vec<String> = lines[map_end + 1..top_at].iter().map(|l| l[2..].to_string()).collect();
    assert_eq!(gdb_tree, alloc_state::tree_lines(&view));
    assert!(gdb_tree.len() >= 2, "the fixture should leave several free runs: {gdb_tree:?}");
    assert_eq!(
        lines[top_at],
        format!("top (the free run that ends the heap, outside the tree): {}", alloc_state::top_line(&view))
    );
    let bins_at = top_at + 1;
    assert!(lines[bins_at].starts_with("bins"), "{}", lines[bins_at]);
    let stats_at = lines.iter().position(|l| l.starts_with("stats:")).unwrap();
    let gdb_bins: Vec<String> = lines[bins_at + 1..stats_at].iter().map(|l| l.trim().to_string()).collect();
    let bins = alloc_state::bin_lines(&view);
    assert_eq!(gdb_bins, if bins.is_empty() { vec!["(empty)".to_string()] } else { bins });
    assert_eq!(
        lines[stats_at],
        format!(
            "stats: capacity {} B, used {} B, free {} B in {}, largest free {} B, peak {} B, failed requests {}, bad frees {}",
            stats[0],
            stats[2],
            stats[1],
            runs_phrase(stats[4]),
            stats[3],
            stats[5],
            stats[6],
            stats[7]
        )
    );

    assert_eq!(section(&out, "check"), ["heap check AI_HEAP: ok"]);
    // With no expression: every static heap gdb can read. The fixture links the game's library, whose heap static it
    // never uses, so the debug info gives that one no location.
    assert_eq!(section(&out, "every-heap"), ["heap check alloc_state::AI_HEAP: ok"]);

    // The handle printer: the live handle's slot and object, the freed one dangling, the outlived one stale.
    let handles = section(&out, "handles");
    // The handle allocated last is the first live one (`iter` starts at the free/live boundary); it took the
    // slot freed before it, in the slot's second generation, so the first handle to that slot is stale.
    let (slot, bullet) = report.live.first().copied().unwrap();
    let generation = report.live_generations[0];
    assert_eq!(generation, 2, "the fixture allocates the live bullet's slot twice");
    assert!(handles[0].ends_with(&format!(
        "= Handle(slot {slot}, generation {generation}, pool 1) -> alloc_state::BULLETS[{slot}] = alloc_state::Bullet {{x: {}, y: {}, dx: {}, dy: {}}}",
        bullet.x, bullet.y, bullet.dx, bullet.dy
    )), "{}", handles[0]);
    let freed = report.free_stack[0];
    assert!(
        handles[1].ends_with(&format!(
            "= Handle(slot {freed}, generation 1, pool 1) -> alloc_state::BULLETS[{freed}] is free: dangling"
        )),
        "{}",
        handles[1]
    );
    assert!(
        handles[2].ends_with(&format!(
            "= Handle(slot {slot}, generation 1, pool 1) -> alloc_state::BULLETS[{slot}] is in generation {generation} now: stale"
        )),
        "{}",
        handles[2]
    );
    // A reference to a handle prints as the handle it refers to, behind `&`, not as its address.
    let after_equals = |l: &str| l.split_once(" = ").map(|(_, v)| v.to_string());
    assert_eq!(after_equals(handles[3]), after_equals(handles[0]).map(|live| format!("&{live}")), "{out}");

    // In C, the commands and the handle printers say the same, in Rust, and leave the language as it was.
    let in_c: Vec<_> = section(&out, "in-c").into_iter().filter(|l| !l.starts_with("Warning: ")).collect();
    let pool_lines = section(&out, "pool");
    assert_eq!(in_c[..pool_lines.len()], pool_lines[..], "{out}");
    assert_eq!(after_equals(in_c[pool_lines.len()]), after_equals(handles[0]), "{out}");
    assert_eq!(after_equals(in_c[pool_lines.len() + 1]), after_equals(handles[3]), "{out}");
    assert_eq!(in_c[pool_lines.len() + 2..], ["The current source language is \"c\"."], "{out}");

    let cycle = section(&out, "cycle");
    assert!(cycle.iter().any(|l| l.trim() == format!("> {root}: (bad link)")), "{out}");
    assert!(cycle.iter().any(|l| l.starts_with("stats: ")), "{out}");

    // Each corruption: gdb's `heap check`, the crate's `Heap::check` on the GBA and on a copy here agree.
    for (c, (kind, block)) in &cases {
        let expected = format!("{kind} at block {block}");
        let copy = corrupt(&heap, c);
        assert_eq!(
            alloc_state::verdict(&copy.view(counters)),
            Err((kind.to_string(), *block)),
            "{}: the crate on the host",
            c.name
        );
        let lines = section(&out, c.name);
        assert!(
            lines.contains(&format!("heap check AI_HEAP: {expected}").as_str()),
            "{}: gdb printed {lines:?}",
            c.name
        );
        assert!(lines.contains(&format!("crate: {expected}").as_str()), "{}: the crate said {lines:?}", c.name);
    }
    assert!(out.lines().any(|l| l == "@@end"), "gdb stopped early:\n{out}");
}

/// How the `heap` command's stats line counts free runs: "1 run", "4 runs".
fn runs_phrase(n: u32) -> String {
    format!("{n} run{}", if n == 1 { "" } else { "s" })
}

/// The crate's gdb script on a quick start, as the crate README tells a game to use it: stopped at `breakpoint`,
/// the heap's first free (the quick start's drop), `pool` and `heap` with no expression find the game's statics
/// and show what the game itself printed from the crate's API just before, and `heap check` finds the heap sound.
fn check_the_crate_script_on(elf: &Path, game: &str, breakpoint: &str) {
    let lines = common::log_of(elf);
    let logged_pool = common::line_like(&lines, "pool: {} live, y sum {}, second free {}, slots at {}");
    let logged_heap = common::line_like(&lines, "heap: vec sum {} at {}, box {} at {}, {} of {} bytes used");
    let (live, y_sum): (usize, i32) = (logged_pool[0].parse().unwrap(), logged_pool[1].parse().unwrap());
    let (used, capacity) = (logged_heap[4], logged_heap[5]);

    let script = format!(
        "set breakpoint pending off\ntarget remote 127.0.0.1:@PORT@\nbreak {breakpoint}\ncontinue\necho @@pool\\n\npool\necho @@heap\\n\nheap\n\
         echo @@check\\n\nheap check\necho @@heap-again\\n\n\
         python import sys; sys.stderr.write('@@reads\\n')\nset debug remote 1\nheap\nset debug remote 0\n\
         python import sys; sys.stderr.write('@@end-reads\\n')\necho @@end\\n\ndelete\ndisconnect\n"
    );
    let out = run_gdb(elf, "crates/stackshot-alloc/gdb/stackshot_alloc.py", &script);
    assert!(out.lines().any(|l| l == "@@end"), "gdb stopped early:\n{out}");

    let pool = section(&out, "pool");
    let pool_type = format!("pool {game}::BULLETS: stackshot_alloc::pool::index::IndexPool<{game}::Bullet, u8, 32,");
    assert!(pool[0].starts_with(&pool_type), "{out}");
    assert!(pool[1].trim().starts_with(&format!("capacity 32, in use {live}, free {},", 32 - live)), "{out}");
    assert_eq!(pool[3].trim(), format!("live handles ({live}):"));
    let bullet = format!("[{{}}] generation {{}}: {game}::Bullet {{y: {{}}, dy: -15}}");
    let ys: Vec<i32> = pool[4..]
        .iter()
        .map(|l| common::capture(l.trim(), &bullet).unwrap_or_else(|| panic!("not a live bullet: {l}\n{out}")))
        .map(|fields| fields[2].parse().unwrap())
        .collect();
    assert_eq!((ys.len(), ys.iter().sum::<i32>()), (live, y_sum), "{out}");

    let heap = section(&out, "heap");
    assert!(heap[0].starts_with(&format!("heap {game}::HEAP: base 0x03")), "{out}");
    let stats = heap.iter().find(|l| l.starts_with("stats: ")).expect("a stats line");
    assert!(stats.starts_with(&format!("stats: capacity {capacity} B, used {used} B, ")), "{out}");
    // A quick start at its first free has one free run, the top, on the map line and in the stats: "in 1 run".
    let runs =
        heap.iter().filter(|l| l.trim_start().starts_with('[')).map(|l| l.matches("[free ").count() as u32).sum();
    assert_eq!(runs, 1, "{out}");
    assert!(stats.contains(&format!(" B in {}, ", runs_phrase(runs))), "{out}");
    assert_eq!(section(&out, "check"), [format!("heap check {game}::HEAP: ok")]);

    // What `heap` reads from the target, packet by packet (gdb's remote log, on stderr): gdb reads mGBA's GDB stub 68
    // bytes a packet, about 43 ms each under `mgba -g`. The heap struct in a few reads, and of the region its header
    // and map and, of each free run, a chunk or two around its first and last blocks, and no more.
    let heap_line =
        common::capture(heap[0], "heap {}: base {}, blocks {}..{} ({} managed, {} B)").expect("the heap line");
    let base = u32::from_str_radix(heap_line[1].trim_start_matches("0x"), 16).unwrap();
    let (first, end): (u32, u32) = (heap_line[2].parse().unwrap(), heap_line[3].parse().unwrap());
    let reads: Vec<(u32, u32)> = section(&out, "reads")
        .iter()
        .filter_map(|l| common::capture(l, "[remote] Sending packet: $m{},{}#{}"))
        .map(|f| (u32::from_str_radix(f[0], 16).unwrap(), u32::from_str_radix(f[1], 16).unwrap()))
        .collect();
    let in_region: u32 = reads.iter().filter(|(at, _)| (base..base + 8 * end).contains(at)).map(|(_, n)| n).sum();
    assert!(
        (8 * first..=8 * first + 2 * 64 * runs).contains(&in_region),
        "`heap` read {in_region} bytes of the region: {reads:x?}\n{out}"
    );
    assert!(reads.len() <= 8, "`heap` took {} reads: {reads:x?}\n{out}", reads.len());
}

/// Linked by the gba crate's linker script, which leaves the ELF no symbol table (gdb reads the DWARF).
#[test]
fn the_crate_script_reads_the_gba_quickstart() {
    let elf = common::gba_quickstart();
    assert!(Elf::read(&elf).unwrap().symbol("main").is_none(), "the quick start's ELF has a symbol table now");
    check_the_crate_script_on(&elf, "gba_quickstart", "stackshot_alloc::heap::Heap::free");
}

/// With the crate's `iwram` feature `Heap::free` is inlined into an ARM function in IWRAM, where gdb would find it
/// through `.debug_ranges`, which that linker script discards: the README's breakpoint is that function.
#[test]
fn the_crate_script_reads_the_gba_quickstart_built_with_iwram() {
    check_the_crate_script_on(&common::gba_quickstart_iwram(), "gba_quickstart", "stackshot_alloc::iwram::heap_free");
}

#[test]
#[ignore = "the agb quick start: make test-long builds and runs it"]
fn the_crate_script_reads_the_agb_quickstart() {
    check_the_crate_script_on(&common::agb_quickstart(), "agb_quickstart", "stackshot_alloc::heap::Heap::free");
}

/// With no program running, gdb reads the statics' initial values from the ELF: the commands work on the fixture
/// (which holds a static heap the debug info gives no location: read, it would be read at address 0) and on the
/// quick start (no symbol table), after the ELF is loaded again too (`file`), and gdb warns of nothing.
#[test]
fn the_commands_read_an_elf_with_no_program_running() {
    for (elf, heap) in [(fixture(), "alloc_state::AI_HEAP"), (common::gba_quickstart(), "gba_quickstart::HEAP")] {
        let out = gdb_batch()
            .args(["-x", "crates/stackshot-alloc/gdb/stackshot_alloc.py", "-ex", "heap check", "-ex"])
            .arg(format!("file {}", elf.display()))
            .args(["-ex", "heap check", "-ex"])
            .arg(format!("heap check {heap}"))
            .arg(&elf)
            .output()
            .unwrap();
        let (text, errors) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success() && errors.trim().is_empty(), "{}:\n{text}\n{errors}", elf.display());
        // The heap is set up by its first allocation: in the ELF it is not yet, named or not.
        let expected = format!("heap {heap}: not initialised");
        assert_eq!(text.lines().collect::<Vec<_>>(), [expected.as_str(); 3], "{}", elf.display());
    }
    // Only a holder with nothing in it is "not initialised": a function whose type names a Heap is no heap at all.
    let not_a_heap = "stackshot_alloc::heap::Heap::free";
    let out = gdb_batch()
        .args(["-x", "crates/stackshot-alloc/gdb/stackshot_alloc.py", "-ex", &format!("heap {not_a_heap}")])
        .arg(common::gba_quickstart())
        .output()
        .unwrap();
    let (text, errors) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(
        text.trim().is_empty() && errors.contains(&format!("{not_a_heap} is not (and does not hold) a Heap")),
        "{text}{errors}"
    );
}

#[test]
fn init_script_loads_the_commands_with_no_program() {
    let out = gdb_batch().args(["-x", "tools/gdb/init.gdb", "-ex", "help pool", "-ex", "help heap"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("pool [EXPR]") && text.contains("heap check [EXPR]"), "{text}");
}
