"""What an ELF shared object says about itself: its build-id, a symbol's place, its extent.

The GNU build-id is a note the linker writes (`ld --build-id`, on by default on Debian,
Fedora and Ubuntu toolchains): a hash of the linked output, so two builds of one source
with other options, another compiler or a patch get different ids even when their
version strings agree. It sits in a PT_NOTE segment as a note named "GNU" of type
NT_GNU_BUILD_ID (3). The layouts read here are the System V ABI's ("gABI", chapter 4:
ELF header, program and section headers, note entries, symbol tables); only the standard
library is used, and every read is bounded by the file, so a damaged or hostile file
answers None instead of failing.
"""

from __future__ import annotations

import mmap
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

MAGIC = b"\x7fELF"
#: e_ident[EI_CLASS] and e_ident[EI_DATA].
CLASS_32, CLASS_64 = 1, 2
LITTLE, BIG = 1, 2
PT_LOAD, PT_NOTE = 1, 4
SHT_SYMTAB, SHT_NOTE, SHT_DYNSYM = 2, 7, 11
NT_GNU_BUILD_ID = 3
#: Headers and notes are small; a build-id note is 36 bytes. More is a damaged file.
_MAX_NOTES_BYTES = 1 << 20


@dataclass(frozen=True)
class _Layout:
    """How this file's headers are packed (class and byte order)."""

    order: str  # "<" or ">"
    wide: bool  # ELFCLASS64

    def unpack(self, fmt: str, data: Data, offset: int = 0) -> tuple[int, ...]:
        return struct.unpack_from(self.order + fmt, data, offset)


@dataclass(frozen=True)
class Symbol:
    """A symbol's address relative to the object's load base, and its size in bytes."""

    value: int
    size: int


#: A file's bytes: mapped, so that only the pages a read touches come from the disk.
Data = bytes | mmap.mmap


def _layout(data: Data) -> _Layout | None:
    head = data[:64]
    if len(head) < 52 or head[:4] != MAGIC or head[4] not in (CLASS_32, CLASS_64) \
            or head[5] not in (LITTLE, BIG):
        return None
    return _Layout("<" if head[5] == LITTLE else ">", head[4] == CLASS_64)


@contextmanager
def _mapped(path: Path | str) -> Iterator[tuple[Data, _Layout] | None]:
    """The file mapped read-only with its layout; None for anything but a readable ELF."""
    try:
        with open(path, "rb") as handle, \
                mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            layout = _layout(data)
            yield (data, layout) if layout is not None else None
    except (OSError, ValueError):  # unreadable, or empty (mmap refuses length 0)
        yield None


#: A header table as the ELF header points at it, per class (32-bit, 64-bit): where the
#: header keeps the table's offset (e_phoff, e_shoff), where its entry size and count
#: follow (e_phentsize/e_phnum, e_shentsize/e_shnum), and how one entry is packed.
_PROGRAM_TABLE = ((28, 42, "IIIIIIII"), (32, 54, "IIQQQQQQ"))
_SECTION_TABLE = ((32, 46, "IIIIIIIIII"), (40, 58, "IIQQQQIIQQ"))


def _entries(data: Data, layout: _Layout,
             table: tuple[tuple[int, int, str], tuple[int, int, str]]) -> list[tuple[int, ...]]:
    """Every entry of a header table, unpacked whole. No table (offset 0), entries smaller
    than their layout, or an entry past the end of the file ends the list."""
    offset_at, size_at, fmt = table[layout.wide]
    table_offset, = layout.unpack("Q" if layout.wide else "I", data, offset_at)
    entsize, count = layout.unpack("HH", data, size_at)
    want = struct.calcsize(layout.order + fmt)
    found = []
    for index in range(count):
        start = table_offset + index * entsize
        if not table_offset or entsize < want or start + want > len(data):
            break
        found.append(layout.unpack(fmt, data, start))
    return found


def _program_headers(data: Data, layout: _Layout) -> list[tuple[int, int, int, int, int]]:
    """(type, offset, vaddr, filesz, memsz) of each program header."""
    entries = _entries(data, layout, _PROGRAM_TABLE)
    if layout.wide:  # p_type, p_flags, p_offset, p_vaddr, p_paddr, p_filesz, p_memsz
        return [(f[0], f[2], f[3], f[5], f[6]) for f in entries]
    # p_type, p_offset, p_vaddr, p_paddr, p_filesz, p_memsz, p_flags
    return [(f[0], f[1], f[2], f[4], f[5]) for f in entries]


def _section_headers(data: Data, layout: _Layout) -> list[tuple[int, int, int, int, int]]:
    """(type, offset, size, link, entsize) of each section header (sh_name, sh_type,
    sh_flags, sh_addr, sh_offset, sh_size, sh_link, sh_info, sh_addralign, sh_entsize)."""
    return [(f[1], f[4], f[5], f[6], f[9]) for f in _entries(data, layout, _SECTION_TABLE)]


def _notes(block: bytes, layout: _Layout) -> list[tuple[bytes, int, bytes]]:
    """(name, type, descriptor) of each note in a note segment or section (gABI 5:
    namesz, descsz, type as 4-byte words, then name and descriptor, each padded to 4)."""
    found = []
    offset = 0
    while offset + 12 <= len(block):
        namesz, descsz, kind = layout.unpack("III", block, offset)
        offset += 12
        name_end = offset + namesz
        desc_start = offset + (namesz + 3) // 4 * 4
        desc_end = desc_start + descsz
        if desc_end > len(block):
            break
        found.append((block[offset:name_end].rstrip(b"\0"), kind, block[desc_start:desc_end]))
        offset = desc_start + (descsz + 3) // 4 * 4
    return found


def build_id(path: Path | str) -> str | None:
    """The GNU build-id of an ELF file as lower-case hex, or None (no ELF, no such note)."""
    with _mapped(path) as opened:
        return None if opened is None else _build_id(*opened)


def _build_id(data: Data, layout: _Layout) -> str | None:
    try:
        blocks = [(offset, size) for kind, offset, _, size, _ in _program_headers(data, layout)
                  if kind == PT_NOTE]
        if not blocks:  # an object without program headers: its note sections
            blocks = [(offset, size) for kind, offset, size, _, _ in
                      _section_headers(data, layout) if kind == SHT_NOTE]
        for offset, size in blocks:
            if size > _MAX_NOTES_BYTES:
                continue
            for name, kind, desc in _notes(data[offset:offset + size], layout):
                if name == b"GNU" and kind == NT_GNU_BUILD_ID and desc:
                    return desc.hex()
    except struct.error:
        return None
    return None


def load_extent(path: Path | str) -> tuple[int, int] | None:
    """The lowest and highest address (relative to the load base) that the object's
    loadable segments occupy in memory, .bss included; None where unreadable."""
    with _mapped(path) as opened:
        if opened is None:
            return None
        data, layout = opened
        try:
            loads = [(vaddr, vaddr + memsz) for kind, _, vaddr, _, memsz
                     in _program_headers(data, layout) if kind == PT_LOAD]
        except struct.error:
            return None
    if not loads:
        return None
    return min(low for low, _ in loads), max(high for _, high in loads)


def symbol(path: Path | str, name: str) -> Symbol | None:
    """A defined symbol's value and size, from the full symbol table (.symtab, which a
    stripped object lacks) or else the dynamic one; None where it is not there.

    Local symbols count: OpenSSL's capability vector is hidden from the dynamic table when
    a wheel links OpenSSL statically, yet an unstripped extension still lists it.
    """
    with _mapped(path) as opened:
        return None if opened is None else _symbol(*opened, name.encode() + b"\0")


def _symbol(data: Data, layout: _Layout, wanted: bytes) -> Symbol | None:
    try:
        sections = _section_headers(data, layout)
        for table_kind in (SHT_SYMTAB, SHT_DYNSYM):
            for kind, offset, size, link, entsize in sections:
                if kind != table_kind or link >= len(sections):
                    continue
                found = _lookup(data, layout, (offset, size, entsize), sections[link], wanted)
                if found is not None:
                    return found
    except struct.error:
        return None
    return None


def _lookup(data: Data, layout: _Layout, table: tuple[int, int, int],
            strings: tuple[int, int, int, int, int], wanted: bytes) -> Symbol | None:
    """One symbol table searched for a name: the name's offsets in the string table
    first (a byte search), then the entries that point at one of them."""
    offset, size, entsize = table
    _, str_offset, str_size, _, _ = strings
    names = data[str_offset:str_offset + str_size]
    starts = set()
    at = names.find(wanted)
    while at != -1:
        if at == 0 or names[at - 1] == 0:
            starts.add(at)
        at = names.find(wanted, at + 1)
    if not starts:
        return None
    # Elf64_Sym: st_name, st_info, st_other, st_shndx, st_value, st_size;
    # Elf32_Sym: st_name, st_value, st_size, st_info, st_other, st_shndx.
    fmt, want = ("IBBHQQ", 24) if layout.wide else ("IIIBBH", 16)
    if entsize < want:
        return None
    for start in range(offset, min(offset + size, len(data)) - want + 1, entsize):
        fields = layout.unpack(fmt, data, start)
        if fields[0] in starts:
            value, length, shndx = ((fields[4], fields[5], fields[3]) if layout.wide
                                    else (fields[1], fields[2], fields[5]))
            if shndx != 0 and value:  # 0: undefined here
                return Symbol(value, length)
    return None
