#!/usr/bin/env python3
"""Check the BPF walker's own records (tests/programs/unwind_files/sample_tap.c
output) for one comm, without symbols from the exporter:
  leaf in the program  the leaf frame is a file frame whose offset lies in
                       one of the program's functions (from --elf's symbols);
                       with --any-frame, any frame
  whole to main        no stop reason, not cut, and a later frame in the same
                       file lies in main
  marker               a stop reason (the outputs end the stack with it)
  garbage              neither, or a raw address in a program sample
--min-whole P: whole-to-main share (of leaf-in-program samples) at least P%;
--min-samples N; garbage is always a failure. --anon: the comm runs code in
anonymous memory: its samples whose leaf is a raw address must be whole
(frames lead on) or carry a marker, and no file frame may follow a raw one
unless the walk went on by frame pointers (reported, not failed)."""
import argparse
import re
import subprocess
import sys

LOWPROF_SAMPLE_USER_TRUNCATED = 1


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def elf_ranges(path):
    """{name: (start_off, end_off)} of FUNC symbols, as file offsets."""
    segs = []
    for line in subprocess.run(["readelf", "-W", "-l", path], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        f = line.split()
        if f and f[0] == "LOAD":
            segs.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))  # off, vaddr, filesz
    syms = []
    for line in subprocess.run(["readelf", "-W", "-s", path], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        f = line.split()
        if len(f) < 8 or f[3] != "FUNC" or f[6] == "UND":
            continue
        syms.append((int(f[1], 16), int(f[2]), f[7].split("@")[0]))
    starts = sorted({v for v, _, _ in syms})
    out = {}
    for v, size, name in syms:
        for off, vaddr, filesz in segs:
            if vaddr <= v < vaddr + filesz:
                if size == 0:
                    # crt's helpers (__do_global_dtors_aux, frame_dummy, _init,
                    # _fini) carry no size: to the next symbol, as symbolizers
                    # read them, or to the segment's end.
                    later = [x for x in starts if x > v]
                    size = (min(later[0], vaddr + filesz) if later else vaddr + filesz) - v
                out[name] = (v - vaddr + off, v - vaddr + off + max(size, 1))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tap")
    ap.add_argument("--comm", required=True)
    ap.add_argument("--elf")
    ap.add_argument("--prefix", default="cl_", help="the program's own functions")
    ap.add_argument("--min-whole", type=float, default=0)
    ap.add_argument("--min-samples", type=int, default=20)
    ap.add_argument("--anon", action="store_true")
    ap.add_argument("--any-frame", action="store_true",
                    help="count samples with any frame (not only the leaf) in the program")
    a = ap.parse_args()

    rows = []
    with open(a.tap) as f:
        for line in f:
            p = line.rstrip("\n").split("\t")
            if len(p) != 6 or p[1] != a.comm:
                continue
            frames = [(int(k), int(v, 16)) for k, v in (x.split(":") for x in p[4].split())]
            rows.append((int(p[2]), int(p[3]), frames, p[5].split()))
    if a.anon:
        n = sum(1 for r in rows if r[2] and r[2][0][0] == 0)
        ok = sum(1 for r in rows if r[2] and r[2][0][0] == 0 and (r[0] != 0 or len(r[2]) > 1))
        print(f"{a.comm}: {len(rows)} samples, {n} with a raw (anonymous) leaf, {ok} of them "
              f"marked or walked on")
        if n < a.min_samples:
            fail(f"only {n} samples with an anonymous leaf")
        if ok != n:
            fail("an anonymous leaf without frames after it and without a marker")
        return
    funcs = elf_ranges(a.elf)
    own = [r for n, r in funcs.items() if n.startswith(a.prefix) or n == "main"]
    main_r = funcs["main"]
    stats = {"leaf": 0, "whole": 0, "marker": 0, "garbage": 0}
    reasons = {}
    example = None
    for stop, flags, frames, files in rows:
        placed = [(k, v) for k, v in (frames if a.any_frame else frames[:1])
                  if 1 <= k <= 15 and any(s <= v < e for s, e in own)]
        if not placed:
            continue
        kind = placed[0][0]
        stats["leaf"] += 1
        raw = any(k == 0 for k, _ in frames)
        reached = any(k == kind and main_r[0] <= v < main_r[1] for k, v in frames)
        if raw:
            stats["garbage"] += 1
            example = example or frames
        elif stop == 0 and not (flags & LOWPROF_SAMPLE_USER_TRUNCATED) and reached:
            stats["whole"] += 1
        elif stop != 0:
            stats["marker"] += 1
            reasons[stop] = reasons.get(stop, 0) + 1
        else:
            stats["garbage"] += 1
            example = example or frames
    n = stats["leaf"]
    share = 100.0 * stats["whole"] / n if n else 0.0
    print(f"{a.comm}: {len(rows)} samples, {n} with the leaf in the program: "
          f"{stats['whole']} whole to main ({share:.1f}%), {stats['marker']} with a marker "
          f"{reasons}, {stats['garbage']} neither")
    if n < a.min_samples:
        fail(f"only {n} samples with the leaf in the program")
    if stats["garbage"]:
        fail(f"{stats['garbage']} samples neither whole nor marked, e.g. {example}")
    if share < a.min_whole:
        fail(f"{share:.1f}% whole to main < {a.min_whole}%")


if __name__ == "__main__":
    main()
