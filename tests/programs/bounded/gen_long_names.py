#!/usr/bin/env python3
"""Writes a C file of N functions whose symbol names are L bytes long each
(the crafted input of test_bounded: huge names must stay within the caps)."""
import sys

out, n, length = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(out, "w") as f:
    for i in range(n):
        name = ("f%04d_" % i) + "x" * (length - 6)
        f.write('int fn%d(int v) __asm__("%s");\nint fn%d(int v) { return v + %d; }\n' % (i, name, i, i))
