#!/usr/bin/env python3
"""The budget at which an attacker would take two whole guard windows.

    guard_calibrate.py SUMMARY SHARE

SUMMARY is the summary.json of a run of the attacker alone, unguarded
(--cpu-budget 100, -F 999, --max-depth 128, -p the attacker); SHARE is the
share of the CPU the attackers will have in the guarded run (5/6: five
threads beside a one-thread victim). Prints the --cpu-budget (percent) at
which the attackers' samples would cost two whole 100 ms windows, four times
a share of half: they stay over their half if the guarded run is twice as
fast, and the victim (a few samples, short stacks) needs a fraction of the
other half if it is twice as slow. Exits non-zero, saying why, when the run
did not measure the deep walk.

What a walk costs depends on the machine, and on this VM from one second to
the next (5 to 13 us a sample): hence a calibration run, not a constant.
"""
import json
import sys

summary = json.load(open(sys.argv[1], encoding="utf-8"))
num, _, den = sys.argv[2].partition("/")  # "5/6"
share = float(num) / float(den or 1)
c = summary["collection"]
# Its samples walked to --max-depth: while its table is not built (at the
# start, longer on a fresh host busy with every process's tables) they are
# other walks, not the one measured; enough of them must be the deep walk.
walked = c["truncated_stacks"]
if walked < 2000:
    sys.exit(f"only {walked} of the attacker's samples walked to --max-depth in 5 s")
# The cheapest of the control intervals after the first, each its BPF time
# over its samples (only the attacker's are kept; the victim's events return
# at the pid filter; the intervals grow to 2 s in a steady run). One figure
# for the whole run (BPF time over walks) read 8.2 us in a CI run where the
# guarded run showed the walk costs at most 3.6: samples taken while the
# attacker's table was being built (the first second or two on a fresh host)
# or a noisy second moved the mean. The cheapest interval errs the other
# way: the attacker is then a little more than two windows, never less.
per_sample = [i["bpf_run_time_ns"] / i["samples"]
              for i in summary["timeline"][1:] if i["samples"] >= 500]
if len(per_sample) < 2:
    sys.exit(f"only {len(per_sample)} control intervals after the first with 500 samples "
             "of the attacker in 5 s")
ns_per_sample = min(per_sample)
# The attackers' samples a window (100 ms): 999 Hz, their share of the CPU.
window_cost_ns = ns_per_sample * 99.9 * share
budget_pct = window_cost_ns / 2.0 / 100e6 * 100
print(f"attacker: {ns_per_sample / 1000:.1f} us a sample (intervals: "
      + ", ".join(f"{x / 1000:.1f}" for x in per_sample)
      + f"; whole run {c['bpf_run_time_ns'] / walked / 1000:.1f}), budget {budget_pct:.3f}%",
      file=sys.stderr)
print(f"{max(budget_pct, 0.01):.3f}")
