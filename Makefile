# StackShot. `make` builds the ROM, `make run` plays it, `make test` runs every test. Each sets itself up first.
SHELL := bash
.SHELLFLAGS := -euo pipefail -c

ELF := target/thumbv4t-none-eabi/release/stackshot
ROM := target/stackshot.gba
LOG := target/test.log

.PHONY: all rom run test bench record-trace setup debug fixture
all: rom

setup:
	@tools/setup

# The ELF keeps its symbols and debug info for gdb; the .gba gets a header a cartridge accepts.
rom: setup
	cargo build --release
	tools/.gbafix/bin/agb-gbafix $(ELF) -o $(ROM) --title STACKSHOT --gamecode SSHE --makercode 00
	@echo "built $(ROM) ($$(stat -c %s $(ROM)) bytes) and $(ELF)"

run: rom
	tools/play $(ROM)

# gdb on the game (or `make debug DEBUG_ELF=...`), served by the headless harness on 127.0.0.1:2345 only, with the
# allocator commands of tools/gdb/ loaded. The release ELF: the code players run, with full debug info.
DEBUG_ELF ?= $(ELF)
debug: rom
	tools/debug $(DEBUG_ELF)

# The allocator-state fixture ROM the gdb and overlay tests run (examples/alloc_state.rs).
fixture: setup
	cargo build --release --example alloc_state

# On-target tests (each test ROM in the emulator), then the host tests: the asset converter, the harness and the
# ROM it checks, and the allocator crate: natively, under Miri (Stacked, then Tree Borrows; the long property
# runs shortened under cfg(miri)) and fuzzed for a minute. The last line adds up every `test result:` line.
test: rom fixture
	@mkdir -p target && rm -f $(LOG)
	cargo test --release --no-fail-fast 2>&1 | tee -a $(LOG)
	rustc --edition 2024 --test build/convert.rs -o target/convert-tests && target/convert-tests 2>&1 | tee -a $(LOG)
	cargo build --profile soak  # the soak test's ROM: release code with the allocators checked every frame
	cd tools && cargo test --release --workspace --no-fail-fast 2>&1 | tee -a ../$(LOG)
	cd tools && cargo test --release -p stackshot-alloc --no-fail-fast 2>&1 | tee -a ../$(LOG)
	cd tools && cargo miri test -p stackshot-alloc --tests --no-fail-fast 2>&1 | tee -a ../$(LOG)
	cd tools && MIRIFLAGS=-Zmiri-tree-borrows cargo miri test -p stackshot-alloc --tests --no-fail-fast 2>&1 | tee -a ../$(LOG)
	tools/fuzz 60 2>&1 | tee -a $(LOG)
	@awk '/^test result:/ { p += $$4; f += $$6 } END { printf "\ntotal: %d passed, %d failed\n", p, f; exit (f > 0) }' $(LOG)

# The benchmark ROM (bench/) in the harness: tables and a chart in docs/, every figure in CPU cycles or bytes.
bench: setup
	cargo build --release -p stackshot-bench
	cd tools && cargo build --release -p bench-report
	cargo build --release
	tools/target/x86_64-unknown-linux-gnu/release/bench-report target/thumbv4t-none-eabi/release/stackshot-bench \
	  target/thumbv4t-none-eabi/release/stackshot bench/traces/play.keys docs/benchmarks.md docs/benchmarks.png

# Records the game's AI heap traffic (a build with --features alloc-trace, playing bench/traces/play.keys for five
# minutes) into bench/traces/ai-scratch.txt, the "AI scratch" trace `make bench` replays.
record-trace: setup
	cargo build --release --features alloc-trace --target-dir target/alloc-trace
	cd tools && cargo build --release -p bench-report
	tools/target/x86_64-unknown-linux-gnu/release/bench-report record target/alloc-trace/thumbv4t-none-eabi/release/stackshot bench/traces/play.keys 18000 bench/traces/ai-scratch.txt
