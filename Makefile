# StackShot. `make` builds the ROM, `make run` plays it, `make test` runs the short tier of tests and `make test-long`
# the long one. Each sets itself up first.
SHELL := bash
.SHELLFLAGS := -euo pipefail -c

ELF := target/thumbv4t-none-eabi/release/stackshot
ROM := target/stackshot.gba
CRATE := crates/stackshot-alloc
# The benchmark ROM's two builds (profiles in Cargo.toml), and the host program that runs them.
BENCH_ARM := target/thumbv4t-none-eabi/bench-arm/stackshot-bench
BENCH_THUMB := target/thumbv4t-none-eabi/bench-thumb/stackshot-bench
BENCH_GAME := target/thumbv4t-none-eabi/bench-game/stackshot-bench
BENCH_REPORT := tools/target/x86_64-unknown-linux-gnu/release/bench-report
# The bullet-hell scene (fixtures/bullet_hell.rs), which the report's game table runs beside the two-minute session.
SCENE := target/thumbv4t-none-eabi/release/examples/bullet_hell
# The music fixture (fixtures/music.rs), whose 8-voice runs the report's music table measures.
MUSIC := target/thumbv4t-none-eabi/release/examples/music

.PHONY: all rom run test test-long bench bench-arm record-trace traces setup debug fixture soak examples examples-gba \
  examples-agb lint lint-steps lint-long package music music-preview
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

# The music: every assets/music/*.txt written as the .xm beside it by the generator (tools/compose), which prints
# each song's stats; `make music PREVIEW=1` also renders each to target/music/NAME.wav. The .xm files are committed.
music:
	cd tools && cargo +stable run --release -p compose -- $(if $(PREVIEW),--preview)

# The fixture ROMs the host tests run: the allocator state for gdb and the overlay (fixtures/alloc_state.rs), the
# faults for the crash screen (fixtures/faults.rs), the bullet-hell scene (fixtures/bullet_hell.rs), the mixer and
# the tracker heard (fixtures/music.rs), and a static pool that costs no ROM (fixtures/zeroed_pool.rs).
fixture: setup
	cargo build --release --example alloc_state --example faults --example bullet_hell --example music \
	  --example zeroed_pool

# The soak test's ROM: release code with the allocators checked every frame.
soak: setup
	cargo build --profile soak

# The allocator crate's quick-start ROMs (crates/examples/), which tools/harness/tests/alloc_quickstarts.rs runs, each a
# workspace of its own, set up as a game of its own. `examples-gba` is on the gba crate's runtime, linked with that
# crate's linker script, copied beside it as the crate README tells a game to (from where `cargo metadata` says cargo
# unpacked the gba crate the lock file pins; `cp -p`, so that an unchanged script links nothing again), and also
# built with the crate's feature `iwram`, a copy kept for the gdb test (cargo keeps both builds: no rebuild).
# `examples-agb` is on agb's, built with agb's linker settings (its first build compiles agb and its build-time
# converters, minutes: only `make test-long` builds it).
GBA_QUICKSTART := crates/examples/gba-quickstart
AGB_QUICKSTART := crates/examples/agb-quickstart
examples: examples-gba examples-agb
examples-gba: setup
	cd $(GBA_QUICKSTART) && meta=$$(cargo metadata --format-version 1) \
	  && gba=$$(echo "$$meta" | grep -o '"manifest_path":"[^"]*/gba-[0-9][^"/]*/Cargo.toml"' | sed 's/^.*:"//; s/Cargo.toml"$$//') \
	  && cp -p "$${gba:?no gba crate in cargo metadata}linker_scripts/mono_boot.ld" .
	cd $(GBA_QUICKSTART) && cargo build --release --features stackshot-alloc/iwram \
	  && cp -p target/thumbv4t-none-eabi/release/gba-quickstart target/gba-quickstart-iwram
	cd $(GBA_QUICKSTART) && cargo build --release
examples-agb: setup
	cd $(AGB_QUICKSTART) && cargo build --release

# What the game sounds like, as WAV files (16-bit stereo, 32,768 Hz) recorded by the headless harness (`harness audio`):
# 30 s (1,792 frames) of the title, and 30 s of stage 1 from its start as tools/music-preview.keys plays it (frames 32 to
# 1,823, after half a second of the title).
MUSIC_PREVIEW := target/music-preview
HARNESS := tools/target/x86_64-unknown-linux-gnu/release/harness
music-preview: rom
	cd tools && cargo +stable build --release -p harness
	mkdir -p $(MUSIC_PREVIEW)
	$(HARNESS) audio $(ROM) --frames 1792 --wav $(MUSIC_PREVIEW)/title.wav
	$(HARNESS) audio $(ROM) --frames 1824 --input tools/music-preview.keys --wav $(MUSIC_PREVIEW)/stage1.wav

# The tests, in two tiers. `make test` is every correctness test at short settings, and keeps to its time (README,
# "Testing"): the lints, every on-target test ROM, the harness's tests of the ROMs (a soak of twenty emulated
# minutes), the allocator crate natively (nightly with the `iwram` code paths and the allocator API, and stable
# without), under Miri (a subset, tools/miri quick) and its fuzz target's logic over the committed corpus.
# `make test-long` is what takes long: the hour's soak and the agb quick start (the harness's ignored tests), the
# lints of every feature combination, rustdoc and `cargo package`, the crate natively without `iwram` on nightly,
# Miri's full matrix, and a minute of fuzzing each build. Each tier ends with a table of its steps' times and
# `total: N passed, M failed` (tools/step); a failed step does not stop the rest. In `make test` the allocator
# crate's host steps run in a lane beside the ROMs' (tools/step lane): they share no build folder, and the two
# halves take about as long, so the two cores finish together.
STEP = tools/step run $(LOG)
CLIPPY := -- -D warnings
CRATE_FUZZ := $(CRATE)/fuzz

test: LOG := target/test.log
test:
	@tools/step begin $(LOG)
	@$(STEP) "setup: what is missing (tools/setup)" 'tools/setup'
	@tools/step lane $(LOG) \
	  "allocator crate: nightly, iwram paths" 'tools/host-cargo $(CRATE) test --release --features allocator-api,iwram --no-fail-fast' \
	  "allocator crate: stable" 'cd $(CRATE) && cargo +stable test --no-fail-fast' \
	  "allocator crate: Miri, a subset" 'tools/miri quick' \
	  "allocator crate: fuzz corpus" 'cd $(CRATE_FUZZ) && cargo +stable test --no-default-features --no-fail-fast'
	@$(STEP) "build: the game, fixtures, soak, bench-arm" '$(MAKE) --no-print-directory rom fixture soak bench-arm'
	@$(STEP) "build: the gba quick start" '$(MAKE) --no-print-directory examples-gba'
	@$(MAKE) --no-print-directory lint-steps LOG=$(LOG)
	@$(STEP) "game and test ROMs, on the GBA" 'cargo test --release --no-fail-fast'
	@$(STEP) "asset converter" 'rustc --edition 2024 --test build/convert.rs -o target/convert-tests && target/convert-tests'
	@$(STEP) "harness: the ROMs from outside" 'cd tools && cargo test --release --workspace --no-fail-fast'
	@tools/step wait $(LOG)
	@tools/step end $(LOG)

test-long: LOG := target/test-long.log
test-long:
	@tools/step begin $(LOG)
	@$(STEP) "setup: what is missing, and cargo-fuzz" 'tools/setup long'
	@$(STEP) "build: the soak ROM, the agb quick start" '$(MAKE) --no-print-directory soak examples-agb'
	@$(STEP) "clippy: every feature set, agb quick start" '$(MAKE) --no-print-directory lint-long'
	@$(STEP) "rustdoc and cargo package" '$(MAKE) --no-print-directory package'
	@$(STEP) "harness: hour soak, agb quick start" 'cd tools && cargo test --release --workspace --no-fail-fast -- --ignored'
	@$(STEP) "allocator crate: nightly, portable paths" 'tools/host-cargo $(CRATE) test --release --features allocator-api --no-fail-fast'
	@$(STEP) "allocator crate: Miri, every test, 3 passes" 'tools/miri'
	@$(STEP) "allocator crate: fuzzing, 60 s a build" 'tools/fuzz 120'
	@tools/step end $(LOG)

# Formatting (rustfmt.toml) and clippy (every warning an error), one pass a workspace: the game's (the game, bench,
# tests, the platform, and the allocator crate's GBA code, which clippy lints as a member with every feature the
# members ask for, and the allocator API), the allocator crate's host tests (through tools/host-cargo, with nightly's
# prebuilt std), tools/, the gba quick start and the fuzz crate's logic. ROM binaries are no test targets: `--tests`
# would build them with the host's test harness. tools/ builds on stable (tools/rust-toolchain.toml), and so does the
# fuzz crate's logic here: stable uses its prebuilt std, where nightly would build std from source for the host, as
# the root config's `build-std` reaches every folder. `make lint` runs these alone, with their table.
lint: LOG := target/lint.log
lint:
	@tools/step begin $(LOG)
	@$(STEP) "setup: what is missing (tools/setup)" 'tools/setup'
	@$(MAKE) --no-print-directory lint-steps LOG=$(LOG)
	@tools/step end $(LOG)

lint-steps:
	@$(STEP) "rustfmt: every workspace" 'cargo fmt --all --check && (cd tools && cargo fmt --all --check) \
	  && (cd $(GBA_QUICKSTART) && cargo fmt --check) && (cd $(AGB_QUICKSTART) && cargo fmt --check) \
	  && (cd $(CRATE_FUZZ) && cargo fmt --check)'
	@$(STEP) "clippy: the game's workspace, for the GBA" 'cargo clippy --workspace --exclude stackshot-alloc --lib --bins --tests --examples --features stackshot-alloc/allocator-api $(CLIPPY)'
	@$(STEP) "clippy: the allocator crate, host" 'tools/host-cargo $(CRATE) clippy --all-targets --features allocator-api,testing,iwram $(CLIPPY)'
	@$(STEP) "clippy: tools" 'cd tools && cargo clippy --workspace --all-targets $(CLIPPY)'
	@$(STEP) "clippy: the gba quick start" 'cd $(GBA_QUICKSTART) && cargo clippy $(CLIPPY)'
	@$(STEP) "clippy: the fuzz crate's logic" 'cd $(CRATE_FUZZ) && cargo +stable clippy --all-targets --no-default-features $(CLIPPY)'

# The long tier's lints: the allocator crate with every combination of its features (tools/lint-features), the agb
# quick start, and the fuzz target's binary with libFuzzer.
lint-long:
	tools/lint-features
	cd $(AGB_QUICKSTART) && cargo clippy $(CLIPPY)
	cd $(CRATE_FUZZ) && cargo clippy --all-targets $(CLIPPY)

# The allocator crate as it would be published: its docs without a warning, and `cargo package` (which builds the
# packaged crate on its own, on stable).
package: setup
	RUSTDOCFLAGS="-D warnings" tools/host-cargo $(CRATE) doc --no-deps --features allocator-api,testing,gba
	cd $(CRATE) && cargo +stable package --allow-dirty --quiet

# The benchmark ROM's ARM/IWRAM build: every allocator ARM code in IWRAM. `make test` checks its ELF.
bench-arm: setup
	cargo build --profile bench-arm -p stackshot-bench --features arm-iwram

# The benchmark ROM (bench/) in its three builds in the harness (ARM/IWRAM, Thumb/ROM, and the game's: our heap's
# rare paths Thumb code in ROM): the report, a chart and the heap map in docs/, every figure in CPU cycles or bytes.
bench: bench-arm
	cargo build --profile bench-thumb -p stackshot-bench
	cargo build --profile bench-game -p stackshot-bench --features arm-game
	cd tools && cargo build --release -p bench-report
	cargo build --release
	cargo build --release --example bullet_hell --example music
	$(BENCH_REPORT) $(BENCH_ARM) $(BENCH_THUMB) $(BENCH_GAME) $(ELF) bench/traces/play.keys $(SCENE) $(MUSIC) \
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
