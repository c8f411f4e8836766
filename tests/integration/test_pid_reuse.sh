#!/bin/sh
# A pid reused by another program is read again. The exporter reads a
# process's executable path and container when it first sees its pid and
# keeps them (exporter/otlp/process_info.h); a sample's image_id (its exec
# count mixed with its start time, bpf/lowprof.h) tells it the pid is
# another process's, as an exec does. Here one program runs 0.6 s and ends,
# and another, its pid set to the same (kernel.ns_last_pid), runs 2 s: its
# OTLP samples carry its own path. Before, they carried the first one's
# (both were children of one shell: the same exec count).
#   usage: test_pid_reuse.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf
have_reference || exit 0
[ -w /proc/sys/kernel/ns_last_pid ] || fail "kernel.ns_last_pid is not writable: no pid can be chosen"

work_dir pid-reuse
# Two copies of a busy program: one name (comm), two paths.
mkdir "$work/first" "$work/second"
cp /usr/bin/yes "$work/first/reused"
cp /usr/bin/yes "$work/second/reused"
start_sink "$work/sink" 200
"$BIN/lowprof" --duration 12 --interval 60 --output "$work/out" --run-dir "$work/run" \
	--otlp-endpoint "http://127.0.0.1:$port" 2>"$work/stderr" &
sup=$!
track "$sup"
wait_profiling "$work/stderr"
sleep 1
"$work/first/reused" >/dev/null &
pid=$!
sleep 0.6
kill "$pid"
wait "$pid" 2>/dev/null || true
sleep 1
# The next fork gets ns_last_pid + 1, unless another process forks between
# the write (a builtin: no fork of ours) and ours.
second=
for try in 1 2 3 4 5 6 7 8 9 10; do
	echo $((pid - 1)) >/proc/sys/kernel/ns_last_pid
	"$work/second/reused" >/dev/null &
	second=$!
	[ "$second" = "$pid" ] && break
	kill "$second"
	wait "$second" 2>/dev/null || true
	second=
done
[ -n "$second" ] || fail "pid $pid could not be had again in 10 tries"
track "$second"
# 2 s: told to the exporter while it runs, at rest (its first sample wakes
# the loader) and on a host busy enough to keep the loader from resting
# (the next drain, within a second).
sleep 2
kill "$second"
wait "$sup" || fail "lowprof exited with status $? ($(tail -5 "$work/stderr"))"
sup=

otlp_processes reused || fail "no OTLP sample of reused"
grep -q "^$pid $work/second/reused$" "$work/procs" ||
	fail "pid $pid, reused by $work/second/reused, has no OTLP sample with its path"
echo PASS
