//! Reads the ROM's ELF: symbols, and whether a hot path really is ARM code in IWRAM that does not call into ROM
//! (but for the calls a test lets through).

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
        drop(file);
        Ok(Elf { data, symbols })
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
        let code =
            self.bytes(f.address, f.size).ok_or_else(|| format!("the bytes of {} are not in the ELF", f.name))?;
        for (i, word) in code.chunks_exact(4).enumerate() {
            let word = u32::from_le_bytes(word.try_into().unwrap());
            let pc = f.address + 4 * i as u32;
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
}
