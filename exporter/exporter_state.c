#include "exporter/exporter_state.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/errbuf.h"
#include "common/hash.h"

#define STATE_MAGIC "LPEXST03"
#define STATE_NFIELDS 11
/* magic, run id, the u64 fields, checksum: little-endian, no padding. */
#define STATE_RECORD_SIZE (8 + 32 + 8 * STATE_NFIELDS + 8)

/* FNV-1a: catches a stray or partial write. */
static uint64_t state_checksum(const unsigned char *buf, size_t len)
{
	return hash_fnv1a64(buf, len);
}

static void state_fields(const struct exporter_state *st, uint64_t f[STATE_NFIELDS])
{
	f[0] = st->start_unix_ns;
	f[1] = st->pos_before;
	f[2] = st->pos_after;
	f[3] = st->accepted_before;
	f[4] = st->accepted_after;
	f[5] = st->lost_total;
	f[6] = st->flushes;
	f[7] = st->written_samples;
	f[8] = st->window_start_ns;
	f[9] = st->set_aside;
	f[10] = st->offcpu_window_start_ns;
}

int exporter_state_open(int dirfd)
{
	int fd = openat(dirfd, EXPORTER_STATE_FILE, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);

	return fd < 0 ? -errno : fd;
}

int exporter_state_store(int fd, const struct exporter_state *st)
{
	unsigned char rec[STATE_RECORD_SIZE];
	uint64_t f[STATE_NFIELDS], v;
	size_t off = 0, i;
	ssize_t n;

	memset(rec, 0, sizeof(rec));
	memcpy(rec, STATE_MAGIC, 8);
	off = 8;
	memcpy(rec + off, st->run_id, strnlen(st->run_id, 32));
	off += 32;
	state_fields(st, f);
	for (i = 0; i < STATE_NFIELDS; i++, off += 8) {
		v = htole64(f[i]);
		memcpy(rec + off, &v, 8);
	}
	v = htole64(state_checksum(rec, off));
	memcpy(rec + off, &v, 8);
	n = pwrite(fd, rec, sizeof(rec), 0);
	if (n < 0)
		return -errno;
	return n == (ssize_t)sizeof(rec) ? 0 : -EIO;
}

int exporter_state_load(int fd, struct exporter_state *out)
{
	unsigned char rec[STATE_RECORD_SIZE + 1];
	uint64_t f[STATE_NFIELDS], v;
	size_t off, i;
	ssize_t n;

	n = pread(fd, rec, sizeof(rec), 0);
	if (n == 0)
		return -ENOENT;
	/* Exactly one record: anything longer or shorter is not ours. */
	if (n != STATE_RECORD_SIZE || memcmp(rec, STATE_MAGIC, 8) != 0)
		return -EINVAL;
	off = STATE_RECORD_SIZE - 8;
	memcpy(&v, rec + off, 8);
	if (le64toh(v) != state_checksum(rec, off))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	memcpy(out->run_id, rec + 8, 32);
	if (strspn(out->run_id, "0123456789abcdef") != strlen(out->run_id))
		return -EINVAL;
	for (i = 0, off = 40; i < STATE_NFIELDS; i++, off += 8) {
		memcpy(&v, rec + off, 8);
		f[i] = le64toh(v);
	}
	out->start_unix_ns = f[0];
	out->pos_before = f[1];
	out->pos_after = f[2];
	out->accepted_before = f[3];
	out->accepted_after = f[4];
	out->lost_total = f[5];
	out->flushes = f[6];
	out->written_samples = f[7];
	out->window_start_ns = f[8];
	out->set_aside = f[9];
	out->offcpu_window_start_ns = f[10];
	if (out->pos_before > out->pos_after || out->accepted_before > out->accepted_after)
		return -EINVAL;
	return 0;
}

int exporter_state_set_aside(int dirfd, const char *name, char *err, size_t errlen)
{
	char from[256], to[256];
	int i;

	for (i = EXPORTER_STATE_ASIDE_MAX - 1; i >= 1; i--) {
		snprintf(from, sizeof(from), "%s.aside.%d", name, i);
		snprintf(to, sizeof(to), "%s.aside.%d", name, i + 1);
		if (renameat(dirfd, from, dirfd, to) != 0 && errno != ENOENT)
			return errbuf_fail(-errno, err, errlen, "renaming %s: %s", from, strerror(errno));
	}
	snprintf(to, sizeof(to), "%s.aside.1", name);
	if (renameat(dirfd, name, dirfd, to) != 0)
		return errbuf_fail(-errno, err, errlen, "renaming %s to %s: %s", name, to,
				   strerror(errno));
	return 0;
}
