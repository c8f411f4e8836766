#!/bin/sh
# Least privilege during a real run (docs/SECURITY.md): each component's
# /proc/PID/status, then the audit log of the run.
#  - controller, unwinder, exporter: CapEff, CapPrm, CapBnd zero, NoNewPrivs 1,
#    Seccomp 2, Uid not 0;
#  - loader: exactly CAP_BPF CAP_PERFMON CAP_SYS_PTRACE CAP_DAC_READ_SEARCH
#    CAP_SYSLOG CAP_CHECKPOINT_RESTORE, Seccomp 2;
#  - supervisor: Seccomp 2;
#  - the exporter, with nothing, still names kernel frames (kallsyms from the
#    loader) and owns its output files, while audit.log stays root's (0600);
#  - audit.log: every line valid JSON; the load, every attach, each map update
#    the controller asked for, the unwind tables written (per file) and the
#    process entries (batched), the detach; `lowprof audit` reads it all.
#   usage: test_security_status.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf
# -v: the applied throttle changes are on stderr only in verbose mode.
work_dir sec-status

"$BIN/lowprof" -v --duration 14 --interval 2 --output "$work/out" --run-dir "$work" 2>"$work/stderr" &
sup=$!
track "$sup"
wait_profiling "$work/stderr"
# Time spent in the kernel, so that kernel frames are sampled whatever else
# the host does (an idle CI host once gave none in the whole run).
timeout 14 dd if=/dev/zero of=/dev/null bs=1M 2>/dev/null &
track $!
sleep 2
field() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
check() { # pid name caps(hex) uid_nonzero(1/0)
	p=$1; n=$2
	[ -r "/proc/$p/status" ] || fail "$n: no /proc/$p/status"
	for f in CapEff CapPrm CapBnd; do
		v=$(field "$p" "$f")
		[ "$((0x$v))" -eq "$((0x$3))" ] || fail "$n (pid $p): $f is $v, expected $3"
	done
	[ "$(field "$p" Seccomp)" = 2 ] || fail "$n: Seccomp $(field "$p" Seccomp), expected 2 (filter)"
	[ "$(field "$p" NoNewPrivs)" = 1 ] || fail "$n: NoNewPrivs is not 1"
	uid=$(field "$p" Uid)
	if [ "$4" = 1 ] && [ "$uid" = 0 ]; then fail "$n runs as root"; fi
	echo "$n (pid $p): uid $uid CapEff $(field "$p" CapEff) CapBnd $(field "$p" CapBnd) NoNewPrivs 1 Seccomp 2: ok"
}
# CAP_DAC_READ_SEARCH 2, CAP_SYS_PTRACE 19, CAP_SYSLOG 34, CAP_PERFMON 38, CAP_BPF 39,
# CAP_CHECKPOINT_RESTORE 40
check "$(child_pid lowprof-controller)" controller 0 1
check "$(child_pid lowprof-unwinder)" unwinder 0 1
check "$(child_pid lowprof-exporter)" exporter 0 1
check "$(child_pid lowprof-loader)" loader 1c400080004 0
exporter_uid=$(field "$(child_pid lowprof-exporter)" Uid)
[ "$(field "$sup" Seccomp)" = 2 ] || fail "supervisor: Seccomp $(field "$sup" Seccomp), expected 2"
wait "$sup" || fail "lowprof exited with status $? ($(cat "$work/stderr"))"

log="$work/out/audit.log"
[ -s "$log" ] || fail "no audit log at $log"
# The exporter writes as --user; the audit log is the loader's, and root's alone.
for f in profile.pb.gz profile.folded flamegraph.svg summary.json; do
	[ "$(stat -c %u "$work/out/$f")" = "$exporter_uid" ] ||
		fail "$f is owned by uid $(stat -c %u "$work/out/$f"), not the exporter's $exporter_uid"
done
[ "$(stat -c '%u %a' "$log")" = "0 600" ] || fail "audit.log is $(stat -c '%u %a' "$log"), expected root's, 600"
[ -k "$work/out" ] || fail "the output directory lacks the sticky bit that protects audit.log"
# Kernel frames named through the loader's kallsyms (the exporter cannot open it).
grep -q '[a-z_]_\[k\]' "$work/out/profile.folded" || fail "no named kernel frame in profile.folded"
if grep -q 'kallsyms unreadable\|kptr_restrict' "$work/stderr"; then fail "kernel symbols unavailable: $(grep kallsyms "$work/stderr")"; fi
echo "output files owned by uid $exporter_uid, audit.log root 0600, kernel frames named"
ncpu=$(grep -c '"event":"attach"' "$log" || true)
python3 - "$log" "$work/stderr" <<'PY'
import json, re, sys
recs = []
for n, line in enumerate(open(sys.argv[1]), 1):
    try:
        recs.append(json.loads(line))
    except ValueError as e:
        sys.exit(f"FAIL: audit.log line {n} is not JSON: {e}: {line!r}")
for r in recs:
    for k in ("time", "event", "component", "pid", "uid", "result", "errno"):
        if k not in r:
            sys.exit(f"FAIL: record without {k}: {r}")
ev = lambda name: [r for r in recs if r["event"] == name]
if not ev("object_load") or ev("object_load")[0]["result"] != "ok":
    sys.exit("FAIL: no successful object_load")
progs = {r["prog"] for r in ev("prog_load")}
if "lowprof_sample" not in progs or any(r.get("insns", 0) <= 0 or len(r.get("tag", "")) != 16 for r in ev("prog_load")):
    sys.exit(f"FAIL: prog_load records incomplete: {ev('prog_load')}")
online = open("/sys/devices/system/cpu/online").read().strip()
attach = sorted(r["cpu"] for r in ev("attach"))
detach = sorted(r["cpu"] for r in ev("detach"))
if not attach or attach != detach:
    sys.exit(f"FAIL: attach CPUs {attach} vs detach CPUs {detach} (online {online})")
asked = len(re.findall(r"audit: controller: set_throttle .*: applied", open(sys.argv[2]).read()))
by_ctl = [r for r in ev("map_update") if r["component"] == "controller"]
if len(by_ctl) != asked:
    sys.exit(f"FAIL: the controller's {asked} applied changes vs {len(by_ctl)} map_update records")
for r in by_ctl:
    if r["map"] != "run_config" or "old" not in r or "new" not in r or r["uid"] == 0:
        sys.exit(f"FAIL: bad controller map_update: {r}")
rows = [r for r in ev("map_update") if r["map"] == "unwind_rows"]
if not rows or any(r["rows"] <= 0 or not r["file"].startswith("/") for r in rows):
    sys.exit(f"FAIL: no (or bad) unwind_rows records for the tables written: {rows[:3]}")
if any("gen" not in r or "dev" not in r or "ino" not in r for r in rows):
    sys.exit(f"FAIL: unwind_rows records without the file's identity: {rows[:3]}")
print(f"unwind maps: {len(rows)} file tables")
print(f"audit.log: {len(recs)} records, attach/detach on CPUs {attach}, "
      f"{len(by_ctl)} controller map updates (of {asked} applied)")
PY
"$BIN/lowprof" audit "$log" >"$work/table" || fail "lowprof audit reported malformed lines"
grep -q "object_load" "$work/table" || fail "lowprof audit: no object_load row"
echo PASS
