#!/bin/sh
# A restarted loader takes over the unwind tables its predecessor left
# pinned (loader/unwind_maps.h, unwind_maps_adopt): a program built without
# frame pointers keeps whole DWARF stacks across a loader's SIGKILL, and its
# table is built once, not again by the new loader (the audit log has one
# map_update of its rows); the row chunks are the same ones. Then the chunks'
# pins are removed before a second kill, as a crash between pin and slot
# would leave them: the new loader refuses those chunks and their entries,
# and the program's table is built again (a second map_update), its stacks
# still whole.
#   usage: test_unwind_restart.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf

work_dir unwind_restart
CHAIN="main;dw_level1;dw_level2;dw_level3;dw_level4;dw_leaf"

# The dwarf_chain table's map_update records in the audit log so far.
table_writes() {
	"$BIN/lowprof" audit "$work/out/audit.log" 2>/dev/null | grep "map_update" | grep -c "dwarf_chain" || true
}
# Every file's: the rows of any table written.
all_table_writes() {
	"$BIN/lowprof" audit "$work/out/audit.log" 2>/dev/null | grep "map_update" | grep -c "map=unwind_rows" || true
}

# wait_log TEXT COUNT: until stderr holds TEXT COUNT times (20 s at most).
wait_log() {
	wait_lines "$work/err" "$1" "$2" 20
}

"$BIN/lowprof" --unwind dwarf --no-throttle --duration 34 --frequency 199 -v \
	--output "$work/out" 2>"$work/err" &
sup=$!
track "$sup"
wait_profiling "$work/err"
"$BIN/dwarf_chain" 30 &
wl=$!
track "$wl"

# Its table is built once.
i=0
while [ "$(table_writes)" -lt 1 ]; do
	i=$((i + 1))
	[ "$i" -le 100 ] || fail "no table was built for dwarf_chain: $(cat "$work/err")"
	sleep 0.1
done
pins=$(pin_dir_of "$sup")
[ -n "$pins" ] || fail "no pin directory"
# The ids of the pinned chunks.
chunk_ids() {
	for c in "$pins"/unwind_chunk_*; do [ -e "$c" ] && bpftool map show pinned "$c" -j; done |
		python3 -c 'import json,sys; print(" ".join(sorted(str(json.loads(l)["id"]) for l in sys.stdin if l.strip())))'
}
# The start-up scan builds the running processes' tables: until it is over
# (no new chunk for 2 s), the chunks are still growing.
ids_before=$(chunk_ids)
i=0
while :; do
	sleep 2
	ids=$(chunk_ids)
	[ "$ids" = "$ids_before" ] && break
	ids_before=$ids
	i=$((i + 1))
	[ "$i" -le 15 ] || fail "the unwind chunks kept changing: $ids"
done
[ -n "$ids_before" ] || fail "no unwind chunk pinned in $pins: $(ls "$pins")"

# 1. A kill: the tables are taken over, nothing is parsed again.
writes_before=$(all_table_writes)
kill -KILL "$(child_pid lowprof-loader)"
wait_log "took over the previous loader's unwind tables" 1
line=$(grep "took over the previous loader's unwind tables" "$work/err" | tail -n 1)
echo "$line"
files=$(echo "$line" | sed -n 's/.*tables: \([0-9]*\) files.*/\1/p')
[ "${files:-0}" -ge 1 ] || fail "no table taken over: $line"
echo "$line" | grep -q "(0 entries and 0 chunks refused)" || fail "tables refused at a clean kill: $line"
sleep 3
[ "$(table_writes)" -eq 1 ] || fail "dwarf_chain's table was built again after the loader's restart ($(table_writes) map_update records)"
ids_after=$(chunk_ids)
writes_after=$(all_table_writes)
echo "chunks before: $ids_before; after: $ids_after; tables written since the kill: $((writes_after - writes_before))"
# The same chunks: the unused ones may have gone (the files of the helpers
# this test runs, python3 and bpftool, are mapped by no running process at
# the takeover and dropped), and a new one only for a table written since
# (the helpers' own, when they are sampled again).
kept=0
for id in $ids_after; do
	case " $ids_before " in
	*" $id "*) kept=$((kept + 1)) ;;
	*) [ "$writes_after" -gt "$writes_before" ] ||
		fail "chunk $id was created after the restart, no table written since (before: $ids_before)" ;;
	esac
done
[ "$kept" -ge 1 ] || fail "none of the chunks was taken over (before: $ids_before; after: $ids_after)"
"$BIN/lowprof" audit "$work/out/audit.log" | grep -q "unwind_adopt" || fail "no unwind_adopt audit record"

# 2. The chunks' pins gone: refused, the table built again.
rm -f "$pins"/unwind_chunk_*
kill -KILL "$(child_pid lowprof-loader)"
wait_log "took over the previous loader's unwind tables" 2
line=$(grep "took over the previous loader's unwind tables" "$work/err" | tail -n 1)
echo "$line"
echo "$line" | grep -q "(0 entries and 0 chunks refused)" && fail "chunks without pins were taken over: $line"
i=0
while [ "$(table_writes)" -lt 2 ]; do
	i=$((i + 1))
	[ "$i" -le 100 ] || fail "dwarf_chain's table was not built again after its chunk was refused"
	sleep 0.1
done

wait "$wl" || fail "dwarf_chain failed"
wait "$sup" || fail "lowprof exited with status $? ($(cat "$work/err"))"
python3 "$SRC/tests/integration/check_unwind.py" "$work/out" --comm dwarf_chain \
	--chain "$CHAIN" --min 95
echo "PASS: a restarted loader takes the unwind tables over, and refuses what does not check"
