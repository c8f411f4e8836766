/*
 * The loader's state and the pieces of its main loop. main() (loader/main.c)
 * parses the options, enters the sandbox, then calls loader_start,
 * loader_run and loader_stop (loader/loader_loop.c). The control side (the
 * throttle in force, the fail-safe's tier, the timeline entry of each control
 * interval) is loader/loader_control.c.
 */
#ifndef LOWPROF_LOADER_LOADER_H
#define LOWPROF_LOADER_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ipc/throttle.h"
#include "loader/bpf_session.h"
#include "loader/control_server.h"
#include "loader/drain.h"
#include "loader/file_registry.h"
#include "loader/loader_options.h"
#include "loader/file_tables.h"
#include "loader/symbol_broker.h"
#include "loader/target_pids.h"
#include "measure/agent_cpu.h"
#include "measure/host_load.h"

/* Open files behind sampled frames the loader keeps (file_registry), at most:
 * as many as the unwind-table cache holds, so that every table's file stays open. */
#define LOADER_FILES_MAX UNWIND_MAPS_MAX_FILES

/* Everything the main loop and the control callbacks share. */
struct loader {
	struct loader_options opt;
	struct bpf_session sess;
	struct drain dr;
	bool draining;                /* dr (and pt) started: loader_stop finishes them */
	struct file_tables pt;        /* DWARF unwind tables (--unwind), by file */
	struct control_server cs;
	struct symbol_broker sb;      /* the exporter's symbol sources; sb.mon.fd -1: none */
	struct seen_pids seen;        /* the pids sampled lately: the only ones sb answers about */
	struct target_pids targets;   /* -p: each target's pidfd; an exited one leaves the map */
	struct file_registry *files;  /* files behind sampled frames: tables and sb's file answers */
	int sfd;                      /* signalfd: SIGTERM/SIGINT stop, SIGHUP is ignored */
	int tfd;                      /* the drain timer: one-shot, re-armed for the next work */
	int uevent_fd;                /* CPUs going offline and online (loader/cpu_uevents.h); -1: none */
	uint64_t next_stats_ns;
	pid_t agent_root;             /* the supervisor: lowprof's processes are it and its children */
	struct agent_cpu agent;       /* their CPU, start-ups apart */
	uint64_t bpf_load_ns;         /* this loader's CPU in bpf_session_start */
	uint64_t tables_ns;           /* table work of the first control interval (reported) */
	bool first_entry_done;
	struct host_load_source host; /* /proc/stat, kept open: read into the counters */
	struct control_counters tl_base; /* counters at the previous timeline entry */
	double tl_overhead_pct;          /* the last entry's interval: overhead (throttle_overhead_pct) */
	double tl_drop_pct;              /* ... and samples lost (throttle_drop_pct): for `lowprof status` */
	uint64_t next_control_ns;
	uint64_t control_interval_ns;
	bool control_driven;          /* the controller's stats request made the last interval's tick */
	/* The interval running is a quiet one (ipc/throttle.h's throttle_quiet;
	 * quiet_run quiet intervals in a row led to it: throttle_quiet_span) or
	 * a steady one (throttle_steady; steady_run in a row:
	 * throttle_steady_span), span_ns long from the tick at
	 * last_control_ns; else span_ns is one control interval. */
	bool quiet;
	unsigned quiet_run;
	unsigned span_wakes;          /* the interval's wakes it went on after (loader_drain); fixed
				       * steady: those that found no new process */
	unsigned span_told;           /* fixed steady: its wakes that found a new process */
	bool newcomer_wake_off;       /* fixed steady: the new-process wake is off till its end */
	uint64_t wake_off_new_pids;   /* the drain's new_pids when it went off */
	bool steady;
	unsigned steady_run;
	uint64_t span_ns;
	bool applied_in_interval;     /* a new throttle was applied since the last tick */
	uint64_t tick_drained_bytes;  /* the drain's drained_bytes at the last tick */
	uint64_t tick_new_pids;       /* the drain's new_pids at the last tick */
	uint64_t last_control_ns;
	uint64_t pass;                /* loop passes: counters read twice in one pass are read once */
	uint64_t counters_pass;
	struct control_counters counters; /* read in pass counters_pass */
	uint64_t bpf_stats_pass;
	struct lowprof_cpu_stats bpf_stats; /* read in pass bpf_stats_pass */
	char state_sent[512];         /* the last state line sent to the supervisor */
	uint64_t state_sent_ns;
};

/*
 * Start the BPF session (in the healthy tier), the drain, the unwind tables,
 * the control server and the symbol broker; tell the supervisor we are
 * ready. A configuration or BPF failure is fatal here; 0, or -errno (the
 * reason in err) when the drain cannot start: loader_stop(l, false) then.
 */
int loader_start(struct loader *l, char *err, size_t errlen);

/* The poll loop until SIGTERM/SIGINT: LOWPROF_EXIT_OK, or _FAILURE when poll failed. */
int loader_run(struct loader *l);

/*
 * clean: a stop asked for (SIGTERM): stop sampling, drain what is left, keep
 * answering the exporter for a moment, unpin. Otherwise leave the pinned
 * session for the next loader to adopt. Releases everything.
 */
void loader_stop(struct loader *l, bool clean);

/* fd is a SOCK_SEQPACKET socket the supervisor passed (made close-on-exec): fd, else -1. */
int loader_inherited_seqpacket(int fd, const char *what);

/* loader_cpus.c: the CPU uevents waiting on uevent_fd, acted on: a CPU
 * that went offline loses its event, one that came online gets a new one. */
void loader_cpus_changed(struct loader *l);

/* loader_control.c */
/* The tier's settings from the default tier table, with the user's -F and
 * --max-depth as the ceiling: the start (healthy) and the fail-safe (critical). */
void loader_tier_throttle(const struct loader_options *opt, enum throttle_tier tier,
			  struct throttle *out);
/* The BPF program's counters summed over CPUs, read once per loop pass
 * (the controller's Stats, the timeline entry and the statistics record of
 * one pass share them). 0 or -errno. */
int loader_read_bpf_stats(struct loader *l, struct lowprof_cpu_stats *sum);
/* Serve the control socket, if the supervisor passed one, and take the
 * timeline's first counters and host snapshot. */
void loader_control_start(struct loader *l);
/* Once per control interval (or within slack_ns of its end): the fail-safe
 * clock, the timeline entry, the controller's Stats (unless asked: it just
 * had them), the state for `lowprof status`. True when it ran. */
bool loader_control_tick(struct loader *l, uint64_t now_ns, uint64_t slack_ns, bool asked);
/* At a clean stop before the first control interval ended: that interval's
 * timeline entry, short as it is, so that the run's start-up (carried by the
 * entries) and its counters reach summary.json. Nothing once an entry was made. */
void loader_control_final(struct loader *l);
/* A burst of samples drained, or a new throttle: a quiet or steady interval
 * ends one interval after it began (now, if that has passed), and the next
 * quiet one is short again. */
void loader_span_end(struct loader *l);
/* A fixed steady interval's new-process wake drained less than the ring's
 * wake: found_new, it told the exporter of a new process. Turns the wake
 * off past LOADER_SPAN_WAKES. */
void loader_steady_newcomer_wake(struct loader *l, bool found_new);

/* Wakes for new processes a quiet interval goes on after: past them, a
 * host that keeps starting processes is not quiet. In a fixed steady
 * interval, its wakes that found no new process (a process new to a CPU, or
 * displaced in the program's memory of tgids, bpf/lowprof.bpf.c) past which
 * the new-process wake is off until its end; and, per control interval of
 * it, those that did (one wake per new process's sample would cost more
 * than the 1-s intervals the long one saves). loader_drain; a fixed steady
 * interval's next one is short only when a new process was drained after
 * the wake went off (told late), loader_control_tick. */
#define LOADER_SPAN_WAKES 4

/* A steady interval with --no-throttle: no decision waits on its end, so in
 * it only work wakes the loader (a quarter-full ring, a new process), and a
 * wake does not end it (docs/THROTTLE.md, "Steady intervals"). */
static inline bool loader_steady_fixed(const struct loader *l)
{
	return l->steady && l->opt.no_throttle;
}

#endif /* LOWPROF_LOADER_LOADER_H */
