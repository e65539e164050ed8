//! Reads the ROM's ELF: symbols, and whether a hot path really is ARM code in IWRAM that does not call into ROM
//! (but for the calls a test lets through), nor uses an encoding whose result the architecture leaves
//! UNPREDICTABLE.

use object::{Object, ObjectSection, ObjectSymbol, SymbolKind};
use std::ops::Range;

pub const IWRAM: Range<u32> = 0x0300_0000..0x0300_8000;
pub const ROM: Range<u32> = 0x0800_0000..0x0A00_0000;

/// A function or data object from the symbol table.
#[derive(Clone, Debug)]
pub struct Symbol {
    pub name: String,
    /// The address with the Thumb bit cleared.
    pub address: u32,
    pub size: u32,
    pub thumb: bool,
    pub function: bool,
}

pub struct Elf {
    data: Vec<u8>,
    pub symbols: Vec<Symbol>,
    /// The ARM mapping symbols, by address: true where data starts (`$d`, a literal pool), false where code
    /// does (`$a`, `$t`).
    mapping: Vec<(u32, bool)>,
}

impl Elf {
    pub fn read(path: &std::path::Path) -> Result<Elf, String> {
        let data = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let file = object::File::parse(&*data).map_err(|e| format!("{}: {e}", path.display()))?;
        let symbols = file
            .symbols()
            .filter(|s| matches!(s.kind(), SymbolKind::Text | SymbolKind::Data) && s.size() > 0)
            .filter_map(|s| {
                let raw = s.address() as u32;
                Some(Symbol {
                    name: s.name().ok()?.to_string(),
                    address: raw & !1,
                    size: s.size() as u32,
                    thumb: s.kind() == SymbolKind::Text && raw & 1 == 1,
                    function: s.kind() == SymbolKind::Text,
                })
            })
            .collect();
        let mut mapping: Vec<_> = file
            .symbols()
            .filter_map(|s| {
                let kind = s.name().ok()?.strip_prefix('$')?.split('.').next()?;
                matches!(kind, "a" | "t" | "d").then_some((s.address() as u32, kind == "d"))
            })
            .collect();
        mapping.sort_unstable();
        drop(file);
        Ok(Elf { data, symbols, mapping })
    }

    /// The symbol whose name is `name` or ends with `::name` / a mangled `name` component.
    pub fn symbol(&self, name: &str) -> Option<&Symbol> {
        self.symbols.iter().find(|s| s.name == name).or_else(|| {
            let mangled = format!("{}{}", name.len(), name);
            self.symbols.iter().find(|s| s.name.contains(&mangled))
        })
    }

    /// The value of the symbol named exactly `name`, of any kind: linker-script symbols such as `__stack_top`
    /// (which `symbols` leaves out: they have no size) included.
    pub fn address_of(&self, name: &str) -> Option<u32> {
        let file = object::File::parse(&*self.data).ok()?;
        file.symbols().find(|s| s.name() == Ok(name)).map(|s| s.address() as u32)
    }

    /// Every function in IWRAM.
    pub fn iwram_functions(&self) -> Vec<&Symbol> {
        self.symbols.iter().filter(|s| s.function && IWRAM.contains(&s.address)).collect()
    }

    /// The function that contains `address`, if any.
    pub fn function_at(&self, address: u32) -> Option<&Symbol> {
        self.symbols.iter().find(|s| s.function && (s.address..s.address + s.size).contains(&address))
    }

    /// The bytes the loaded program holds at `address` (IWRAM code is read from its load image).
    pub fn bytes(&self, address: u32, len: u32) -> Option<Vec<u8>> {
        let file = object::File::parse(&*self.data).ok()?;
        file.sections().find_map(|section| {
            let start = section.address() as u32;
            let end = start + section.size() as u32;
            if address < start || address + len > end {
                return None;
            }
            let data = section.data().ok()?;
            let from = (address - start) as usize;
            data.get(from..from + len as usize).map(<[u8]>::to_vec)
        })
    }

    /// How many bytes of `symbol` lie in the allocated section named `section` (`.data`: copied from ROM at
    /// boot), and whether that section takes bytes in the file (`false` for a NOBITS one, as `.bss`).
    pub fn bytes_in_section(&self, symbol: &Symbol, section: &str) -> Option<(u32, bool)> {
        let file = object::File::parse(&*self.data).ok()?;
        let s = file.sections().find(|s| s.name() == Ok(section) && s.address() != 0)?;
        let (start, end) = (s.address() as u32, (s.address() + s.size()) as u32);
        let overlap = end.min(symbol.address + symbol.size).saturating_sub(start.max(symbol.address));
        Some((overlap, s.kind() != object::SectionKind::UninitializedData))
    }

    /// Checks that `name` is ARM code in IWRAM that neither branches nor loads the address of any function in
    /// ROM (through a call, a literal pool, or a linker veneer it calls). Returns the function on success.
    pub fn check_hot_path(&self, name: &str) -> Result<&Symbol, String> {
        self.check_hot_path_except(name, &|_| false)
    }

    /// [`Elf::check_hot_path`], letting through the ROM functions whose symbol `allowed` accepts.
    pub fn check_hot_path_except(&self, name: &str, allowed: &dyn Fn(&str) -> bool) -> Result<&Symbol, String> {
        let f = self.symbol(name).ok_or_else(|| format!("{name}: no such symbol in the ELF"))?;
        self.check_arm_in_iwram(f, allowed, &mut Vec::new()).map_err(|e| format!("{name}: {e}"))?;
        Ok(f)
    }

    /// The check behind [`Elf::check_hot_path`], following calls into other IWRAM functions (veneers included).
    fn check_arm_in_iwram<'a>(
        &'a self,
        f: &'a Symbol,
        allowed: &dyn Fn(&str) -> bool,
        seen: &mut Vec<u32>,
    ) -> Result<(), String> {
        if seen.contains(&f.address) {
            return Ok(());
        }
        seen.push(f.address);
        if !IWRAM.contains(&f.address) {
            return Err(format!("{} is at {:#010x}, not in IWRAM (0x03xxxxxx)", f.name, f.address));
        }
        if f.thumb {
            return Err(format!("{} is Thumb code; hot paths are ARM (#[instruction_set(arm::a32)])", f.name));
        }
        for (pc, word) in self.arm_words(f)? {
            // B/BL: bits 27..25 = 101; the target is PC + 8 + signed 24-bit offset × 4.
            let branch = (word >> 25) & 0b111 == 0b101 && word >> 28 != 0xF;
            let target =
                if branch { pc.wrapping_add(8).wrapping_add((((word << 8) as i32) >> 6) as u32) } else { word } & !1;
            if ROM.contains(&target)
                && let Some(callee) = self.function_at(target)
            {
                if allowed(&callee.name) {
                    continue;
                }
                let how = if branch { "branches to" } else { "loads the address of" };
                return Err(format!(
                    "{} {how} {} at {:#010x} (ROM) from {pc:#010x}",
                    f.name, callee.name, callee.address
                ));
            }
            if branch && !(f.address..f.address + f.size).contains(&target) {
                match self.function_at(target) {
                    Some(callee) if IWRAM.contains(&target) => self.check_arm_in_iwram(callee, allowed, seen)?,
                    _ => return Err(format!("{} branches out of IWRAM to {target:#010x} from {pc:#010x}", f.name)),
                }
            }
        }
        Ok(())
    }

    /// The functions `f` calls or takes the address of: the targets of its branches (ARM `B`/`BL`, Thumb `BL`
    /// pairs) outside itself, and the function addresses in its literal pools (how a linker veneer, and code
    /// calling through a register, reach their target).
    pub fn callees(&self, f: &Symbol) -> Vec<&Symbol> {
        let Some(code) = self.bytes(f.address, f.size) else { return Vec::new() };
        let mut targets = Vec::new();
        for (at, word) in (f.address..).step_by(4).zip(code.chunks_exact(4)) {
            let word = u32::from_le_bytes(word.try_into().unwrap());
            if self.is_data(at) {
                targets.push(word & !1);
            } else if !f.thumb && (word >> 25) & 0b111 == 0b101 && word >> 28 != 0xF {
                targets.push(at.wrapping_add(8).wrapping_add((((word << 8) as i32) >> 6) as u32));
            }
        }
        if f.thumb {
            let halves: Vec<u32> = code.chunks_exact(2).map(|h| u32::from(u16::from_le_bytes([h[0], h[1]]))).collect();
            for (i, pair) in halves.windows(2).enumerate() {
                let at = f.address + 2 * i as u32;
                // BL: a prefix (11110, the offset's high 11 bits) and a suffix (11111, its low 11 bits).
                if pair[0] >> 11 == 0b11110 && pair[1] >> 11 == 0b11111 && !self.is_data(at) {
                    let high = (((pair[0] & 0x7FF) << 21) as i32 >> 9) as u32;
                    targets.push(at.wrapping_add(4).wrapping_add(high).wrapping_add((pair[1] & 0x7FF) << 1));
                }
            }
        }
        let inside = f.address..f.address + f.size;
        let mut callees: Vec<&Symbol> = targets
            .into_iter()
            .filter(|t| !inside.contains(t))
            .filter_map(|t| self.symbols.iter().find(|s| s.function && s.address == t))
            .collect();
        callees.sort_by_key(|s| s.address);
        callees.dedup_by_key(|s| s.address);
        callees
    }

    /// `roots` and every function they reach through [`Elf::callees`], but for those `skip` accepts (and what
    /// only they reach), each once.
    pub fn reachable<'a>(&'a self, roots: &[&'a Symbol], skip: &dyn Fn(&str) -> bool) -> Vec<&'a Symbol> {
        let mut seen: Vec<&Symbol> = Vec::new();
        let mut todo: Vec<&Symbol> = roots.to_vec();
        while let Some(f) = todo.pop() {
            if skip(&f.name) || seen.iter().any(|s| s.address == f.address) {
                continue;
            }
            seen.push(f);
            todo.extend(self.callees(f));
        }
        seen
    }

    /// The 32-bit words of `f` (ARM code), each with its address.
    fn arm_words(&self, f: &Symbol) -> Result<Vec<(u32, u32)>, String> {
        let code =
            self.bytes(f.address, f.size).ok_or_else(|| format!("the bytes of {} are not in the ELF", f.name))?;
        let words = code.chunks_exact(4).map(|w| u32::from_le_bytes(w.try_into().unwrap()));
        Ok((f.address..).step_by(4).zip(words).collect())
    }

    /// Whether the word at `address` is data (a literal pool), by the last mapping symbol at or before it.
    pub fn is_data(&self, address: u32) -> bool {
        let i = self.mapping.partition_point(|&(a, _)| a <= address);
        i > 0 && self.mapping[i - 1].1
    }

    /// [`Elf::check_predictable`] on every function in IWRAM; returns how many it checked.
    pub fn check_iwram_predictable(&self) -> Result<usize, String> {
        let functions = self.iwram_functions();
        for f in &functions {
            self.check_predictable(f)?;
        }
        Ok(functions.len())
    }

    /// Checks that `f` is ARM code and that none of its instructions is one that ARMv4T leaves UNPREDICTABLE
    /// ([`unpredictable`]): mGBA runs such code one way, a GBA's ARM7TDMI may run it another. Its literal pools
    /// (`$d` mapping symbols) are data and skipped.
    fn check_predictable(&self, f: &Symbol) -> Result<(), String> {
        if f.thumb {
            return Err(format!("{} is Thumb code: only ARM code is checked", f.name));
        }
        for (pc, word) in self.arm_words(f)? {
            if !self.is_data(pc)
                && let Some(why) = unpredictable(word)
            {
                return Err(format!("{} at {pc:#010x}: {word:#010x} is UNPREDICTABLE on ARMv4T: {why}", f.name));
            }
        }
        Ok(())
    }
}

/// Why ARMv4T leaves the result of ARM instruction `word` UNPREDICTABLE, for the instructions whose operand
/// restrictions a compiler must keep: loads and stores, swaps, block transfers and multiplies (ARM Architecture
/// Reference Manual, ARMv4T/ARMv5: the "Operand restrictions" and addressing-mode notes of LDR/STR,
/// LDRB/STRB, LDRH/STRH/LDRSB/LDRSH, SWP, LDM/STM, MUL/MLA and the long multiplies). `None` for every other
/// word: data processing with a register shift and R15 as an operand, and the flags a multiply with S leaves,
/// are not checked. A load whose data register is its offset register (`ldrh r1, [r2, r1]!`) is not among them: it reads
/// the offset before it writes the data (binutils 2.40's objdump marks it `<UNPREDICTABLE>`, comparing Rm
/// with Rd where the rule compares Rn).
pub fn unpredictable(word: u32) -> Option<&'static str> {
    // Condition 0b1111 is itself UNPREDICTABLE on ARMv4T, and no compiler emits it; words with it are constants
    // that a literal pool without a `$d` symbol would hold, so they are let through.
    if word >> 28 == 0xF {
        return None;
    }
    let field = |shift: u32| (word >> shift) & 15;
    let (rn, rd, rs, rm) = (field(16), field(12), field(8), field(0));
    let pre = word & 1 << 24 != 0;
    let wbit = word & 1 << 21 != 0;
    // Multiplies: bits 27-24 = 0000, bits 7-4 = 1001.
    if word & 0x0F00_00F0 == 0x0000_0090 {
        if word & 1 << 23 == 0 {
            // MUL/MLA: Rd in bits 19-16, the accumulator Rn in bits 15-12.
            let (d, n, accumulate) = (rn, rd, word & 1 << 21 != 0);
            if d == 15 || rm == 15 || rs == 15 || (accumulate && n == 15) {
                return Some("a multiply with R15 as an operand");
            }
            if d == rm {
                return Some("a multiply whose destination is its first operand (Rd = Rm)");
            }
        } else {
            // UMULL/UMLAL/SMULL/SMLAL: RdHi in bits 19-16, RdLo in bits 15-12.
            let (hi, lo) = (rn, rd);
            if hi == 15 || lo == 15 || rm == 15 || rs == 15 {
                return Some("a long multiply with R15 as an operand");
            }
            if hi == lo || hi == rm || lo == rm {
                return Some("a long multiply whose RdHi, RdLo and Rm are not all different");
            }
        }
        return None;
    }
    // SWP/SWPB: bits 27-23 = 00010, bits 21-20 = 00, bits 11-4 = 0000 1001.
    if word & 0x0FB0_0FF0 == 0x0100_0090 {
        if rn == 15 || rd == 15 || rm == 15 {
            return Some("a swap with R15 as an operand");
        }
        if rn == rd || rn == rm {
            return Some("a swap whose address register is its data or its source register");
        }
        return None;
    }
    // Halfword and signed transfers: bits 27-25 = 000, bit 7 and bit 4 set, bits 6-5 not 00 (that is SWP).
    if word & 0x0E00_0090 == 0x0000_0090 && word & 0x60 != 0 {
        if !pre && wbit {
            return Some("a post-indexed halfword transfer with the W bit set");
        }
        if rd == 15 {
            return Some("a halfword or signed transfer of R15");
        }
        let register_offset = word & 1 << 22 == 0;
        return transfer(rn, rd, !pre || wbit, register_offset.then_some(rm));
    }
    // Word and byte transfers: bits 27-26 = 01 (with bit 25 and bit 4 set, the undefined instruction space).
    if word & 0x0C00_0000 == 0x0400_0000 && word & 0x0200_0010 != 0x0200_0010 {
        if word & 1 << 22 != 0 && rd == 15 {
            return Some("a byte transfer of R15");
        }
        let register_offset = word & 1 << 25 != 0;
        return transfer(rn, rd, !pre || wbit, register_offset.then_some(rm));
    }
    // Block transfers: bits 27-25 = 100.
    if word & 0x0E00_0000 == 0x0800_0000 {
        let list = word & 0xFFFF;
        if rn == 15 {
            return Some("a block transfer based on R15");
        }
        if list == 0 {
            return Some("a block transfer of no register");
        }
        let load = word & 1 << 20 != 0;
        let user_bank = word & 1 << 22 != 0 && !(load && list & 1 << 15 != 0);
        if user_bank && wbit {
            return Some("a block transfer of the user registers (^) with writeback");
        }
        if wbit && list & 1 << rn != 0 && (load || list & ((1 << rn) - 1) != 0) {
            return Some(
                "a block transfer with writeback whose base is in its list (loaded, or stored after a lower register)",
            );
        }
    }
    None
}

/// The operand restrictions of a single load or store with base `rn`, data register `rd`, and offset register
/// `rm` if the offset is one.
fn transfer(rn: u32, rd: u32, writeback: bool, rm: Option<u32>) -> Option<&'static str> {
    if writeback && rn == 15 {
        return Some("a load or store that writes back to R15");
    }
    if writeback && rn == rd {
        return Some("a load or store that writes back to its own data register (Rn = Rd)");
    }
    match rm {
        Some(15) => Some("a load or store with R15 as its offset register"),
        Some(rm) if writeback && rm == rn => Some("a load or store that writes back to its offset register (Rm = Rn)"),
        _ => None,
    }
}
