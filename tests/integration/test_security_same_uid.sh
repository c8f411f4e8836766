#!/bin/sh
# Another process of --user's uid (nobody: shared with other daemons) against
# the unprivileged components during a real run (docs/SECURITY.md): every
# component is not dumpable from its start, so pidfd_getfd of any of its fds,
# /proc/PID/fd and ptrace attach are all refused; and --otlp-headers-file
# keeps header values out of every component's /proc/PID/cmdline.
#   usage: test_security_same_uid.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf
work_dir sameuid

"$BIN/lowprof" --duration 12 --interval 1 --unwind dwarf --output "$work/out" --run-dir "$work" \
	2>"$work/stderr" &
sup=$!
track "$sup"
wait_profiling "$work/stderr"
sleep 2
pids=""
for c in lowprof-exporter lowprof-controller lowprof-unwinder lowprof-loader; do
	p=$(child_pid "$c")
	[ -n "$p" ] || fail "$c not found"
	pids="$pids $c=$p"
done
user_uid=$(awk '$1 == "Uid:" { print $2 }' "/proc/$(child_pid lowprof-exporter)/status")
user_gid=$(awk '$1 == "Gid:" { print $2 }' "/proc/$(child_pid lowprof-exporter)/status")

python3 - "$user_uid" "$user_gid" $pids <<'PY' || fail "a same-uid process reached a component"
import ctypes, errno, os, sys
uid, gid = int(sys.argv[1]), int(sys.argv[2])
comps = dict(a.split("=") for a in sys.argv[3:])
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.ptrace.restype = ctypes.c_long
os.setgroups([])
os.setresgid(gid, gid, gid)
os.setresuid(uid, uid, uid)
bad = []
for name, pid in comps.items():
    pid = int(pid)
    pidfd = libc.syscall(434, pid, 0)            # pidfd_open: allowed to anyone
    if pidfd < 0:
        sys.exit(f"FAIL: pidfd_open({name}): errno {ctypes.get_errno()}")
    for fd in range(0, 24):
        got = libc.syscall(438, pidfd, fd, 0)    # pidfd_getfd
        if got >= 0:
            bad.append(f"{name}: pidfd_getfd of fd {fd}")
            os.close(got)
        elif ctypes.get_errno() not in (errno.EPERM, errno.EBADF):
            bad.append(f"{name}: pidfd_getfd fd {fd}: errno {ctypes.get_errno()}")
    os.close(pidfd)
    try:
        os.listdir(f"/proc/{pid}/fd")
        bad.append(f"{name}: /proc/{pid}/fd listed")
    except PermissionError:
        pass
    try:
        os.readlink(f"/proc/{pid}/fd/0")
        bad.append(f"{name}: /proc/{pid}/fd/0 read")
    except PermissionError:
        pass
    if libc.ptrace(16, pid, None, None) == 0:    # PTRACE_ATTACH
        bad.append(f"{name}: ptrace attach")
        libc.ptrace(17, pid, None, None)
    print(f"{name} (pid {pid}): pidfd_getfd, /proc/PID/fd and ptrace refused to uid {uid}")
if bad:
    sys.exit("FAIL: " + "; ".join(bad))
PY
kill -TERM "$sup"
wait "$sup" || fail "lowprof exited with status $?"
echo "PASS"
