/*
 * The exporter's state and the steps of its main loop (exporter/main.c):
 * reading record batches from the shared ring, writing the files and the
 * interval's OTLP profile, reporting to the supervisor, and listening to it.
 */
#ifndef LOWPROF_EXPORTER_LOOP_H
#define LOWPROF_EXPORTER_LOOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "exporter/exporter_checkpoint.h"
#include "exporter/exporter_options.h"
#include "exporter/exporter_state.h"
#include "exporter/ingest.h"
#include "exporter/output_pace.h"
#include "exporter/otlp/otlp_client.h"
#include "ipc/loader_stats.h"
#include "ipc/shm_ring.h"

/* Bound the work per wake-up so signals and interval writes are never starved. */
#define EXPORTER_RECORDS_PER_BATCH 4096

/* exporter.merge_changes and file_changes: no merge's, or one with the current interval. */
#define EXPORTER_CHANGES_UNKNOWN UINT64_MAX

/* Components counted in the supervisor's "restarts" message, in its order. */
enum { EXPORTER_RESTARTS_LOADER, EXPORTER_RESTARTS_CONTROLLER, EXPORTER_RESTARTS_EXPORTER,
       EXPORTER_RESTARTS_N };
/* The supervisor's "pace" message: the budget in millionths of the host, the
 * control interval in ms. */
enum { EXPORTER_PACE_BUDGET_PPM, EXPORTER_PACE_CONTROL_MS, EXPORTER_PACE_N };
/* The audit log's counters in the supervisor's "audit" message, in its order. */
enum { EXPORTER_AUDIT_RECORDS, EXPORTER_AUDIT_SUPPRESSED, EXPORTER_AUDIT_ROTATIONS,
       EXPORTER_AUDIT_REOPENS, EXPORTER_AUDIT_N };

/* The counts of every bound, as summary.json's "caps" and `lowprof status` give them. */
struct exporter_caps {
	uint64_t folded_samples, dropped_samples; /* the window's merge, by --max-stacks */
	uint64_t string_bytes;                    /* the merge's string table */
	uint64_t window_bytes;                    /* every interval profile held, the merge included */
	uint64_t symbol_bytes;                    /* the symbolizer's tables and interned strings */
	/* ... of which symbol tables, interned strings, kallsyms, process maps */
	uint64_t symbol_file_bytes, symbol_string_bytes, symbol_kernel_bytes, symbol_maps_bytes;
	uint64_t symbol_evictions, symbol_string_trims;
	uint64_t set_aside;                       /* files a restart moved aside (state, profile, archive index) */
};

struct exporter {
	struct exporter_options opt;
	struct shm_ring_consumer ring;
	struct proc_source *src;      /* what the symbolizer reads: the loader (proc_source.h) */
	struct symbolizer *sym;
	struct stack_cache *stacks;   /* symbolized stacks seen before (NULL: out of memory) */
	struct profile_window *window; /* the interval profiles the files are merged from */
	struct profile *profile;      /* the merge last written (the window's), NULL before */
	struct profile *restored;     /* the previous exporter's window, until it joins ours */
	/* ... its split by interval (NULL: none that matched; the window is then
	 * kept whole), and the checkpoint of the interval it was collecting */
	struct window_split *restored_split;
	struct profile *restored_tail;
	struct archive *archive;      /* NULL without --archive */
	/* --off-cpu: the off-CPU profile's window (NULL without the flag), windowed
	 * like the on-CPU one; its merge last written; the previous exporter's. */
	struct profile_window *offcpu_window;
	struct profile *offcpu;
	struct profile *offcpu_restored;
	struct window_split *offcpu_restored_split;
	struct otlp_export *otlp;     /* NULL without --otlp-endpoint */
	struct lowprof_loader_stats loader;
	bool have_loader_stats;
	struct ingest_stats ingest;
	struct timeline *timeline;
	uint64_t start_mono_ns;
	uint64_t start_unix_ns;
	uint64_t interval_start_unix_ns; /* start of the OTLP interval being collected */
	bool ring_broken;
	unsigned restarts[EXPORTER_RESTARTS_N]; /* from the supervisor, 0 until it says */
	unsigned audit[EXPORTER_AUDIT_N];       /* from the supervisor, when it audits */
	bool have_audit;
	bool restarting;              /* the supervisor said "restart": this stop is not the run's end */
	/* Pacing the files' writes against the CPU budget (output_pace.h): a slot
	 * is a control interval, counted from the last roll. */
	struct output_pace pace;
	uint64_t slot_ns, slot_start_ns; /* monotonic */
	uint64_t merged_samples;      /* samples of this run accepted when the merge was made */
	/* What the window's closed intervals held (profile_window_stats.changes)
	 * when ex->profile was merged, and when each file was written from a
	 * merge: at rest the files are not written again (exporter_hold_unchanged).
	 * EXPORTER_CHANGES_UNKNOWN: a merge with the current interval in it, or never. */
	uint64_t merge_changes;
	uint64_t file_changes[OUTPUT_PACE_N];
	uint64_t last_caps_report_ns; /* the state message to the supervisor, at most 1/s */
	unsigned ncpus;               /* online CPUs, read before the sandbox */
	/* The job running (exporter_write.c): where its current piece started,
	 * what its earlier pieces cost, and whether it may pause at all. */
	uint64_t piece_cpu0, job_pieces_ns;
	/* The job running (OUTPUT_PACE_N: none), and the thread CPU time at its
	 * last pause point (summary.json's max_stretch_ms). */
	int job_running;
	uint64_t stretch_cpu0;
	bool job_unpaced;
	/* Signals read while a write was paused, for the main loop. */
	bool stop_requested, hangup_requested;
	/* Surviving a SIGKILL (exporter_state.h): the state file, the samples the
	 * profile held when this exporter started (reloaded), and the record kept. */
	int state_fd;                 /* -1: no state file, restarts are not counted */
	uint64_t reloaded_samples;
	uint64_t samples_base;        /* samples of this run accepted before this exporter */
	struct exporter_state state;
	struct exporter_checkpoint checkpoint; /* the interval being collected, on disk */
	uint64_t split_failures;      /* window split writes that failed */
	struct otlp_client_stats last_export; /* as last told to the supervisor */
	struct exporter_caps last_caps;       /* likewise */
	bool reported_export;
	int signal_fd;                /* SIGTERM, SIGINT (stop), SIGHUP (write every file now) */
	int stop_fd;                  /* SIGTERM, SIGINT pending: polled by the symbol source's waits */
	uint64_t next_write_ns;       /* monotonic: the next end of an --interval */
	unsigned intervals_spanned;   /* --intervals the one being collected spans (>= 1) */
	/* The last interval end found more than a trickle (read in full then):
	 * the next end is waited for on our own timer (exporter_run.c). */
	bool last_end_busy;
};

/* CLOCK_REALTIME in nanoseconds (the profile's times; durations use mono_ns()). */
uint64_t exporter_unix_ns(void);

/* Reads up to EXPORTER_RECORDS_PER_BATCH records, records the progress in the
 * state file, then hands the ring space back. Returns records read. */
int exporter_read_batch(struct exporter *ex);

/*
 * The files' writes (exporter_write.c). At each --interval's end,
 * exporter_interval_end either goes on with the interval (at rest:
 * output_pace_extend) or calls exporter_roll, which closes it (the window
 * rolls, the archive and OTLP get it) and makes the files due;
 * exporter_pace, at every loop turn, runs the due ones
 * within the control interval's allowance (output_pace.h). exporter_write_all
 * writes every file now (stop: after a last roll; SIGHUP: without one).
 */
void exporter_pace_init(struct exporter *ex);
/* The budget (% of the host) and control interval (s) the writes are paced
 * within, from the supervisor; out-of-range values are ignored. */
void exporter_pace_set(struct exporter *ex, double budget_pct, double control_interval_s);
/* The end due late_ns ago. Returns whether the interval went on (no roll). */
bool exporter_interval_end(struct exporter *ex, uint64_t late_ns);
void exporter_roll(struct exporter *ex);
/* Whether the interval being collected, span_ns long so far, holds a trickle:
 * at most the throttle's "quiet" rate of samples (an idle host's odd daemon),
 * off-CPU ones counted. */
bool exporter_trickle(const struct exporter *ex, uint64_t span_ns);
/* How many of the interval's coming ends, as the samples stand, would only
 * let it go on (no roll, no file due), 0 when the next one rolls: such ends
 * may come late, with a wake the loop has anyway (exporter_run.c). */
unsigned exporter_interval_ends_going_on(const struct exporter *ex);
void exporter_pace(struct exporter *ex);
void exporter_write_all(struct exporter *ex, bool roll);
/* How long the loop may sleep before the next paced write is due: ms, or -1. */
int exporter_pace_timeout_ms(const struct exporter *ex);

/* Tells the supervisor the export counters and the caps' counts (`lowprof
 * status`) when they changed, at most once a second unless now. */
void exporter_report_state(struct exporter *ex, bool now);

/* Reads what the supervisor sent on the notification fd, without blocking.
 * true: the supervisor is gone (its end of the channel closed). */
bool exporter_read_supervisor(struct exporter *ex);

/* "restarts loader=N controller=N exporter=N" (len bytes, an optional final
 * newline): 0 and out[] set, or -1 for anything else. */
int exporter_parse_restarts(const char *msg, size_t len, unsigned out[EXPORTER_RESTARTS_N]);
/* "audit records=N suppressed=N rotations=N reopens=N", likewise. */
int exporter_parse_audit(const char *msg, size_t len, unsigned out[EXPORTER_AUDIT_N]);
/* "pace budget_ppm=N control_ms=N", likewise. */
int exporter_parse_pace(const char *msg, size_t len, unsigned out[EXPORTER_PACE_N]);
/* "restart" (an optional final newline): the stop that follows is a restart
 * with new settings (a reload), not the run's end. */
bool exporter_is_restart_message(const char *msg, size_t len);

/* The run's end on stderr: samples, the top functions, where the files are.
 * Not at a restart (the run goes on), nor when the loader never reported. */
void exporter_print_summary(struct exporter *ex);

/*
 * At start, after the ring is attached (exporter_restore.c): opens the state
 * file; when it names this run, reloads the profile.pb.gz the previous
 * exporter wrote into ex->restored (a refused one is moved aside and counted),
 * its split by interval into ex->restored_split when it matches (else moved
 * aside and counted: the window is then kept whole), the checkpoint of the
 * interval being collected into ex->restored_tail,
 * and offcpu.pb.gz into ex->offcpu_restored with --off-cpu (its split likewise),
 * takes the run's start time back, and counts the samples the previous
 * exporter read but never wrote into ex->state.lost_total. Never fatal.
 */
void exporter_restore(struct exporter *ex);

/* After exporter_restore: the window (the restored profile's intervals, or
 * the restored profile as its oldest interval when it has no split; the
 * checkpoint the newest closed one) and the archive. Fatal when out of memory. */
void exporter_window_start(struct exporter *ex);

#endif
