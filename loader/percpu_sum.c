#include "loader/percpu_sum.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int percpu_sum_u64(const struct bpf_map *map, size_t value_size, int ncpus, void *out)
{
	size_t fields = value_size / sizeof(uint64_t), i;
	uint64_t *per_cpu, *sum = out;
	uint32_t zero = 0;
	int cpu, rc = 0;

	memset(out, 0, value_size);
	if (ncpus <= 0 || value_size % sizeof(uint64_t) != 0)
		return -EINVAL;
	/* The kernel copies each CPU's value rounded up to 8 bytes: exact here. */
	per_cpu = calloc((size_t)ncpus, value_size);
	if (per_cpu == NULL)
		return -ENOMEM;
	if (bpf_map__lookup_elem(map, &zero, sizeof(zero), per_cpu, (size_t)ncpus * value_size,
				 0) != 0) {
		rc = -errno;
	} else {
		for (cpu = 0; cpu < ncpus; cpu++)
			for (i = 0; i < fields; i++)
				sum[i] += per_cpu[(size_t)cpu * fields + i];
	}
	free(per_cpu);
	return rc;
}
