/* Parsing the kernel's CPU list format ("0-3,5,7-8") of /sys/devices/system/cpu/online. */
#ifndef LOWPROF_LOADER_CPU_LIST_H
#define LOWPROF_LOADER_CPU_LIST_H

#include <stdbool.h>
#include <stddef.h>

#define CPU_LIST_MAX 4096

/* Sets online[i] for each CPU listed; returns the count, or -1 on malformed text. */
int cpu_list_parse(const char *text, bool online[CPU_LIST_MAX]);
/* Reads /sys/devices/system/cpu/online (path overridable for tests). */
int cpu_list_read_online(const char *path, bool online[CPU_LIST_MAX]);

#endif
