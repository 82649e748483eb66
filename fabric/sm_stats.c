/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include "base/counters_socket.h"
#include "fabric/sa.h"
#include "fabric/sa_mcast.h"
#include "fabric/sm.h"
#include "fabric/sm_stats.h"

size_t sib_sm_stats_text(const struct sib_sm *sm, char *buf, size_t len)
{
	const struct sib_sa_state *sa = sm->sa;
	struct sib_text t = { buf, len, 0 };

	if (!len)
		return 0;
	buf[0] = 0;
#define N(name, v) sib_text_put(&t, "sm." name " %llu\n", (unsigned long long)(v))
	N("lid", sm->lid);
	N("state", sm->state);
	N("ports_known", sib_sm_known_ports(sm));
	N("ports_active", sib_sm_active_ports(sm));
	N("joins", sm->joins);
	N("leaves", sm->leaves);
	N("sa_queries", sm->sa_queries);
	N("sa_wrong_source", sm->sa_wrong_source);
	N("rx_over_rate", sm->admit.over_rate);
	N("sources_evicted", sm->admit.evicted);
	N("dropped", sm->dropped);
	N("resp_misrouted", sm->resp_misrouted);
	N("claims_refused", sm->claims_refused);
	N("bad_m_key_traps", sm->bad_m_key_traps);
	N("bad_p_key_traps", sm->bad_p_key_traps);
	N("services", sa ? sa->nservices : 0);
	N("service_sets", sa ? sa->service_sets : 0);
	N("service_deletes", sa ? sa->service_deletes : 0);
	N("address_claims_refused", sa ? sa->address_claims_refused : 0);
	N("services_refused", sa ? sa->services_refused : 0);
	N("transfers", sa ? sa->ntransfers : 0);
	N("transfer_bytes", sa ? sa->transfer_bytes : 0);
	N("transfers_refused", sa ? sa->transfers_refused : 0);
	N("mcast_groups", sa && sa->mcast ? sa->mcast->ngroups : 0);
	N("mcast_joins", sa && sa->mcast ? sa->mcast->joins : 0);
	N("mcast_refused", sa && sa->mcast ? sa->mcast->refused : 0);
	N("mcast_no_room", sa && sa->mcast ? sa->mcast->no_room : 0);
#undef N
	return t.used;
}
