/*
 * CPUs that go offline and come back (hotplug, SMT switched off and on, a
 * resume from suspend). The kernel removes a CPU's perf events when it goes
 * offline and does not bring them back when it returns: without a new event
 * the CPU would never be sampled again. The kernel says so in uevents
 * ("online@/devices/system/cpu/cpu3"); the loader listens on a netlink
 * socket for them and opens the CPU's event again (bpf_session_cpu_online).
 *
 * The socket is opened before the sandbox (seccomp allows no socket()); a
 * socket filter passes only the CPUs' online and offline messages, so the
 * other devices' uevents (a container's veth, a disk) never wake the loader.
 * A message is believed only from the kernel (port id 0); its text is
 * parsed as untrusted bytes all the same.
 */
#ifndef LOWPROF_LOADER_CPU_UEVENTS_H
#define LOWPROF_LOADER_CPU_UEVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loader/cpu_list.h"

/* What happened to each CPU since the last read: the last word wins, but an
 * offline seen on the way is kept (the CPU's event died even if it is back). */
struct cpu_uevent_changes {
	uint8_t state[CPU_LIST_MAX];  /* CPU_UEVENT_* per CPU */
	size_t count;                 /* CPUs with a state other than NONE */
	bool overflow;                /* messages were lost (ENOBUFS): check every CPU */
	uint64_t ignored;             /* messages not from the kernel, or not understood */
};

enum {
	CPU_UEVENT_NONE = 0,
	CPU_UEVENT_ONLINE = 1,        /* came online (no offline seen since the last read) */
	CPU_UEVENT_OFFLINE = 2,       /* went offline and is still, as far as we heard */
	CPU_UEVENT_CYCLED = 3,        /* went offline and came back: its event is dead */
};

/*
 * One kernel uevent (len bytes: "ACTION@DEVPATH\0KEY=VALUE\0..."): true when
 * it is a CPU going online or offline, with *cpu and *online set (else
 * untouched). False for
 * any other device or action, and for malformed text (no NUL at the end, a
 * header and keys that disagree, a CPU number past CPU_LIST_MAX).
 */
bool cpu_uevent_parse(const char *msg, size_t len, int *cpu, bool *online);

/* The socket (close-on-exec, non-blocking, filtered): fd or -errno. */
int cpu_uevents_open(void);

/* Attach the filter that passes only CPU online/offline messages to fd (any
 * datagram socket: the unit test uses a socketpair). 0 or -errno. */
int cpu_uevents_filter(int fd);

/* Read every message waiting on fd into *out (cleared first). 0, or -errno
 * for a read error other than EAGAIN (ENOBUFS is out->overflow, not an error). */
int cpu_uevents_read(int fd, struct cpu_uevent_changes *out);

#endif
