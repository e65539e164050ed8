# StackShot's gdb setup: the allocator crate's commands and pretty-printers (see the docstring of
# crates/stackshot-alloc/gdb/stackshot_alloc.py). Run gdb from the project root: `make debug` and the harness's gdb
# test do.
set pagination off
set confirm off
source crates/stackshot-alloc/gdb/stackshot_alloc.py
