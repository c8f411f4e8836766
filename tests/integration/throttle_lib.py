"""Helpers for the throttle integration tests: read summary.json's timeline."""
import json
import sys


def load(outdir):
    with open(f"{outdir}/summary.json") as f:
        d = json.load(f)
    tl = d.get("timeline")
    if not tl:
        sys.exit(f"FAIL: summary.json has no timeline: {sorted(d)}")
    if not isinstance(d.get("overhead"), dict):
        sys.exit(f"FAIL: summary.json has no overhead object: {d.get('overhead')!r}")
    for k in ("budget_pct", "max_pct", "mean_pct", "bpf_ns_per_sample"):
        if k not in d["overhead"]:
            sys.exit(f"FAIL: overhead lacks {k}")
    for k in ("t", "tier", "frequency_hz", "unwind", "max_depth", "sample_divisor", "paused",
              "host_cpu_pct", "drop_pct", "overhead_pct"):
        if k not in tl[0]:
            sys.exit(f"FAIL: timeline entry lacks {k}: {tl[0]}")
    return d, tl


def show(tl):
    for e in tl:
        print(f"  t={e['t']:6.2f} {e['tier']:8s} {e['frequency_hz']:5d} Hz {e['unwind']:5s} "
              f"depth {e['max_depth']:3d} div {e['sample_divisor']:2d} paused {int(e['paused'])} "
              f"host {e['host_cpu_pct'] if e['host_cpu_pct'] is not None else -1:6.1f}% "
              f"drop {e['drop_pct']:5.1f}% ovh {e['overhead_pct']:.3f}% "
              f"ev/s {e['events'] / e['interval_s']:7.1f} fs {int(e['failsafe'])}")
