#!/bin/sh
# A 32-bit (compat) process (tests/programs/unwind/compat_chain.c, -m32 with
# frame pointers): its frames are 4 bytes, which lowprof's walks (8-byte
# words) cannot read, so its stacks are the kernel's 32-bit walk
# (bpf/unwind_fp.bpf.h, fp_walk_compat), in every mode:
#   1. --unwind fp and --unwind dwarf, on CPU: at least 95% of the samples in
#      c32_leaf carry main;c32_level1;c32_level2;c32_leaf, and none ends
#      "[unwind failed]" (what a walk of 8-byte words recorded: the leaf and
#      that marker);
#   2. --off-cpu: its blocking stacks (nanosleep under the same chain) are
#      recorded, none "[unwind failed]".
#   usage: test_unwind_compat.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf

if [ ! -x "$BIN/compat_chain" ]; then
	why="no 32-bit program: this build found no 32-bit toolchain (gcc-multilib, from scripts/install-deps)"
	[ "${LOWPROF_REQUIRE_BPF:-0}" = 1 ] && fail "$why"
	echo "SKIP: $why" >&2
	exit 77
fi
if ! "$BIN/compat_chain" 0; then
	echo "SKIP: the kernel runs no 32-bit programs (CONFIG_IA32_EMULATION)" >&2
	exit 77
fi

work_dir unwind-compat

# 1. On CPU, in both modes. 2. Off CPU, alongside (dwarf run).
for mode in fp dwarf; do
	"$BIN/compat_chain" 8 &
	spin=$!
	track "$spin"
	extra=""
	if [ "$mode" = dwarf ]; then
		"$BIN/compat_chain" 8 sleep &
		sleeper=$!
		track "$sleeper"
		extra="--off-cpu --pid $sleeper"
	fi
	# shellcheck disable=SC2086 # extra is a list of options
	"$BIN/lowprof" --unwind "$mode" --no-throttle --cpu-budget 100 --pid "$spin" $extra \
		--duration 5 --frequency 199 --output "$work/$mode" 2>"$work/$mode.err" ||
		fail "lowprof (--unwind $mode) failed: $(cat "$work/$mode.err")"
	python3 - "$work/$mode" "$SRC/tests/integration" "$mode" <<'PY' || fail "--unwind $mode: a 32-bit process's stacks"
import os, sys
sys.path.insert(0, sys.argv[2])
from folded_lib import fail, has_chain, read_folded
from pb_lib import fields
import gzip


def check_vdso_unnamed(path):
    """(locations in a [vdso] mapping, the function names any of them has)
    of the pprof profile at path (profile.proto: mapping 3, location 4,
    function 5, string_table 6)."""
    with gzip.open(path) as f:
        prof = f.read()
    strings, mappings, locations, functions = [], {}, [], {}
    for num, v in fields(prof):
        if num == 6:
            strings.append(v.decode())
        elif num == 3:
            m = dict(fields(v))
            mappings[m.get(1, 0)] = m.get(5, 0)
        elif num == 4:
            locations.append(v)
        elif num == 5:
            fn = dict(fields(v))
            functions[fn.get(1, 0)] = fn.get(2, 0)
    vdso, named = 0, set()
    for loc in locations:
        lf = list(fields(loc))
        mapping = dict(lf).get(2, 0)
        if strings[mappings.get(mapping, 0)] != "[vdso]":
            continue
        vdso += 1
        for num, line in lf:
            if num == 4:
                name = strings[functions.get(dict(fields(line)).get(1, 0), 0)]
                if not name.startswith("[vdso]+0x"):
                    named.add(name)
    return vdso, sorted(named)


out, mode = sys.argv[1], sys.argv[3]
chain = ["main", "c32_level1", "c32_level2", "c32_leaf"]
n = leaf = whole = 0
for frames, count in read_folded(os.path.join(out, "profile.folded")):
    if frames[0] != "compat_chain":
        continue
    user = [f for f in frames[1:] if not f.endswith("_[k]")]
    n += count
    if "[unwind_failed]" in user:
        fail(f"--unwind {mode}: {count} samples of compat_chain end [unwind failed]: {';'.join(user)}")
    if user and user[-1] == "c32_leaf":
        leaf += count
        whole += count if has_chain(user, chain) else 0
print(f"--unwind {mode}: compat_chain {n} samples, {leaf} in c32_leaf, {whole} of them whole")
if leaf < 100 or whole < 0.95 * leaf:
    fail(f"--unwind {mode}: {whole} of {leaf} samples in c32_leaf carry {';'.join(chain)}")
# Its clock_gettime runs in its vDSO, the 32-bit image, which the exporter
# does not have: those frames stay unnamed ("[vdso]+0x..."). Named with the
# exporter's own (64-bit) vDSO, they took the names of what lies at their
# offsets there (getrandom, in this kernel's).
vdso, named = check_vdso_unnamed(os.path.join(out, "profile.pb.gz"))
print(f"--unwind {mode}: {vdso} locations in [vdso], named: {named}")
if vdso == 0:
    fail(f"--unwind {mode}: no location in compat_chain's [vdso]; it calls clock_gettime all the time")
if named:
    fail(f"--unwind {mode}: frames in a 32-bit process's [vdso] named from the exporter's 64-bit vDSO: {named}")
if mode == "dwarf":
    off = 0
    for frames, count in read_folded(os.path.join(out, "offcpu.folded")):
        if frames[0] != "compat_chain":
            continue
        if "[unwind_failed]" in frames:
            fail(f"off-CPU: {count} of compat_chain's blocked time ends [unwind failed]: {';'.join(frames)}")
        off += count
    print(f"off-CPU: compat_chain blocked {off} (offcpu.folded's unit)")
    if off == 0:
        fail("off-CPU: no blocking stack of the 32-bit process")
PY
done
echo "PASS: a 32-bit process's stacks by the kernel's walk"
