/*
 * overlay_file: where the real file behind a path on overlayfs may lie.
 *
 * A file mapped through overlayfs is mapped as its real (upper or lower
 * layer) file: the VMA, and so the BPF walker, names the layer file's device
 * and inode, while every path to it a process can open (the overlay path,
 * /proc/PID/exe, /proc/PID/map_files since Linux 6.8) names the overlay's
 * inode. The layers are named in the overlay's mount options, as its mounter
 * gave them (a container runtime: paths of the host). overlay_file_find()
 * reads PID's mountinfo, finds the overlay mount a maps path lies on and
 * returns its layer directories, upper first, and the path below them.
 *
 * These are candidates only, nothing is opened here: the caller opens each
 * layer's file without following symlinks and keeps it only if its device,
 * inode and generation are exactly the kernel's report, so a wrong option,
 * a planted name or a layer changed meanwhile can never yield another file.
 */
#ifndef LOWPROF_LOADER_OVERLAY_FILE_H
#define LOWPROF_LOADER_OVERLAY_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define OVERLAY_FILE_MAX_LAYERS 128

struct overlay_file {
	char *rel;     /* the path below each layer, without a leading '/' */
	char **layers; /* upperdir first (if any), then the lowerdirs in order */
	size_t nlayers;
};

/*
 * The overlay mount of PROC_ROOT/PID/mountinfo that path (as PID's maps show
 * it, " (deleted)" already removed) lies on: the deepest mount whose mount
 * point holds path, if it is an overlay (on one mount point: the one whose
 * device is dev, maps' major:minor, else the last). 0, -ENOENT (not on an
 * overlay, or no absolute layer), -errno.
 */
int overlay_file_find(const char *proc_root, pid_t pid, const char *path, dev_t dev,
		      struct overlay_file *of);
void overlay_file_free(struct overlay_file *of);

/* The parts, for tests. */
/*
 * One mountinfo line: its device, mount root, mount point, file system type
 * and super options, octal escapes (\040) of the first four undone; the
 * super options are left escaped (overlay_file_layers splits them). false:
 * not a mountinfo line. The strings point into line, which is modified.
 */
bool overlay_file_parse_mountinfo(char *line, dev_t *dev, char **root, char **mnt, char **fstype,
				  char **opts);
/*
 * The layer directories in an overlay's super options ("upperdir=/u,
 * lowerdir=/l1:/l2::/d", or "lowerdir+=/l1,lowerdir+=/l2,datadir+=/d"),
 * upper first; relative paths (a mounter's working directory, unknown here)
 * are left out. 0 with *n layers in a malloc'ed array, or -errno.
 */
int overlay_file_layers(const char *opts, char ***layers, size_t *n);

#endif
