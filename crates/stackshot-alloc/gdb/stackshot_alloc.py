"""stackshot-alloc's pools and heaps in gdb: `pool`, `heap`, `heap check`, and a pretty-printer for pool handles.

`source` this file in gdb (the crate README's "Debugging with gdb"; StackShot's tools/gdb/init.gdb does). Rust
structs (`IndexPool`, `Heap`, `Handle`) are read by field name through the ELF's DWARF, never at fixed offsets: a
renamed field is an error naming it, and a moved one is simply followed. The tree-heap's in-region encoding is its
documented on-memory format, decoded from the region's bytes with the constants below (src/heap/mod.rs, "Layout",
and src/heap/map.rs, src/heap/tree.rs, in this crate).

  pool [EXPR]         an IndexPool (an expression: `pool BULLETS`), or every static IndexPool
  heap [EXPR]         a Heap (or &Heap, Option<Heap>, LockedHeap, GlobalHeap), or every static one
  heap check [EXPR]   the crate's invariants (Heap::check) re-done on memory: `ok` or `Kind at block N`
"""

import re
import struct

import gdb
import gdb.printing

# --- The heap's on-memory format (src/heap/mod.rs). -------------------------------------------------------------------
BLOCK = 8  # bytes a block; block b is at base + 8*b
HDR_COUNT = 0  # u16: managed blocks
HDR_ROOT = 2  # u16: block of the tree's root, 0 = empty
MAP = 4  # the map's first byte: 2 bits a managed block, 4 blocks a byte, low bits first
NODE_SMALLER, NODE_LARGER, NODE_PARENT, NODE_SIZE = 0, 2, 4, 6  # u16 fields of a free run's first block
NODE_COLOUR = 8  # heap/tree.rs: a tree node's colour, a byte (0 black, else red) in its run's second block
FREE, USED, SPARE, LAST = 0b00, 0b11, 0b10, 0b01  # map codes (heap/map.rs); no block has SPARE
USED_BIT = 0b01
NIL = 0
MAX_DEPTH = 32  # heap/check.rs: no valid tree is deeper
BINNED = 31  # heap/bins.rs: free runs of up to 31 blocks (but the top) are in bins, not the tree
BIN_NEXT, BIN_PREV = 0, 2  # u16 links of a binned run's first block

POOL_TYPE = "stackshot_alloc::pool::index::IndexPool<"
HEAP_TYPE = "stackshot_alloc::heap::Heap"
LOCKED_HEAP_TYPE = "stackshot_alloc::heap::adapter::LockedHeap"
GLOBAL_HEAP_TYPE = "stackshot_alloc::heap::global::GlobalHeap"
HANDLE_TYPE = "stackshot_alloc::pool::handle::Handle<"
OPTION = "core::option::Option<"  # an empty one is a heap not set up yet


class StateError(gdb.GdbError):
    pass


class in_rust:
    """`with in_rust():` the commands' work, in Rust whatever `set language` says (a session may have switched to C
    to write memory the C way): they match Rust's names of types, which gdb spells otherwise in C, and print values
    as Rust. EXPR is a Rust expression."""

    def __enter__(self):
        self.language = gdb.parameter("language")
        gdb.execute("set language rust", to_string=True)

    def __exit__(self, *_):
        gdb.execute("set language %s" % self.language, to_string=True)


def field(value, name):
    """value.name, or an error saying the script no longer matches the crate's struct."""
    try:
        return value[name]
    except gdb.error:
        raise StateError("stackshot_alloc.py: %s has no field `%s`; update stackshot_alloc.py" % (value.type, name))


def deref(value):
    while value.type.strip_typedefs().code in (gdb.TYPE_CODE_PTR, gdb.TYPE_CODE_REF, gdb.TYPE_CODE_RVALUE_REF):
        value = value.dereference()
    return value


def names_type(text, prefixes, anywhere=False):
    """Whether the type name `text` starts with (or, `anywhere`, holds) one of `prefixes` as a whole path:
    `stackshot_alloc::heap::Heap` names a `Heap`, not a `HeapError`."""
    pattern = "|".join(re.escape(p) + ("" if p.endswith("<") else r"(?![\w:])") for p in prefixes)
    return bool((re.search if anywhere else re.match)(pattern, text))


def find_inner(value, prefixes, depth=0):
    """The value whose type is one of `prefixes`, found through references, `Option::Some` and wrapper structs
    (UnsafeCell, MaybeUninit, LockedHeap...); None if there is none (e.g. an `Option::None`)."""
    value = deref(value)
    name = str(value.type.strip_typedefs())
    if names_type(name, prefixes):
        return value
    t = value.type.strip_typedefs()
    if depth > 6 or t.code not in (gdb.TYPE_CODE_STRUCT, gdb.TYPE_CODE_UNION):
        return None
    for f in t.fields():
        if f.name is None or f.name == "None" or "PhantomData" in str(f.type):
            continue
        try:
            inner = find_inner(value[f.name], prefixes, depth + 1)
        except gdb.error:
            continue  # an enum's inactive variant
        if inner is not None:
            return inner
    return None


def slot_value(value):
    """A `MaybeUninit<T>`'s T (through ManuallyDrop and MaybeDangling)."""
    while str(value.type.strip_typedefs()).startswith("core::mem::"):
        names = [f.name for f in value.type.strip_typedefs().fields()]
        value = value["value" if "value" in names else "__0"]
    return value


def uint(value):
    return int(value.cast(gdb.lookup_type("usize"))) if value.type.code == gdb.TYPE_CODE_PTR else int(value)


# --- Finding the statics: every variable of every compilation unit, found through the units' code. ----------
# The units' code is read from .debug_aranges, not from the symbol table: the gba crate's linker scripts discard
# .symtab, and gdb still reads the DWARF. Kept for each ELF until gdb loads or drops one (`file`, a rebuilt ELF):
# its gdb.Symbols die with it.
_statics = {}


def _forget_statics(_event):
    _statics.clear()


gdb.events.new_objfile.connect(_forget_statics)
gdb.events.clear_objfiles.connect(_forget_statics)


def _code_addresses(path):
    """For each compilation unit, the first address of each of its ranges in code (.debug_aranges, 32-bit DWARF),
    those in read-only sections first: a unit's ranges include its statics too, where gdb finds no code (and says
    so in a warning), and the IWRAM section that holds ARM code holds statics too."""
    data = open(path, "rb").read()
    if data[:5] != b"\x7fELF\x01":
        raise StateError("stackshot_alloc.py: %s is not a 32-bit ELF" % path)
    shoff = struct.unpack_from("<I", data, 0x20)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x2E)
    sections = [struct.unpack_from("<6I", data, shoff + i * shentsize) for i in range(shnum)]
    names = sections[shstrndx][4]
    # (start, end, writable) of each section with SHF_EXECINSTR.
    code = [(addr, addr + size, flags & 1) for _, _, flags, addr, _, size in sections if flags & 4]

    def order(addr):
        """0 in read-only code, 1 in writable code, None elsewhere."""
        return next((writable for start, end, writable in code if start <= addr < end), None)

    aranges = [s for s in sections if data[names + s[0] : data.index(b"\0", names + s[0])] == b".debug_aranges"]
    if not aranges:
        raise StateError("stackshot_alloc.py: %s has no .debug_aranges: build it with debug info" % path)
    for _, _, flags, _, off, size in aranges:
        if flags & 0x800:  # SHF_COMPRESSED
            raise StateError("stackshot_alloc.py: %s: .debug_aranges is compressed; link without it" % path)
        at = off
        while at < off + size:
            length, version, _, address_size, segment_size = struct.unpack_from("<IHIBB", data, at)
            if length >= 0xFFFFFFF0 or version != 2 or address_size != 4 or segment_size != 0:
                raise StateError("stackshot_alloc.py: %s: .debug_aranges is not 32-bit DWARF" % path)
            # Tuples start at the first multiple of 8 (twice the address size) after the 12-byte header.
            tuples = (struct.unpack_from("<II", data, k) for k in range(at + 16, at + 4 + length, 8))
            starts = [(order(addr & ~1), addr & ~1) for addr, span in tuples if span]
            yield [addr for _, addr in sorted(start for start in starts if start[0] is not None)]
            at += 4 + length


def statics():
    """(name, gdb.Symbol) of every global or static variable with debug info, in a stable order."""
    for objfile in gdb.objfiles():
        if objfile.filename in _statics or not objfile.filename:
            continue
        seen, found = set(), {}
        for unit_code in _code_addresses(objfile.filename):
            for addr in unit_code:
                symtab = gdb.find_pc_line(addr).symtab
                if symtab is not None:
                    break
            else:
                continue
            unit = symtab.global_block()
            if (unit.start, unit.end) in seen:
                continue
            seen.add((unit.start, unit.end))
            for block in (unit, symtab.static_block()):
                for sym in block:
                    if sym.is_variable and "{vtable" not in sym.name:
                        found[sym.name] = sym
        _statics[objfile.filename] = sorted(found.items())
    return [item for items in _statics.values() for item in items]


def statics_of(prefixes, holders=()):
    """The statics of a type that names one of `prefixes` or `holders`, with the value inside whose type starts
    with one of `prefixes` (None for an empty `Option`): [(name, value)]. Those with no location are left out."""
    out = []
    for name, sym in statics():
        # No location in the debug info (a static the program never uses, or never reads): nothing to read, and
        # asking for its value would read address 0.
        if sym.addr_class == gdb.SYMBOL_LOC_OPTIMIZED_OUT:
            continue
        if names_type(str(sym.type), prefixes + holders, anywhere=True):
            out.append((name, find_inner(sym.value(), prefixes)))
    return out


def evaluate(expr):
    """A gdb expression; a bare static name also finds a static in a module (`BULLETS` for `game::BULLETS`),
    since Rust statics are only known to gdb by their path."""
    try:
        return gdb.parse_and_eval(expr)
    except gdb.error:
        named = [sym for name, sym in statics() if name == expr.strip() or name.endswith("::" + expr.strip())]
        if len(named) != 1:
            raise
        return named[0].value()


def targets(arg, prefixes, what, holders=()):
    """[(name, value)] for EXPR, or every static with none; the value None for a holder (an `Option`, a
    `LockedHeap`, a `GlobalHeap`) with nothing in it yet, as the commands say "not initialised"."""
    if arg.strip():
        whole = evaluate(arg)
        if whole.is_optimized_out:
            raise StateError("%s has no location in the debug info (the program never uses or never reads it)" % arg)
        value = find_inner(whole, prefixes)
        if value is None:
            name = str(deref(whole).type.strip_typedefs())
            if names_type(name, holders + tuple(OPTION + p for p in prefixes + holders)):
                return [(arg.strip(), None)]
            raise StateError("%s is not (and does not hold) a %s" % (arg, what))
        return [(arg.strip(), value)]
    found = statics_of(prefixes, holders)
    if not found:
        raise StateError("no static %s in this program; give an expression" % what)
    return found


# --- Pools. -------------------------------------------------------------------------------------------------
class Pool:
    """An IndexPool read through DWARF (pool/index.rs): position k holds the slot `stack[k] ^ k`; positions
    `..live` are live (walked from the top, as `iter()` does), `live..` free (allocated in that order). Slot i's
    word `meta[i]` holds its stamp XOR the type's `ID << 8` in its high half: generation << 8 | id."""

    def __init__(self, value):
        self.value = value
        self.stack = field(value, "stack")
        self.meta = field(value, "meta")
        self.capacity = self.stack.type.strip_typedefs().range()[1] + 1
        self.count = int(field(value, "live"))
        self.peak = int(field(value, "peak"))
        self.type_id = type_id(value)
        self.id = ((uint(self.meta[0]) >> 16) & 0xFF) ^ self.type_id
        self.slots = field(value, "slots")

    def generation(self, slot):
        return uint(self.meta[slot]) >> 24

    def slot_at(self, k):
        return int(self.stack[k]) ^ k

    def free_stack(self):
        return [self.slot_at(k) for k in range(min(self.count, self.capacity), self.capacity)]

    def live(self):
        return [self.slot_at(k) for k in range(min(self.count, self.capacity) - 1, -1, -1)]

    def is_live(self, slot):
        return ((uint(self.meta[slot]) & 0xFFFF) ^ slot) < self.count

    def object(self, slot):
        return slot_value(self.slots[slot])


def type_id(value):
    """An IndexPool's `ID`, its fifth generic argument (0 when the type name does not show it)."""
    name = str(value.type.strip_typedefs())
    inner = name[name.find("<") + 1:name.rfind(">")]
    args, depth, start = [], 0, 0
    for k, c in enumerate(inner):
        if c in "<([":
            depth += 1
        elif c in ">)]":
            depth -= 1
        elif c == "," and depth == 0:
            args.append(inner[start:k].strip())
            start = k + 1
    args.append(inner[start:].strip())
    return int(args[4]) if len(args) > 4 and args[4].isdigit() else 0


class RustCommand(gdb.Command):
    """A command named `name` whose work, `show(arg)`, runs `in_rust`."""

    def __init__(self, name):
        super().__init__(name, gdb.COMMAND_DATA, gdb.COMPLETE_EXPRESSION)

    def invoke(self, arg, from_tty):
        with in_rust():
            self.show(arg)


class PoolCommand(RustCommand):
    """pool [EXPR]: an IndexPool's capacity, use, free stack (top first) and live handles; every static pool
    without EXPR."""

    def __init__(self):
        super().__init__("pool")

    def show(self, arg):
        for name, value in targets(arg, (POOL_TYPE,), "IndexPool"):
            if value is None:
                print("pool %s: not initialised" % name)
                continue
            p = Pool(value)
            print("pool %s: %s, id %d" % (name, value.type.strip_typedefs(), p.id))
            print("  capacity %d, in use %d, free %d, peak %d"
                  % (p.capacity, p.count, p.capacity - p.count, p.peak))
            print("  free stack, top first: %s" % " ".join(str(s) for s in p.free_stack()))
            live = p.live()
            print("  live handles (%d):" % len(live))
            for slot in live:
                print("    [%d] generation %d: %s" % (slot, p.generation(slot), p.object(slot)))


class HandlePrinter:
    """`print bullet`: the handle's slot, generation and pool id, and the object it names in the static pool with
    that id: or why it names none (out of range, free, stale: its slot was allocated again since)."""

    def __init__(self, value):
        self.value = value

    def to_string(self):
        with in_rust():
            return self.describe()

    def describe(self):
        raw = int(field(self.value, "raw"))  # pool/handle.rs: index | stamp << 16; stamp = generation << 8 | id
        slot, generation, pool_id = raw & 0xFFFF, raw >> 24, (raw >> 16) & 0xFF
        of = self.value.type.strip_typedefs().template_argument(0)
        head = "Handle(slot %d, generation %d, pool %d)" % (slot, generation, pool_id)
        for name, value in statics_of((POOL_TYPE,)):
            if value is None or str(value.type.strip_typedefs().template_argument(0)) != str(of):
                continue
            p = Pool(value)
            if p.id != pool_id:
                continue
            if slot >= p.capacity:
                return "%s -> out of range of %s (capacity %d)" % (head, name, p.capacity)
            if p.generation(slot) != generation:
                return "%s -> %s[%d] is in generation %d now: stale" % (head, name, slot, p.generation(slot))
            if not p.is_live(slot):
                return "%s -> %s[%d] is free: dangling" % (head, name, slot)
            return "%s -> %s[%d] = %s" % (head, name, slot, p.object(slot))
        return "%s -> no static pool of %s with id %d" % (head, of, pool_id)


# --- The heap. ----------------------------------------------------------------------------------------------
class RegionBytes:
    """A heap region's bytes as the commands read them: the header and the map at once (every command walks the
    map), the blocks a chunk at a time when first read. gdb reads 68 bytes a packet from mGBA's GDB stub, which
    answers each in about 43 ms under `mgba -g`: a 256 KB heap read whole took three minutes, where a walk reads its
    map and the nodes and size copies of its free runs."""

    CHUNK = 64

    def __init__(self, base, head, size):
        self.base, self.size = base, size
        self.head = self.read(0, head)
        self.chunks = {}

    def read(self, offset, length):
        return bytes(gdb.selected_inferior().read_memory(self.base + offset, length))

    def __getitem__(self, offset):
        if 0 <= offset < len(self.head):
            return self.head[offset]
        if not 0 <= offset < self.size:
            raise IndexError("offset %d is outside the heap's %d bytes" % (offset, self.size))
        k = offset // self.CHUNK
        if k not in self.chunks:
            self.chunks[k] = self.read(k * self.CHUNK, min(self.CHUNK, self.size - k * self.CHUNK))
        return self.chunks[k][offset % self.CHUNK]


class HeapImage:
    """A Heap's counters (through DWARF) and its region's bytes (decoded with the documented format)."""

    def __init__(self, value):
        value.fetch_lazy()  # the struct in one read, not a field (and a bin head) at a time
        self.base = uint(field(value, "base"))
        self.first = int(field(value, "first"))
        self.end = int(field(value, "end"))
        self.top = int(field(value, "top"))
        bins = field(value, "bins")
        self.bins = [int(bins[s]) for s in range(BINNED + 1)]
        self.binned = int(field(value, "binned"))
        self.used_blocks = int(field(value, "used_blocks"))
        # `free` keeps the peak up to the last free; the use now may be above it.
        self.peak_used = max(int(field(value, "peak_used")), self.used_blocks)
        self.failed = int(field(value, "failed"))
        self.bad_frees = int(field(value, "bad_frees"))
        self.mem = RegionBytes(self.base, self.first * BLOCK, self.end * BLOCK)

    def u16(self, offset):
        return self.mem[offset] | self.mem[offset + 1] << 8

    def code(self, b):
        i = b - self.first
        return (self.mem[MAP + i // 4] >> (2 * (i % 4))) & 3

    def node(self, b, offset):
        return self.u16(b * BLOCK + offset)

    def size(self, b):
        return self.node(b, NODE_SIZE)

    def key(self, b):
        return (self.size(b) << 16) | b

    def managed(self, b):
        return self.first <= b < self.end

    def is_red(self, b):
        """Node b's colour; black when its colour byte would be past the heap (only in a broken tree)."""
        return b != NIL and b + 1 < self.end and self.mem[b * BLOCK + NODE_COLOUR] != 0

    def runs(self):
        """(kind, start, blocks) in block order, read from the map as the allocator reads it: a used run ends at
        `01`, the top (which holds no size) at the end, another free run's length is its node's size (clamped
        to the heap when the size is broken)."""
        out, b, top = [], self.first, self.map_top()
        while b < self.end:
            start = b
            if self.code(b) & USED_BIT:
                while b < self.end - 1 and self.code(b) == USED:
                    b += 1
                out.append(("used", start, b + 1 - start))
                b += 1
            else:
                n = self.end - b if b == top else max(1, min(self.size(b), self.end - b))
                out.append(("free", start, n))
                b += n
        return out

    def tree_lines(self):
        lines = []

        def walk(x, side, depth, seen):
            if x == NIL:
                return
            pad = "  " * depth
            if not self.managed(x) or x in seen or depth > MAX_DEPTH:
                lines.append("%s%s%d: (bad link)" % (pad, side, x))
                return
            seen.add(x)
            colour = "red" if self.is_red(x) else "black"
            lines.append("%s%s%d: size %d, %s" % (pad, side, x, self.size(x), colour))
            walk(self.node(x, NODE_SMALLER), "< ", depth + 1, seen)
            walk(self.node(x, NODE_LARGER), "> ", depth + 1, seen)

        walk(self.u16(HDR_ROOT), "", 0, set())
        return lines

    def map_top(self):
        """The first of the free codes that end the map (the top as the map shows it), or end."""
        b = self.end
        while b > self.first and not self.code(b - 1) & USED_BIT:
            b -= 1
        return b

    def top_run(self):
        """(first block, blocks) of the top, the free run that ends the heap (kept out of the tree), read from
        the map; None when the last block is used."""
        top = self.map_top()
        return None if top == self.end else (top, self.end - top)

    def largest_free(self):
        top = self.end - self.top
        x = self.u16(HDR_ROOT)
        if x == NIL:
            binned = [s for s in range(1, BINNED + 1) if self.binned & (1 << s)]
            return max([top] + binned)
        # The rightmost node, as far as the links lead to nodes not yet seen: `heap` shows a broken tree too (`heap
        # check` names what is broken), and a link back into the path looped for ever.
        seen = set()
        while self.managed(x) and x not in seen:
            seen.add(x)
            larger = self.node(x, NODE_LARGER)
            if larger == NIL or not self.managed(larger) or larger in seen:
                break
            x = larger
        return max(self.size(x) if self.managed(x) else 0, top)

    def check(self):
        """Heap::check (heap/check.rs) on these bytes, in the same order: None or (kind, block)."""
        if self.u16(HDR_COUNT) != self.end - self.first:
            return ("Header", 0)
        root = self.u16(HDR_ROOT)
        if root != NIL and not self.managed(root):
            return ("NodeOutOfRange", root)
        top = min(self.map_top(), self.top) if self.managed(self.top) else self.map_top()
        nodes = [0]
        broken = self.check_subtree(root, NIL, 0, 0xFFFFFFFF, 1, top, nodes)
        if isinstance(broken, tuple):
            return broken
        broken = self.check_bins(top)
        if isinstance(broken, tuple):
            return broken
        binned = broken
        b, runs, free = self.first, 0, 0
        while b < self.end:
            if self.code(b) & USED_BIT:
                # Used codes up to a LAST; the end of the heap or a free code first means the mark is lost.
                start = b
                while self.code(b) == USED:
                    b += 1
                    if b == self.end or not self.code(b) & USED_BIT:
                        return ("Unterminated", start)
                b += 1
                continue
            s = self.end - b if b == top else self.size(b)  # the top holds no size
            if s == 0 or b + s > self.end:
                return ("BadSize", b)
            for i in range(b, b + s):
                c = self.code(i)
                if c & USED_BIT:
                    return ("UsedInFreeRun", i)
                if c == SPARE:
                    return ("SpareCode", i)
            if b != top and self.size(b + s - 1) != s:
                return ("SizeCopy", b + s - 1)
            if b + s < self.end and self.code(b + s) & USED_BIT == 0:
                return ("FreeRunsTouch", b + s)
            # The top is in neither (a node in it has been named by the tree's walk: TopInTree).
            if b != top and s <= BINNED and b not in self.bin_list(s):
                return ("RunNotInBin", b)
            if b != top and s > BINNED and not self.tree_has(b):
                return ("RunNotInTree", b)
            runs += 1
            free += s
            b += s
        used = self.end - self.first - free
        tree_runs = runs - binned - (0 if top == self.end else 1)
        if used != self.used_blocks or nodes[0] != tree_runs or top != self.top:
            return ("Stats", 0)
        return None

    def check_subtree(self, x, parent, lo, hi, depth, top, nodes):
        """The black height of the subtree at x, or the (kind, block) of the first broken invariant."""
        if x == NIL:
            return 1
        if not self.managed(x):
            return ("NodeOutOfRange", x)
        if depth > MAX_DEPTH:
            return ("Unbalanced", x)
        if self.code(x) & USED_BIT:
            return ("NodeNotFree", x)
        if x > self.first and self.code(x - 1) & USED_BIT == 0:
            return ("NodeNotRunStart", x)
        if x == top:
            return ("TopInTree", x)
        if self.node(x, NODE_PARENT) != parent:
            return ("ParentLink", x)
        k = self.key(x)
        if k <= lo or k >= hi:
            return ("Order", x)
        if self.size(x) <= BINNED:
            return ("SmallInTree", x)
        if x + 1 >= top:
            return ("BadSize", x)  # its colour byte would be in the top, never read, or past the heap
        red = self.is_red(x)
        if red and parent == NIL:
            return ("RedRoot", x)
        if red and self.is_red(parent):
            return ("RedRed", x)
        nodes[0] += 1
        hs = self.check_subtree(self.node(x, NODE_SMALLER), x, lo, k, depth + 1, top, nodes)
        if isinstance(hs, tuple):
            return hs
        hl = self.check_subtree(self.node(x, NODE_LARGER), x, k, hi, depth + 1, top, nodes)
        if isinstance(hl, tuple):
            return hl
        if hs != hl:
            return ("BlackHeight", x)
        return hs + (0 if red else 1)

    def check_bins(self, top):
        """The runs the bins hold, or the (kind, block) of a broken list (Heap::check_bins)."""
        total = 0
        for s in range(1, BINNED + 1):
            head = self.bins[s]
            if (head != NIL) != bool(self.binned & (1 << s)):
                return ("BinLink", 0)
            prev, r = NIL, head
            while r != NIL:
                run_start = self.managed(r) and (r == self.first or self.code(r - 1) & USED_BIT)
                if (not run_start or self.code(r) != 0 or r >= top or self.size(r) != s
                        or r + s >= self.end
                        or self.node(r, BIN_PREV) != prev or total >= self.end - self.first):
                    return ("BinLink", r)
                total += 1
                prev, r = r, self.node(r, BIN_NEXT)
        return total

    def bin_list(self, s):
        """The runs of bin s, first first (bounded: a broken list stops at the heap's size)."""
        out, r = [], self.bins[s]
        while r != NIL and self.managed(r) and len(out) < self.end:
            out.append(r)
            r = self.node(r, BIN_NEXT)
        return out

    def tree_has(self, b):
        k, x = self.key(b), self.u16(HDR_ROOT)
        while x != NIL:
            kx = self.key(x)
            if kx == k:
                return True
            x = self.node(x, NODE_SMALLER if k < kx else NODE_LARGER)
        return False


def format_runs(runs, per_line=6):
    cells = ["[%s %d @%d]" % (kind, blocks, start) for kind, start, blocks in runs]
    return ["  " + "".join(cells[i:i + per_line]) for i in range(0, len(cells), per_line)]


class HeapCommand(RustCommand):
    """heap [EXPR]: a tree-heap's header, allocation map as runs, free tree and statistics (every static heap
    without EXPR). heap check [EXPR]: its invariants, as Heap::check, decoded from memory."""

    def __init__(self):
        super().__init__("heap")

    def show(self, arg):
        words = arg.split(None, 1)
        checking = bool(words) and words[0] == "check"
        if checking:
            arg = words[1] if len(words) > 1 else ""
        for name, value in targets(arg, (HEAP_TYPE,), "Heap", (LOCKED_HEAP_TYPE, GLOBAL_HEAP_TYPE)):
            if value is None:
                print("heap %s: not initialised" % name)
                continue
            h = HeapImage(value)
            if checking:
                broken = h.check()
                print("heap check %s: %s" % (name, "ok" if broken is None else "%s at block %d" % broken))
                continue
            managed = h.end - h.first
            print("heap %s: base %#010x, blocks %d..%d (%d managed, %d B)"
                  % (name, h.base, h.first, h.end, managed, managed * BLOCK))
            print("header: count %d, root %d" % (h.u16(HDR_COUNT), h.u16(HDR_ROOT)))
            runs = h.runs()  # the map walked once, for its lines and the stats' count
            print("map (kind, blocks @ first block):")
            for line in format_runs(runs):
                print(line)
            print("free tree (block: size in blocks, colour; < smaller, > larger):")
            for line in h.tree_lines() or ["(empty)"]:
                print("  " + line)
            top = h.top_run()
            print("top (the free run that ends the heap, outside the tree): %s"
                  % ("none" if top is None else "%d: size %d" % top))
            print("bins (size in blocks: first block of each run, first first):")
            lists = [(s, h.bin_list(s)) for s in range(1, BINNED + 1)]
            bins = ["%d:%s" % (s, "".join(" %d" % r for r in runs_of)) for s, runs_of in lists if runs_of]
            for line in bins or ["(empty)"]:
                print("  " + line)
            used = h.used_blocks * BLOCK
            free_runs = sum(1 for r in runs if r[0] == "free")
            print("stats: capacity %d B, used %d B, free %d B in %d run%s, largest free %d B, peak %d B, "
                  "failed requests %d, bad frees %d"
                  % (managed * BLOCK, used, managed * BLOCK - used, free_runs, "" if free_runs == 1 else "s",
                     h.largest_free() * BLOCK, h.peak_used * BLOCK, h.failed, h.bad_frees))


class HandleReferencePrinter:
    """`print h` of a `&Handle` (an argument, an iterator's item): `&` and the handle as `print *h` shows it,
    as Rust's Debug prints a reference, instead of the bare address (`print/r h` still shows that)."""

    def __init__(self, value):
        self.value = value

    def to_string(self):
        if int(self.value) == 0:
            return "0x0"
        return "&" + HandlePrinter(self.value.dereference()).to_string()


class Printers(gdb.printing.PrettyPrinter):
    """The crate's printers under one name (`info pretty-printer`, `disable pretty-printer global stackshot;&Handle`):
    a `Handle`, and a reference to one. A raw pointer named in the debug info (`*const`, `*mut`: a slice iterator's
    end, say) may point at anything and prints as gdb prints it; a reference (`&`, `&mut`) and gdb's own `&EXPR`
    (a pointer type with no name) name a handle. Matched by the types' DWARF names, which `set language` does not
    change (`str(type)` spells a C `struct ...` in C)."""

    def __init__(self):
        super().__init__("stackshot", [gdb.printing.SubPrettyPrinter(n) for n in ("Handle", "&Handle")])

    def __call__(self, value):
        t = value.type.strip_typedefs()
        handle, reference = self.subprinters
        if handle.enabled and names_type(t.tag or "", (HANDLE_TYPE,)):
            return HandlePrinter(value)
        if reference.enabled and t.code == gdb.TYPE_CODE_PTR and (t.name or "&").startswith("&"):
            target = t.target().strip_typedefs()
            if names_type(target.tag or "", (HANDLE_TYPE,)):
                return HandleReferencePrinter(value)
        return None


PoolCommand()
HeapCommand()
gdb.printing.register_pretty_printer(None, Printers(), replace=True)
