#!/bin/sh
# The loader drains the BPF ring once a second when nothing else wakes it, and
# the BPF program wakes it sooner once the ring passes its watermark: a burst
# at 999 Hz on every CPU loses no sample, on an 8 MiB ring and on a
# 256 KiB ring that one drain a second could not hold (~2000 samples/s).
# Frame pointers only, so that no table work speeds the drain timer up.
#   usage: test_drain_watermark.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf

work_dir drain-wm
on_exit '[ -z "$sup" ] || kill -9 "$sup" 2>/dev/null'

for kb in 8192 256; do
	spinners=""
	for i in $(seq "$(nproc)"); do
		busy_cpu 12
		spinners="$spinners $busy"
	done
	"$BIN/lowprof" --duration 8 --frequency 999 --unwind fp --no-throttle --cpu-budget 100 \
		--ringbuf-kb "$kb" --output "$work/out$kb" 2>"$work/stderr$kb" &
	sup=$!
	track "$sup"
	wait "$sup" || fail "lowprof exited with status $? ($(tail -5 "$work/stderr$kb"))"
	sup=
	kill $spinners 2>/dev/null || true
	python3 - "$work/out$kb/summary.json" "$kb" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
c = d["collection"]
print(f"ring {sys.argv[2]} KiB: {d['samples']} samples, lost {d['lost_samples']}, "
      f"reserve failures {c['ringbuf_reserve_failures']}, shm dropped {c['shm_dropped']}")
if d["samples"] < 2000:
    sys.exit("FAIL: too few samples for a 999 Hz burst")
if d["lost_samples"] or c["ringbuf_reserve_failures"] or c["shm_dropped"]:
    sys.exit("FAIL: samples lost")
PY
done
echo PASS
