/*
 * Pacing the files rewritten every --interval against the CPU budget.
 *
 * The throttle judges lowprof's CPU per control interval (one second by
 * default). Writing every file in one go put the whole cost of a write
 * (merge, pprof, folded, SVG, summary: tens of ms once the window is full)
 * into one control interval, which then read over the budget, and the
 * throttle lowered the sampling rate for a cost that was not sampling's.
 *
 * So each output is a job, and the jobs of an interval are run one control
 * interval (a "slot") at a time: a slot runs jobs while what they cost, as
 * measured at their last run, fits the allowance (a fraction of the budget
 * per control interval); the first job of a slot always runs, so the queue
 * always moves. An output whose cost is more than its share of an
 * interval's allowance (the slots of an interval times the allowance, shared
 * by the outputs) is written only every N intervals, N at most max_every;
 * but profile.pb.gz, which a restarted exporter reloads, every interval.
 * On stop and on SIGHUP every file is written at once, whatever it costs.
 *
 * The decisions are pure (no clock, no I/O): the exporter passes the costs it
 * measured (its thread's CPU time) and the times, so a test drives them.
 */
#ifndef LOWPROF_EXPORTER_OUTPUT_PACE_H
#define LOWPROF_EXPORTER_OUTPUT_PACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* In the order they run within an interval: the merge first (the files are
 * written from it), summary.json last (it says when the others were written). */
enum output_pace_job {
	OUTPUT_PACE_MERGE,   /* the window's merged profile, rebuilt */
	OUTPUT_PACE_PPROF,   /* profile.pb.gz */
	OUTPUT_PACE_FOLDED,  /* profile.folded */
	OUTPUT_PACE_SVG,     /* flamegraph.svg */
	OUTPUT_PACE_OFFCPU,  /* offcpu.* (--off-cpu) */
	OUTPUT_PACE_SUMMARY, /* summary.json */
	OUTPUT_PACE_N
};

/* The default share of the CPU budget the writes may take per control interval. */
#define OUTPUT_PACE_BUDGET_FRACTION 0.25
/* The default bound: every output is written at least every this many intervals. */
#define OUTPUT_PACE_MAX_EVERY 6

struct output_pace_state {
	bool enabled;          /* off: never due (e.g. no --off-cpu) */
	bool pending;          /* due, not yet run */
	unsigned every;        /* written every this many intervals (>= 1) */
	unsigned since;        /* intervals since it was last written */
	unsigned waited;       /* rolls it has been due through without running: the
				* one that waited most runs first (output_pace_next) */
	uint64_t cost_ns;      /* the estimate: the last run's cost, decaying from higher ones */
	uint64_t last_cost_ns; /* the last run's cost, as measured */
	uint64_t max_cost_ns;  /* the most one run cost */
	uint64_t max_stretch_ns; /* the longest stretch between two pause points (or the
				  * start and end) of a run: what a slot may take whole */
	uint64_t last_unix_ns; /* when it was last written, 0 never */
	uint64_t runs;
};

struct output_pace {
	uint64_t allowance_ns;      /* per slot (control interval) */
	unsigned slots_per_interval; /* control intervals in one --interval (>= 1) */
	unsigned max_every;
	struct output_pace_state job[OUTPUT_PACE_N];
	/* The slot in progress: */
	uint64_t slot_spent_ns;
	unsigned slot_jobs;
	/* Over the run: */
	uint64_t max_slot_ns;        /* the most write CPU one slot took (paced slots) */
	unsigned max_slot_jobs;      /* jobs in that slot */
	uint64_t slots_over;         /* paced slots whose writes took more than the allowance */
	uint64_t deferred;           /* jobs that waited for a later slot */
	uint64_t forced;             /* write-everything requests (stop, SIGHUP) */
	uint64_t roll_ns;            /* the last roll's cost (output_pace_charge) */
	uint64_t pieces;             /* pauses of a job that outlasted its slot */
	uint64_t unchanged;          /* due writes left out: the file would have been the same */
	uint64_t extended;           /* interval ends passed without a roll: at rest (output_pace_extend) */
};

/* The CPU time, in ns, the writes may take per control interval: fraction of
 * budget_pct of ncpus over control_interval_s (no bound: UINT64_MAX when the
 * budget is 100% or more). */
uint64_t output_pace_allowance_ns(double budget_pct, unsigned ncpus, double control_interval_s,
				  double fraction);

/* Every job enabled and due at the first interval, no cost known yet (a
 * file is expected to cost twice the merge until measured). slots_per_interval
 * and max_every are raised to 1 when 0. */
void output_pace_init(struct output_pace *p, uint64_t allowance_ns, unsigned slots_per_interval,
		      unsigned max_every);
void output_pace_enable(struct output_pace *p, enum output_pace_job job, bool on);
/* New limits (the budget changed); what was measured stays. */
void output_pace_set_limits(struct output_pace *p, uint64_t allowance_ns,
			    unsigned slots_per_interval);

/* An interval ended: the jobs whose turn it is become pending (a job still
 * pending from before stays so, once). Returns how many are pending. */
size_t output_pace_interval(struct output_pace *p);

/* A new slot (control interval) begins. */
void output_pace_slot(struct output_pace *p);

/* The job is due (output_pace_interval) but would write its file again as
 * it is (nothing it is made of changed since it was last written): it is not
 * pending, and is counted in p->unchanged. It stays due: the next interval
 * at which it is not held writes it. Nothing happens to a job not pending. */
void output_pace_hold(struct output_pace *p, enum output_pace_job job);

/*
 * The interval being collected has come to its end holding a trickle (the
 * caller's judgement: THROTTLE_QUIET_SAMPLES_PER_S over the time it spans)
 * and has spanned `spanned` intervals so far (1 at its first end). At rest,
 * closing it would rewrite profile.pb.gz and summary.json (and merge the
 * window for them) for a handful of samples: it goes on for another
 * interval instead, its samples kept by the checkpoint meanwhile. So an idle
 * host's files are rewritten once every max_every intervals. Not before
 * profile.pb.gz and summary.json were first written (a new run's files
 * appear at its first interval), and never past max_every intervals in all
 * (each job's `since` counts the interval as passed, so a file written
 * every N intervals is written at the roll that ends N or more). Returns
 * whether it goes on; counted in p->extended.
 */
bool output_pace_extend(struct output_pace *p, bool trickle, unsigned spanned);
/* What output_pace_extend would answer, without counting it. */
bool output_pace_may_extend(const struct output_pace *p, bool trickle, unsigned spanned);

/* The next job to run in the current slot, or -1: nothing pending, or the
 * next one's estimate does not fit what is left of the slot's allowance. */
int output_pace_next(const struct output_pace *p);

/* A job that outlasts what is left of the slot's allowance pauses (the
 * exporter yields at its next 64 KiB written) and goes on in the next slot:
 * the piece run so far, cost_ns, is counted against this slot. */
void output_pace_piece(struct output_pace *p, uint64_t cost_ns);
/* A stretch of job's run between two points where it may pause (the start,
 * each 64 KiB written, the end): kept if the longest. */
void output_pace_stretch(struct output_pace *p, enum output_pace_job job, uint64_t ns);

/* The job ran, costing cost_ns in all (slot_cost_ns of it in the current
 * slot, the rest in pieces before), at now_unix_ns: it is no longer pending,
 * its estimate and its period (every N intervals) are updated. forced: part
 * of a write-everything (stop, SIGHUP): not counted against the slot. */
void output_pace_done(struct output_pace *p, enum output_pace_job job, uint64_t cost_ns,
		      uint64_t slot_cost_ns, uint64_t now_unix_ns, bool forced);

/* CPU spent on writing outside a job (the roll: archive file, OTLP interval),
 * counted against the current slot. */
void output_pace_charge(struct output_pace *p, uint64_t cost_ns);

/* Every enabled job pending now (stop, SIGHUP), counted in p->forced. */
void output_pace_force(struct output_pace *p);

bool output_pace_pending(const struct output_pace *p);

/* The file name of a job ("merge" for the merge). */
const char *output_pace_name(enum output_pace_job job);

/* summary.json's "outputs": {"allowance_ms": .., "slots_per_interval": ..,
 * "max_every": .., "max_slot_ms": .., "slots_over": .., "deferred": ..,
 * "forced": .., "pauses": .., "unchanged": .., "extended": .., "roll_ms": .., "merge_ms": .., "files": {NAME: {"written_s": (since start_unix_ns, null when
 * never), "every_intervals": .., "cost_ms": .., "max_cost_ms": .., "writes": ..}}}.
 * Returns the length written, or -1 when buf is too small. */
int output_pace_json(const struct output_pace *p, uint64_t start_unix_ns, char *buf, size_t len);

#endif
