#!/usr/bin/env python3
"""Check that the BPF walker put every frame of one comm in the right file
(tests/programs/unwind_files/sample_tap.c output): for each ELF given, every
frame whose file (the sample's file list) is that ELF's inode must lie in
one of its functions, never in one named by --never (code that never runs:
there only a frame of another file, put in this one, would land). crt's
helpers without a symbol size (__do_global_dtors_aux, on the stack when
dlclose runs the destructors) reach to the next symbol (check_walk.elf_ranges). Counts
the frames per ELF; --min-frames N each. With --main PROGRAM: a sample
with a frame in one of the ELFs is whole (no stop reason, not cut, a later
frame in PROGRAM's main), marked (a stop reason) or garbage (neither, or a
raw address), which fails; --min-whole P: at least P% whole.
  check_files.py TAP --comm C --elf PATH [--elf PATH...] [--never NAME]
                 [--main PROGRAM --min-whole P]"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_walk import LOWPROF_SAMPLE_USER_TRUNCATED, elf_ranges, fail  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tap")
    ap.add_argument("--comm", required=True)
    ap.add_argument("--elf", action="append", required=True)
    ap.add_argument("--never", default="swap_pad")
    ap.add_argument("--min-frames", type=int, default=20)
    ap.add_argument("--main")
    ap.add_argument("--min-whole", type=float, default=0)
    a = ap.parse_args()

    main_ino, main_r = None, None
    if a.main:
        main_ino, main_r = os.stat(a.main).st_ino, elf_ranges(a.main)["main"]
    shape = {"whole": 0, "marker": 0, "garbage": 0}
    garbage = None

    elves = {}
    for path in a.elf:
        st = os.stat(path)
        funcs = elf_ranges(path)
        elves[st.st_ino] = (path, funcs, [0, 0])  # frames, wrong
    samples = 0
    example = None
    with open(a.tap) as f:
        for line in f:
            p = line.rstrip("\n").split("\t")
            if len(p) != 6 or p[1] != a.comm:
                continue
            samples += 1
            files = [x.split(":") for x in p[5].split()]
            frames = [(int(k), int(v, 16)) for k, v in (x.split(":") for x in p[4].split())]
            in_lib = reached = False
            for k, v in frames:
                if not 1 <= k <= len(files):
                    continue
                ino = int(files[k - 1][1])
                if ino == main_ino and main_r[0] <= v < main_r[1] and in_lib:
                    reached = True
                e = elves.get(ino)
                if e is None:
                    continue
                in_lib = True
                e[2][0] += 1
                inside = [n for n, (s, t) in e[1].items() if s <= v < t]
                if not inside or a.never in inside:
                    e[2][1] += 1
                    example = example or (e[0], hex(v), inside, p[4])
            if not in_lib or not a.main:
                continue
            stop, flags = int(p[2]), int(p[3])
            if any(k == 0 for k, _ in frames):
                shape["garbage"] += 1
                garbage = garbage or p[4]
            elif stop == 0 and not flags & LOWPROF_SAMPLE_USER_TRUNCATED and reached:
                shape["whole"] += 1
            elif stop != 0:
                shape["marker"] += 1
            else:
                shape["garbage"] += 1
                garbage = garbage or p[4]
    for path, _, (n, wrong) in elves.values():
        print(f"{a.comm}: {n} frames in {os.path.basename(path)}, {wrong} outside its code")
    print(f"{a.comm}: {samples} samples")
    if example:
        fail(f"a frame in the wrong file: {example}")
    if a.main:
        n = sum(shape.values())
        share = 100.0 * shape["whole"] / n if n else 0.0
        print(f"{a.comm}: {n} samples with a frame in the libraries: {shape['whole']} whole to "
              f"main ({share:.1f}%), {shape['marker']} with a marker, {shape['garbage']} neither")
        if shape["garbage"]:
            fail(f"{shape['garbage']} samples neither whole nor marked, e.g. {garbage}")
        if share < a.min_whole:
            fail(f"{share:.1f}% whole to main < {a.min_whole}%")
    for path, _, (n, _w) in elves.values():
        if n < a.min_frames:
            fail(f"only {n} frames in {path}")


if __name__ == "__main__":
    main()
