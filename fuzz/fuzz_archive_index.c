/* The archive's index (archive.index in the output directory), read back by a
 * restarted exporter: the previous exporter's file, or anything a user put
 * there, and a name in it is unlinked by retention.
 *
 * Invariants: archive_index_parse accepts or refuses with "line N: ..."; what
 * it accepts is in time order, bounded, and its canonical text is the input
 * itself (format(parse(x)) == x). Through archive_open on a real directory:
 * a refused index is left exactly as it was, even after a prune (nothing of
 * it lost); an accepted one pruned is still an index that parses. */
#define _GNU_SOURCE
#include "exporter/formats/archive.h"

#include "fuzz/fuzz_check.h"
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int fuzz_dirfd = -1;

static int fuzz_dir(void)
{
	char tmpl[] = "/tmp/fuzz_archive_index.XXXXXX";

	if (fuzz_dirfd >= 0)
		return fuzz_dirfd;
	if (mkdtemp(tmpl) == NULL)
		return -1;
	fuzz_dirfd = open(tmpl, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fuzz_dirfd;
}

static char *fuzz_read_index(int dirfd, size_t *len)
{
	struct stat st;
	char *buf;
	int fd = openat(dirfd, ARCHIVE_INDEX_FILE, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0 || (buf = malloc((size_t)st.st_size + 1)) == NULL) {
		close(fd);
		return NULL;
	}
	*len = (size_t)pread(fd, buf, (size_t)st.st_size, 0);
	close(fd);
	return buf;
}

static void fuzz_through_dir(const uint8_t *data, size_t size)
{
	struct archive_entry *e;
	struct archive *a = NULL;
	char err[256], *back;
	size_t len = 0, n;
	int dirfd = fuzz_dir(), fd, rc;

	if (dirfd < 0)
		return;
	fd = openat(dirfd, ARCHIVE_INDEX_FILE, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return;
	}
	close(fd);
	/* A small size bound: an accepted index is pruned for real. */
	rc = archive_open(dirfd, UINT64_MAX, 4096, &a, err, sizeof(err));
	if (a == NULL)
		return; /* out of memory */
	archive_prune(a, UINT64_MAX / 2);
	back = fuzz_read_index(dirfd, &len);
	if (rc != 0) {
		/* Refused: untouched. */
		FUZZ_CHECK(back != NULL && len == size && memcmp(back, data, size) == 0);
	} else if (back != NULL) {
		FUZZ_CHECK(archive_index_parse(back, len, &e, &n, err, sizeof(err)) == 0);
		free(e);
	}
	free(back);
	archive_free(a);
	unlinkat(dirfd, ARCHIVE_INDEX_FILE, 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct archive_entry *e = NULL;
	char err[256], *text = NULL;
	size_t n = 0, tlen = 0, i;
	FILE *f;
	int rc;

	err[0] = '\0';
	rc = archive_index_parse((const char *)data, size, &e, &n, err, sizeof(err));
	FUZZ_CHECK(rc == 0 || rc == -EINVAL);
	if (rc != 0) {
		FUZZ_CHECK(e == NULL && n == 0);
		FUZZ_CHECK(strncmp(err, "line ", 5) == 0);
	} else {
		FUZZ_CHECK(n <= ARCHIVE_MAX_FILES);
		for (i = 0; i < n; i++) {
			FUZZ_CHECK(strnlen(e[i].name, ARCHIVE_NAME_MAX) < ARCHIVE_NAME_MAX);
			FUZZ_CHECK(i == 0 || e[i].end_ns > e[i - 1].end_ns);
		}
		f = open_memstream(&text, &tlen);
		if (f != NULL) {
			FUZZ_CHECK(archive_index_format(e, n, f) == 0);
			fclose(f);
			FUZZ_CHECK(tlen == size && memcmp(text, data, size) == 0);
			free(text);
		}
		free(e);
	}
	fuzz_through_dir(data, size);
	return 0;
}
