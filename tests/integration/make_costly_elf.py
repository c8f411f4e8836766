#!/usr/bin/env python3
"""Write a small ELF that costs the unwinder as much CPU as lowprof's bounds
let one file cost it: its .eh_frame and .debug_frame are compressed
(SHF_COMPRESSED, zlib) and each inflates to MIB MiB (default 256, the
per-section cap UNWIND_MAX_SECTION_SIZE) of one CIE and one FDE whose CFI
program is all DW_CFA_advance_loc 0 (a row computed per byte). It is
well-formed: no size cap refuses it, and the parse is linear, but linear in
512 MiB: about 7 s of CPU on the 2-CPU test VM, more than 0.9 s on any
machine. Only the unwinder's per-request CPU timer (ITIMER_PROF) stops it.
The file itself is about 600 KiB (below the loader's 16 MiB start-up scan).
usage: make_costly_elf.py OUT [MIB]"""
import struct
import sys
import zlib

out = sys.argv[1]
SIZE = (int(sys.argv[2]) if len(sys.argv) > 2 else 256) << 20
VADDR = 0x1000  # the FDE's code: inside the one executable PT_LOAD [0, 0x2000)
ADVANCE_LOC_0 = 0x40
CHUNK = 1 << 20


def section(debug):
    """(head, n, tail): the section is head + n bytes of ADVANCE_LOC_0 + tail."""
    if debug:  # .debug_frame: CIE id 0xffffffff, no augmentation, absolute 8-byte pointers
        cie_body = bytes([1, 0, 1, 0x78, 16, 0x0C, 7, 8, 0x90, 1])
        cie = struct.pack("<II", 4 + len(cie_body), 0xFFFFFFFF) + cie_body
        fde_fixed = 4 + 8 + 8
    else:  # .eh_frame: "zR", pc-relative sdata4 pointers
        cie_body = bytes([1]) + b"zR\0" + bytes([1, 0x78, 16, 1, 0x1B, 0x0C, 7, 8, 0x90, 1])
        cie = struct.pack("<II", 4 + len(cie_body), 0) + cie_body
        fde_fixed = 4 + 4 + 4 + 1
    tail = struct.pack("<I", 0)  # terminator
    n = SIZE - len(cie) - 4 - fde_fixed - len(tail)
    fde_pos = len(cie)
    if debug:
        fde = struct.pack("<IIQQ", fde_fixed + n, 0, VADDR, 0x1000)
    else:
        id_pos = fde_pos + 4
        pc_field = VADDR + id_pos + 4  # the section's address is VADDR too
        fde = struct.pack("<IIiIB", fde_fixed + n, id_pos, VADDR - pc_field, 0x1000, 0)
    return cie + fde, n, tail


def flushed(data, mode=zlib.Z_FULL_FLUSH):
    """Raw deflate of data alone, byte-aligned: such pieces concatenate."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush(mode)


def compressed(debug):
    """Elf64_Chdr + zlib stream. A full-flushed 1 MiB block repeats byte for
    byte, so the 256 MiB are compressed once per MiB shape, not 256 times."""
    head, n, tail = section(debug)
    chunk = bytes([ADVANCE_LOC_0]) * CHUNK
    block = flushed(chunk)
    rest = bytes([ADVANCE_LOC_0]) * (n % CHUNK)
    parts = [b"\x78\xda", flushed(head)]
    adler = zlib.adler32(head)
    for _ in range(n // CHUNK):
        parts.append(block)
        adler = zlib.adler32(chunk, adler)
    parts.append(flushed(rest))
    adler = zlib.adler32(rest, adler)
    parts.append(flushed(tail, zlib.Z_FINISH))
    adler = zlib.adler32(tail, adler)
    parts.append(struct.pack(">I", adler))
    stream = b"".join(parts)
    # The pieces make one valid stream of SIZE bytes (checksum included).
    d, total = zlib.decompressobj(), 0
    for i in range(0, len(stream), 1 << 16):
        total += len(d.decompress(stream[i:i + (1 << 16)]))
    assert d.eof and total == SIZE, (d.eof, total, SIZE)
    return struct.pack("<IIQQ", 1, 0, SIZE, 8) + stream  # ELFCOMPRESS_ZLIB


names = [".eh_frame", ".debug_frame"]
shstr = b"\0.shstrtab\0" + b"".join(n.encode() + b"\0" for n in names)
img = bytearray(64 + 56)
secs = []
for name in names:
    data = compressed(name == ".debug_frame")
    secs.append((shstr.index(name.encode() + b"\0"), len(img), len(data)))
    img += data
shstr_off = len(img)
img += shstr
img += bytes(-len(img) % 8)
shoff = len(img)
sh = bytes(64)
for name_off, off, size in secs:
    # SHF_COMPRESSED (0x800); never with SHF_ALLOC (libelf refuses to inflate those).
    sh += struct.pack("<IIQQQQIIQQ", name_off, 1, 0x800, VADDR, off, size, 0, 0, 8, 0)
sh += struct.pack("<IIQQQQIIQQ", 1, 3, 0, 0, shstr_off, len(shstr), 0, 0, 1, 0)
img += sh
nsec = 2 + len(secs)
img[0:64] = struct.pack("<16sHHIQQQIHHHHHH", b"\x7fELF\x02\x01\x01" + bytes(9), 3, 62, 1, 0,
                        64, shoff, 0, 64, 56, 1, 64, nsec, nsec - 1)
img[64:120] = struct.pack("<IIQQQQQQ", 1, 5, 0, 0, 0, 0x2000, 0x2000, 0x1000)  # PT_LOAD R+X
with open(out, "wb") as f:
    f.write(img)
