#!/usr/bin/env python3
"""Check a lowprof output directory: folded chains and shares, pprof readable by
`go tool pprof`, the SVG well-formed and naming the functions, summary.json sane."""
import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

from folded_lib import fail, has_chain, read_folded


def check_folded(out, chains, tolerance, comm):
    stacks = read_folded(os.path.join(out, "profile.folded"))
    mine = [(f, c) for f, c in stacks if f[0] == comm]
    total = sum(c for _, c in mine)
    if total < 50:
        fail(f"only {total} samples of {comm} in profile.folded")
    for chain, want in chains:
        got = sum(c for f, c in mine if has_chain(f, chain))
        share = 100.0 * got / total
        print(f"chain {';'.join(chain)}: {got}/{total} samples = {share:.1f}% (want {want}±{tolerance})")
        if abs(share - want) > tolerance:
            fail(f"chain {';'.join(chain)} has {share:.1f}% of samples, want {want}±{tolerance}")
    return [c[-1] for c, _ in chains]


def check_pprof(out, leaves):
    path = os.path.join(out, "profile.pb.gz")
    with gzip.open(path) as f:
        if len(f.read()) == 0:
            fail("profile.pb.gz is empty")
    go = shutil.which("go")
    if go is None:
        fail("go (golang-go) is not installed: cannot check the pprof file with go tool pprof")
    env = dict(os.environ)
    env.setdefault("HOME", "/tmp")
    env.setdefault("GOCACHE", "/tmp/lowprof-gocache")
    env["GOFLAGS"] = "-mod=mod"
    res = subprocess.run([go, "tool", "pprof", "-top", "-nodecount=200", path],
                         capture_output=True, text=True, env=env, timeout=120)
    if res.returncode != 0:
        fail(f"go tool pprof -top failed: {res.stderr}")
    for leaf in leaves:
        if leaf not in res.stdout:
            fail(f"go tool pprof -top does not list {leaf}:\n{res.stdout}")
    print("go tool pprof -top lists", ", ".join(leaves))


def check_svg(out, names):
    tree = ET.parse(os.path.join(out, "flamegraph.svg"))
    titles = [t.text or "" for t in tree.iter("{http://www.w3.org/2000/svg}title")]
    for name in names:
        if not any(t.startswith(name + " ") or t.startswith(name + "(") for t in titles):
            fail(f"flamegraph.svg has no frame titled {name}")
    print(f"flamegraph.svg parses; {len(titles)} titled frames include", ", ".join(names))


def check_summary(out):
    with open(os.path.join(out, "summary.json"), encoding="utf-8") as f:
        s = json.load(f)
    for key in ("version", "duration_s", "samples", "lost_samples", "processes", "top"):
        if key not in s:
            fail(f"summary.json lacks {key}")
    if s["version"] != 1 or s["samples"] <= 0 or not s["top"]:
        fail(f"summary.json looks wrong: {s}")
    print(f"summary.json: {s['samples']} samples, {s['lost_samples']} lost, top {s['top'][0]['function']}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--chain", action="append", default=[], help="a;b;c=PCT")
    ap.add_argument("--tolerance", type=float, default=10)
    ap.add_argument("--comm", required=True)
    args = ap.parse_args()
    chains = []
    for spec in args.chain:
        frames, _, pct = spec.rpartition("=")
        chains.append((frames.split(";"), float(pct)))
    leaves = check_folded(args.out, chains, args.tolerance, args.comm)
    check_pprof(args.out, leaves)
    check_svg(args.out, leaves)
    check_summary(args.out)
    print("PASS")


if __name__ == "__main__":
    main()
