#!/bin/sh
# The verifier's work to load each BPF program (instructions processed, the
# audit log's `verified_insns`) stays in bounds: it is most of the loader's
# CPU at every start and restart (docs/BENCHMARKS.md, "The verifier without
# BTF searches"). The bounds are the counts on this project's kernel (6.18)
# with about a fifth of room: 58,800 and 65,203 when they were set. Before
# the sample's end became a global function the sampler took 73,749 (and
# the off-CPU program about 109,000): that tree fails here, as would a
# change that makes the verifier walk a path once per state again. Both
# programs load: --off-cpu.
#   usage: test_verifier_work.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf

SAMPLER_MAX=70000
OFFCPU_MAX=78000

work_dir verifier-work
"$BIN/lowprof" --duration 1 --off-cpu --output "$work/out" 2>"$work/stderr" ||
	fail "lowprof exited with status $? ($(tail -5 "$work/stderr"))"
python3 - "$work/out/audit.log" "$SAMPLER_MAX" "$OFFCPU_MAX" <<'PY' || fail "the verifier's work is out of bounds"
import json, sys
bounds = {"lowprof_sample": int(sys.argv[2]), "lowprof_offcpu_switch": int(sys.argv[3])}
seen = {}
for line in open(sys.argv[1]):
    rec = json.loads(line)
    if rec.get("event") == "prog_load" and rec.get("prog") in bounds:
        if rec.get("result") != "ok" or "verified_insns" not in rec:
            sys.exit(f"FAIL: a prog_load record without the verifier's count: {rec}")
        seen[rec["prog"]] = rec["verified_insns"]
for prog, bound in bounds.items():
    if prog not in seen:
        sys.exit(f"FAIL: no prog_load record of {prog} in the audit log")
    print(f"{prog}: {seen[prog]} instructions processed (bound {bound})")
    if not 0 < seen[prog] <= bound:
        sys.exit(f"FAIL: {prog} took the verifier {seen[prog]} instructions, over {bound}")
PY
echo "PASS"
