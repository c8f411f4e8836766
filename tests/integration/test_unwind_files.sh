#!/bin/sh
# Frames by file, from the kernel's VMAs: whole stacks from a process's first
# sample, checked on the BPF walker's own records (sample_tap reads the
# pinned sample ring; check_walk.py places frames by the programs' symbols):
#  - churn: >= 100 new processes a second of a program without frame
#    pointers, each living 3 to 30 ms, started after lowprof: >= 95% of the
#    samples whose leaf is in the program walk whole to main, and every
#    other one ends with a stop reason (never a garbage frame) -- their whole
#    lives are within their first 100 ms;
#  - a binary replaced on disk (same path, new inode) while an old process
#    maps the old one; a deleted one; one in another mount namespace under
#    chroot (its file on a tmpfs the host path does not reach); a stripped
#    one; a non-PIE one (churn_leaf itself is a PIE);
#  - code in anonymous executable memory: raw addresses, a marker or frames;
#  - the process map under a fork storm of another uid: a process whose
#    stacks need the VMAs its earlier samples looked up keeps them.
#   usage: test_unwind_files.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib.sh"
require_bpf

work_dir unwind_files
CHECK="python3 $SRC/tests/integration/check_walk.py"
chmod 755 "$work"

# The variants, each under its own name (the comm is the file name).
cp "$BIN/churn_leaf" "$work/cl_replaced"
cp "$BIN/churn_leaf" "$work/cl_deleted"
cp "$BIN/churn_leaf" "$work/cl_stripped"
strip "$work/cl_stripped"
cp "$BIN/churn_leaf_nopie" "$work/cl_nopie"
mkdir -p "$work/jail"

tapped_lowprof 24 21

# Churn: 120 new processes a second for 8 s.
started=$("$BIN/churn_spawn" 120 8 "$BIN/churn_leaf")
echo "churn: $started processes in 8 s"
[ "$started" -ge 800 ] || fail "only $started processes started"

# Replaced: the old process maps an inode that no path names any more.
"$work/cl_replaced" 4000 &
old=$!
track "$old"
sleep 0.3
cp "$BIN/churn_leaf" "$work/cl_replaced.new"
mv -f "$work/cl_replaced.new" "$work/cl_replaced"
"$work/cl_replaced" 3000 &
new=$!
track "$new"
# Deleted while running.
"$work/cl_deleted" 3000 &
del=$!
track "$del"
sleep 0.2
rm -f "$work/cl_deleted"
"$work/cl_stripped" 3000 &
track $!
"$work/cl_nopie" 3000 &
track $!
"$BIN/anon_exec" 3000 &
track $!
# Another mount namespace: the binary and its libraries on a tmpfs only it sees.
unshare -m sh -c '
	mount -t tmpfs none "$1/jail" &&
	mkdir -p "$1/jail/lib" "$1/jail/lib64" &&
	cp "$2" "$1/jail/cl_chroot" &&
	for l in $(ldd "$2" | awk "/=>/ { print \$3 } /ld-linux/ { print \$1 }"); do
		mkdir -p "$1/jail$(dirname "$l")" && cp "$l" "$1/jail$l"
	done &&
	exec chroot "$1/jail" /cl_chroot 3000' sh "$work" "$BIN/churn_leaf" &
track $!
wait "$old" "$new" "$del"
sleep 0.5

# The process map: another uid forks hard (exec storms, each sample of
# theirs may look a VMA up and add an entry) while the victim runs.
"$BIN/cache_victim" 5000 &
victim=$!
track "$victim"
setpriv --reuid=65534 --regid=65534 --clear-groups "$BIN/churn_spawn" 400 5 /bin/true \
	>/dev/null &
storm=$!
track "$storm"
wait "$victim" "$storm"

wait "$tap" || fail "sample_tap failed: $(cat "$work/tap.err")"
wait "$sup" || fail "lowprof exited with status $? ($(tail -5 "$work/err"))"
grep -E "unwind walker|cl_|refused|unreachable" "$work/err" | grep -v malformed | head -20 || true

$CHECK "$work/tap.txt" --comm churn_leaf --elf "$BIN/churn_leaf" --min-whole 95 --min-samples 200
# Each variant is a new file: its first samples, before its table is built,
# end with [no unwind table]; never with a garbage frame.
for v in cl_replaced cl_deleted cl_stripped cl_chroot; do
	$CHECK "$work/tap.txt" --comm "$v" --elf "$BIN/churn_leaf" --min-whole 75
done
$CHECK "$work/tap.txt" --comm cl_nopie --elf "$BIN/churn_leaf_nopie" --min-whole 75
$CHECK "$work/tap.txt" --comm anon_exec --anon
# Its stacks span libm, the program, libc and the program again: whole only
# with the VMAs its earlier samples looked up, which the storm must not evict.
$CHECK "$work/tap.txt" --comm cache_victim --elf "$BIN/cache_victim" --prefix cv_ --any-frame \
	--min-whole 80 --min-samples 100
echo "PASS: frames by file, whole from the first sample"
