/*
 * The loader's BPF actions as audit records (loader/audit_log.h): what
 * bpf_session did at start and stop, and each throttle change, described from
 * the session's state before and after the action.
 */
#ifndef LOWPROF_LOADER_LOADER_AUDIT_H
#define LOWPROF_LOADER_LOADER_AUDIT_H

#include <stddef.h>
#include <sys/types.h>

#include "loader/audit_log.h"
#include "loader/bpf_session.h"

/* After bpf_session_start: object open and load, each program (name, type,
 * instructions, tag) and map, the initial map updates, each attach, enable.
 * errnum/err: the start's result (a failed start is audited too). */
void loader_audit_session_start(const struct bpf_session *s, const pid_t *pids,
				const size_t *pid_starts, size_t npids, int errnum, const char *err);

/*
 * A throttle change by who: before and after are the session's config and
 * throttle around bpf_session_apply; want is what was asked. One record per
 * action taken (PERF_EVENT_IOC_DISABLE, the run_config map update,
 * PERF_EVENT_IOC_PERIOD, PERF_EVENT_IOC_ENABLE), each with its result.
 */
void loader_audit_apply(const struct audit_actor *who, const struct bpf_session *s,
			const struct lowprof_config *cfg_before,
			const struct throttle *thr_before,
			const struct throttle *want, int errnum);

/* A -p target that exited, out of target_pids (errnum: the delete's, 0 ok). */
void loader_audit_pid_forgotten(pid_t tgid, int errnum);

/* A CPU that came online (online: the attach of its new event, errnum and
 * err its result) or went offline (the detach). */
void loader_audit_cpu(const struct bpf_session *s, int cpu, bool online, int errnum,
		      const char *err);

/* Before the loader stops: disable of every event and each detach. */
void loader_audit_session_stop(const struct bpf_session *s, bool unpin);

#endif
