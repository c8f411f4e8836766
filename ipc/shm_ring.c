/*
 * Shared-memory sample ring (see shm_ring.h and docs/shm-ring.md).
 *
 * Trust: the producer is the privileged loader and the consumer the sandboxed
 * exporter, but both hold the same read-write memfd, so each side treats every
 * byte the other can write as hostile.  The only shared values either side
 * acts on are the other side's position, and each is bounds-checked against a
 * private copy of our own position before use.  The header is read once, with
 * pread, before anything is mapped, and only the private copy is used after.
 */
#define _GNU_SOURCE
#include "ipc/shm_ring.h"

#include "common/errbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

_Static_assert(sizeof(struct shm_ring_record_hdr) == SHM_RING_ALIGN,
	       "a record header is one alignment unit, so it never wraps");
_Static_assert(__atomic_always_lock_free(sizeof(uint64_t), 0),
	       "positions must be lock-free: they are shared between processes");

#define SHM_RING_HEADER_PAGES 3u

/* The seals a ring must carry: without them the other side could shrink the
 * file under our mapping (SIGBUS on access) or grow it past what we checked. */
#define SHM_RING_REQUIRED_SEALS (F_SEAL_SHRINK | F_SEAL_GROW)

static int shm_ring_size_ok(uint64_t data_size)
{
	if (data_size < SHM_RING_MIN_DATA_SIZE || data_size > SHM_RING_MAX_DATA_SIZE)
		return 0;
	return (data_size & (data_size - 1)) == 0;
}

static uint32_t shm_ring_page_size(void)
{
	return (uint32_t)sysconf(_SC_PAGESIZE);
}

int shm_ring_create(size_t data_size, int *memfd_out, char *err, size_t errlen)
{
	struct shm_ring_header hdr;
	uint32_t page = shm_ring_page_size();
	uint64_t total;
	ssize_t n;
	int fd = -1;
	int ret;

	*memfd_out = -1;
	if (!shm_ring_size_ok(data_size)) {
		errbuf_set(err, errlen,
				"shm ring: data size %zu is not a power of two between %llu and %llu",
				data_size, SHM_RING_MIN_DATA_SIZE, SHM_RING_MAX_DATA_SIZE);
		ret = -EINVAL;
		goto out;
	}
	total = (uint64_t)SHM_RING_HEADER_PAGES * page + data_size;
	fd = memfd_create("lowprof-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0) {
		ret = -errno;
		errbuf_set(err, errlen, "shm ring: memfd_create: %s", strerror(errno));
		goto out;
	}
	/* ftruncate zero-fills, so both positions start at 0. */
	if (ftruncate(fd, (off_t)total) < 0) {
		ret = -errno;
		errbuf_set(err, errlen, "shm ring: ftruncate to %llu bytes: %s",
				(unsigned long long)total, strerror(errno));
		goto out;
	}
	memset(&hdr, 0, sizeof(hdr));
	hdr.magic = SHM_RING_MAGIC;
	hdr.version = SHM_RING_VERSION;
	hdr.page_size = page;
	hdr.data_size = data_size;
	n = pwrite(fd, &hdr, sizeof(hdr), 0);
	if (n != (ssize_t)sizeof(hdr)) {
		ret = n < 0 ? -errno : -EIO;
		errbuf_set(err, errlen, "shm ring: writing the header: %s",
				n < 0 ? strerror(errno) : "short write");
		goto out;
	}
	/* F_SEAL_SEAL too, so nobody holding the fd can add F_SEAL_WRITE later. */
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		ret = -errno;
		errbuf_set(err, errlen, "shm ring: sealing the memfd: %s", strerror(errno));
		goto out;
	}
	*memfd_out = fd;
	fd = -1;
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	return ret;
}

/*
 * Everything either side checks before mapping: seals first (so the size
 * cannot change after fstat), then the size, then the header.  On success
 * *hdr is the private copy used from then on.
 */
static int shm_ring_check_fd(int memfd, struct shm_ring_header *hdr, size_t *map_size,
			     char *err, size_t errlen)
{
	uint32_t page = shm_ring_page_size();
	struct stat st;
	uint64_t want;
	ssize_t n;
	int seals;
	int e;

	seals = fcntl(memfd, F_GET_SEALS);
	if (seals < 0) {
		e = errno;
		errbuf_set(err, errlen, "shm ring: F_GET_SEALS on fd %d: %s (not a sealable memfd?)",
				memfd, strerror(e));
		return -e;
	}
	if ((seals & SHM_RING_REQUIRED_SEALS) != SHM_RING_REQUIRED_SEALS) {
		errbuf_set(err, errlen,
				"shm ring: memfd is not sealed against shrink and grow (seals 0x%x)",
				(unsigned int)seals);
		return -EPERM;
	}
	if (seals & (F_SEAL_WRITE | F_SEAL_FUTURE_WRITE)) {
		errbuf_set(err, errlen, "shm ring: memfd is sealed against writes (seals 0x%x)",
				(unsigned int)seals);
		return -EPERM;
	}
	if (fstat(memfd, &st) < 0) {
		e = errno;
		errbuf_set(err, errlen, "shm ring: fstat: %s", strerror(e));
		return -e;
	}
	if (!S_ISREG(st.st_mode) || st.st_size < (off_t)(SHM_RING_HEADER_PAGES * page)) {
		errbuf_set(err, errlen, "shm ring: memfd of %lld bytes is too small for the header",
				(long long)st.st_size);
		return -EINVAL;
	}
	n = pread(memfd, hdr, sizeof(*hdr), 0);
	if (n != (ssize_t)sizeof(*hdr)) {
		e = n < 0 ? errno : EIO;
		errbuf_set(err, errlen, "shm ring: reading the header: %s",
				n < 0 ? strerror(e) : "short read");
		return -e;
	}
	if (hdr->magic != SHM_RING_MAGIC) {
		errbuf_set(err, errlen, "shm ring: bad magic 0x%016llx",
				(unsigned long long)hdr->magic);
		return -EINVAL;
	}
	if (hdr->version != SHM_RING_VERSION) {
		errbuf_set(err, errlen, "shm ring: version %u, expected %u",
				hdr->version, SHM_RING_VERSION);
		return -EINVAL;
	}
	if (hdr->page_size != page) {
		errbuf_set(err, errlen, "shm ring: laid out for %u-byte pages, this host has %u",
				hdr->page_size, page);
		return -EINVAL;
	}
	if (!shm_ring_size_ok(hdr->data_size)) {
		errbuf_set(err, errlen, "shm ring: header data size %llu is invalid",
				(unsigned long long)hdr->data_size);
		return -EINVAL;
	}
	want = (uint64_t)SHM_RING_HEADER_PAGES * page + hdr->data_size;
	if ((uint64_t)st.st_size != want) {
		errbuf_set(err, errlen,
				"shm ring: memfd is %lld bytes, header says %llu (3 pages + %llu)",
				(long long)st.st_size, (unsigned long long)want,
				(unsigned long long)hdr->data_size);
		return -EINVAL;
	}
	*map_size = (size_t)want;
	return 0;
}

/*
 * Map the whole ring with `prot`, then give the one page that differs
 * `page_prot`: each side can write only what it owns, so a stray write from a
 * bug faults instead of corrupting the other side's page.
 */
static int shm_ring_map(int memfd, size_t map_size, int prot, void **map_out, char *err,
			size_t errlen)
{
	void *map;
	int e;

	/* MAP_POPULATE: the ring's pages are allocated and mapped here, once, at
	 * the component's start, rather than faulted in one by one during the
	 * ring's first lap (hours at rest, where each fault would be a wake's
	 * cost). The ring is whole from the start: its memory does not grow. */
	map = mmap(NULL, map_size, prot, MAP_SHARED | MAP_POPULATE, memfd, 0);
	if (map == MAP_FAILED) {
		e = errno;
		errbuf_set(err, errlen, "shm ring: mmap of %zu bytes: %s", map_size,
				strerror(e));
		return -e;
	}
	*map_out = map;
	return 0;
}

static int shm_ring_protect(void *map, unsigned int page_index, int prot,
			    char *err, size_t errlen)
{
	uint32_t page = shm_ring_page_size();
	int e;

	if (mprotect((uint8_t *)map + (size_t)page_index * page, page, prot) < 0) {
		e = errno;
		errbuf_set(err, errlen, "shm ring: mprotect of page %u: %s", page_index,
				strerror(e));
		return -e;
	}
	return 0;
}

/* Copy n bytes (n <= data_size) to position pos of the data area, wrapping at its end. */
static void shm_ring_copy_in(uint8_t *data, uint64_t data_size, uint64_t pos, const void *src,
			     size_t n)
{
	uint64_t off = pos & (data_size - 1);
	size_t first = n;

	if (n == 0)
		return;
	if (first > data_size - off)
		first = (size_t)(data_size - off);
	memcpy(data + off, src, first);
	if (n > first)
		memcpy(data, (const uint8_t *)src + first, n - first);
}

static void shm_ring_copy_out(const uint8_t *data, uint64_t data_size, uint64_t pos, void *dst,
			      size_t n)
{
	uint64_t off = pos & (data_size - 1);
	size_t first = n;

	if (n == 0)
		return;
	if (first > data_size - off)
		first = (size_t)(data_size - off);
	memcpy(dst, data + off, first);
	if (n > first)
		memcpy((uint8_t *)dst + first, data, n - first);
}

/* Both sides' first step: the header and seals checked, then the whole file mapped. */
static int shm_ring_check_and_map(int memfd, int prot, struct shm_ring_header *hdr, void **map,
				  size_t *map_size, char *err, size_t errlen)
{
	int ret = shm_ring_check_fd(memfd, hdr, map_size, err, errlen);

	if (ret < 0)
		return ret;
	return shm_ring_map(memfd, *map_size, prot, map, err, errlen);
}

/* A position stored in the ring by an earlier run of one side: loaded once,
 * refused if misaligned (its relation to the other side's position is
 * checked where that position is used). */
static int shm_ring_stored_pos(const void *map, unsigned page_index, const char *side,
			       uint64_t *pos, char *err, size_t errlen)
{
	*pos = __atomic_load_n((const uint64_t *)((const uint8_t *)map +
						  page_index * shm_ring_page_size()),
			       __ATOMIC_RELAXED);
	if (*pos % SHM_RING_ALIGN != 0)
		return errbuf_fail(-EPROTO, err, errlen,
				   "shm ring: stored %s position %llu is misaligned", side,
				   (unsigned long long)*pos);
	return 0;
}

int shm_ring_producer_attach(struct shm_ring_producer *p, int memfd, char *err, size_t errlen)
{
	struct shm_ring_header hdr;
	uint32_t page = shm_ring_page_size();
	size_t map_size = 0;
	void *map = NULL;
	uint64_t pos;
	int ret;

	memset(p, 0, sizeof(*p));
	ret = shm_ring_check_and_map(memfd, PROT_READ | PROT_WRITE, &hdr, &map, &map_size, err,
				     errlen);
	if (ret < 0)
		goto out;
	ret = shm_ring_protect(map, SHM_RING_PAGE_HEADER, PROT_READ, err, errlen);
	if (ret < 0)
		goto out;
	ret = shm_ring_protect(map, SHM_RING_PAGE_CONSUMER, PROT_READ, err, errlen);
	if (ret < 0)
		goto out;
	/*
	 * Resume where a previous loader stopped: records it published stay
	 * readable, anything it wrote but never published is overwritten.  The
	 * consumer can write this page too, so check what we can here; its
	 * relation to the consumer position is checked on every write.
	 */
	ret = shm_ring_stored_pos(map, SHM_RING_PAGE_PRODUCER, "producer", &pos, err, errlen);
	if (ret < 0)
		goto out;
	p->map = map;
	p->map_size = map_size;
	p->data = (uint8_t *)map + SHM_RING_PAGE_DATA * page;
	p->data_size = hdr.data_size;
	p->prod_pos = (uint64_t *)((uint8_t *)map + SHM_RING_PAGE_PRODUCER * page);
	p->cons_pos = (const uint64_t *)((uint8_t *)map + SHM_RING_PAGE_CONSUMER * page);
	p->pos = pos;
	p->published = pos;
	map = NULL;
	ret = 0;
out:
	if (map != NULL)
		munmap(map, map_size);
	return ret;
}

/*
 * A consumer position is possible only if it is aligned, not ahead of what we
 * published, and no more than data_size behind what we wrote.  Anything else
 * means the consumer page was corrupted; computing free space from it could
 * make us overwrite unread data.
 */
static int shm_ring_producer_cons_ok(const struct shm_ring_producer *p, uint64_t cons)
{
	if (cons % SHM_RING_ALIGN != 0)
		return 0;
	if (p->published - cons > p->data_size)
		return 0;
	return p->pos - cons <= p->data_size;
}

int shm_ring_producer_write(struct shm_ring_producer *p, uint32_t type, const void *data,
			    uint32_t len)
{
	static const uint8_t zeros[SHM_RING_ALIGN];
	struct shm_ring_record_hdr rh;
	uint64_t cons, need, used;

	if (type == 0 || (data == NULL && len > 0))
		return -EINVAL;
	need = shm_ring_record_size(len);
	if (len > SHM_RING_MAX_RECORD || need > p->data_size)
		return -EMSGSIZE;
	/*
	 * Acquire: pairs with the release store in shm_ring_consumer_commit, so
	 * the consumer's copies out of the space it handed back are finished
	 * before we overwrite that space.
	 */
	cons = __atomic_load_n(p->cons_pos, __ATOMIC_ACQUIRE);
	if (!shm_ring_producer_cons_ok(p, cons))
		return -EPROTO;
	used = p->pos - cons;
	if (need > p->data_size - used)
		return -ENOSPC;
	rh.length = len;
	rh.type = type;
	shm_ring_copy_in(p->data, p->data_size, p->pos, &rh, sizeof(rh));
	shm_ring_copy_in(p->data, p->data_size, p->pos + sizeof(rh), data, len);
	/* Zero the padding so the ring never carries stale bytes of older records. */
	shm_ring_copy_in(p->data, p->data_size, p->pos + sizeof(rh) + len, zeros,
			 (size_t)(need - sizeof(rh) - len));
	p->pos += need;
	return 0;
}

void shm_ring_producer_publish(struct shm_ring_producer *p)
{
	/*
	 * Release: pairs with the acquire load in shm_ring_consumer_refresh, so
	 * every record byte written before this store is visible to a consumer
	 * that sees the new position.
	 */
	__atomic_store_n(p->prod_pos, p->pos, __ATOMIC_RELEASE);
	p->published = p->pos;
}

double shm_ring_producer_fill(const struct shm_ring_producer *p)
{
	/* Acquire: pairs with the release in shm_ring_consumer_commit (as in write). */
	uint64_t cons = __atomic_load_n(p->cons_pos, __ATOMIC_ACQUIRE);

	if (!shm_ring_producer_cons_ok(p, cons))
		return 1.0;
	return (double)(p->pos - cons) / (double)p->data_size;
}

void shm_ring_producer_detach(struct shm_ring_producer *p)
{
	if (p->map != NULL)
		munmap(p->map, p->map_size);
	memset(p, 0, sizeof(*p));
}

int shm_ring_consumer_attach(struct shm_ring_consumer *c, int memfd, char *err, size_t errlen)
{
	struct shm_ring_header hdr;
	uint32_t page = shm_ring_page_size();
	size_t map_size = 0;
	void *map = NULL;
	uint64_t pos;
	int ret;

	memset(c, 0, sizeof(*c));
	ret = shm_ring_check_and_map(memfd, PROT_READ, &hdr, &map, &map_size, err, errlen);
	if (ret < 0)
		goto out;
	ret = shm_ring_protect(map, SHM_RING_PAGE_CONSUMER, PROT_READ | PROT_WRITE,
			       err, errlen);
	if (ret < 0)
		goto out;
	/*
	 * Resume where a previous exporter committed.  Our own page, but check
	 * alignment anyway; its relation to the producer position is checked at
	 * the first load of that position.
	 */
	ret = shm_ring_stored_pos(map, SHM_RING_PAGE_CONSUMER, "consumer", &pos, err, errlen);
	if (ret < 0)
		goto out;
	c->map = map;
	c->map_size = map_size;
	c->data = (const uint8_t *)map + SHM_RING_PAGE_DATA * page;
	c->data_size = hdr.data_size;
	c->prod_pos = (const uint64_t *)((uint8_t *)map + SHM_RING_PAGE_PRODUCER * page);
	c->cons_pos = (uint64_t *)((uint8_t *)map + SHM_RING_PAGE_CONSUMER * page);
	c->pos = pos;
	c->snapshot = pos;
	map = NULL;
	ret = 0;
out:
	if (map != NULL)
		munmap(map, map_size);
	return ret;
}

/* Record the first violation; the consumer returns it from then on. */
__attribute__((format(printf, 3, 4)))
static int shm_ring_consumer_poison(struct shm_ring_consumer *c, int error, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->poison_msg, sizeof(c->poison_msg), fmt, ap);
	va_end(ap);
	c->poison = error;
	return error;
}

/*
 * Load a new producer position once the last one is used up, and refuse one
 * that no honest producer could have stored: behind what we already read,
 * more than a ring ahead of it, or not on a record boundary.
 */
static int shm_ring_consumer_refresh(struct shm_ring_consumer *c)
{
	uint64_t prod;

	if (c->pos != c->snapshot)
		return 0;
	/*
	 * Acquire: pairs with the release store in shm_ring_producer_publish, so
	 * the records below the loaded position are fully written when we copy them.
	 */
	prod = __atomic_load_n(c->prod_pos, __ATOMIC_ACQUIRE);
	if ((int64_t)(prod - c->pos) < 0)
		return shm_ring_consumer_poison(c, -EPROTO,
						"shm ring: producer position %llu is behind the consumer (%llu)",
						(unsigned long long)prod, (unsigned long long)c->pos);
	if (prod - c->pos > c->data_size)
		return shm_ring_consumer_poison(c, -EPROTO,
						"shm ring: producer position %llu is more than %llu bytes ahead of the consumer (%llu)",
						(unsigned long long)prod,
						(unsigned long long)c->data_size,
						(unsigned long long)c->pos);
	if (prod % SHM_RING_ALIGN != 0)
		return shm_ring_consumer_poison(c, -EPROTO,
						"shm ring: producer position %llu is misaligned",
						(unsigned long long)prod);
	c->snapshot = prod;
	return 0;
}

int shm_ring_consumer_read(struct shm_ring_consumer *c, uint32_t *type, void *buf,
			   uint32_t bufsize, uint32_t *len_out, char *err, size_t errlen)
{
	struct shm_ring_record_hdr rh;
	uint64_t avail, rec;
	int ret;

	if (c->poison != 0) {
		ret = c->poison;
		goto out;
	}
	ret = shm_ring_consumer_refresh(c);
	if (ret < 0)
		goto out;
	avail = c->snapshot - c->pos;
	if (avail == 0) {
		ret = 0;
		goto out;
	}
	/*
	 * Copy the header out, then judge only the copy: the producer may change
	 * the shared bytes while we look.  Both positions are multiples of 8, so
	 * avail >= 8 and the header never wraps.
	 */
	shm_ring_copy_out(c->data, c->data_size, c->pos, &rh, sizeof(rh));
	if (rh.type == 0) {
		ret = shm_ring_consumer_poison(c, -EPROTO, "shm ring: record at %llu has type 0",
					       (unsigned long long)c->pos);
		goto out;
	}
	if (rh.length > SHM_RING_MAX_RECORD) {
		ret = shm_ring_consumer_poison(c, -EPROTO,
					       "shm ring: record at %llu is %u bytes, over the %u maximum",
					       (unsigned long long)c->pos, rh.length,
					       SHM_RING_MAX_RECORD);
		goto out;
	}
	rec = shm_ring_record_size(rh.length);
	if (rec > avail) {
		ret = shm_ring_consumer_poison(c, -EPROTO,
					       "shm ring: record at %llu (%llu bytes) runs past the producer position %llu",
					       (unsigned long long)c->pos, (unsigned long long)rec,
					       (unsigned long long)c->snapshot);
		goto out;
	}
	if (rh.length > bufsize) {
		ret = shm_ring_consumer_poison(c, -EMSGSIZE,
					       "shm ring: record at %llu is %u bytes, buffer holds %u",
					       (unsigned long long)c->pos, rh.length, bufsize);
		goto out;
	}
	shm_ring_copy_out(c->data, c->data_size, c->pos + sizeof(rh), buf, rh.length);
	c->pos += rec;
	*type = rh.type;
	*len_out = rh.length;
	ret = 1;
out:
	if (ret < 0)
		errbuf_set(err, errlen, "%s", c->poison_msg);
	return ret;
}

void shm_ring_consumer_commit(struct shm_ring_consumer *c)
{
	/*
	 * Release: pairs with the acquire load in shm_ring_producer_write (and
	 * shm_ring_producer_fill), so our copies out of the freed space are done
	 * before the producer can reuse it.  c->pos only ever moves past records
	 * that passed every check, so committing is safe even when poisoned.
	 */
	__atomic_store_n(c->cons_pos, c->pos, __ATOMIC_RELEASE);
}

uint64_t shm_ring_consumer_pending(struct shm_ring_consumer *c)
{
	if (c->poison != 0)
		return 0;
	if (shm_ring_consumer_refresh(c) < 0)
		return 0;
	return c->snapshot - c->pos;
}

void shm_ring_consumer_detach(struct shm_ring_consumer *c)
{
	if (c->map != NULL)
		munmap((void *)c->map, c->map_size);
	memset(c, 0, sizeof(*c));
}
