#!/bin/sh
# One identity per unprivileged component (docs/SECURITY.md, "One user per
# component"): with --controller-user and --unwinder-user, each runs under its
# own uid, the loader accepts the controller under its uid (the throttle it
# asks for is applied, audited under that uid), and none of the three can
# signal another or write the exporter's files: a compromised controller or
# unwinder keeps what its own uid reaches, which is nothing of the others'.
#   usage: test_security_identities.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf
work_dir identities

# Debian's base-passwd has these three on every host.
for u in nobody daemon bin; do
	getent passwd "$u" >/dev/null || fail "no user $u on this host"
done
exporter_uid=$(id -u nobody)
controller_uid=$(id -u daemon)
unwinder_uid=$(id -u bin)

# A user that does not exist, or root, is refused before anything starts, by name.
for bad in "--controller-user no-such-user-lowprof" "--unwinder-user root"; do
	# shellcheck disable=SC2086 # option and value
	if "$BIN/lowprof" --duration 1 --output "$work/refused" $bad 2>"$work/err"; then
		fail "lowprof $bad ran"
	fi
	grep -q -- "${bad%% *}: " "$work/err" || fail "lowprof $bad: $(cat "$work/err")"
	echo "ok: $bad -> $(cat "$work/err")"
done

# Every CPU busy: the controller must ask for a lower tier, which the loader
# applies only if it accepts the controller's uid.
ncpu=$(nproc)
i=0
while [ "$i" -lt "$ncpu" ]; do
	busy_cpu 14
	i=$((i + 1))
done

"$BIN/lowprof" --duration 10 --interval 1 --control-interval 1 --output "$work/out" \
	--run-dir "$work" --user nobody --controller-user daemon --unwinder-user bin \
	2>"$work/stderr" &
sup=$!
track "$sup"
wait_profiling "$work/stderr"
sleep 4

uid_of() {
	awk '$1 == "Uid:" { print $2 }' "/proc/$1/status"
}
exporter=$(child_pid lowprof-exporter)
controller=$(child_pid lowprof-controller)
unwinder=$(child_pid lowprof-unwinder)
[ -n "$exporter" ] && [ -n "$controller" ] && [ -n "$unwinder" ] || fail "a component is missing"
[ "$(uid_of "$exporter")" = "$exporter_uid" ] || fail "exporter runs as uid $(uid_of "$exporter")"
[ "$(uid_of "$controller")" = "$controller_uid" ] || fail "controller runs as uid $(uid_of "$controller")"
[ "$(uid_of "$unwinder")" = "$unwinder_uid" ] || fail "unwinder runs as uid $(uid_of "$unwinder")"
echo "exporter uid $exporter_uid, controller uid $controller_uid, unwinder uid $unwinder_uid"

# Each identity against the other two components and the exporter's files.
python3 - "$work/out" "exporter=$exporter_uid:$exporter" "controller=$controller_uid:$controller" \
	"unwinder=$unwinder_uid:$unwinder" <<'PY' || fail "one component's uid reached another's"
import os, signal, sys
out = sys.argv[1]
comps = {}
for arg in sys.argv[2:]:
    name, rest = arg.split("=")
    uid, pid = rest.split(":")
    comps[name] = (int(uid), int(pid))
files = [f for f in ("profile.pb.gz", "summary.json", "profile.folded") if os.path.exists(f"{out}/{f}")]
if not files:
    sys.exit("FAIL: no output file to try")
bad = []
for me, (uid, _) in comps.items():
    if os.fork() == 0:
        os.setgroups([])
        os.setresgid(uid, uid, uid)   # these users' groups have their uid's number
        os.setresuid(uid, uid, uid)
        errs = []
        for other, (_, pid) in comps.items():
            if other == me:
                continue
            try:
                os.kill(pid, 0)
                errs.append(f"{me} may signal {other}")
            except PermissionError:
                pass
        if me != "exporter":
            for f in files:
                try:
                    os.close(os.open(f"{out}/{f}", os.O_WRONLY))
                    errs.append(f"{me} may write {f}")
                except PermissionError:
                    pass
            try:
                os.close(os.open(f"{out}/planted", os.O_WRONLY | os.O_CREAT, 0o600))
                errs.append(f"{me} may create a file in the output directory")
            except PermissionError:
                pass
        for e in errs:
            print("FAIL:", e)
        os._exit(1 if errs else 0)
    _, status = os.wait()
    if status != 0:
        bad.append(me)
    else:
        print(f"{me}'s uid {uid}: no signal to the others, no write to the outputs")
if bad:
    sys.exit(1)
PY

# The loader took the controller's requests under the controller's uid.
grep '"component":"controller"' "$work/out/audit.log" | grep -q "\"uid\":$controller_uid[,}]" ||
	fail "no audit record of the controller under uid $controller_uid: $(grep controller "$work/out/audit.log" | head -n 3)"
if grep -q '"event":"peer_cut_off"' "$work/out/audit.log"; then
	fail "the controller was cut off: $(grep peer_cut_off "$work/out/audit.log")"
fi
wait "$sup" || fail "lowprof exited with status $?"
python3 - "$work/out/summary.json" <<'PY' || fail "the busy host never left the healthy tier: the controller was not heard"
import json, sys
tiers = [e["tier"] for e in json.load(open(sys.argv[1]))["timeline"]]
print("tiers:", " ".join(tiers))
sys.exit(0 if any(t != "healthy" for t in tiers) else 1)
PY
echo "PASS"
