/* The shared-ring consumer against a hostile producer: the input sets the
 * producer position and the whole data area (record headers, lengths, types,
 * payloads), as a compromised loader sharing the memfd could. Every record the
 * consumer hands out goes through sample_record_decode, as the exporter does.
 * Invariants: a record copied out fits the buffer and the maximum; after a
 * violation the consumer stays poisoned. */
#include "ipc/sample_record.h"
#include "ipc/shm_ring.h"

#include "fuzz/fuzz_check.h"
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define FUZZ_RING_DATA 4096u

static uint8_t record_buf[SHM_RING_MAX_RECORD];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct shm_ring_consumer c;
	struct sample_view v;
	uint64_t prod, page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint8_t *map;
	size_t map_size = 3 * page + FUZZ_RING_DATA;
	uint32_t type, len;
	char err[256];
	int fd, rc, rounds = 0;

	if (size < sizeof(prod))
		return 0;
	if (shm_ring_create(FUZZ_RING_DATA, &fd, err, sizeof(err)) != 0)
		return 0;
	map = mmap(NULL, map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	FUZZ_CHECK(map != MAP_FAILED);
	memcpy(&prod, data, sizeof(prod));
	memcpy(map + SHM_RING_PAGE_PRODUCER * page, &prod, sizeof(prod));
	size -= sizeof(prod);
	memcpy(map + SHM_RING_PAGE_DATA * page, data + sizeof(prod),
	       size < FUZZ_RING_DATA ? size : FUZZ_RING_DATA);
	if (shm_ring_consumer_attach(&c, fd, err, sizeof(err)) != 0)
		goto out; /* a producer position refused at attach */
	while (rounds++ < 4096) {
		rc = shm_ring_consumer_read(&c, &type, record_buf, sizeof(record_buf), &len, err,
					    sizeof(err));
		if (rc <= 0) {
			if (rc < 0)
				FUZZ_CHECK(shm_ring_consumer_read(&c, &type, record_buf,
							      sizeof(record_buf), &len, err,
							      sizeof(err)) == rc);
			break;
		}
		FUZZ_CHECK(len <= SHM_RING_MAX_RECORD && type != 0);
		(void)sample_record_decode(record_buf, len, &v, err, sizeof(err));
	}
	shm_ring_consumer_commit(&c);
	shm_ring_consumer_detach(&c);
out:
	munmap(map, map_size);
	close(fd);
	return 0;
}
