#!/bin/sh
# SIGHUP rereads the configuration file: a changed budget restarts the
# controller and the loader with it, a changed interval the exporter (and the
# loader, which bounds its steady intervals by it); a key
# that needs a restart of lowprof is named and kept; a bad file changes
# nothing; profiling goes on throughout.
#   usage: test_config_reload.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf
work_dir reload
conf=$work/lowprof.conf
out=$work/out
printf 'cpu-budget = 1.5\ninterval = 2\n' >"$conf"
busy_cpu 40
"$BIN/lowprof" --config "$conf" -o "$out" -d 25 --run-dir "$work/run" 2>"$work/err" &
sup=$!
track "$sup"
wait_profiling "$work/err"

# wait_log TEXT: until lowprof's stderr has TEXT (at most 15 s).
wait_log() {
	wait_line "$work/err" "$1" 15 "no '$1'"
}

ctl=$(child_pid lowprof-controller)
printf 'cpu-budget = 3\ninterval = 2\nringbuf-kb = 16\n' >"$conf"
kill -HUP "$sup"
wait_log "reload: cpu-budget = 3 (was 1.5)"
wait_log "reload: ringbuf-kb = 16 needs a restart of lowprof"
wait_log "restarting the controller with the new settings"
wait_log "controller restarted with the new settings"
wait_log "loader restarted with the new settings"
grep -q "restarting the exporter" "$work/err" && fail "the exporter restarted though its settings did not change"
[ "$(child_pid lowprof-controller)" != "$ctl" ] || fail "the controller was not restarted"
ps -o args= --ppid "$sup" | grep -q -- "lowprof-controller.*--cpu-budget=3" ||
	fail "the controller does not run with --cpu-budget=3: $(ps -o args= --ppid "$sup")"

printf 'cpu-budget = 3\ninterval = 0\n' >"$conf"
kill -HUP "$sup"
wait_log "lowprof.conf:2: interval: invalid value '0'.*the running settings stay"

printf 'cpu-budget = 3\ninterval = 3\n' >"$conf"
kill -HUP "$sup"
wait_log "exporter restarted with the new settings"
sleep 2
"$BIN/lowprof" status --run-dir "$work/run" >"$work/status"
for c in loader controller exporter; do
	grep -q "$c.*running" "$work/status" || fail "$c not running after the reloads: $(cat "$work/status")"
done
# The exporter restarted for the reload said nothing of a run's end: the one
# end-of-run report is the last lines.
wait "$sup" || fail "lowprof exited $?: $(cat "$work/err")"
[ "$(grep -c "flame graph:" "$work/err")" -eq 1 ] ||
	fail "an end-of-run report before the run's end: $(cat "$work/err")"
tail -1 "$work/err" | grep -q "flame graph:" || fail "the run's end has no report: $(cat "$work/err")"
[ -s "$out/profile.pb.gz" ] && [ -s "$out/flamegraph.svg" ] || fail "no profile written"
grep -q '"restarts"' "$out/summary.json" || true
echo PASS
