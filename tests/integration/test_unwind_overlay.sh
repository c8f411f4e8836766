#!/bin/sh
# Files that no path reaches as they are mapped get unwind tables and names,
# checked on the BPF walker's own records (sample_tap, check_walk.py) and
# end to end by the names in profile.folded (the exporter symbolizes through
# the loader's file registry):
#  - overlayfs, as in every container: the overlay mounted in a mount
#    namespace of its own, its layers named by the test's paths. The VMA of
#    a file mapped through an overlay is the layer's file (another device),
#    which the overlay path never names. A program from the lower layer, one
#    written through the overlay (so in the upper layer), and a shared
#    library of the lower layer deleted through the overlay while mapped (a
#    whiteout hides it; its layer file stays);
#  - a shared library deleted while mapped (a package upgrade under a
#    running daemon): only /proc/PID/map_files reaches it.
# Each is a new file started after lowprof: its first samples, before its
# table is built, end with [no unwind table], never with a garbage frame.
# And a process of another overlay started before lowprof, asleep (never
# sampled): the start-up queue builds the table of its layer's file, keyed
# by that file's identity (maps shows the overlay's, which the walker never
# reports), read from the audit log.
#   usage: test_unwind_overlay.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib.sh"
require_bpf

work_dir unwind_overlay
chmod 755 "$work"
WALK="python3 $SRC/tests/integration/check_walk.py"
NAMES="python3 $SRC/tests/integration/check_unwind.py"
CHAIN="main;cl_level1;cl_level2;cl_level3;cl_leaf"
DL_CHAIN="main;dl_entry;dl_level2;dl_leaf"

mkdir -p "$work/lower" "$work/upper" "$work/ovwork" "$work/merged"
cp "$BIN/churn_leaf" "$work/lower/ov_lower"
cp "$BIN/dl_host" "$work/lower/dl_ovhost"
cp "$BIN/libdl_lib.so" "$work/lower/libdl_ov.so"
cp "$BIN/libdl_lib.so" "$work/libdl_gone.so"
cp "$(command -v sleep)" "$work/lower/ov_sleep"
mkdir -p "$work/upper2" "$work/ovwork2" "$work/merged2"
modprobe overlay 2>/dev/null || true
grep -qw overlay /proc/filesystems || {
	echo "SKIP: no overlayfs in this kernel" >&2
	exit 77
}

# Before lowprof, asleep: only the start-up queue can build its table.
unshare -m sh -c '
	mount -t overlay overlay \
		-o "lowerdir=$1/lower,upperdir=$1/upper2,workdir=$1/ovwork2" "$1/merged2" || exit 1
	exec "$1/merged2/ov_sleep" 40' sh "$work" &
pre=$!
track "$pre"
sleep 0.5

tapped_lowprof 18 15
# The start-up queue first (every running process's files: on this shared
# host a large one can hold the unwinder a second): the files below are
# asked for by their first samples, whose tables must not wait behind it.
sleep 3

# A container's view: only this mount namespace sees the overlay.
unshare -m sh -c '
	mount -t overlay overlay \
		-o "lowerdir=$1/lower,upperdir=$1/upper,workdir=$1/ovwork" "$1/merged" || exit 1
	cp "$2" "$1/merged/ov_upper" || exit 1
	"$1/merged/ov_lower" 5000 &
	a=$!
	"$1/merged/ov_upper" 5000 &
	b=$!
	"$1/merged/dl_ovhost" "$1/merged/libdl_ov.so" 5000 &
	c=$!
	wait $a && wait $b && wait $c' sh "$work" "$BIN/churn_leaf" &
ov=$!
track "$ov"
"$BIN/dl_host" "$work/libdl_gone.so" 5000 &
dl=$!
track "$dl"
wait "$ov" || fail "the overlay part failed"
wait "$dl" || fail "dl_host failed"
[ -f "$work/upper/ov_upper" ] || fail "ov_upper is not in the upper layer"
[ -c "$work/upper/libdl_ov.so" ] || fail "no whiteout for the deleted libdl_ov.so"
[ -f "$work/lower/libdl_ov.so" ] || fail "libdl_ov.so left its lower layer"
[ ! -e "$work/libdl_gone.so" ] || fail "dl_host did not delete its library"

wait "$tap" || fail "sample_tap failed: $(cat "$work/tap.err")"
wait "$sup" || fail "lowprof exited with status $? ($(tail -5 "$work/err"))"
grep -E "ov_|dl_|refused|unreachable" "$work/err" | head -20 || true

# The audit log's tables: the sleeper's layer file by its own identity, and
# no table under an overlay's device.
python3 - "$work/out/audit.log" "$work/lower/ov_sleep" <<'PY' || fail "start-up table of an overlay file"
import json, os, sys
log, layer = sys.argv[1:3]
st = os.stat(layer)
kdev = lambda d: os.major(d) << 20 | os.minor(d)
tables = [r for r in map(json.loads, open(log)) if r.get("map") == "unwind_rows"]
mine = [r for r in tables if r.get("ino") == st.st_ino]
print(f"tables written: {len(tables)}; of ov_sleep: {[(r['dev'], r['ino'], r['file']) for r in mine]}")
if not any(r["dev"] == kdev(st.st_dev) for r in mine):
    sys.exit(f"no table for the layer file {kdev(st.st_dev)}:{st.st_ino} of ov_sleep")
bad = [r for r in mine if r["dev"] != kdev(st.st_dev)]
if bad:
    sys.exit(f"a table keyed by another device than the layer's: {bad}")
PY

for v in ov_lower ov_upper; do
	$WALK "$work/tap.txt" --comm "$v" --elf "$BIN/churn_leaf" --min-whole 75 --min-samples 40
	$NAMES "$work/out" --comm "$v" --leaf-prefix cl_ --chain "$CHAIN" --min 75 --no-garbage
done
for v in dl_ovhost dl_host; do
	$NAMES "$work/out" --comm "$v" --leaf-prefix dl_ --chain "$DL_CHAIN" --min 75 --no-garbage
done
echo "PASS: overlayfs and deleted files unwind whole and are named"
