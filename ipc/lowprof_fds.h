/*
 * The file descriptors the supervisor hands each component, at fixed numbers
 * (dup2'd just before exec), and the exit codes every lowprof program uses.
 */
#ifndef LOWPROF_IPC_FDS_H
#define LOWPROF_IPC_FDS_H

enum lowprof_inherited_fd {
	LOWPROF_FD_NOTIFY = 3,  /* "ready" once ready (s6 style), then pings: ipc/notify.h */
	LOWPROF_FD_SHM = 4,     /* memfd of the shared-memory sample ring */
	LOWPROF_FD_EVENT = 5,   /* eventfd: "the ring has new data" hint */
	LOWPROF_FD_CONTROL = 6, /* SOCK_SEQPACKET: loader <-> controller (ipc/wire.h) */
	LOWPROF_FD_OUTDIR = 7,  /* exporter: O_DIRECTORY fd of the output directory */
	LOWPROF_FD_UNWIND = 8,  /* SOCK_SEQPACKET: loader <-> lowprof-unwinder (ELF parsing) */
	LOWPROF_FD_AUDIT = 9,   /* loader: the audit log, opened O_APPEND by the supervisor */
	LOWPROF_FD_SYMBOLS = 10, /* SOCK_SEQPACKET: exporter <-> loader symbol source (ipc/sym_wire.h) */
	/* exporter: the TLS files, opened by the supervisor, named /dev/fd/N in its options */
	LOWPROF_FD_TLS_CA = 11,
	LOWPROF_FD_TLS_CERT = 12,
	LOWPROF_FD_TLS_KEY = 13,
	/* exporter: --otlp-headers-file, opened and checked by the supervisor, so that
	 * header values (secrets) never appear in a command line */
	LOWPROF_FD_OTLP_HEADERS = 14,
	/* exporter: memfd of the checkpoint of the interval being collected, held by
	 * the supervisor so that it outlives each exporter and ends with the run
	 * (exporter/formats/held_file.h) */
	LOWPROF_FD_CHECKPOINT = 15,
	/* exporter: memfds of the window splits of profile.pb.gz and offcpu.pb.gz
	 * (exporter/formats/window_split_file.h), held likewise */
	LOWPROF_FD_WINDOW_SPLIT = 16,
	LOWPROF_FD_OFFCPU_WINDOW_SPLIT = 17,
};

enum lowprof_exit_code {
	LOWPROF_EXIT_OK = 0,
	LOWPROF_EXIT_FAILURE = 1,   /* runtime failure: the supervisor may restart */
	LOWPROF_EXIT_USAGE = 2,     /* bad command line */
	LOWPROF_EXIT_CONFIG = 100,  /* permanent: configuration error, do not restart */
};

#endif /* LOWPROF_IPC_FDS_H */
