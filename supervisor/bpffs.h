/*
 * The bpffs directory where the loader pins this run's BPF objects, so a
 * restarted loader adopts them (loader/bpf_pins.h). lowprof mounts bpffs on
 * /sys/fs/bpf when nothing is mounted there.
 */
#ifndef LOWPROF_SUPERVISOR_BPFFS_H
#define LOWPROF_SUPERVISOR_BPFFS_H

#include <stddef.h>

#define BPFFS_ROOT "/sys/fs/bpf"
#define BPFFS_LOWPROF_DIR BPFFS_ROOT "/lowprof"

/*
 * Make sure bpffs is mounted on /sys/fs/bpf (mounting it if needed and
 * allowed) and name this run's pin directory in out. 0, or -errno with a
 * message (the caller then runs without pins: restarts lose pending samples).
 */
int bpffs_prepare(char *out, size_t outlen, char *err, size_t errlen);

#endif
