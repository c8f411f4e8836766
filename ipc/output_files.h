/*
 * The files the exporter keeps in the output directory. The supervisor needs
 * the list too: it hands the directory (and these files, left by an earlier
 * run as another user) to the exporter's --user before starting it. (The
 * checkpoint of the interval being collected is not here: a memfd the
 * supervisor holds, exporter/exporter_checkpoint.h.)
 */
#ifndef LOWPROF_IPC_OUTPUT_FILES_H
#define LOWPROF_IPC_OUTPUT_FILES_H

#define OUTPUT_FILE_PPROF "profile.pb.gz"
#define OUTPUT_FILE_FOLDED "profile.folded"
#define OUTPUT_FILE_SVG "flamegraph.svg"
#define OUTPUT_FILE_SUMMARY "summary.json"
/* With --off-cpu: the off-CPU profile (exporter/formats/offcpu_outputs.h). */
#define OUTPUT_FILE_OFFCPU_PPROF "offcpu.pb.gz"
#define OUTPUT_FILE_OFFCPU_FOLDED "offcpu.folded"
#define OUTPUT_FILE_OFFCPU_SVG "offcpu.svg"
/* The exporter's restart record (exporter/exporter_state.h). */
#define OUTPUT_FILE_EXPORTER_STATE ".lowprof-exporter-state"
/* profile.pb.gz's split into its intervals, for a restarted exporter
 * (exporter/formats/window_split_file.h). */
#define OUTPUT_FILE_WINDOW_SPLIT ".lowprof-window-split"
/* offcpu.pb.gz's, likewise. */
#define OUTPUT_FILE_OFFCPU_WINDOW_SPLIT ".lowprof-offcpu-window-split"
/* Each file is written as NAME.tmp, then renamed over NAME. */
#define OUTPUT_FILE_TMP_SUFFIX ".tmp"

/* Every file above, NULL-terminated. */
#define OUTPUT_FILES_ALL                                                                        \
	{OUTPUT_FILE_PPROF, OUTPUT_FILE_FOLDED, OUTPUT_FILE_SVG, OUTPUT_FILE_SUMMARY,            \
	 OUTPUT_FILE_OFFCPU_PPROF, OUTPUT_FILE_OFFCPU_FOLDED, OUTPUT_FILE_OFFCPU_SVG,              \
	 OUTPUT_FILE_EXPORTER_STATE, OUTPUT_FILE_WINDOW_SPLIT, OUTPUT_FILE_OFFCPU_WINDOW_SPLIT, \
	 NULL}

#endif /* LOWPROF_IPC_OUTPUT_FILES_H */
