/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The one scatter/gather copy every role uses: the requester gathers a
 * send's payload, the responders scatter a received message and the
 * completer a READ response, each through the memreg access check of
 * every SGE's L_Key; and the log line for an access it refused.
 */
#include <stdio.h>

#include "base/log.h"
#include "transport/qp_impl.h"

enum memreg_verdict sib_sge_copy(struct sib_qp *qp, uint32_t pd, const struct sib_sge *sge,
				 uint32_t num_sge, uint64_t off, uint8_t *buf, uint32_t len,
				 bool to_sge, struct memreg_request *bad,
				 struct memreg_grant *grant)
{
	struct memreg_table *t = sib_engine_memreg(qp->eng);
	struct memreg_grant g;
	uint32_t i = 0;

	/* Skip to the SGE holding byte off. */
	while (i < num_sge && off >= sge[i].length) {
		off -= sge[i].length;
		i++;
	}
	while (len) {
		if (i >= num_sge) {
			if (bad)
				*bad = (struct memreg_request){ .key = 0, .len = len };
			return MEMREG_OUT_OF_BOUNDS;
		}
		uint32_t n = sge[i].length - (uint32_t)off;

		if (n > len)
			n = len;
		struct memreg_request req = {
			.key = sge[i].lkey,
			.remote = false,
			.pd = pd,
			.qpn = qp->qp_num,
			.va = sge[i].addr + off,
			.len = n,
			.access = to_sge ? MEMREG_ACCESS_LOCAL_WRITE : 0,
		};
		enum memreg_verdict v = memreg_check(t, &req, &g);

		if (v != MEMREG_OK) {
			if (bad)
				*bad = req;
			if (grant)
				*grant = g;
			return v;
		}
		v = to_sge ? memreg_grant_write(&g, 0, buf, n) : memreg_grant_read(&g, 0, buf, n);
		memreg_release(t, &g);
		if (v != MEMREG_OK) { /* an ODP page that is not mapped */
			if (bad)
				*bad = req;
			if (grant)
				*grant = g;
			return v;
		}
		buf += n;
		len -= n;
		off = 0;
		i++;
	}
	return MEMREG_OK;
}

void sib_log_access(struct sib_qp *qp, const char *what, const struct memreg_request *req,
		    enum memreg_verdict v, const struct memreg_grant *g)
{
	char line[200];

	if (!sib_log_on(SIB_LOG_WARN))
		return;
	if (v == MEMREG_OUT_OF_BOUNDS && req->key == 0)
		snprintf(line, sizeof(line), "message longer than the scatter list (%llu bytes over)",
			 (unsigned long long)req->len);
	else
		memreg_explain(req, v, g, line, sizeof(line));
	sib_warn("%s on QP 0x%06x: %s", what, qp->qp_num, line);
}
