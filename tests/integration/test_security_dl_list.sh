#!/bin/sh
# What a process writes in its own dynamic loader's list names only its own
# frames, and a list without an end holds no walk up (docs/SECURITY.md, "The
# dynamic loader and its libraries are named from the process's own
# memory"). The attack, as an unprivileged user (nobody): dl_forge heads
# r_debug's list with an entry that claims anonymous memory as libc (libc's
# ELF header copied to its base) and an entry that points to itself, and
# spends its time in a loop in that memory. Victims (root): short-lived
# processes, about 100 a second, whose every stack starts in libc, found
# through their own lists, run at the same time. Then:
#   - the forger's loop is named labs: the walker followed the forged list
#     (without the list the memory is anonymous, and the test proves
#     nothing);
#   - the forger's real libc frames, on no entry of its endless list, are
#     still placed: the search ended at its bound and the walk went on;
#   - the victims' stacks are whole and hold only their own frames.
#   usage: test_security_dl_list.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf

work_dir dl_list
chmod 755 "$work"
mkdir "$work/evil"
cp "$BIN/dl_forge" "$work/evil/dl_forge"
chmod 755 "$work/evil/dl_forge"
chown -R 65534:65534 "$work/evil"

# -v: the loader's walker statistics, printed below.
"$BIN/lowprof" -v --unwind dwarf --no-throttle --cpu-budget 100 --duration 10 --frequency 199 \
	--output "$work/out" 2>"$work/err" &
lp=$!
track "$lp"
wait_profiling "$work/err"
# libc's table first: a forger sampled before it is placed by its VMA (as
# anonymous memory, then cached), and the list is never consulted for it.
for _ in $(seq 100); do
	grep -q "start-up unwind tables done" "$work/err" && break
	sleep 0.2
done
grep -q "start-up unwind tables done" "$work/err" || fail "no start-up tables in 20 s"
setpriv --reuid=65534 --regid=65534 --clear-groups "$work/evil/dl_forge" 8 &
forger=$!
track "$forger"
sleep 1
"$BIN/churn_spawn" 100 6 "$BIN/churn_leaf" >/dev/null || fail "churn_spawn failed"
wait "$forger" || fail "dl_forge failed"
wait "$lp" || fail "lowprof failed: $(tail -5 "$work/err")"
grep "unwind walker" "$work/err" | tail -1

python3 - "$SRC/tests/integration" "$work/out" <<'PY'
import os, sys
sys.path.insert(0, sys.argv[1])
from folded_lib import fail, read_folded

forger = in_loop = forger_libc = 0
for frames, count in read_folded(os.path.join(sys.argv[2], "profile.folded")):
    if frames[0] != "dl_forge":
        continue
    forger += count
    if frames[-1] == "labs":
        in_loop += count
    if "__libc_start_call_main" in frames:
        forger_libc += count
print(f"forger samples {forger}: in its loop, named labs, {in_loop}; "
      f"with its real libc frames placed {forger_libc}")
if forger < 200:
    fail(f"only {forger} samples of the forger")
if in_loop < forger * 0.5:
    fail(f"only {in_loop} of the forger's {forger} samples were placed through its forged list: "
         "the attack never got that far, the test proves nothing")
if forger_libc < forger * 0.5:
    fail(f"only {forger_libc} of the forger's {forger} samples have their libc frames: "
         "a search of the endless list stopped the walk")
PY
python3 "$SRC/tests/integration/check_unwind.py" "$work/out" --comm churn_leaf \
	--leaf-prefix cl_ --chain "main;cl_level1;cl_level2;cl_level3;cl_leaf" --min 95 --no-garbage
python3 "$SRC/tests/integration/check_unwind.py" "$work/out" --comm churn_leaf \
	--entry "$BIN/churn_leaf" --min 95
echo "PASS: a forged list of libraries names only the forger's frames, and an endless one holds no walk up"
