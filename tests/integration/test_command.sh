#!/bin/sh
# `lowprof -- COMMAND`: the command and the processes it starts, nothing else.
#  1. A command whose child and grandchild burn CPU for 2 s each, beside
#     busy processes forked outside it, one after another: the child's and the grandchild's
#     samples are there (all of them: the command ran only once sampling
#     did), the outsider's are not, and lowprof stops when the command exits
#     (not at --duration), saying how it ended.
#  2. A followed process leaves the table of targets when it exits: a command
#     that starts more short-lived processes than the table holds
#     (LOWPROF_TARGET_PIDS_MAX, 4096), then a busy one, has the busy one
#     profiled and none refused.
#  3. The command's exit status is said, lowprof's own is 0.
#  4. Bad command lines: `--` alone, a command that is not found, a file
#     that is not executable, a directory: exit 2, one line, nothing run.
#  5. The command as another user, as README says: `-- runuser -u USER --
#     COMMAND` runs it as USER (a file it makes is USER's), and the process
#     runuser starts is followed.
#   usage: test_command.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib.sh"
require_bpf

work_dir command

# 1. The command's processes, not the outsider's: a shell outside the command
# starts one busy process (its own name) after another, a second each, so
# that several are forked while the command runs.
cp "$BIN/dwarf_chain" "$work/outsider"
sh -c "for i in \$(seq 30); do \"$work/outsider\" 1; done" &
outsider=$!
track "$outsider"
t0=$(now)
"$BIN/lowprof" -v --no-throttle --cpu-budget 100 -F 99 --duration 60 --output "$work/one" -- \
	sh -c "\"$BIN/dwarf_chain_fp\" 2 & sh -c '\"$BIN/dwarf_chain\" 2'; wait" \
	2>"$work/one.err" || fail "lowprof -- COMMAND failed: $(grep -v libbpf "$work/one.err" | tail -5)"
t1=$(now)
kill "$outsider" 2>/dev/null || true
pkill -f "$work/outsider" 2>/dev/null || true
grep -q "the command exited with status 0: stopping" "$work/one.err" ||
	fail "no word of the command's end: $(grep -v libbpf "$work/one.err" | tail -5)"
python3 - "$t0" "$t1" <<'PY' || fail "lowprof did not stop when the command exited"
import sys
took = float(sys.argv[2]) - float(sys.argv[1])
print(f"lowprof ran {took:.1f} s for a command of about 2 s (--duration 60)")
sys.exit(0 if took < 30 else 1)
PY
python3 - "$work/one/profile.folded" "$SRC/tests/integration" <<'PY' || fail "the command's processes"
import sys
sys.path.insert(0, sys.argv[2])
from folded_lib import fail, read_folded
by_comm = {}
for frames, count in read_folded(sys.argv[1]):
    by_comm[frames[0]] = by_comm.get(frames[0], 0) + count
print(f"samples by process: {by_comm}")
if by_comm.get("outsider", 0):
    fail("a busy process forked outside the command was profiled")
# 99 Hz for 2 s each, three busy threads on two CPUs: about 130 samples
# each. Had the command run before sampling did (lowprof's start takes about
# a second), a third or more of them would be missing.
for comm in ("dwarf_chain_fp", "dwarf_chain"):
    if by_comm.get(comm, 0) < 80:
        fail(f"{comm} (started by the command) has {by_comm.get(comm, 0)} samples, expected >= 80")
PY

# 2. The table of targets holds the processes alive, not every one started.
"$BIN/lowprof" -v --no-throttle --cpu-budget 100 -F 99 --duration 120 --output "$work/two" -- \
	sh -c "\"$BIN/churn_spawn\" 1500 9 /bin/true >/dev/null; \"$BIN/dwarf_chain_fp\" 1" \
	2>"$work/two.err" || fail "lowprof -- COMMAND (churn) failed: $(grep -v libbpf "$work/two.err" | tail -5)"
line=$(grep "the command's processes:" "$work/two.err" | tail -1)
echo "$line"
followed=$(echo "$line" | sed -n 's/.*: \([0-9]*\) new ones profiled.*/\1/p')
[ -n "$followed" ] && [ "$followed" -gt 4096 ] ||
	fail "the command started ${followed:-no} processes that were followed; the test needs more than 4096"
if grep -q "were not profiled" "$work/two.err"; then
	fail "processes were refused: $(grep "were not profiled" "$work/two.err")"
fi
n=$(awk '$0 ~ /^dwarf_chain_fp;/ { n += $NF } END { print n + 0 }' "$work/two/profile.folded")
echo "dwarf_chain_fp, started after $followed others: $n samples"
[ "$n" -ge 50 ] || fail "the busy process started last has $n samples: the table was full?"

# 3. The command's status.
"$BIN/lowprof" --duration 60 --output "$work/three" -- sh -c 'exit 3' 2>"$work/three.err" ||
	fail "lowprof exited $? when its command exited 3: $(tail -3 "$work/three.err")"
grep -q "the command exited with status 3: stopping" "$work/three.err" ||
	fail "the command's status was not said: $(tail -3 "$work/three.err")"

# 4. Bad command lines.
status=0
"$BIN/lowprof" --output "$work/four" -- 2>"$work/four.err" || status=$?
[ "$status" -eq 2 ] && grep -q "'--' must be followed by a command" "$work/four.err" ||
	fail "\`lowprof --\`: status $status, $(cat "$work/four.err")"
status=0
"$BIN/lowprof" --output "$work/four" -- lowprof-no-such-command 2>"$work/four.err" || status=$?
[ "$status" -eq 2 ] && grep -q "lowprof-no-such-command: command not found" "$work/four.err" ||
	fail "a missing command: status $status, $(cat "$work/four.err")"
status=0
"$BIN/lowprof" --output "$work/four" -- "$work/four.err" 2>"$work/five.err" || status=$?
[ "$status" -eq 2 ] && grep -q "Permission denied" "$work/five.err" ||
	fail "a file that is not executable: status $status, $(cat "$work/five.err")"
status=0
"$BIN/lowprof" --output "$work/four" -- "$work" 2>"$work/five.err" || status=$?
[ "$status" -eq 2 ] && grep -q "Permission denied" "$work/five.err" ||
	fail "a directory as the command: status $status, $(cat "$work/five.err")"
# 5. As another user, through runuser: its child is followed like any other.
# (A directory nobody may write in, inside the private work directory, with
# a copy of the busy program: the build tree may be where nobody cannot go.)
chmod 711 "$work"
mkdir -m 1777 "$work/shared"
cp "$BIN/dwarf_chain" "$work/shared/dwarf_chain"
chmod 755 "$work/shared/dwarf_chain"
"$BIN/lowprof" --no-throttle --cpu-budget 100 -F 99 --duration 60 --output "$work/five" -- \
	runuser -u nobody -- sh -c "touch '$work/shared/made'; '$work/shared/dwarf_chain' 1" 2>"$work/five.err" ||
	fail "lowprof -- runuser failed: $(grep -v libbpf "$work/five.err" | tail -5)"
owner=$(stat -c %U "$work/shared/made" 2>/dev/null || echo "no one (the file was not made)")
[ "$owner" = nobody ] || fail "the command ran as $owner, not nobody: $(tail -3 "$work/five.err")"
n=$(awk '$0 ~ /^dwarf_chain;/ { n += $NF } END { print n + 0 }' "$work/five/profile.folded")
echo "dwarf_chain as nobody, under runuser: $n samples"
[ "$n" -ge 50 ] || fail "the process runuser started has $n samples: not followed?"

echo "PASS: lowprof -- COMMAND profiles the command and what it starts, and stops with it"
