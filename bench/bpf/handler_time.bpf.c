// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bench/'s measure of a profiler's kernel cost: the time the cpu-clock perf
 * event's hrtimer handler (perf_swevent_hrtimer) runs, per owner of the perf
 * event. That handler is where perf walks the callchain and copies the user
 * stack, and where lowprof's BPF program runs, so it times both the same way.
 * Raw tracepoints, because fentry and kprobes are refused on some kernels.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* perf_swevent_hrtimer's address (from /proc/kallsyms), set before load. */
const volatile __u64 swevent_fn = 0;

struct handler_start {
	__u64 ns;
	__u32 owner;
	__u32 active;
};

struct handler_total {
	__u64 ns;
	__u64 count;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct handler_start);
} start SEC(".maps");

/* Owner tgid (0: the owner is gone) -> time in the handler, summed over CPUs. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct handler_total);
} totals SEC(".maps");

SEC("raw_tp/hrtimer_expire_entry")
int handler_entry(struct bpf_raw_tracepoint_args *ctx)
{
	struct hrtimer *t = (struct hrtimer *)ctx->args[0];
	struct perf_event *ev;
	struct task_struct *owner;
	struct handler_start *s;
	__u32 zero = 0;

	if ((__u64)BPF_CORE_READ(t, function) != swevent_fn)
		return 0;
	s = bpf_map_lookup_elem(&start, &zero);
	if (s == NULL)
		return 0;
	ev = (struct perf_event *)((char *)t - bpf_core_field_offset(struct perf_event, hw.hrtimer));
	owner = BPF_CORE_READ(ev, owner);
	s->owner = 0;
	if (owner != NULL && (unsigned long)owner != (unsigned long)-1)
		s->owner = BPF_CORE_READ(owner, tgid);
	s->active = 1;
	s->ns = bpf_ktime_get_ns();
	return 0;
}

SEC("raw_tp/hrtimer_expire_exit")
int handler_exit(struct bpf_raw_tracepoint_args *ctx)
{
	struct handler_total *tot, init = {};
	struct handler_start *s;
	__u32 zero = 0;
	__u64 now = bpf_ktime_get_ns();

	s = bpf_map_lookup_elem(&start, &zero);
	if (s == NULL || !s->active)
		return 0;
	s->active = 0;
	tot = bpf_map_lookup_elem(&totals, &s->owner);
	if (tot == NULL) {
		bpf_map_update_elem(&totals, &s->owner, &init, BPF_NOEXIST);
		tot = bpf_map_lookup_elem(&totals, &s->owner);
		if (tot == NULL)
			return 0;
	}
	tot->ns += now - s->ns;
	tot->count++;
	return 0;
}
