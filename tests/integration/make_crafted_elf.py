#!/usr/bin/env python3
"""Write a small hostile ELF: one executable PT_LOAD and an .eh_frame of many
FDEs over one big CIE (CIE_NOPS nops of initial instructions). A parser that
re-runs the CIE for every FDE does CIE_NOPS x FDES steps on it (here 10^11:
hours); a linear one reads it in milliseconds.
usage: make_crafted_elf.py OUT [CIE_NOPS [FDES]]"""
import struct, sys

out = sys.argv[1]
nops = int(sys.argv[2]) if len(sys.argv) > 2 else 1 << 20
nfde = int(sys.argv[3]) if len(sys.argv) > 3 else 100000
BASE = 0x1000  # file offset (and address) of .eh_frame

eh = bytearray()
head = bytes([1, 0, 1, 0x78, 16, 0x0C, 7, 8, 0x90, 1])
eh += struct.pack("<II", 4 + len(head) + nops, 0) + head + bytes(nops)
for i in range(nfde):
    id_pos = len(eh) + 4
    eh += struct.pack("<IIQQ", 20, id_pos, 0x400000 + 32 * i, 16)
eh += struct.pack("<I", 0)
shstr = b"\0.eh_frame\0.shstrtab\0"
shstr_off = BASE + len(eh)
shoff = (shstr_off + len(shstr) + 7) & ~7
ehdr = struct.pack("<16sHHIQQQIHHHHHH", b"\x7fELF\x02\x01\x01" + bytes(9), 3, 62, 1, 0,
                   64, shoff, 0, 64, 56, 1, 64, 3, 2)
phdr = struct.pack("<IIQQQQQQ", 1, 5, 0, 0, 0, shoff, shoff, 0x1000)
sh = bytes(64)
sh += struct.pack("<IIQQQQIIQQ", 1, 1, 2, BASE, BASE, len(eh), 0, 0, 8, 0)
sh += struct.pack("<IIQQQQIIQQ", 11, 3, 0, 0, shstr_off, len(shstr), 0, 0, 1, 0)
img = bytearray(ehdr + phdr)
img += bytes(BASE - len(img)) + eh + shstr
img += bytes(shoff - len(img)) + sh
with open(out, "wb") as f:
    f.write(img)
