"""Structural check of a relocatable ELF object before it reaches LLVM.

MCJIT aborts the process ("LLVM ERROR: The file was not recognized as a valid
object file") on a malformed object, so the disk cache (runtime/cache.py) runs
:func:`check_object` on every stored object file and treats a failure as a damaged
entry.  The check covers what the loader reads: the ELF header (64-bit,
little-endian, relocatable, this machine), the section table, every section's
extent, and symbol and relocation tables (entry sizes, string and symbol indices,
section links).  Objects for other formats (Mach-O, COFF) are refused, so on
those hosts the object cache simply never hits.
"""
from __future__ import annotations

import platform
import struct

_EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
_SHDR = struct.Struct("<IIQQQQIIQQ")        # name type flags addr offset size link info align entsize
_SYM = struct.Struct("<IBBHQQ")             # name info other shndx value size
_RELA = struct.Struct("<QQq")               # offset info addend
_MACHINES = {"x86_64": 62, "amd64": 62, "aarch64": 183, "arm64": 183, "ppc64le": 21, "riscv64": 243}
SHT_SYMTAB, SHT_STRTAB, SHT_RELA, SHT_NOBITS, SHT_REL = 2, 3, 4, 8, 9
SHN_LORESERVE = 0xFF00


def _header_problem(data: bytes):
    """(why, None) or (None, (shoff, shnum, shstrndx))."""
    if len(data) < _EHDR.size or not data.startswith(b"\x7fELF"):
        return "not an ELF object", None
    ident, e_type, machine, _v, _entry, _phoff, shoff, _fl, ehsize, _phes, _phn, shentsize, shnum, \
        shstrndx = _EHDR.unpack_from(data)
    if ident[4] != 2 or ident[5] != 1:
        return "not a 64-bit little-endian ELF object", None
    want = _MACHINES.get(platform.machine().lower())
    if e_type != 1 or (want is not None and machine != want):
        return f"ELF type {e_type} for machine {machine}, not a relocatable object for this host", None
    if ehsize != _EHDR.size or shentsize != _SHDR.size or not 0 < shnum < 65280:
        return "malformed ELF header", None
    if shoff + shnum * _SHDR.size > len(data) or shstrndx >= shnum:
        return "section table outside the file", None
    return None, (shoff, shnum, shstrndx)


def _table_problem(data: bytes, sections: list, sh) -> str | None:
    """Symbol and relocation tables: entry sizes and the indices they hold."""
    _name, typ, _f, _a, off, size, link, info, _al, entsize = sh
    if typ == SHT_SYMTAB:
        if entsize != _SYM.size or size % _SYM.size or link >= len(sections) \
                or sections[link][1] != SHT_STRTAB:
            return "malformed symbol table"
        strsize = sections[link][5]
        for i in range(size // _SYM.size):
            st_name, _i, _o, shndx, _v, _s = _SYM.unpack_from(data, off + i * _SYM.size)
            if st_name >= max(strsize, 1) or (len(sections) <= shndx < SHN_LORESERVE):
                return "symbol table entry out of range"
    elif typ in (SHT_RELA, SHT_REL):
        esz = _RELA.size if typ == SHT_RELA else 16
        if entsize != esz or size % esz or link >= len(sections) or info >= len(sections) \
                or sections[link][1] != SHT_SYMTAB:
            return "malformed relocation table"
        nsyms = sections[link][5] // _SYM.size
        target_size = sections[info][5]
        for i in range(size // esz):
            r_off, r_info = struct.unpack_from("<QQ", data, off + i * esz)
            if r_info >> 32 >= nsyms or r_off >= target_size:
                return "relocation out of range"
    return None


def check_object(data: bytes) -> str | None:
    """Why ``data`` is not a well-formed relocatable object for this host, or None."""
    why, hdr = _header_problem(data)
    if why:
        return why
    shoff, shnum, shstrndx = hdr
    sections = [_SHDR.unpack_from(data, shoff + i * _SHDR.size) for i in range(shnum)]
    for sh in sections:
        _name, typ, _f, _a, off, size, link, _info, _al, _es = sh
        if typ != SHT_NOBITS and (off + size > len(data)):
            return "section outside the file"
        if link >= shnum:
            return "section link out of range"
    if sections[shstrndx][1] != SHT_STRTAB:
        return "section name table is not a string table"
    for sh in sections:
        why = _table_problem(data, sections, sh)
        if why:
            return why
    return None
