#!/bin/sh
# Secrets and leaks during a real run (docs/SECURITY.md):
#  - --otlp-headers-file: the header reaches the collector, and its value is
#    in no lowprof process's /proc/PID/cmdline (the supervisor's included);
#    a headers file writable by others, or owned by another user, is refused;
#  - the output files are 0640 (the exporter's user and group), not readable
#    by other users;
#  - a run directory made in advance by another user (or writable by others)
#    is refused: no status socket in it (profiling goes on without one).
#   usage: test_security_secrets.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf
work_dir secrets
start_sink "$work/sink" 200
secret="s3cr3t-token-$$-$(date +%s)"
printf '# for the collector\nAuthorization=Bearer %s\n\nX-Lowprof-Test=file\n' "$secret" >"$work/headers"
chmod 0600 "$work/headers"

# Refused headers files: writable by others; owned by another user.
cp "$work/headers" "$work/headers-ww"
chmod 0622 "$work/headers-ww"
if "$BIN/lowprof" --duration 1 --output "$work/o1" --run-dir "$work/r1" \
	--otlp-endpoint "http://127.0.0.1:$port" --otlp-headers-file "$work/headers-ww" 2>"$work/ww.err"; then
	fail "a world-writable headers file was accepted"
fi
grep -q "writable by group or others" "$work/ww.err" || fail "no reason given: $(cat "$work/ww.err")"
cp "$work/headers" "$work/headers-nobody"
chown nobody "$work/headers-nobody"
if "$BIN/lowprof" --duration 1 --output "$work/o2" --run-dir "$work/r2" \
	--otlp-endpoint "http://127.0.0.1:$port" --otlp-headers-file "$work/headers-nobody" 2>"$work/nb.err"; then
	fail "a headers file of another user was accepted"
fi
grep -q "owned by uid" "$work/nb.err" || fail "no reason given: $(cat "$work/nb.err")"

# A hostile run directory: made by nobody, then one writable by everybody.
# lowprof profiles on (the status socket is optional) but puts nothing there.
mkdir "$work/hostile-run"
chown nobody "$work/hostile-run"
"$BIN/lowprof" --duration 1 --output "$work/o3" --run-dir "$work/hostile-run" 2>"$work/hr.err" ||
	fail "lowprof failed: $(cat "$work/hr.err")"
grep -q "run directory $work/hostile-run is owned by uid" "$work/hr.err" || fail "not refused: $(cat "$work/hr.err")"
[ -z "$(ls -A "$work/hostile-run")" ] || fail "something was made in the hostile run directory"
mkdir "$work/open-run"
chmod 0777 "$work/open-run"
"$BIN/lowprof" --duration 1 --output "$work/o4" --run-dir "$work/open-run" 2>"$work/or.err" ||
	fail "lowprof failed: $(cat "$work/or.err")"
grep -q "is writable by others" "$work/or.err" || fail "not refused: $(cat "$work/or.err")"
[ -z "$(ls -A "$work/open-run")" ] || fail "something was made in the world-writable run directory"

# Something to sample: on an idle host a 6-s run may sample nothing at all
# (one sample in two of its intervals here), and an interval without samples
# sends nothing (docs/OTLP.md): the header would never reach the collector.
busy_cpu 9
"$BIN/lowprof" --duration 6 --interval 2 --output "$work/out" --run-dir "$work/run" \
	--otlp-endpoint "http://127.0.0.1:$port" --otlp-headers-file "$work/headers" \
	2>"$work/stderr" &
sup=$!
track "$sup"
wait_profiling "$work/stderr"
for p in $sup $(ps -o pid= --ppid "$sup"); do
	tr '\0' ' ' <"/proc/$p/cmdline" >"$work/cmdline.$p" 2>/dev/null || continue
	if grep -q "$secret" "$work/cmdline.$p"; then
		fail "the header's value is in the command line of pid $p: $(cat "$work/cmdline.$p")"
	fi
done
grep -q "otlp-headers-file=/dev/fd/" "$work"/cmdline.* || fail "the exporter got no headers file"
wait "$sup" || fail "lowprof exited with status $? ($(cat "$work/stderr"))"
grep -q "Authorization: Bearer $secret" "$work/sink/req-1.headers" || fail "the header was not sent"
grep -qi "X-Lowprof-Test: file" "$work/sink/req-1.headers" || fail "the second header was not sent"

# Output modes: the exporter's user and group read them, nobody else.
user_gid=$(id -g nobody)
for f in profile.pb.gz profile.folded summary.json flamegraph.svg; do
	[ -f "$work/out/$f" ] || fail "no $f"
	mode=$(stat -c %a "$work/out/$f")
	group=$(stat -c %g "$work/out/$f")
	[ "$mode" = 640 ] || fail "$f has mode $mode, want 640"
	[ "$group" = "$user_gid" ] || fail "$f has group $group, want nobody's ($user_gid)"
done
# No raw kernel address in the outputs (KASLR): no "[kernel]+0x..." name, and
# no pprof location at a kernel address.
! grep -q "kernel\]+0x" "$work/out/profile.folded" || fail "a raw kernel address in profile.folded"
python3 - "$work/out/profile.pb.gz" "$SRC/tests/integration" <<'PY' || fail "a raw kernel address in profile.pb.gz"
import gzip, sys
sys.path.insert(0, sys.argv[2])
from pb_lib import fields
data = gzip.open(sys.argv[1]).read()
locs = [dict((n, v) for n, v in fields(l) if n == 3) for n, l in fields(data) if n == 4]
high = [l[3] for l in locs if 3 in l and l[3] >= 0xFFFF800000000000]
if high:
    sys.exit(f"FAIL: {len(high)} locations at kernel addresses, e.g. {hex(high[0])}")
print(f"{len(locs)} locations, none at a kernel address")
PY
echo "PASS"
