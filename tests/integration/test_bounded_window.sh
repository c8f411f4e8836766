#!/bin/sh
# The files cover a sliding --window, not the whole run; --archive keeps each
# interval's pprof with its retention; SIGHUP reopens the audit log while the
# loader writes it, and `lowprof audit` reads the rotated files.
#   usage: test_bounded_window.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib.sh"
require_bpf

work_dir window

"$BIN/two_chains" 16 &
wl=$!
track "$wl"
"$BIN/lowprof" --pid "$wl" --duration 11 --frequency 99 --interval 1 --window 3 \
	--archive --archive-max-age 4 --output "$work/out" --no-throttle \
	--run-dir "$work/run" --unwind fp --audit-log-max-mb 1 2>"$work/stderr" &
sup=$!
track "$sup"
sleep 5
# logrotate's way: move the file, then SIGHUP.
mv "$work/out/audit.log" "$work/out/audit.log.1" || fail "no audit.log during the run"
kill -HUP "$sup"
sleep 1
[ -f "$work/out/audit.log" ] || fail "SIGHUP did not reopen audit.log"
wait "$sup" || fail "lowprof exited with status $? ($(cat "$work/stderr"))"

python3 - "$work/out" <<'PY' || fail "the window"
import json, os, sys
out = sys.argv[1]
s = json.load(open(os.path.join(out, "summary.json")))
w = s["window"]
assert w["seconds"] == 3 and w["interval_s"] == 1, w
# About 11 s of run: the files cover the last 3 s (a roll at exit adds a part).
assert w["covered_s"] <= 4.5, w
assert w["start_s"] >= 6, w
assert w["intervals"] <= 4, w
assert w["expired_intervals"] >= 5, w
# The timeline keeps the window's entries; the older ones are summarised.
assert all(e["t"] >= w["start_s"] - 1.01 for e in s["timeline"]), s["timeline"][:2]
assert s["timeline_before_window"]["entries"] >= 4, s.get("timeline_before_window")
# The samples are the window's: about 3 s of 99 Hz on one busy thread.
assert 0 < s["samples"] < 99 * 6, s["samples"]
a = w["archive"]
assert a["written"] >= 10 and a["files"] <= 6 and a["removed"] >= 4, a
names = sorted(n for n in os.listdir(out) if n.startswith("profile-") and n.endswith(".pb.gz"))
assert len(names) == a["files"], (names, a)
index = open(os.path.join(out, "archive.index")).read().split()
assert [index[i] for i in range(0, len(index), 3)] == names, (index, names)
print("window:", w)
PY
"$BIN/lowprof" audit "$work/out/audit.log" >"$work/audit.txt" || fail "lowprof audit failed"
grep -q "prog_load\|map_update\|attach" "$work/audit.txt" || fail "lowprof audit: no loader records from the rotated file"
grep -q "audit_reopened" "$work/audit.txt" || fail "lowprof audit: no audit_reopened record"
echo "PASS"
