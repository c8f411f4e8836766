#!/bin/sh
# A process that starts and ends while the loader rests is told to the
# exporter while it exists. The exporter reads a process's executable path
# and container when it is told of it (exporter/otlp/process_info.h); at rest
# the loader drains at the rest's end (up to 12 s at the defaults), so a
# short run of a program lowprof already knows came out without its path.
# Now its first sample wakes the loader (bpf/lowprof.bpf.c,
# loader_wake_newcomers), which drains and tells the exporter at once and
# goes on resting: the OTLP samples of both runs carry the path, and the
# quiet interval that held the second run went on past it.
#   A third run is the program exec'd by a process sampled before (a shell
# busy for 0.3 s, then waiting a second, as a wrapper such as nice or a
# shell's child is sampled before its exec): its samples carry the
# program's path, not the shell's (the exporter read a pid once, at first
# sight, and kept it) and not none (a process's first sample after an exec
# wakes the loader as a new process's does: bpf/lowprof.h, image_id).
#   usage: test_rest_newcomer.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf
have_reference || exit 0

work_dir rest-newcomer
start_sink "$work/sink" 200
# Its own copy of a busy program: a name nothing else on the host has.
cp /usr/bin/yes "$work/newcomer"
"$BIN/lowprof" --duration 30 --interval 60 --output "$work/out" --run-dir "$work/run" \
	--otlp-endpoint "http://127.0.0.1:$port" 2>"$work/stderr" &
sup=$!
track "$sup"
wait_profiling "$work/stderr"
# The first run: its table is built then (a table request wakes the loader
# whatever the interval), so the second run's samples need nothing new.
# Each run lasts 0.6 s: about 11 samples at 19 Hz with a CPU to itself (0.3 s
# gave 5 or 6, few enough for a moment of other work on the host to leave a
# run with none). The premise is a quiet host: on a busy one the throttle
# leaves 19 Hz and the loader does not rest.
sleep 1
timeout 0.6 "$work/newcomer" >/dev/null || true
# Quiet intervals of 1, 1, 2, 4, then 12 s after the first run's: 12 s on,
# the loader is about 4 s into a 12-s rest.
sleep 12
timeout 0.6 "$work/newcomer" >/dev/null || true
# In the next rest, past the 12-s one the checks below look at (their ends
# move with the host, by less than this). The shell is told to the exporter
# at its first sample, and waits a second before its exec; then the
# newcomer runs 0.6 s, as above.
sleep 10
mkfifo "$work/exec-now"
sh -c 'while [ ! -e "$1" ]; do :; done; read -r _ <"$2"; exec "$3"' sh \
	"$work/go" "$work/exec-now" "$work/newcomer" >/dev/null &
execd=$!
track "$execd"
sleep 0.3
touch "$work/go"
sleep 1
echo >"$work/exec-now"
i=0
while [ "$(readlink "/proc/$execd/exe")" != "$work/newcomer" ] && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
sleep 0.6
kill "$execd"
wait "$sup" || fail "lowprof exited with status $? ($(tail -5 "$work/stderr"))"
sup=

otlp_processes newcomer || fail "no OTLP sample of newcomer"
[ "$(wc -l <"$work/procs")" -ge 3 ] || fail "the OTLP samples hold fewer than three runs of newcomer"
grep -q "^$execd " "$work/procs" || fail "no OTLP sample of the newcomer the shell $execd exec'd"
if grep -q " -$" "$work/procs"; then
	fail "a run of newcomer has no process.executable.path: the exporter heard of it after it ended"
fi
grep -qv " $work/newcomer$" "$work/procs" && fail "a wrong executable path for newcomer"
# The rest went on: the second run's samples are in a quiet interval of more
# than 8 s (ended by the wake, it would last about 4).
python3 - "$work/out/summary.json" <<'PY' || fail "the quiet interval ended at the newcomer's wake"
import json, sys
tl = json.load(open(sys.argv[1]))["timeline"]
print("timeline (t, interval_s, samples):", [(round(e["t"], 1), e["interval_s"], e["samples"]) for e in tl])
sys.exit(0 if any(e["interval_s"] > 8 and e["samples"] >= 2 for e in tl) else 1)
PY
echo PASS
