/*
 * CPUs that go offline and come back while the loader runs
 * (loader/cpu_uevents.h): the kernel drops a CPU's perf event when it goes
 * offline, so the CPU's link goes with it, and one that comes online gets a
 * new event, attached as at start. Each is audited and said on stderr: no
 * one should have to find a CPU that is not sampled from a thin profile.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "loader/cpu_list.h"
#include "loader/cpu_uevents.h"
#include "loader/loader.h"
#include "loader/loader_audit.h"

static void loader_cpu_online(struct loader *l, int cpu)
{
	char err[256];
	int rc = bpf_session_cpu_online(&l->sess, cpu, err, sizeof(err));

	loader_audit_cpu(&l->sess, cpu, true, rc, err);
	if (rc == 0)
		log_info("cpu %d came online: sampling it (%zu CPU%s sampled)", cpu, l->sess.events.count,
			 l->sess.events.count == 1 ? "" : "s");
	else if (rc != -ENODEV) /* offline again: its own uevent follows */
		log_warn("cpu %d came online but cannot be sampled: %s", cpu, err);
}

static void loader_cpu_offline(struct loader *l, int cpu)
{
	if (!bpf_session_cpu_offline(&l->sess, cpu))
		return;
	loader_audit_cpu(&l->sess, cpu, false, 0, NULL);
	log_info("cpu %d went offline: sampled again when it comes back (%zu CPU%s sampled)", cpu,
		 l->sess.events.count, l->sess.events.count == 1 ? "" : "s");
}

/* Messages were lost: every CPU as it is now. An online one gets a new
 * event whether or not it went away meanwhile (no way to tell). */
static void loader_cpus_resync(struct loader *l)
{
	static bool online[CPU_LIST_MAX];
	size_t i;
	int cpu;

	if (cpu_list_read_online("/sys/devices/system/cpu/online", online) <= 0) {
		log_warn("CPU uevents were lost and the online CPU list is unreadable: "
			 "CPUs are sampled as before");
		return;
	}
	log_info("CPU uevents were lost: every CPU's event opened again");
	for (i = l->sess.events.count; i-- > 0;) {
		cpu = l->sess.events.cpus[i];
		if (!online[cpu])
			loader_cpu_offline(l, cpu);
	}
	for (cpu = 0; cpu < CPU_LIST_MAX; cpu++)
		if (online[cpu])
			loader_cpu_online(l, cpu);
}

void loader_cpus_changed(struct loader *l)
{
	static struct cpu_uevent_changes ch; /* 4 KiB: not on the stack */
	int cpu, rc = cpu_uevents_read(l->uevent_fd, &ch);

	if (rc != 0) {
		log_warn("reading CPU uevents: %s: a CPU that goes offline and comes back is no "
			 "longer sampled again", strerror(-rc));
		close(l->uevent_fd);
		l->uevent_fd = -1;
		return;
	}
	if (ch.ignored > 0)
		log_debug("%llu uevent(s) ignored (not the kernel's, or not a CPU's)",
			  (unsigned long long)ch.ignored);
	if (ch.overflow) {
		loader_cpus_resync(l);
		return;
	}
	for (cpu = 0; ch.count > 0 && cpu < CPU_LIST_MAX; cpu++) {
		if (ch.state[cpu] == CPU_UEVENT_NONE)
			continue;
		ch.count--;
		if (ch.state[cpu] == CPU_UEVENT_OFFLINE)
			loader_cpu_offline(l, cpu);
		else /* online: one held went away unheard, its event is dead; or cycled */
			loader_cpu_online(l, cpu);
	}
}
