# StackShot's gdb setup: the allocator commands and pretty-printers (tools/gdb/stackshot.py, see its docstring).
# Run gdb from the project root: `make debug` and the harness's gdb test do.
set pagination off
set confirm off
source tools/gdb/stackshot.py
