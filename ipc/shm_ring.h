/*
 * The shared-memory sample ring: one producer (the privileged loader) copies
 * sample records into a sealed memfd; one consumer (the sandboxed exporter)
 * copies them out.  Neither side trusts the page the other one writes.
 *
 * Layout of the memfd, in pages of the host page size (docs/shm-ring.md):
 *   page 0  struct shm_ring_header (written once by shm_ring_create)
 *   page 1  producer position: free-running uint64, written by the producer only
 *   page 2  consumer position: free-running uint64, written by the consumer only
 *   page 3+ data area, data_size bytes (a power of two); offsets are
 *           position & (data_size - 1)
 *
 * A record is struct shm_ring_record_hdr, then `length` payload bytes, then
 * zero padding to a multiple of 8.  A record may wrap around the end of the
 * data area; there are no padding records.
 */
#ifndef LOWPROF_IPC_SHM_RING_H
#define LOWPROF_IPC_SHM_RING_H

#include <stddef.h>
#include <stdint.h>

#define SHM_RING_MAGIC 0x474e52464f52504cULL /* "LPROFRNG" little-endian */
#define SHM_RING_VERSION 1u
#define SHM_RING_MIN_DATA_SIZE 4096ull
#define SHM_RING_MAX_DATA_SIZE (1ull << 30)
#define SHM_RING_MAX_RECORD (64u * 1024u) /* largest payload */
#define SHM_RING_ALIGN 8u

/* Page indexes of the layout above. */
#define SHM_RING_PAGE_HEADER 0
#define SHM_RING_PAGE_PRODUCER 1
#define SHM_RING_PAGE_CONSUMER 2
#define SHM_RING_PAGE_DATA 3

struct shm_ring_header {
	uint64_t magic;     /* SHM_RING_MAGIC */
	uint32_t version;   /* SHM_RING_VERSION */
	uint32_t page_size; /* layout page size; must equal the reader's page size */
	uint64_t data_size; /* power of two; file size = 3 pages + data_size */
};

struct shm_ring_record_hdr {
	uint32_t length; /* payload bytes, <= SHM_RING_MAX_RECORD */
	uint32_t type;   /* nonzero; meaning is the caller's */
};

/* Bytes a record of payload length len takes in the data area. */
static inline uint64_t shm_ring_record_size(uint32_t len)
{
	return sizeof(struct shm_ring_record_hdr) +
	       (((uint64_t)len + SHM_RING_ALIGN - 1) & ~(uint64_t)(SHM_RING_ALIGN - 1));
}

/* Fields are private to shm_ring.c; the struct is public so callers can embed it. */
struct shm_ring_producer {
	uint8_t *map;
	size_t map_size;
	uint8_t *data;
	uint64_t data_size;
	uint64_t *prod_pos;       /* shared: our published position */
	const uint64_t *cons_pos; /* shared, untrusted: written by the consumer */
	uint64_t pos;             /* end of everything written, published or not */
	uint64_t published;       /* last value stored to *prod_pos */
};

struct shm_ring_consumer {
	const uint8_t *map;
	size_t map_size;
	const uint8_t *data;
	uint64_t data_size;
	const uint64_t *prod_pos; /* shared, untrusted: written by the producer */
	uint64_t *cons_pos;       /* shared: our committed position */
	uint64_t pos;             /* our own read position (the only one we trust) */
	uint64_t snapshot;        /* producer position as loaded and checked */
	int poison;               /* 0, or the negative errno of the first violation */
	char poison_msg[160];
};

/*
 * Create a sealed ring of data_size bytes (a power of two, 4 KiB .. 1 GiB).
 * Returns 0 and the memfd (O_CLOEXEC) in *memfd_out, or a negative errno with
 * a message in err.
 */
int shm_ring_create(size_t data_size, int *memfd_out, char *err, size_t errlen);

/*
 * Producer side.  attach checks the seals, size and header, maps the ring and
 * resumes from the producer position stored in it.  The memfd stays the
 * caller's to close (the mapping does not need it).
 */
int shm_ring_producer_attach(struct shm_ring_producer *p, int memfd, char *err, size_t errlen);

/*
 * Append one record; it stays invisible to the consumer until
 * shm_ring_producer_publish().  Never blocks, never overwrites unread data.
 * Returns 0, -EINVAL (type 0, or data NULL with len > 0), -EMSGSIZE (len >
 * SHM_RING_MAX_RECORD), -ENOSPC (no room now; nothing written), or -EPROTO
 * (the consumer position is impossible; nothing written).
 */
int shm_ring_producer_write(struct shm_ring_producer *p, uint32_t type, const void *data,
			    uint32_t len);

/* Make every record written so far visible (one release store; once per batch). */
void shm_ring_producer_publish(struct shm_ring_producer *p);

/* Fraction of the data area not yet consumed, 0..1 (1 when the consumer position is impossible). */
double shm_ring_producer_fill(const struct shm_ring_producer *p);

/* Unmap.  Unpublished records are lost. */
void shm_ring_producer_detach(struct shm_ring_producer *p);

/*
 * Consumer side.  attach checks seals (shrink and grow) and the file size
 * against the header before it maps anything, then resumes from the consumer
 * position stored in the ring.  The memfd stays the caller's to close.
 */
int shm_ring_consumer_attach(struct shm_ring_consumer *c, int memfd, char *err, size_t errlen);

/*
 * Copy the next record into buf.  Returns 1 (record copied: *type, *len_out),
 * 0 (nothing published beyond what was read), or a negative errno on a
 * protocol violation: -EPROTO (impossible producer position, record length
 * over the maximum or past the producer position, zero type) or -EMSGSIZE
 * (record longer than bufsize).  After a violation the consumer is poisoned:
 * every later call returns the same error and message.  The producer position
 * is loaded (acquire) only when the previous snapshot is used up, so one load
 * serves a whole batch.  Reads are not handed back to the producer until
 * shm_ring_consumer_commit().
 */
int shm_ring_consumer_read(struct shm_ring_consumer *c, uint32_t *type, void *buf,
			   uint32_t bufsize, uint32_t *len_out, char *err, size_t errlen);

/* Hand the space of every record read so far back to the producer (one release store). */
void shm_ring_consumer_commit(struct shm_ring_consumer *c);

/*
 * Bytes published and not yet read, as of the current snapshot (loading a new
 * one, as read does, if the current one is used up).  0 when poisoned.
 */
uint64_t shm_ring_consumer_pending(struct shm_ring_consumer *c);

/* Unmap.  Records read but not committed will be read again by the next consumer. */
void shm_ring_consumer_detach(struct shm_ring_consumer *c);

#endif /* LOWPROF_IPC_SHM_RING_H */
