"""ELF build-ids, symbols and extents read with the standard library: checked against
binutils on the libraries this process really loaded, and against files made here byte by
byte from the System V ABI's layouts (both classes, both byte orders), damaged ones too."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from pqbench.measure import environment
from pqbench.measure.environment import binaries, elf
from tests.helpers import binutils

PT_LOAD, PT_NOTE = 1, 4
SHT_SYMTAB, SHT_STRTAB, SHT_NOTE = 2, 3, 7


def _pad(data: bytes) -> bytes:
    return data + b"\0" * (-len(data) % 4)


def craft(*, wide: bool = True, little: bool = True,
          notes: tuple[tuple[str, int, bytes], ...] = (),
          symbols: tuple[tuple[str, int, int, int], ...] = (),
          program_headers: bool = True) -> bytes:
    """An ELF shared object of the given class and byte order: a PT_NOTE and a PT_LOAD
    program header (or none), the notes, and sections for the notes, a symbol table
    (name, value, size, section index) and its strings."""
    o = "<" if little else ">"
    ehsize, phsize, shsize = (64, 56, 64) if wide else (52, 32, 40)
    note = b"".join(struct.pack(o + "III", len(name) + 1, len(desc), kind)
                    + _pad(name.encode() + b"\0") + _pad(desc) for name, kind, desc in notes)
    strtab = b"\0" + b"".join(name.encode() + b"\0" for name, *_ in symbols)
    symfmt = o + ("IBBHQQ" if wide else "IIIBBH")
    entries = [struct.pack(symfmt, *([0] * 6))]
    at = 1
    for name, value, size, shndx in symbols:
        fields = (at, 0x11, 0, shndx, value, size) if wide else (at, value, size, 0x11, 0, shndx)
        entries.append(struct.pack(symfmt, *fields))
        at += len(name) + 1
    symtab = b"".join(entries)
    phnum = 2 if program_headers else 0
    note_off = ehsize + phnum * phsize
    str_off = note_off + len(note)
    sym_off = str_off + len(strtab) + (-(str_off + len(strtab)) % 8)
    sh_off = sym_off + len(symtab)
    total = sh_off + 4 * shsize
    head = b"\x7fELF" + bytes([2 if wide else 1, 1 if little else 2, 1]) + b"\0" * 9
    if wide:
        head += struct.pack(o + "HHIQQQIHHHHHH", 3, 62, 1, 0, ehsize if phnum else 0, sh_off,
                            0, ehsize, phsize, phnum, shsize, 4, 0)
        phdr = struct.pack(o + "IIQQQQQQ", PT_NOTE, 4, note_off, note_off, note_off, len(note),
                           len(note), 4) + struct.pack(o + "IIQQQQQQ", PT_LOAD, 6, 0, 0, 0,
                                                       total, total + 0x1000, 0x1000)
        shdr = struct.pack(o + "IIQQQQIIQQ", *([0] * 10)) + struct.pack(
            o + "IIQQQQIIQQ", 0, SHT_NOTE, 2, note_off, note_off, len(note), 0, 0, 4, 0) + \
            struct.pack(o + "IIQQQQIIQQ", 0, SHT_SYMTAB, 0, 0, sym_off, len(symtab), 3, 1, 8,
                        24) + struct.pack(o + "IIQQQQIIQQ", 0, SHT_STRTAB, 0, 0, str_off,
                                          len(strtab), 0, 0, 1, 0)
    else:
        head += struct.pack(o + "HHIIIIIHHHHHH", 3, 3, 1, 0, ehsize if phnum else 0, sh_off,
                            0, ehsize, phsize, phnum, shsize, 4, 0)
        phdr = struct.pack(o + "IIIIIIII", PT_NOTE, note_off, note_off, note_off, len(note),
                           len(note), 4, 4) + struct.pack(o + "IIIIIIII", PT_LOAD, 0, 0, 0,
                                                          total, total + 0x1000, 6, 0x1000)
        shdr = struct.pack(o + "IIIIIIIIII", *([0] * 10)) + struct.pack(
            o + "IIIIIIIIII", 0, SHT_NOTE, 2, note_off, note_off, len(note), 0, 0, 4, 0) + \
            struct.pack(o + "IIIIIIIIII", 0, SHT_SYMTAB, 0, 0, sym_off, len(symtab), 3, 1, 4,
                        16) + struct.pack(o + "IIIIIIIIII", 0, SHT_STRTAB, 0, 0, str_off,
                                          len(strtab), 0, 0, 1, 0)
    body = head + (phdr if phnum else b"") + note + strtab
    body += b"\0" * (sym_off - len(body)) + symtab + shdr
    assert len(body) == total
    return body


BUILD_ID = bytes.fromhex("1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d")
GNU_BUILD_ID = ("GNU", 3, BUILD_ID)
ABI_TAG = ("GNU", 1, struct.pack("<IIII", 0, 3, 2, 0))


@pytest.mark.parametrize("wide", [True, False], ids=["ELF64", "ELF32"])
@pytest.mark.parametrize("little", [True, False], ids=["LSB", "MSB"])
def test_the_build_id_of_a_crafted_object(tmp_path: Path, wide: bool, little: bool) -> None:
    path = tmp_path / "lib.so"
    # The ABI tag note first: the build-id is found by its name and type, not its place.
    path.write_bytes(craft(wide=wide, little=little, notes=(ABI_TAG, GNU_BUILD_ID)))
    assert elf.build_id(path) == BUILD_ID.hex()
    assert elf.load_extent(path) == (0, len(path.read_bytes()) + 0x1000)


def test_an_object_without_program_headers_is_read_by_its_note_sections(tmp_path: Path
                                                                        ) -> None:
    path = tmp_path / "object.o"
    path.write_bytes(craft(notes=(GNU_BUILD_ID,), program_headers=False))
    assert elf.build_id(path) == BUILD_ID.hex()
    assert elf.load_extent(path) is None


def test_without_a_build_id_the_identity_is_the_contents_sha256(tmp_path: Path) -> None:
    path = tmp_path / "lib.so"
    data = craft(notes=(ABI_TAG, ("Go", 4, b"not a GNU build-id")))
    path.write_bytes(data)
    assert elf.build_id(path) is None
    found = binaries.identity(str(path))
    assert found == {"path": str(path), "size": len(data),
                     "sha256": hashlib.sha256(data).hexdigest()}


@pytest.mark.parametrize("damage", [
    lambda data: data[:40],                    # cut inside the ELF header
    lambda data: data[:70],                    # cut inside the program headers
    lambda data: data[:-200],                  # notes and sections cut off
    lambda data: data[:64] + b"\xff" * 200,    # headers pointing at nonsense
    lambda data: b"",                          # empty (mmap refuses length 0)
    lambda data: b"#!/bin/sh\necho not an ELF\n",
], ids=["header", "program-headers", "tail", "garbage", "empty", "script"])
def test_a_damaged_or_foreign_file_answers_none(tmp_path: Path, damage: object) -> None:
    path = tmp_path / "lib.so"
    data = craft(notes=(GNU_BUILD_ID,), symbols=(("OPENSSL_ia32cap_P", 0x4000, 40, 1),))
    path.write_bytes(damage(data))  # type: ignore[operator]
    found = elf.build_id(path)
    assert found in (None, BUILD_ID.hex())  # a cut that keeps the note may still find it
    assert elf.symbol(path, "OPENSSL_ia32cap_P") in (None, elf.Symbol(0x4000, 40))
    if len(damage(data)) < 64:  # type: ignore[operator]
        assert found is None and elf.load_extent(path) is None


def test_missing_files_answer_none(tmp_path: Path) -> None:
    assert elf.build_id(tmp_path / "absent.so") is None
    assert elf.symbol(tmp_path / "absent.so", "x") is None
    assert binaries.identity(str(tmp_path / "absent.so")) == {"path": str(tmp_path / "absent.so")}


@pytest.mark.parametrize("wide", [True, False], ids=["ELF64", "ELF32"])
def test_symbols_of_a_crafted_object(tmp_path: Path, wide: bool) -> None:
    path = tmp_path / "lib.so"
    path.write_bytes(craft(wide=wide, symbols=(
        ("OPENSSL_ia32cap_P_other", 0x10, 4, 1), ("OPENSSL_ia32cap_P", 0x4000, 40, 1),
        ("undefined_here", 0, 0, 0))))
    # A name that is the tail of a longer one, or only its start, is not that symbol.
    assert elf.symbol(path, "OPENSSL_ia32cap_P") == elf.Symbol(0x4000, 40)
    assert elf.symbol(path, "ia32cap_P") is None
    assert elf.symbol(path, "undefined_here") is None
    assert elf.symbol(path, "absent") is None


@pytest.mark.process
def test_build_ids_of_the_libraries_this_process_loaded_agree_with_binutils() -> None:
    environment.collect()  # loads every implementation's libraries
    loaded = binaries.roles(binaries.mapped_files())
    assert {"libcrypto", "libc"} <= loaded.keys()
    for path in [*loaded.values(), os.path.realpath(sys.executable)]:
        assert elf.build_id(path) == binutils.build_id(path), path


@pytest.mark.process
def test_a_symbol_agrees_with_nm_on_the_cryptography_extension() -> None:
    """cryptography's wheels link OpenSSL statically and keep the symbol table: nm lists
    OPENSSL_ia32cap_P where the vector lives (a local symbol, not exported)."""
    import cryptography.hazmat.bindings._rust as rust

    path = rust.__file__
    assert shutil.which("nm"), "this test needs nm (binutils)"
    out = subprocess.run(["nm", "-S", path], capture_output=True, text=True,
                         check=False).stdout
    listed = re.search(r"^([0-9a-f]+) ([0-9a-f]+) \w OPENSSL_ia32cap_P$", out, re.M)
    found = elf.symbol(path, "OPENSSL_ia32cap_P")
    if listed is None:  # a stripped build: nothing to find, and nothing is made up
        assert found is None
    else:
        assert found == elf.Symbol(int(listed.group(1), 16), int(listed.group(2), 16))
