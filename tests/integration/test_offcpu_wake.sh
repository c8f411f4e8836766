#!/bin/sh
# Off-CPU records wake the loader as samples do: on a host where few CPUs
# are busy but many threads block, the cpu-clock samples are few and the
# switch program's records many. Each record, like each sample, wakes the
# loader once the ring is a quarter full (bpf/lowprof.bpf.c,
# samples_wakeup); before, only a sample did, so the records filled the
# ring between two of the loader's timed drains (once a second on such a
# host) and were lost. Here: two offcpu_churn threads (about 1,600 deep
# switch-out records a second, next to no CPU) into a 256 KiB ring, which
# a second of them overflows several times over; --no-throttle holds the
# off-CPU probability at 100%. At most 1% of the records may be lost.
#   usage: test_offcpu_wake.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf

work_dir offcpu-wake

"$BIN/lowprof" --duration 10 --off-cpu --no-throttle --cpu-budget 100 --ringbuf-kb 256 \
	--output "$work/out" 2>"$work/stderr" &
sup=$!
track "$sup"
wait_profiling "$work/stderr"
sleep 1
"$BIN/offcpu_churn" 2 6 &
churn=$!
track "$churn"
wait "$churn" 2>/dev/null || true
wait "$sup" || fail "lowprof exited with status $? ($(tail -5 "$work/stderr"))"

python3 - "$work/out/summary.json" <<'PY' || fail "off-CPU records lost to a full ring"
import json, sys
s = json.load(open(sys.argv[1]))
o = s["off_cpu"]["collection"]
lost = sum(e["lost"] for e in s["timeline"])
print(f"off-CPU: {o['records']} records, {o['drops']} lost; samples: {lost} lost")
if o["records"] < 3000:
    sys.exit(f"FAIL: only {o['records']} off-CPU records: the churn did not load the ring")
if o["drops"] > o["records"] / 100 or lost > 0:
    sys.exit("FAIL: records or samples lost: the loader was not woken as the ring filled")
print("PASS")
PY
echo PASS
