/* lowprof-unwind-dump: print the unwind rows lowprof builds for an ELF file.
 *
 *   lowprof-unwind-dump [-s] [-p ADDR] [-w OUT] FILE
 *     -s       print only the summary line
 *     -p ADDR  print only the row covering ADDR (ELF virtual address)
 *     -w OUT   also write the table to OUT in the serialised form the
 *              unwinder sends the loader (fuzz seeds, tests)
 *
 * Exit codes: 0 ok, 1 the file was rejected, 2 usage error. */
#include "unwind/unwind_table.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void usage(void)
{
	fprintf(stderr, "usage: lowprof-unwind-dump [-s] [-p ADDR] [-w OUT] FILE\n");
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The table in its serialised (wire) form, to a new file. 0 or -1 (reported). */
static int unwind_dump_write(const struct unwind_table *t, const char *path)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	char err[256];
	FILE *f;
	int rc = -1;

	if (unwind_table_serialize(t, &buf, &len, err, sizeof(err)) != 0) {
		fprintf(stderr, "lowprof-unwind-dump: serialise: %s\n", err);
		return -1;
	}
	f = fopen(path, "wbx");
	if (f == NULL) {
		fprintf(stderr, "lowprof-unwind-dump: %s: %s\n", path, strerror(errno));
		goto out;
	}
	if (fwrite(buf, 1, len, f) == len)
		rc = 0;
	if (fclose(f) != 0 || rc != 0) {
		fprintf(stderr, "lowprof-unwind-dump: %s: write failed\n", path);
		rc = -1;
	}
out:
	free(buf);
	return rc;
}

int main(int argc, char **argv)
{
	struct unwind_table t;
	const struct unwind_row *r;
	bool summary_only = false, have_pc = false;
	const char *write_path = NULL;
	unsigned long long pc = 0;
	char err[256], line[96];
	double t0, t1;
	int opt, fd, rc = 1;

	while ((opt = getopt(argc, argv, "sp:w:h")) != -1) {
		switch (opt) {
		case 's':
			summary_only = true;
			break;
		case 'w':
			write_path = optarg;
			break;
		case 'p': {
			char *end;

			errno = 0;
			pc = strtoull(optarg, &end, 0);
			if (errno || *end) {
				usage();
				return 2;
			}
			have_pc = true;
			break;
		}
		default:
			usage();
			return 2;
		}
	}
	if (optind + 1 != argc) {
		usage();
		return 2;
	}
	fd = open(argv[optind], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "lowprof-unwind-dump: %s: %s\n", argv[optind], strerror(errno));
		return 1;
	}
	t0 = now_ms();
	if (unwind_table_build_fd(fd, &t, err, sizeof(err)) < 0) {
		fprintf(stderr, "lowprof-unwind-dump: %s: %s\n", argv[optind], err);
		close(fd);
		return 1;
	}
	t1 = now_ms();
	close(fd);
	if (write_path != NULL && unwind_dump_write(&t, write_path) != 0)
		goto cleanup;

	if (have_pc) {
		r = unwind_table_lookup(&t, pc);
		if (!r) {
			printf("%#018llx none (below the first row)\n", pc);
		} else {
			unwind_row_format(r, line, sizeof(line));
			printf("%#018llx %s (row at %#llx)\n", pc, line, (unsigned long long)r->pc);
		}
		rc = 0;
		goto cleanup;
	}
	printf("# %s: %zu rows (%zu bytes), %u FDEs (.eh_frame_hdr says %lld), %u from "
	       ".debug_frame, %u used, %u bad CFI; marks: %u plt, %u signal, %u end, "
	       "%u unsupported, %u gaps; built in %.2f ms\n",
	       argv[optind], t.nrows, t.nrows * sizeof(struct unwind_row), t.stats.n_fde,
	       (long long)t.stats.hdr_fde_count, t.stats.n_debug_fde, t.stats.n_fde_used,
	       t.stats.n_fde_bad_cfi, t.stats.n_plt, t.stats.n_signal, t.stats.n_end,
	       t.stats.n_unsupported, t.stats.n_gap, t1 - t0);
	if (!summary_only) {
		for (size_t i = 0; i < t.nrows; i++) {
			unwind_row_format(&t.rows[i], line, sizeof(line));
			printf("%#018llx %s\n", (unsigned long long)t.rows[i].pc, line);
		}
	}
	rc = 0;
cleanup:
	unwind_table_free(&t);
	return rc;
}
