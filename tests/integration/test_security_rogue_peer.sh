#!/bin/sh
# Rogue peers on the loader's sockets during a real run (docs/SECURITY.md).
# The test takes copies of the exporter's symbol socket and the controller's
# control socket (pidfd_getfd, as root) and speaks on them:
#  - symbol socket, as root (not --user): refused, audited with uid 0;
#  - symbol socket, as --user from a process that is not the exporter (not a
#    child of the supervisor): garbage, a request of no kind, a malformed build
#    id, a mapping that is not mapped, and a flood past the rate limit: each
#    refused and audited, rate refusals audited in bulk;
#  - control socket, as root: the loader cuts the peer off (audited) and
#    applies its fail-safe;
# and sampling goes on: the same loader and exporter, summary.json's samples
# still growing afterwards.
#   usage: test_security_rogue_peer.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf
work_dir rogue
# Something on CPU throughout, so that "samples still growing" does not hang
# on whatever else the host happens to run.
busy_cpu 30

"$BIN/lowprof" --duration 20 --interval 1 --output "$work/out" --run-dir "$work" 2>"$work/stderr" &
sup=$!
track "$sup"
wait_profiling "$work/stderr"
sleep 3
# The first files are paced one job a control interval (a fresh exporter
# knows no cost yet), summary.json last: on a loaded host it can come later.
i=0
while [ ! -s "$work/out/summary.json" ] && [ "$i" -lt 100 ]; do
	sleep 0.2
	i=$((i + 1))
done
exporter=$(child_pid lowprof-exporter)
loader=$(child_pid lowprof-loader)
controller=$(child_pid lowprof-controller)
[ -n "$exporter" ] && [ -n "$loader" ] && [ -n "$controller" ] || fail "components not found"
user_uid=$(awk '$1 == "Uid:" { print $2 }' "/proc/$exporter/status")
before=$(json_value "$work/out/summary.json" samples)

python3 - "$exporter" "$controller" "$user_uid" <<'PY' || fail "the rogue peer could not run"
import array, ctypes, os, socket, sys, time
exporter, controller, uid = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def steal(pid, fd):
    pidfd = libc.syscall(434, pid, 0)            # pidfd_open
    if pidfd < 0:
        sys.exit(f"FAIL: pidfd_open({pid}): errno {ctypes.get_errno()}")
    got = libc.syscall(438, pidfd, fd, 0)        # pidfd_getfd
    if got < 0:
        sys.exit(f"FAIL: pidfd_getfd({pid}, {fd}): errno {ctypes.get_errno()}")
    os.close(pidfd)
    return socket.socket(fileno=got)
def varint(n):
    out = b""
    while True:
        b, n = n & 0x7F, n >> 7
        if not n:
            return out + bytes([b])
        out += bytes([b | 0x80])
fv = lambda num, v: varint(num << 3) + varint(v)
fb = lambda num, b: varint((num << 3) | 2) + varint(len(b)) + b
maps = lambda rid, pid: fv(1, rid) + fb(2, fv(1, pid))
def drain(s):
    # Replies to us (and any to the exporter, which it then waits for in vain
    # and asks again): read them, closing every fd that came along.
    n = 0
    while True:
        try:
            _, anc, _, _ = s.recvmsg(65536, socket.CMSG_SPACE(16 * 4), socket.MSG_DONTWAIT)
        except BlockingIOError:
            return n
        for level, kind, data in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                for fd in array.array("i", data[: len(data) - len(data) % 4]):
                    os.close(fd)
        n += 1
def send(s, payload):
    for _ in range(200):
        try:
            return s.sendmsg([payload])
        except BlockingIOError:
            drain(s)
            time.sleep(0.005)
    sys.exit("FAIL: the loader stopped reading the symbol socket")

sym = steal(exporter, 10)     # LOWPROF_FD_SYMBOLS
ctl = steal(controller, 6)    # LOWPROF_FD_CONTROL
# As root, not --user: a frame on the control socket (the loader cuts the peer
# off), a request on the symbol socket (refused).
ctl.send(b"\x02\x00\x00\x00\x08\x01")
send(sym, maps(0x7fff0001, 1))
time.sleep(0.5)
os.setgroups([])
os.setresgid(uid, uid, uid)
os.setresuid(uid, uid, uid)
# As --user: each kind of bad request.
send(sym, b"\xff\xff\xff\xff\xff")                                    # not protobuf
send(sym, fv(1, 0x7fff0002))                                          # no kind
send(sym, fv(1, 0x7fff0003) + fb(4, fb(1, b"../../etc/shadow")))     # path in a build id
# A range the exporter does not map (pid 1 may be out of even root's reach here).
send(sym, fv(1, 0x7fff0004) + fb(3, fv(1, exporter) + fv(2, 0x1000) + fv(3, 0x2000) + fv(4, 1)))
time.sleep(0.3)
drain(sym)
# A flood past the token bucket.
t = time.time()
for i in range(6000):
    send(sym, maps(0x7fff1000 + i, 1))
    if i % 100 == 0:
        drain(sym)
time.sleep(0.5)
drain(sym)
print(f"rogue peer: 6000 requests in {time.time() - t:.2f} s")
PY
sleep 3
after=$(json_value "$work/out/summary.json" samples)
[ "$(child_pid lowprof-exporter)" = "$exporter" ] || fail "the exporter was replaced"
[ "$(child_pid lowprof-loader)" = "$loader" ] || fail "the loader was replaced"
[ "$after" -gt "$before" ] || fail "sampling stopped: $before samples before, $after after"
wait "$sup" || fail "lowprof exited with status $? ($(cat "$work/stderr"))"

python3 - "$work/out/audit.log" "$user_uid" <<'PY'
import json, sys
recs = [json.loads(line) for line in open(sys.argv[1])]
uid = int(sys.argv[2])
refused = [r for r in recs if r["event"] == "request_refused" and r["component"] == "exporter"]
def need(what, pred):
    hits = [r for r in refused if pred(r)]
    if not hits:
        sys.exit(f"FAIL: no audit record for {what}; exporter refusals: {refused[:20]}")
    print(f"{what}: {hits[0]}")
need("the wrong uid", lambda r: r["uid"] == 0)
need("garbage", lambda r: r["uid"] == uid and r.get("request") == "malformed")
# --user, but not the exporter the supervisor started (the loader checks the
# sender's parent and program too): each request refused for that, whatever
# it asks (their own checks: test_symbol_broker).
not_child = lambda r: r["uid"] == uid and "not a child of the supervisor" in r.get("reason", "")
need("a request of no kind", lambda r: not_child(r) and r.get("request") == "unknown")
need("a malformed build id", lambda r: not_child(r) and r.get("build_id") == "../../etc/shadow")
need("a file that is not mapped", lambda r: not_child(r) and r.get("request") == "mapped_file")
need("the rate limit", lambda r: r["errno"] == 16)
rate = [r for r in refused if r["errno"] == 16]
bulk = sum(r.get("rate_refusals_not_audited", 0) for r in rate)
if bulk == 0:
    sys.exit(f"FAIL: rate refusals audited one by one ({len(rate)} records), none in bulk")
cut = [r for r in recs if r["event"] == "peer_cut_off" and r["uid"] == 0]
if not cut:
    sys.exit("FAIL: no peer_cut_off record for the control socket's rogue peer")
print(f"rate refusals: {len(rate)} records for {len(rate) + bulk}; control peer cut off: {cut[0]['reason']}")
PY
echo "PASS ($before samples before the rogue peer, $after after)"
