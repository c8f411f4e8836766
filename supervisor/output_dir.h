/*
 * Handing the output directory to the exporter, which runs as --user with no
 * capabilities and so needs write access of its own (docs/SECURITY.md).
 */
#ifndef LOWPROF_SUPERVISOR_OUTPUT_DIR_H
#define LOWPROF_SUPERVISOR_OUTPUT_DIR_H

#include <stddef.h>

#include "supervisor/privdrop.h"

/*
 * Make dirfd (the output directory, named path in messages) writable by user
 * u. A directory u can already write is left as it is. Otherwise its group
 * becomes u's group, with group rwx and the sticky bit (mode 1775 for a 0755
 * directory): the exporter can create and replace its own files, but not
 * remove or rename files it does not own, such as the root-owned audit.log.
 * The exporter's own files (ipc/output_files.h) left by an earlier run as
 * another user are given to u (regular files with one link only, never
 * followed). 0, or -1 with err.
 */
int output_dir_hand_over(int dirfd, const char *path, const struct privdrop_user *u, char *err,
			 size_t errlen);

#endif
