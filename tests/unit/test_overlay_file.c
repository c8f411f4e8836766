/*
 * Files mapped through overlayfs: the kernel reports the layer's file, every
 * path names the overlay's. The option and mountinfo parsers, then a real
 * overlay (root, a private mount namespace): a file mapped from a lower and
 * from the upper layer is opened by the loader's way (file_tables_open) as
 * exactly the layer file; a file swapped under its layer path, another
 * identity or another generation is refused, and so is a symlink planted
 * in the upper layer over the mapped file's name.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "loader/file_registry.h"
#include "loader/file_tables.h"
#include "loader/mapped_file.h"
#include "loader/overlay_file.h"

static void expect_layers(const char *opts, const char *const *want, size_t nwant)
{
	char **layers;
	size_t n, i;

	assert_int_equal(overlay_file_layers(opts, &layers, &n), 0);
	assert_int_equal(n, nwant);
	for (i = 0; i < n; i++) {
		assert_string_equal(layers[i], want[i]);
		free(layers[i]);
	}
	free(layers);
}

static void test_layers(void **state)
{
	static const char *const classic[] = {"/u", "/l1", "/l:2", "/d"};
	static const char *const plus[] = {"/u", "/a", "/b", "/c"};
	static const char *const escaped[] = {"/a b", "/c,d"};
	static const char *const relative[] = {"/abs"};

	(void)state;
	/* Upper first, lowers in order, "::" before data-only layers, "\:" a colon. */
	expect_layers("rw,lowerdir=/l1:/l\\:2::/d,upperdir=/u,workdir=/w,uuid=on", classic, 4);
	expect_layers("rw,lowerdir+=/a,lowerdir+=/b,datadir+=/c,upperdir=/u,workdir=/w", plus, 4);
	/* mountinfo's octal escapes: a space, a comma. */
	expect_layers("rw,upperdir=/a\\040b,lowerdir=/c\\054d,workdir=/w", escaped, 2);
	/* Relative to an unknown working directory: left out. */
	expect_layers("rw,lowerdir=l/ABC:/abs:l/DEF", relative, 1);
	expect_layers("rw,relatime", NULL, 0);
}

static void test_mountinfo(void **state)
{
	char line[] = "48 27 0:41 /sub /tmp/a\\040b rw,relatime shared:5 master:2 - overlay "
		      "overlay rw,lowerdir=/x,upperdir=/y,workdir=/z\n";
	char bad[] = "48 27 0:41 / /tmp rw\n";
	char *root, *mnt, *fstype, *opts;
	dev_t dev;

	(void)state;
	assert_true(overlay_file_parse_mountinfo(line, &dev, &root, &mnt, &fstype, &opts));
	assert_true(dev == makedev(0, 41));
	assert_string_equal(root, "/sub");
	assert_string_equal(mnt, "/tmp/a b");
	assert_string_equal(fstype, "overlay");
	assert_string_equal(opts, "rw,lowerdir=/x,upperdir=/y,workdir=/z");
	assert_false(overlay_file_parse_mountinfo(bad, &dev, &root, &mnt, &fstype, &opts));
}

static char dir[64];

/* overlay_file_find on a made-up PROC_ROOT/PID/mountinfo: which mount a path lies on. */
static void test_find(void **state)
{
	static const char mountinfo[] =
		"20 1 0:41 / / rw - overlay overlay rw,lowerdir=/l1:/l2,upperdir=/u,workdir=/w\n"
		"21 20 254:0 /host/data /data rw - ext4 /dev/vda1 rw\n"
		"22 20 0:42 /x /mnt/o rw - overlay overlay rw,lowerdir=/ol\n"
		"23 20 0:50 / /mnt/s rw - overlay overlay rw,lowerdir=/s50\n"
		"24 20 0:51 / /mnt/s rw - overlay overlay rw,lowerdir=/s51\n";
	char root[64], p[128];
	struct overlay_file of;
	FILE *f;

	(void)state;
	snprintf(root, sizeof(root), "/tmp/lowprof-ovl-proc-XXXXXX");
	assert_non_null(mkdtemp(root));
	snprintf(p, sizeof(p), "%s/7", root);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/7/mountinfo", root);
	f = fopen(p, "we");
	assert_non_null(f);
	fputs(mountinfo, f);
	fclose(f);

	/* The container's root: upper first, then the lowers. */
	assert_int_equal(overlay_file_find(root, 7, "/usr/lib/libc.so.6", makedev(0, 41), &of), 0);
	assert_string_equal(of.rel, "usr/lib/libc.so.6");
	assert_int_equal(of.nlayers, 3);
	assert_string_equal(of.layers[0], "/u");
	assert_string_equal(of.layers[2], "/l2");
	overlay_file_free(&of);
	/* A bind mount inside it is not the overlay's, nor is a mere prefix. */
	assert_int_equal(overlay_file_find(root, 7, "/data/x.so", makedev(254, 0), &of), -ENOENT);
	assert_int_equal(overlay_file_find(root, 7, "/database/x", makedev(0, 41), &of), 0);
	assert_string_equal(of.rel, "database/x");
	overlay_file_free(&of);
	/* A mount of a subdirectory of the overlay: its root comes first. */
	assert_int_equal(overlay_file_find(root, 7, "/mnt/o/a/b", makedev(0, 42), &of), 0);
	assert_string_equal(of.rel, "x/a/b");
	assert_string_equal(of.layers[0], "/ol");
	overlay_file_free(&of);
	/* Two on one mount point: maps' device decides, else the later one. */
	assert_int_equal(overlay_file_find(root, 7, "/mnt/s/f", makedev(0, 50), &of), 0);
	assert_string_equal(of.layers[0], "/s50");
	overlay_file_free(&of);
	assert_int_equal(overlay_file_find(root, 7, "/mnt/s/f", makedev(9, 9), &of), 0);
	assert_string_equal(of.layers[0], "/s51");
	overlay_file_free(&of);
	/* The mount point itself names no file; a relative path is no maps path. */
	assert_int_equal(overlay_file_find(root, 7, "/mnt/s", makedev(0, 50), &of), -ENOENT);
	assert_int_equal(overlay_file_find(root, 7, "usr/x", makedev(0, 41), &of), -ENOENT);

	unlink(p);
	snprintf(p, sizeof(p), "%s/7", root);
	rmdir(p);
	rmdir(root);
}

static void write_file(const char *path, char fill, size_t size)
{
	char buf[4096];
	size_t done;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	memset(buf, fill, sizeof(buf));
	for (done = 0; done < size; done += sizeof(buf))
		assert_int_equal(write(fd, buf, sizeof(buf)), (ssize_t)sizeof(buf));
	close(fd);
}

/* The identity the BPF walker reports for the layer file at path. */
static struct lowprof_file_id layer_id(const char *path)
{
	struct lowprof_file_id id;
	struct stat st;
	long gen = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	id.ino = st.st_ino;
	id.dev = file_registry_kdev(st.st_dev);
	id.gen = ioctl(fd, FS_IOC_GETVERSION, &gen) == 0 ? (uint32_t)gen : 0;
	close(fd);
	return id;
}

/* Map path (in the overlay) into this process: the VMA's range. */
static void *map_merged(const char *path, uint64_t *start, uint64_t *end)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	void *p;

	assert_true(fd >= 0);
	p = mmap(NULL, 8192, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	assert_true(p != MAP_FAILED);
	*start = (uint64_t)(uintptr_t)p;
	*end = *start + 8192;
	return p;
}

/* file_tables_open of the mapping at [start, end): the fd's identity must be id's. */
static int open_as_loader(const struct lowprof_file_id *id, uint64_t start, uint64_t end,
			  char *path, size_t pathlen)
{
	struct stat st;
	int fd = file_tables_open("/proc", getpid(), id, start, end, path, pathlen);

	if (fd >= 0) {
		assert_int_equal(fstat(fd, &st), 0);
		assert_true(st.st_ino == id->ino);
		assert_true(file_registry_kdev(st.st_dev) == id->dev);
		close(fd);
		return 0;
	}
	return fd;
}

static void test_real_overlay(void **state)
{
	char lower[96], upper[96], work[96], merged[160], opts[400], p[200], path[4096];
	struct lowprof_file_id low, up, bad;
	uint64_t s1, e1, s2, e2;
	void *m1, *m2;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/lowprof-ovl-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(lower, sizeof(lower), "%s/lower", dir);
	snprintf(upper, sizeof(upper), "%s/upper", dir);
	snprintf(work, sizeof(work), "%s/work", dir);
	snprintf(merged, sizeof(merged), "%s/merged", dir);
	assert_int_equal(mkdir(lower, 0755) | mkdir(upper, 0755) | mkdir(work, 0755) |
				 mkdir(merged, 0755),
			 0);
	snprintf(p, sizeof(p), "%s/sub", lower);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/sub/low.bin", lower);
	write_file(p, 'l', 8192);
	/* A private mount namespace: the overlay is this test's alone. */
	if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
		fprintf(stderr, "no mount namespace (%s): real overlay part skipped\n",
			strerror(errno));
		skip();
	}
	snprintf(opts, sizeof(opts), "lowerdir=%s,upperdir=%s,workdir=%s", lower, upper, work);
	if (mount("overlay", merged, "overlay", 0, opts) != 0) {
		fprintf(stderr, "no overlayfs (%s): real overlay part skipped\n", strerror(errno));
		skip();
	}
	/* Written through the overlay: the file lies in the upper layer. */
	snprintf(p, sizeof(p), "%s/up.bin", merged);
	write_file(p, 'u', 8192);

	snprintf(p, sizeof(p), "%s/sub/low.bin", lower);
	low = layer_id(p);
	snprintf(p, sizeof(p), "%s/up.bin", upper);
	up = layer_id(p);
	snprintf(p, sizeof(p), "%s/sub/low.bin", merged);
	m1 = map_merged(p, &s1, &e1);
	snprintf(p, sizeof(p), "%s/up.bin", merged);
	m2 = map_merged(p, &s2, &e2);

	/* The layer files themselves, named by the overlay paths. */
	assert_int_equal(open_as_loader(&low, s1, e1, path, sizeof(path)), 0);
	snprintf(p, sizeof(p), "%s/sub/low.bin", merged);
	assert_string_equal(path, p);
	assert_int_equal(open_as_loader(&up, s2, e2, path, sizeof(path)), 0);
	/* Another file's identity at a range, another inode, another generation: refused. */
	assert_true(open_as_loader(&up, s1, e1, path, sizeof(path)) < 0);
	bad = low;
	bad.ino++;
	assert_true(open_as_loader(&bad, s1, e1, path, sizeof(path)) < 0);
	bad = low;
	bad.dev ^= 1;
	assert_true(open_as_loader(&bad, s1, e1, path, sizeof(path)) < 0);
	if (low.gen != 0) {
		bad = low;
		bad.gen++;
		assert_true(open_as_loader(&bad, s1, e1, path, sizeof(path)) < 0);
	}
	/* A name planted in the upper layer over the mapped file, a symlink to
	 * another file whose identity is then asked for at the mapping: the
	 * loader follows no symlink in a layer, so it is refused. */
	snprintf(p, sizeof(p), "%s/sub", upper);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/sub/low.bin", upper);
	/* Relative: it stays below the layer directory. */
	assert_int_equal(symlink("../up.bin", p), 0);
	assert_true(open_as_loader(&up, s1, e1, path, sizeof(path)) < 0);
	assert_int_equal(open_as_loader(&low, s1, e1, path, sizeof(path)), 0);
	assert_int_equal(unlink(p), 0);
	/* The mapped lower file swapped in its layer (a new inode at its path):
	 * the mapping still names the old one, which no path reaches now. */
	snprintf(p, sizeof(p), "%s/sub/low.bin", lower);
	assert_int_equal(unlink(p), 0);
	write_file(p, 'x', 8192);
	assert_true(open_as_loader(&low, s1, e1, path, sizeof(path)) < 0);
	munmap(m1, 8192);
	munmap(m2, 8192);
	umount2(merged, MNT_DETACH);
}

static int cleanup(void **state)
{
	char cmd[128];

	(void)state;
	if (dir[0] != '\0') {
		/* A failed check leaves the overlay mounted (in this process's namespace). */
		snprintf(cmd, sizeof(cmd), "%s/merged", dir);
		umount2(cmd, MNT_DETACH);
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", dir);
	}
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layers),
		cmocka_unit_test(test_mountinfo),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_real_overlay),
	};

	return cmocka_run_group_tests(tests, NULL, cleanup);
}
