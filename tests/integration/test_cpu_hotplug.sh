#!/bin/sh
# A CPU that goes offline and comes back is sampled again
# (loader/cpu_uevents.h): the kernel removes a CPU's perf events when it
# goes offline and never brings them back.
#  1. While lowprof runs, the last CPU goes offline for a second and comes
#     back; a busy process bound to it then has its samples, and stderr and
#     the audit log say both changes.
#  2. A quick cycle (offline, online at once: the loader reads both
#     messages together): the same.
#  3. A forged "offline" for the CPU, sent to the loader's netlink port by
#     root (any process with CAP_NET_ADMIN can send one there; only the
#     kernel's are believed): nothing changes, the CPU stays sampled.
#  4. Messages lost: the loader stopped (SIGSTOP) while the CPU goes
#     offline and back 60 times, more than its socket holds; once it runs
#     again it opens every CPU's event anew, and the CPU is sampled.
#   usage: test_cpu_hotplug.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib.sh"
require_bpf

# The highest CPU that can be taken offline (cpu0 often cannot).
cpu=""
for f in /sys/devices/system/cpu/cpu[0-9]*/online; do
	[ -w "$f" ] && [ "$(cat "$f")" = 1 ] || continue
	n=${f#/sys/devices/system/cpu/cpu}
	n=${n%/online}
	[ "$n" != 0 ] || continue
	if [ -z "$cpu" ] || [ "$n" -gt "$cpu" ]; then
		cpu=$n
	fi
done
if [ -z "$cpu" ]; then
	echo "SKIP: no CPU here can be taken offline (one CPU, or a kernel without CPU hotplug)" >&2
	exit 77
fi
online=/sys/devices/system/cpu/cpu$cpu/online
echo "cpu $cpu goes offline and comes back"

work_dir cpu_hotplug
on_exit "echo 1 > $online"
for p in hot1 hot2 hot3 hot4; do
	cp "$BIN/dwarf_chain" "$work/$p"
done

"$BIN/lowprof" --no-throttle --cpu-budget 100 -F 49 --duration 120 --output "$work/out" \
	2>"$work/err" &
sup=$!
track "$sup"
wait_profiling "$work/err"

# hot NAME: NAME busy on the CPU for 3 s (49 Hz: about 147 samples).
hot() {
	taskset -c "$cpu" "$work/$1" 3 || fail "$1 on cpu $cpu: $(tail -3 "$work/err")"
}

# lines PATTERN COUNT: until stderr has COUNT lines matching PATTERN (10 s).
lines() {
	wait_lines "$work/err" "$1" "$2" 10
}

# 1. A second offline.
echo 0 >"$online"
lines "cpu $cpu went offline" 1
sleep 1
echo 1 >"$online"
lines "cpu $cpu came online: sampling it" 1
hot hot1

# 2. Offline and online at once.
echo 0 >"$online"
echo 1 >"$online"
lines "cpu $cpu came online: sampling it" 2
hot hot2

# 3. A forged offline, sent to the loader's port.
loader=$(child_pid lowprof-loader)
[ -n "$loader" ] || fail "no loader under $sup"
python3 - "$loader" "$cpu" <<'PY' || fail "could not send the forged message"
import os, socket, sys
loader, cpu = sys.argv[1], sys.argv[2]
inodes = set()
for fd in os.listdir(f"/proc/{loader}/fd"):
    target = os.readlink(f"/proc/{loader}/fd/{fd}")
    if target.startswith("socket:["):
        inodes.add(target[8:-1])
port = None
with open("/proc/net/netlink") as f:
    next(f)
    for line in f:
        col = line.split()
        # sk Eth Pid Groups Rmem Wmem Dump Locks Drops Inode; 15: NETLINK_KOBJECT_UEVENT
        if col[1] == "15" and col[9] in inodes:
            port = int(col[2])
if port is None:
    sys.exit("the loader holds no uevent socket")
dev = f"/devices/system/cpu/cpu{cpu}"
msg = (f"offline@{dev}\0ACTION=offline\0DEVPATH={dev}\0SUBSYSTEM=cpu\0SEQNUM=1\0").encode()
s = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, 15)
s.sendto(msg, (port, 0))
print(f"sent a forged offline for cpu {cpu} to port {port}")
PY
sleep 0.5
hot hot3

# 4. More messages than the socket holds, while the loader is stopped.
kill -STOP "$loader"
on_exit "kill -CONT $loader 2>/dev/null"
i=0
while [ "$i" -lt 60 ]; do
	echo 0 >"$online"
	echo 1 >"$online"
	i=$((i + 1))
done
kill -CONT "$loader"
lines "CPU uevents were lost: every CPU's event opened again" 1
hot hot4

kill -INT "$sup"
wait "$sup" || fail "lowprof failed: $(grep -v libbpf "$work/err" | tail -5)"

python3 - "$work/out/profile.folded" "$SRC/tests/integration" <<'PY' || fail "samples of the CPU that came back"
import sys
sys.path.insert(0, sys.argv[2])
from folded_lib import fail, read_folded
by_comm = {}
for frames, count in read_folded(sys.argv[1]):
    by_comm[frames[0]] = by_comm.get(frames[0], 0) + count
got = {c: by_comm.get(c, 0) for c in ("hot1", "hot2", "hot3", "hot4")}
print(f"samples of the busy processes on the CPU: {got}")
# 3 s at 49 Hz: about 147 each. A CPU whose event died has none.
for comm, n in got.items():
    if n < 90:
        fail(f"{comm} has {n} samples, expected >= 90: its CPU is not sampled")
PY
offline=$(grep -c "cpu $cpu went offline" "$work/err")
[ "$offline" -eq 2 ] ||
	fail "$offline offline changes said, expected 2 (parts 1 and 2; a third: the forged one believed): $(grep "cpu $cpu" "$work/err")"
grep -q '"event":"detach".*"cpu":'"$cpu"'.*"why":"cpu offline"' "$work/out/audit.log" ||
	fail "no detach audited for cpu $cpu"
# Parts 1 and 2, and every CPU's at the resync of part 4.
attaches=$(grep -c '"event":"attach".*"cpu":'"$cpu"'.*"why":"cpu online","result":"ok"' "$work/out/audit.log")
[ "$attaches" -eq 3 ] ||
	fail "$attaches attaches audited for cpu $cpu, expected 3: $(grep '"cpu online"' "$work/out/audit.log")"
echo "PASS"
