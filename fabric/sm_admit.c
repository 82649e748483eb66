/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include "fabric/sm_admit.h"

#define INTERVAL_NS (1000000000ull / SIB_SM_SOURCE_RATE)
#define WINDOW_NS (INTERVAL_NS * SIB_SM_SOURCE_BURST)

/* The slot of `from`, or the one it takes: a free one, else the one whose
 * bucket filled earliest (the most idle) among those it probes. */
static struct sib_sm_source *slot_of(struct sib_sm_admit *ad, const struct sib_endpoint *from,
				     uint64_t now_ns)
{
	uint32_t h = sib_endpoint_hash(from);
	struct sib_sm_source *victim = NULL;

	for (unsigned i = 0; i < SIB_SM_SOURCE_PROBE; i++) {
		struct sib_sm_source *s = &ad->slot[(h + i) % SIB_SM_SOURCES];

		if (s->full_ns && sib_endpoint_equal(&s->ep, from))
			return s;
		if (!victim || s->full_ns < victim->full_ns)
			victim = s;
	}
	if (victim->full_ns > now_ns)
		ad->evicted++;
	victim->ep = *from;
	victim->full_ns = now_ns ? now_ns : 1;
	return victim;
}

bool sib_sm_admit(struct sib_sm_admit *ad, const struct sib_endpoint *from, uint64_t now_ns)
{
	struct sib_sm_source *s = slot_of(ad, from, now_ns);
	uint64_t t = s->full_ns > now_ns ? s->full_ns : now_ns;

	/* GCRA: each MAD adds INTERVAL_NS of debt; a source may run up to a
	 * burst's worth ahead of the clock. */
	if (t + INTERVAL_NS > now_ns + WINDOW_NS) {
		ad->over_rate++;
		return false;
	}
	s->full_ns = t + INTERVAL_NS;
	return true;
}
