# The preamble of every integration test (sourced first, with the script's own
# arguments): real BPF, real perf events, real processes.
#   usage: test_*.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
# Sets BIN, SRC and REFERENCE_PROTO_DIR (the environment's
# LOWPROF_REFERENCE_PROTO_DIR first, then the third argument, which ctest
# passes from the CMake cache variable of that name), and installs the exit
# trap that ends what the test started (track) and removes its work
# directory (work_dir; kept when KEEP is set).
set -eu

if [ $# -lt 2 ]; then
	echo "usage: $0 BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]" >&2
	exit 2
fi
BIN=$1
SRC=$2
REFERENCE_PROTO_DIR=${LOWPROF_REFERENCE_PROTO_DIR:-${3:-$SRC/../shared/reference/proto}}

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# Exit 77 (ctest: skipped) when BPF profiling is impossible here, saying why;
# with LOWPROF_REQUIRE_BPF=1 the same condition is a failure.
require_bpf() {
	why=""
	if [ "$(id -u)" -ne 0 ]; then
		why="not root (needs CAP_BPF and CAP_PERFMON)"
	elif [ ! -r /sys/kernel/btf/vmlinux ]; then
		why="kernel has no BTF (/sys/kernel/btf/vmlinux)"
	fi
	if [ -n "$why" ]; then
		if [ "${LOWPROF_REQUIRE_BPF:-0}" = 1 ]; then
			echo "FAIL: BPF required (LOWPROF_REQUIRE_BPF=1) but $why" >&2
			exit 1
		fi
		echo "SKIP: $why" >&2
		exit 77
	fi
}

# have_reference: true when the official schemas are at REFERENCE_PROTO_DIR.
# They live outside the repository, so without them a test skips only its
# schema checks, saying so; with LOWPROF_REQUIRE_REFERENCE=1 it fails.
have_reference() {
	[ -d "$REFERENCE_PROTO_DIR" ] && return 0
	if [ "${LOWPROF_REQUIRE_REFERENCE:-0}" = 1 ]; then
		fail "reference schemas required (LOWPROF_REQUIRE_REFERENCE=1) but $REFERENCE_PROTO_DIR is not a directory: set LOWPROF_REFERENCE_PROTO_DIR"
	fi
	echo "SKIP schema check: reference schemas not found at $REFERENCE_PROTO_DIR (set LOWPROF_REFERENCE_PROTO_DIR in the environment or as a CMake cache variable)" >&2
	return 1
}

# ---- what the exit trap cleans up -----------------------------------------
work=""
lib_pids=""
lib_on_exit=""

# work_dir NAME: a fresh private directory /tmp/lowprof-NAME.XXXXXX in $work,
# removed at exit.
work_dir() {
	work=$(mktemp -d "/tmp/lowprof-$1.XXXXXX")
}

# track PID...: processes to end (SIGTERM) at exit, pass or fail.
track() {
	lib_pids="$lib_pids $*"
}

# on_exit 'COMMAND': run at exit before the tracked processes are ended (for
# what a plain SIGTERM does not do, such as SIGKILL to a process group).
on_exit() {
	lib_on_exit="$lib_on_exit$1
"
}

lib_exit() {
	set +e
	[ -z "$lib_on_exit" ] || eval "$lib_on_exit"
	if [ -n "$lib_pids" ]; then
		# shellcheck disable=SC2086 # one word a pid
		kill $lib_pids 2>/dev/null
		sleep 0.2
	fi
	if [ -n "$work" ] && [ -z "${KEEP:-}" ]; then
		rm -rf "$work"
	fi
}
trap lib_exit EXIT
# dash runs the EXIT trap on exit only: turn the usual signals into one.
trap 'exit 130' INT TERM HUP

# ---- helpers ----------------------------------------------------------------

# now: seconds since the epoch, with nanoseconds (for `bc` differences).
now() {
	date +%s.%N
}

# busy_cpu SECONDS: one process that keeps a CPU busy, tracked; its pid in
# $busy. Something on CPU to sample: an idle host gives only idle-task samples.
busy_cpu() {
	timeout "$1" sh -c 'while :; do :; done' &
	busy=$!
	track "$busy"
}

# wait_line FILE PATTERN SECONDS WHY: until a line of FILE matches PATTERN
# (grep's), at most SECONDS; else fail with WHY and FILE's text.
wait_line() {
	i=0
	while ! grep -q -- "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ "$i" -le $(($3 * 10)) ] || fail "$4: $(cat "$1")"
		sleep 0.1
	done
}

# wait_lines FILE PATTERN COUNT SECONDS: until COUNT lines of FILE match
# PATTERN (grep's), at most SECONDS; else fail, showing FILE's text.
wait_lines() {
	i=0
	while [ "$(grep -c -- "$2" "$1" 2>/dev/null)" -lt "$3" ]; do
		i=$((i + 1))
		[ "$i" -le $(($4 * 10)) ] || fail "expected $3 line(s) matching '$2': $(grep -v libbpf "$1")"
		sleep 0.1
	done
}

# wait_profiling FILE: until lowprof's stderr in FILE says it samples
# ("profiling for ..." or "profiling until ..."; at most 30 s).
wait_profiling() {
	wait_line "$1" "profiling [fu]" 30 "lowprof did not start"
}

# new_cgroup: a fresh cgroup (v2) in $cgroup, for processes the test wants
# apart from its own (the BPF guard shares root's processes by cgroup);
# removed at exit, its processes killed first. Where no v2 hierarchy is
# mounted, one is mounted under $work for the test.
new_cgroup() {
	cg_root=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
	if [ -z "$cg_root" ]; then
		cg_root="$work/cgroup2"
		mkdir "$cg_root"
		mount -t cgroup2 none "$cg_root" || fail "cannot mount a cgroup v2 hierarchy"
	fi
	cgroup=$(mktemp -d "$cg_root/lowprof-test.XXXXXX") ||
		fail "cannot make a cgroup under $cg_root"
	on_exit "cgroup_remove '$cgroup' '$work/cgroup2'"
}

# cgroup_remove DIR MOUNT: kill DIR's processes, remove it, and unmount MOUNT
# if this test mounted it.
cgroup_remove() {
	for p in $(cat "$1/cgroup.procs" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
	i=0
	while ! rmdir "$1" 2>/dev/null && [ "$i" -lt 50 ]; do
		i=$((i + 1))
		sleep 0.1
	done
	! mountpoint -q "$2" 2>/dev/null || umount "$2"
}

# in_cgroup DIR PROGRAM [ARG...]: exec PROGRAM in cgroup DIR (started with &,
# the job's pid is PROGRAM's).
in_cgroup() {
	exec sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$@"
}

# take_pid PID PROGRAM [ARG...]: what an attacker does once a process has
# exited: get its pid for a process of one's own, here PROGRAM (as root,
# through /proc/sys/kernel/ns_last_pid; a local user gets there by forking
# until the pid comes round). A few tries: the host forks too. Tracked.
take_pid() {
	python3 - "$@" <<'PY' || fail "could not give pid $1 to $2"
import os, sys, time
want, argv = int(sys.argv[1]), sys.argv[2:]
for _ in range(50):
    with open("/proc/sys/kernel/ns_last_pid", "w") as f:
        f.write(str(want - 1))
    pid = os.fork()
    if pid == 0:
        if os.getpid() == want:
            os.execv(argv[0], argv)
        os._exit(0)
    if pid == want:
        sys.exit(0)
    os.waitpid(pid, 0)
    time.sleep(0.01)
sys.exit(1)
PY
	track "$1"
}

# The bpffs pin directory of the run whose supervisor is $1 ("PID-START").
pin_dir_of() {
	ls -d /sys/fs/bpf/lowprof/"$1"-* 2>/dev/null | head -n 1
}

# child_pid NAME: the pid of the supervisor $sup's child running NAME (its
# comm, which the kernel cuts at 15 characters), or nothing.
child_pid() {
	ps -o pid=,comm= --ppid "$sup" |
		awk -v c="$(printf '%.15s' "$1")" 'index($2, c) == 1 { print $1; exit }'
}

# private_bin [COMPONENT...]: a private copy of lowprof in $work/bin, beside
# links to its components (the supervisor starts those found next to its own
# executable) but the COMPONENTs named, which the test puts there itself. The
# components that run as --user must be able to reach it, hence $work's mode.
private_bin() {
	chmod 755 "$work"
	mkdir "$work/bin"
	cp "$BIN/lowprof" "$work/bin/lowprof"
	for p in lowprof-loader lowprof-controller lowprof-exporter lowprof-unwinder; do
		case " $* " in
		*" $p "*) ;;
		*) ln -s "$BIN/$p" "$work/bin/$p" ;;
		esac
	done
}

# wait_exporter_restart SUMMARY STDERR TENTHS: until SUMMARY (a summary.json)
# counts one exporter restart, which the restarted exporter writes at its
# first roll; at most TENTHS tenths of a second, else fail showing STDERR.
wait_exporter_restart() {
	i=0
	until python3 -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["restarts"]["exporter"] != 1)' \
		"$1" 2>/dev/null; do
		i=$((i + 1))
		[ "$i" -le "$3" ] || fail "the restarted exporter wrote no summary.json: $(cat "$2")"
		sleep 0.1
	done
}

# json_value FILE KEY: the top-level KEY of the JSON document FILE.
json_value() {
	python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"
}

# pinned_progs PIN_DIR: the ids of the programs the links pinned in PIN_DIR
# run, sorted, one word each.
pinned_progs() {
	for l in "$1"/link_cpu*; do bpftool link show pinned "$l" -j; done |
		python3 -c 'import json,sys; print(" ".join(sorted({str(json.loads(l)["prog_id"]) for l in sys.stdin if l.strip()})))'
}

# start_sink DIR RESPONSES [PORT]: the test OTLP collector (tests/otlp/http_sink.py)
# answering RESPONSES, storing requests in DIR; tracked, its pid in $sink and
# its port in $port (a free one unless PORT is given).
start_sink() {
	mkdir -p "$1"
	python3 "$SRC/tests/otlp/http_sink.py" "$@" &
	sink=$!
	track "$sink"
	if [ $# -ge 3 ]; then
		port=$3
		return
	fi
	i=0
	while [ ! -s "$1/port" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	port=$(cat "$1/port")
}

# otlp_processes THREAD_NAME: what the sink in $work/sink received of the
# processes whose samples have that thread name, one "PID PATH" line per
# process and path (tests/otlp/process_attributes.py), into $work/procs and
# printed. 1 when no sample has the name.
otlp_processes() {
	python3 "$SRC/tests/otlp/process_attributes.py" "$work/sink" "$REFERENCE_PROTO_DIR" "$1" \
		>"$work/procs" || return 1
	cat "$work/procs"
}

# tapped_lowprof DURATION TAP_SECONDS: lowprof --unwind dwarf at 199 Hz for
# DURATION s into $work/out (stderr $work/err), $sup, once it samples; then
# sample_tap on its pinned sample ring for TAP_SECONDS s into $work/tap.txt,
# $tap (the BPF walker's own records, for check_walk.py). Both tracked.
tapped_lowprof() {
	"$BIN/lowprof" --unwind dwarf --no-throttle --duration "$1" --frequency 199 \
		--output "$work/out" 2>"$work/err" &
	sup=$!
	track "$sup"
	wait_profiling "$work/err"
	pins=$(pin_dir_of "$sup")
	[ -n "$pins" ] || fail "no pin directory for lowprof $sup"
	"$BIN/sample_tap" "$pins/samples" "$2" "$work/tap.txt" 2>"$work/tap.err" &
	tap=$!
	track "$tap"
	sleep 1
}

# The ids of the sched_switch raw tracepoint links lowprof_offcpu_switch holds.
offcpu_links() {
	bpftool link list -j | python3 -c '
import json, subprocess, sys
for l in json.load(sys.stdin):
    if l.get("type") != "raw_tracepoint" or l.get("tp_name") != "sched_switch":
        continue
    p = json.loads(subprocess.run(["bpftool", "prog", "show", "id", str(l["prog_id"]), "-j"],
                                  capture_output=True, text=True).stdout or "{}")
    if p.get("name") == "lowprof_offcpu_switch":
        print(l["id"])'
}

# wait_offcpu_link: until the switch program is attached (a loaded host can
# take seconds to verify the programs: up to 12 s), or fail.
wait_offcpu_link() {
	i=0
	while [ -z "$(offcpu_links)" ] && [ $i -lt 24 ]; do
		sleep 0.5
		i=$((i + 1))
	done
	[ -n "$(offcpu_links)" ] || fail "no sched_switch program attached with --off-cpu"
}
