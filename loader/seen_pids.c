/* seen_pids: the pids sampled lately (see the header). */
#include "loader/seen_pids.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/mono_clock.h"

int seen_pids_init(struct seen_pids *s, uint64_t now_ns)
{
	memset(s, 0, sizeof(*s));
	for (unsigned g = 0; g < 2; g++) {
		s->gen[g] = calloc(SEEN_PIDS_SLOTS, sizeof(uint32_t));
		s->image_id[g] = calloc(SEEN_PIDS_SLOTS, sizeof(uint16_t));
	}
	if (s->gen[0] == NULL || s->gen[1] == NULL || s->image_id[0] == NULL || s->image_id[1] == NULL) {
		seen_pids_fini(s);
		return -ENOMEM;
	}
	s->swapped_ns = now_ns;
	return 0;
}

/* The slot of pid in t, or of the empty slot where it would go. */
static uint32_t seen_pids_slot(const uint32_t *t, uint32_t pid)
{
	uint32_t i = (uint32_t)hash_mix64(pid) & (SEEN_PIDS_SLOTS - 1);

	while (t[i] != 0 && t[i] != pid)
		i = (i + 1) & (SEEN_PIDS_SLOTS - 1);
	return i;
}

bool seen_pids_add(struct seen_pids *s, uint32_t pid, uint16_t image_id, uint64_t now_ns)
{
	uint32_t *t, *old, i, j;
	bool known;

	if (pid == 0)
		return false;
	if (now_ns - s->swapped_ns >= (uint64_t)SEEN_PIDS_WINDOW_S * NSEC_PER_SEC) {
		/* The older generation is forgotten; the current one becomes it. */
		s->cur ^= 1;
		memset(s->gen[s->cur], 0, SEEN_PIDS_SLOTS * sizeof(uint32_t));
		s->count[s->cur] = 0;
		s->swapped_ns = now_ns;
	}
	t = s->gen[s->cur];
	i = seen_pids_slot(t, pid);
	if (t[i] == pid) {
		if (image_id == s->image_id[s->cur][i])
			return false;
		s->image_id[s->cur][i] = image_id;
		return true;
	}
	old = s->gen[s->cur ^ 1];
	j = seen_pids_slot(old, pid);
	known = old[j] == pid && image_id == s->image_id[s->cur ^ 1][j];
	if (s->count[s->cur] >= SEEN_PIDS_MAX) {
		s->not_kept++;
		return !known;
	}
	t[i] = pid;
	s->image_id[s->cur][i] = image_id;
	s->count[s->cur]++;
	return !known;
}

bool seen_pids_has(const struct seen_pids *s, uint32_t pid)
{
	if (pid == 0 || s->gen[0] == NULL)
		return false;
	for (unsigned g = 0; g < 2; g++)
		if (s->gen[g][seen_pids_slot(s->gen[g], pid)] == pid)
			return true;
	return false;
}

void seen_pids_fini(struct seen_pids *s)
{
	for (unsigned g = 0; g < 2; g++) {
		free(s->gen[g]);
		free(s->image_id[g]);
		s->gen[g] = NULL;
		s->image_id[g] = NULL;
	}
}
