/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A profiled command's new processes (`lowprof -- COMMAND`): included by
 * bpf/lowprof.bpf.c, loaded only when a target follows (loader/follow.c).
 *
 * The command is a target_pids entry whose value carries
 * LOWPROF_TARGET_FOLLOW. A process it forks becomes one too, with its own
 * start time and the flag, so that its children follow in turn: a build's
 * compilers, a script's programs. Threads need nothing (the map is keyed by
 * thread group). A followed process leaves the map when its last thread
 * exits, so the map holds the processes alive, not every one the command
 * ever started: a build of a hundred thousand processes fits. When it is
 * full (LOWPROF_TARGET_PIDS_MAX), a new process is not followed, counted.
 *
 * Both run in the forking or exiting task, on no hot path of the host's
 * work that the sampler is not already on: a fork costs a map lookup more
 * (its parent's tgid), only while a command is followed.
 */
#ifndef LOWPROF_FOLLOW_BPF_H
#define LOWPROF_FOLLOW_BPF_H

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lowprof_follow_stats);
} follow_stats SEC(".maps");

/* Is the current thread group a target that follows, the very process that
 * was made one (its start time), not a later holder of its pid? */
static __always_inline bool follow_current_target(const struct lowprof_config *cfg, __u32 tgid)
{
	__u64 *v = bpf_map_lookup_elem(&target_pids, &tgid);

	return v && (*v & LOWPROF_TARGET_FOLLOW) && target_pid_matches(cfg, tgid);
}

/* args: parent (the current task), child */
SEC("raw_tp/sched_process_fork")
int lowprof_follow_fork(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *child = (struct task_struct *)ctx->args[1];
	struct lowprof_follow_stats *st;
	struct lowprof_config *cfg;
	__u32 zero = 0, tgid = bpf_get_current_pid_tgid() >> 32, child_tgid;
	__u64 value = 0;

	cfg = bpf_map_lookup_elem(&run_config, &zero);
	st = bpf_map_lookup_elem(&follow_stats, &zero);
	if (!cfg || !st)
		return 0;
	child_tgid = BPF_CORE_READ(child, tgid);
	/* A new thread of the same process: already a target. */
	if (child_tgid == tgid || !follow_current_target(cfg, tgid))
		return 0;
	if (cfg->ns_per_tick)
		value = (BPF_CORE_READ(child, start_boottime) + cfg->boottime_offset_ns) /
			cfg->ns_per_tick;
	value |= LOWPROF_TARGET_FOLLOW;
	/* BPF_ANY: an entry left by a process that held this pid before (its
	 * exit unseen while no loader ran) is replaced, not kept. */
	if (bpf_map_update_elem(&target_pids, &child_tgid, &value, BPF_ANY) == 0)
		st->followed++;
	else
		st->not_followed++;
	return 0;
}

/* args: the exiting task (the current one) */
SEC("raw_tp/sched_process_exit")
int lowprof_follow_exit(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *task = (struct task_struct *)ctx->args[0];
	struct lowprof_follow_stats *st;
	struct lowprof_config *cfg;
	__u32 zero = 0, tgid = bpf_get_current_pid_tgid() >> 32;

	cfg = bpf_map_lookup_elem(&run_config, &zero);
	st = bpf_map_lookup_elem(&follow_stats, &zero);
	if (!cfg || !st || !follow_current_target(cfg, tgid))
		return 0;
	/* The group's last thread: do_exit has counted it out of signal->live
	 * before this tracepoint. Another thread may run on after the leader. */
	if (BPF_CORE_READ(task, signal, live.counter) != 0)
		return 0;
	if (bpf_map_delete_elem(&target_pids, &tgid) == 0)
		st->left++;
	return 0;
}

#endif /* LOWPROF_FOLLOW_BPF_H */
