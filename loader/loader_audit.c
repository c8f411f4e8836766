#include "loader/loader_audit.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bpf/lowprof.skel.h"

static void loader_audit_config_json(const struct lowprof_config *c, char *buf, size_t len)
{
	snprintf(buf, len,
		 "{\"unwind_mode\":%u,\"max_depth\":%u,\"sample_divisor\":%u,\"filter_pids\":%u,"
		 "\"period_ns\":%llu,\"budget_ns_per_window\":%llu,\"ns_per_tick\":%llu,"
		 "\"boottime_offset_ns\":%lld}",
		 c->unwind_mode, c->max_depth, c->sample_divisor, c->filter_pids,
		 (unsigned long long)c->period_ns, (unsigned long long)c->budget_ns_per_window,
		 (unsigned long long)c->ns_per_tick, (long long)c->boottime_offset_ns);
}

/* "[0,1]": the CPUs of the session's perf events. */
static void loader_audit_cpus_json(const struct bpf_session *s, char *buf, size_t len)
{
	size_t i, o = 0;

	o += (size_t)snprintf(buf, len, "[");
	for (i = 0; i < s->events.count && o + 16 < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%d", i ? "," : "", s->events.cpus[i]);
	snprintf(buf + o, len - o, "]");
}

/* Begin the record of a loaded object (key: its name, type) and read the
 * kernel's info of it: 0 or the errno of bpf_obj_get_info_by_fd. */
static int loader_audit_obj_begin(struct audit_rec *r, const char *event, const struct audit_actor *me,
				  const char *key, const char *name, const char *type, int fd, void *info,
				  __u32 size)
{
	__u32 len = size;
	int rc;

	memset(info, 0, size);
	rc = bpf_obj_get_info_by_fd(fd, info, &len); /* bpf_prog_get_info_by_fd needs libbpf 1.2 */
	audit_rec_begin(r, event, me);
	audit_rec_str(r, key, name);
	audit_rec_str(r, "type", type);
	return rc;
}

static void loader_audit_programs(const struct audit_actor *me, struct bpf_object *obj)
{
	struct bpf_prog_info info;
	struct bpf_program *prog;
	struct audit_rec r;
	int fd, rc;

	bpf_object__for_each_program(prog, obj) {
		fd = bpf_program__fd(prog);
		if (fd < 0)
			continue; /* not loaded (autoload off) */
		rc = loader_audit_obj_begin(&r, "prog_load", me, "prog", bpf_program__name(prog),
					    libbpf_bpf_prog_type_str(bpf_program__type(prog)), fd, &info,
					    sizeof(info));
		if (rc == 0) {
			audit_rec_u64(&r, "id", info.id);
			audit_rec_u64(&r, "insns", info.xlated_prog_len / sizeof(struct bpf_insn));
			audit_rec_u64(&r, "jited_bytes", info.jited_prog_len);
			/* The verifier's work to load it (instructions processed):
			 * most of a start's CPU, kept in bounds by a test. */
			audit_rec_u64(&r, "verified_insns", info.verified_insns);
			audit_rec_hex(&r, "tag", info.tag, sizeof(info.tag));
		}
		audit_rec_end(&r, rc);
	}
}

static void loader_audit_maps(const struct audit_actor *me, struct bpf_object *obj)
{
	struct bpf_map_info info;
	struct bpf_map *map;
	struct audit_rec r;
	int fd, rc;

	bpf_object__for_each_map(map, obj) {
		fd = bpf_map__fd(map);
		if (fd < 0)
			continue;
		rc = loader_audit_obj_begin(&r, "map_create", me, "map", bpf_map__name(map),
					    libbpf_bpf_map_type_str(bpf_map__type(map)), fd, &info,
					    sizeof(info));
		if (rc == 0) {
			audit_rec_u64(&r, "id", info.id);
			audit_rec_u64(&r, "key_size", info.key_size);
			audit_rec_u64(&r, "value_size", info.value_size);
			audit_rec_u64(&r, "max_entries", info.max_entries);
		}
		audit_rec_end(&r, rc);
	}
}

void loader_audit_session_start(const struct bpf_session *s, const pid_t *pids,
				const size_t *pid_starts, size_t npids, int errnum, const char *err)
{
	struct lowprof_config zero;
	struct audit_actor me;
	struct audit_rec r;
	char old[256], new[256], cpus[512];
	__u32 key = 0;
	size_t i;

	if (!audit_log_enabled())
		return;
	audit_actor_self(&me);
	audit_rec_begin(&r, "object_load", &me);
	audit_rec_str(&r, "object", "lowprof_bpf");
	if (s->pin_dir != NULL)
		audit_rec_str(&r, "pin_dir", s->pin_dir);
	if (errnum != 0)
		audit_rec_str(&r, "error", err);
	audit_rec_end(&r, errnum);
	if (errnum != 0 || s->skel == NULL)
		return;
	if (s->pin_dir != NULL) {
		audit_rec_begin(&r, "pin", &me);
		audit_rec_str(&r, "pin_dir", s->pin_dir);
		audit_rec_u64(&r, "adopted_links", s->adopted_links);
		audit_rec_end(&r, 0);
	}
	loader_audit_programs(&me, s->skel->obj);
	loader_audit_maps(&me, s->skel->obj);

	memset(&zero, 0, sizeof(zero));
	loader_audit_config_json(&zero, old, sizeof(old));
	loader_audit_config_json(&s->config, new, sizeof(new));
	audit_rec_begin(&r, "map_update", &me);
	audit_rec_str(&r, "map", "run_config");
	audit_rec_hex(&r, "key", &key, sizeof(key));
	audit_rec_raw(&r, "old", old);
	audit_rec_raw(&r, "new", new);
	audit_rec_end(&r, 0);
	for (i = 0; i < npids; i++) {
		__u32 tgid = (__u32)pids[i];

		audit_rec_begin(&r, "map_update", &me);
		audit_rec_str(&r, "map", "target_pids");
		audit_rec_u64(&r, "key", tgid);
		audit_rec_raw(&r, "old", "null");
		audit_rec_u64(&r, "new", pid_starts != NULL ? pid_starts[i] : 0); /* start time */
		audit_rec_end(&r, 0);
	}
	for (i = 0; i < s->events.count; i++) {
		audit_rec_begin(&r, "attach", &me);
		audit_rec_str(&r, "prog", "lowprof_sample");
		audit_rec_i64(&r, "cpu", s->events.cpus[i]);
		audit_rec_str(&r, "perf_event", "cpu-clock");
		audit_rec_u64(&r, "period_ns", s->events.period_ns);
		audit_rec_bool(&r, "pinned", s->pin_dir != NULL);
		audit_rec_bool(&r, "adopted", s->adopted_links > 0);
		audit_rec_end(&r, 0);
	}
	loader_audit_cpus_json(s, cpus, sizeof(cpus));
	audit_rec_begin(&r, "perf_ioctl", &me);
	audit_rec_str(&r, "ioctl", "PERF_EVENT_IOC_ENABLE");
	audit_rec_raw(&r, "cpus", cpus);
	audit_rec_end(&r, 0);
}

static void loader_audit_ioctl(const struct audit_actor *who, const struct bpf_session *s,
			       const char *name, const char *value_key, uint64_t value, bool done,
			       int errnum)
{
	struct audit_rec r;
	char cpus[512];

	loader_audit_cpus_json(s, cpus, sizeof(cpus));
	audit_rec_begin(&r, "perf_ioctl", who);
	audit_rec_str(&r, "ioctl", name);
	audit_rec_raw(&r, "cpus", cpus);
	if (value_key != NULL)
		audit_rec_u64(&r, value_key, value);
	audit_rec_end(&r, done ? 0 : (errnum != 0 ? errnum : EIO));
}

void loader_audit_apply(const struct audit_actor *who, const struct bpf_session *s,
			const struct lowprof_config *cfg_before,
			const struct throttle *thr_before,
			const struct throttle *want, int errnum)
{
	const struct throttle *now = &s->throttle;
	struct audit_rec r;
	char old[256], new[256];
	bool cfg_written;
	__u32 key = 0;

	if (!audit_log_enabled())
		return;
	/* The order bpf_session_apply acts in; what holds afterwards says how far it got. */
	if (want->paused && !thr_before->paused)
		loader_audit_ioctl(who, s, "PERF_EVENT_IOC_DISABLE", NULL, 0, now->paused, errnum);
	if (want->paused && !thr_before->paused && !now->paused)
		return;
	cfg_written = now->max_depth == want->max_depth && now->unwind_mode == want->unwind_mode &&
		      now->sample_divisor == want->sample_divisor;
	loader_audit_config_json(cfg_before, old, sizeof(old));
	loader_audit_config_json(&s->config, new, sizeof(new));
	audit_rec_begin(&r, "map_update", who);
	audit_rec_str(&r, "map", "run_config");
	audit_rec_hex(&r, "key", &key, sizeof(key));
	audit_rec_raw(&r, "old", old);
	audit_rec_raw(&r, "new", new);
	audit_rec_end(&r, cfg_written ? 0 : (errnum != 0 ? errnum : EIO));
	if (!cfg_written)
		return;
	if (want->frequency_hz != thr_before->frequency_hz) {
		loader_audit_ioctl(who, s, "PERF_EVENT_IOC_PERIOD", "period_ns",
				   perf_events_period_ns(want->frequency_hz),
				   now->frequency_hz == want->frequency_hz, errnum);
		if (now->frequency_hz != want->frequency_hz)
			return;
	}
	if (!want->paused && thr_before->paused)
		loader_audit_ioctl(who, s, "PERF_EVENT_IOC_ENABLE", NULL, 0, !now->paused, errnum);
}

void loader_audit_pid_forgotten(pid_t tgid, int errnum)
{
	struct audit_actor me;
	struct audit_rec r;

	if (!audit_log_enabled())
		return;
	audit_actor_self(&me);
	audit_rec_begin(&r, "map_delete", &me);
	audit_rec_str(&r, "map", "target_pids");
	audit_rec_u64(&r, "key", (uint64_t)(__u32)tgid);
	audit_rec_str(&r, "why", "process exited");
	audit_rec_end(&r, errnum < 0 ? -errnum : errnum);
}

void loader_audit_cpu(const struct bpf_session *s, int cpu, bool online, int errnum,
		      const char *err)
{
	struct audit_actor me;
	struct audit_rec r;

	if (!audit_log_enabled())
		return;
	audit_actor_self(&me);
	audit_rec_begin(&r, online ? "attach" : "detach", &me);
	audit_rec_str(&r, "prog", "lowprof_sample");
	audit_rec_i64(&r, "cpu", cpu);
	audit_rec_str(&r, "perf_event", "cpu-clock");
	if (online) {
		audit_rec_u64(&r, "period_ns", s->events.period_ns);
		audit_rec_bool(&r, "pinned", s->pin_dir != NULL);
		audit_rec_bool(&r, "enabled", errnum == 0 && !s->throttle.paused);
	}
	audit_rec_str(&r, "why", online ? "cpu online" : "cpu offline");
	if (errnum != 0 && err != NULL)
		audit_rec_str(&r, "error", err);
	audit_rec_end(&r, errnum < 0 ? -errnum : errnum);
}

void loader_audit_session_stop(const struct bpf_session *s, bool unpin)
{
	struct audit_actor me;
	struct audit_rec r;
	size_t i;

	if (!audit_log_enabled() || s->skel == NULL)
		return;
	audit_actor_self(&me);
	loader_audit_ioctl(&me, s, "PERF_EVENT_IOC_DISABLE", NULL, 0, true, 0);
	/* Pins kept for the next loader keep the links attached: nothing is detached. */
	for (i = 0; (s->pin_dir == NULL || unpin) && i < s->events.count; i++) {
		audit_rec_begin(&r, "detach", &me);
		audit_rec_str(&r, "prog", "lowprof_sample");
		audit_rec_i64(&r, "cpu", s->events.cpus[i]);
		audit_rec_str(&r, "perf_event", "cpu-clock");
		audit_rec_end(&r, 0);
	}
	if (s->pin_dir != NULL) {
		audit_rec_begin(&r, unpin ? "unpin" : "pins_kept", &me);
		audit_rec_str(&r, "pin_dir", s->pin_dir);
		audit_rec_end(&r, 0);
	}
	audit_rec_begin(&r, "object_unload", &me);
	audit_rec_str(&r, "object", "lowprof_bpf");
	audit_rec_end(&r, 0);
}
