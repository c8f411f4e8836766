/*
 * The files the exporter keeps in the output directory. The supervisor needs
 * the list too: it hands the directory (and these files, left by an earlier
 * run as another user) to the exporter's --user before starting it. (The
 * checkpoint of the interval being collected and the window splits are not
 * here: memfds the supervisor holds, exporter/exporter_checkpoint.h and
 * exporter/formats/window_split_file.h.)
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
/* Where earlier versions kept profile.pb.gz's and offcpu.pb.gz's splits
 * into their intervals, now in memfds the supervisor holds
 * (exporter/formats/window_split_file.h): listed so that the exporter may
 * remove one left by an earlier run as another user. */
#define OUTPUT_FILE_WINDOW_SPLIT ".lowprof-window-split"
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
