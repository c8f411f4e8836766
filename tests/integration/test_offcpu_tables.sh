#!/bin/sh
# Building unwind tables is not off-CPU's cost. Each new executable has the
# unwinder (and the loader) build its tables; the controller puts a share of
# the agent's CPU on off-CPU in proportion of its records, and on a host that
# samples little nearly every record is off-CPU's, so that share was nearly
# all of it: a few new programs a second cut the off-CPU probability. The
# loader now reports the tables' CPU apart (Stats.tables_cpu_ns) and the
# controller keeps it out of off-CPU's share. Here: copies of tables_heavy
# (20,000 rows each, no build id: every copy a table of its own; stripped, so
# that the exporter's symbols of each new file weigh little) start, four
# a second, under --cpu-budget 3 (the cut at 1.5%; the old share came to about
# 2-3% on a two-CPU host). The tables' CPU must be reported in intervals
# where the switch program ran, and the probability never cut.
#   usage: test_offcpu_tables.sh BIN_DIR SOURCE_DIR [REFERENCE_PROTO_DIR]
. "$(dirname "$0")/lib.sh"
require_bpf

work_dir offcpu-tables
chmod 755 "$work"

"$BIN/lowprof" -v --duration 40 --off-cpu --cpu-budget 3 --control-interval 1 --interval 5 \
	--output "$work/out" 2>"$work/stderr" &
sup=$!
track "$sup"
wait_profiling "$work/stderr"
i=0
until grep -q "start-up unwind tables done" "$work/stderr"; do
	i=$((i + 1))
	[ $i -le 300 ] || fail "no start-up tables in 30 s"
	sleep 0.1
done
sleep 2

i=0
while [ $i -lt 32 ]; do
	i=$((i + 1))
	cp "$BIN/tables_heavy" "$work/heavy$i"
	# Alive a while: tables are built for a running program's files.
	"$work/heavy$i" 2 &
	track $!
	[ $((i % 4)) -eq 0 ] && sleep 1
done
sleep 3

kill -TERM "$sup"
wait "$sup" || fail "lowprof exited with status $? ($(tail -5 "$work/stderr"))"
sup=

python3 - "$work/stderr" <<'PY' || fail "tables' CPU and the off-CPU probability"
import os, re, sys
cpus = os.cpu_count() or 1
stats = re.compile(r"stats: (\d+) submitted.* agent (\d+) ns \(tables (\d+)\).*"
                   r"off-CPU (\d+) ns (\d+) records (\d+) switches, over ([\d.]+) s")
measured = 0
for line in open(sys.argv[1]):
    if "off-CPU" in line and "probability 100% ->" in line:
        sys.exit("FAIL: the off-CPU probability was cut: " + line.strip())
    m = stats.search(line)
    if not m:
        continue
    samples, agent, tables, bpf, recs, switches = map(int, m.groups()[:6])
    span = float(m.group(7))
    if tables == 0 or switches == 0:
        continue
    measured += 1
    cap = cpus * span * 1e9 / 100
    share = recs / (recs + samples) if recs + samples else 0
    old = (bpf + agent * share) / cap
    new = (bpf + max(agent - tables, 0) * share) / cap
    print(f"agent {agent / 1e6:.1f} ms, tables {tables / 1e6:.1f} ms: off-CPU {new:.2f}% "
          f"(with the tables {old:.2f}%)")
if measured == 0:
    sys.exit("FAIL: no interval with tables built while the switch program ran")
print(f"PASS: {measured} interval(s) with tables, the probability held")
PY
echo PASS
