# StackShot. `make` builds the ROM, `make run` plays it, `make test` runs every test. Each sets itself up first.
SHELL := bash
.SHELLFLAGS := -euo pipefail -c

ELF := target/thumbv4t-none-eabi/release/stackshot
ROM := target/stackshot.gba
LOG := target/test.log
CRATE := crates/stackshot-alloc
# The benchmark ROM's two builds (profiles in Cargo.toml), and the host program that runs them.
BENCH_ARM := target/thumbv4t-none-eabi/bench-arm/stackshot-bench
BENCH_THUMB := target/thumbv4t-none-eabi/bench-thumb/stackshot-bench
BENCH_REPORT := tools/target/x86_64-unknown-linux-gnu/release/bench-report
# The bullet-hell scene (examples/bullet_hell.rs), which the report's game table runs beside the two-minute session.
SCENE := target/thumbv4t-none-eabi/release/examples/bullet_hell

.PHONY: all rom run test bench bench-arm record-trace traces setup debug fixture examples lint
all: rom

setup:
	@tools/setup

# The ELF keeps its symbols and debug info for gdb; the .gba gets a header a cartridge accepts.
rom: setup
	cargo build --release
	tools/.gbafix/bin/agb-gbafix $(ELF) -o $(ROM) --title STACKSHOT --gamecode SSHE --makercode 00
	@echo "built $(ROM) ($$(stat -c %s $(ROM)) bytes) and $(ELF)"
	@tools/budget $(ELF)

# mGBA's window at SCALE times the GBA's screen (`make run SCALE=4`); the keys are printed first.
SCALE ?= 3
run: rom
	tools/play $(ROM) $(SCALE)

# gdb on the game (or `make debug DEBUG_ELF=...`), served by the headless harness on 127.0.0.1:2345 only, with the
# allocator crate's gdb commands loaded (tools/gdb/init.gdb). The release ELF: the code players run, with full debug
# info.
DEBUG_ELF ?= $(ELF)
debug: rom
	tools/debug $(DEBUG_ELF)

# The fixture ROMs the host tests run: the allocator state for gdb and the overlay (examples/alloc_state.rs), and
# the faults for the crash screen (examples/faults.rs), and the bullet-hell scene (examples/bullet_hell.rs).
fixture: setup
	cargo build --release --example alloc_state --example faults --example bullet_hell

# The allocator crate's quick-start ROMs (crates/examples/), which tools/harness/tests/examples.rs runs, each a
# workspace of its own, set up as a game of its own. One is on the gba crate's runtime, linked with that crate's
# linker script, copied beside it as the crate README tells a game to (from where `cargo metadata` says cargo
# unpacked the gba crate the lock file pins; `cp -p`, so that an unchanged script links nothing again), and also
# built with the crate's feature `iwram`, a copy kept for the gdb test (cargo keeps both builds: no rebuild). The other
# is on agb's, built with agb's linker settings (its first build compiles agb and its build-time converters, about
# 4 minutes).
GBA_QUICKSTART := crates/examples/gba-quickstart
examples: setup
	cd $(GBA_QUICKSTART) && meta=$$(cargo metadata --format-version 1) \
	  && gba=$$(echo "$$meta" | grep -o '"manifest_path":"[^"]*/gba-[0-9][^"/]*/Cargo.toml"' | sed 's/^.*:"//; s/Cargo.toml"$$//') \
	  && cp -p "$${gba:?no gba crate in cargo metadata}linker_scripts/mono_boot.ld" .
	cd $(GBA_QUICKSTART) && cargo build --release --features stackshot-alloc/iwram \
	  && cp -p target/thumbv4t-none-eabi/release/gba-quickstart target/gba-quickstart-iwram
	cd $(GBA_QUICKSTART) && cargo build --release
	cd crates/examples/agb-quickstart && cargo build --release

# Formatting (rustfmt.toml) and clippy (every warning an error) of every crate: the game's workspace (game, bench, the
# allocator crate), tools/, the two quick starts and the fuzz target, each a workspace of its own. The game's workspace
# is linted for the GBA without the allocator crate's host tests (they need std), which are linted from the crate's
# folder: on nightly with every feature but `gba`, and on stable; the crate's GBA code with all its features from the
# root. ROM binaries are no test targets: `--tests` would build them with the host's test harness. Last, the crate as it
# would be published: its docs without a warning, and `cargo package` (which builds the packaged crate on its own, on
# stable).
CLIPPY := -- -D warnings
lint: setup
	cargo fmt --all --check
	cd tools && cargo fmt --all --check
	cd $(GBA_QUICKSTART) && cargo fmt --check
	cd crates/examples/agb-quickstart && cargo fmt --check
	cd crates/stackshot-alloc/fuzz && cargo fmt --check
	cargo clippy --workspace --exclude stackshot-alloc --lib --bins --tests --examples $(CLIPPY)
	cargo clippy -p stackshot-alloc --features gba,iwram,allocator-api,testing $(CLIPPY)
	cd $(CRATE) && cargo clippy --all-targets --features allocator-api,testing,iwram $(CLIPPY)
	cd $(CRATE) && cargo +stable clippy --all-targets --features testing $(CLIPPY)
	cd tools && cargo clippy --workspace --all-targets $(CLIPPY)
	cd $(GBA_QUICKSTART) && cargo clippy $(CLIPPY)
	cd crates/examples/agb-quickstart && cargo clippy $(CLIPPY)
	cd $(CRATE)/fuzz && cargo clippy --all-targets $(CLIPPY)
	cd $(CRATE) && RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --features allocator-api,testing,gba
	cd $(CRATE) && cargo +stable package --allow-dirty --quiet
	@echo "test result: ok. 4 passed; 0 failed; lint: rustfmt, clippy, rustdoc, cargo package"

# On-target tests (each test ROM in the emulator), then the host tests: the asset converter, the harness and the
# ROM it checks, and the allocator crate: natively, with and without the `iwram` feature's code paths, under Miri
# (`tools/miri`: Stacked, with and without them, and Tree Borrows on the other core; the long property runs
# shortened under cfg(miri)) and fuzzed for a minute (half of it with the `iwram` paths). The last line adds up
# every `test result:` line.
test: rom fixture examples bench-arm
	@mkdir -p target && rm -f $(LOG)
	$(MAKE) --no-print-directory lint 2>&1 | tee -a $(LOG)
	cargo test --release --no-fail-fast 2>&1 | tee -a $(LOG)
	rustc --edition 2024 --test build/convert.rs -o target/convert-tests && target/convert-tests 2>&1 | tee -a $(LOG)
	cargo build --profile soak  # the soak test's ROM: release code with the allocators checked every frame
	cd tools && cargo test --release --workspace --no-fail-fast 2>&1 | tee -a ../$(LOG)
	cd $(CRATE) && cargo test --release --features allocator-api --no-fail-fast 2>&1 | tee -a ../../$(LOG)
	cd $(CRATE) && cargo test --release --features allocator-api,iwram --no-fail-fast 2>&1 | tee -a ../../$(LOG)  # the GBA's ARM code paths
	cd $(CRATE) && cargo +stable test --no-fail-fast 2>&1 | tee -a ../../$(LOG)  # the crate on stable Rust
	tools/miri 2>&1 | tee -a $(LOG)
	tools/fuzz 60 2>&1 | tee -a $(LOG)
	@awk '/^test result:/ { p += $$4; f += $$6 } END { printf "\ntotal: %d passed, %d failed\n", p, f; exit (f > 0) }' $(LOG)

# The benchmark ROM's ARM/IWRAM build: every allocator ARM code in IWRAM. `make test` checks its ELF.
bench-arm: setup
	cargo build --profile bench-arm -p stackshot-bench --features arm-iwram

# The benchmark ROM (bench/) in both builds in the harness: the report, a chart and the heap map in docs/, every
# figure in CPU cycles or bytes.
bench: bench-arm
	cargo build --profile bench-thumb -p stackshot-bench
	cd tools && cargo build --release -p bench-report
	cargo build --release
	cargo build --release --example bullet_hell
	$(BENCH_REPORT) $(BENCH_ARM) $(BENCH_THUMB) $(ELF) bench/traces/play.keys $(SCENE) \
	  docs/benchmarks.md docs/benchmarks.png docs/heap-map.png

# Records the game's heap traffic for the benchmark: builds with --features alloc-trace (plus bullet-hell for
# the second) play bench/traces/play.keys, into bench/traces/ai-scratch.txt and bullet-hell.txt.
record-trace: setup
	cd tools && cargo build --release -p bench-report
	cargo build --release --features alloc-trace --target-dir target/alloc-trace
	$(BENCH_REPORT) record ai target/alloc-trace/thumbv4t-none-eabi/release/stackshot bench/traces/play.keys 18000 bench/traces/ai-scratch.txt
	cargo build --release --features alloc-trace,bullet-hell --target-dir target/alloc-trace
	$(BENCH_REPORT) record bullet-hell target/alloc-trace/thumbv4t-none-eabi/release/stackshot bench/traces/play.keys 18000 bench/traces/bullet-hell.txt

# Writes the generated traces (random mix, adversarial, agb's workload) into bench/traces/.
traces: setup
	cd tools && cargo build --release -p bench-report
	$(BENCH_REPORT) traces bench/traces
