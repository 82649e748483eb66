/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "transport/wqe.h"

static uint32_t slot_size(uint32_t max_sge, uint32_t max_inline, bool send)
{
	size_t hdr = send ? sizeof(struct sib_send_wqe) : sizeof(struct sib_recv_wqe);
	size_t n = hdr + (size_t)max_sge * sizeof(struct sib_sge) + (send ? max_inline : 0);

	return (uint32_t)((n + 15) & ~(size_t)15);
}

int sib_wq_init(struct sib_wq *wq, uint32_t max_wr, uint32_t max_sge, uint32_t max_inline,
		bool send)
{
	memset(wq, 0, sizeof(*wq));
	wq->max_wr = max_wr;
	wq->max_sge = max_sge;
	wq->max_inline = send ? max_inline : 0;
	wq->slot_size = slot_size(max_sge, max_inline, send);
	if (max_wr) {
		/* calloc of a large ring maps zero pages: untouched slots cost nothing */
		wq->slots = calloc(max_wr, wq->slot_size);
		if (!wq->slots)
			return ENOMEM;
	}
	return 0;
}

void sib_wq_fini(struct sib_wq *wq)
{
	free(wq->slots);
	wq->slots = NULL;
	wq->count = 0;
}

void *sib_wq_at(struct sib_wq *wq, uint32_t i)
{
	/* head < max_wr and i <= count <= max_wr: at most one wrap, and no
	 * division on every WQE access. */
	uint32_t at = wq->head + i;

	while (at >= wq->max_wr)
		at -= wq->max_wr;
	return wq->slots + (size_t)at * wq->slot_size;
}

void *sib_wq_tail(struct sib_wq *wq)
{
	return sib_wq_at(wq, wq->count);
}

/* Point a slot's sge / inline pointers at its own storage. */
static void fix_send(struct sib_send_wqe *w, uint32_t max_sge)
{
	w->sge = (struct sib_sge *)(void *)(w + 1);
	w->inline_data = (uint8_t *)(w->sge + max_sge);
}

static void fix_recv(struct sib_recv_wqe *w)
{
	w->sge = (struct sib_sge *)(void *)(w + 1);
}

int sib_wq_resize(struct sib_wq *wq, uint32_t max_wr, bool send)
{
	struct sib_wq n;

	if (sib_wq_init(&n, max_wr, wq->max_sge, wq->max_inline, send))
		return ENOMEM;
	for (uint32_t i = 0; i < wq->count; i++) {
		void *dst = n.slots + (size_t)i * n.slot_size;

		memcpy(dst, sib_wq_at(wq, i), wq->slot_size);
		if (send)
			fix_send(dst, n.max_sge);
		else
			fix_recv(dst);
	}
	n.count = wq->count;
	free(wq->slots);
	*wq = n;
	return 0;
}

void sib_wq_put_send(struct sib_wq *wq, const struct sib_send_wqe *wqe, const struct sib_sge *sge)
{
	struct sib_send_wqe *w = sib_wq_tail(wq);
	uint64_t len = 0;

	*w = *wqe;
	fix_send(w, wq->max_sge);
	w->inline_len = 0;
	if (wqe->send_flags & SIB_SEND_INLINE) {
		for (uint32_t i = 0; i < wqe->num_sge; i++) {
			/* An empty SGE may have address 0 (UCX's zero-length
			 * inline sends), which memcpy may not be given. */
			if (!sge[i].length)
				continue;
			memcpy(w->inline_data + w->inline_len, (const void *)(uintptr_t)sge[i].addr,
			       sge[i].length);
			w->inline_len += sge[i].length;
		}
		len = w->inline_len;
		w->num_sge = 0;
	} else {
		for (uint32_t i = 0; i < wqe->num_sge; i++) {
			w->sge[i] = sge[i];
			len += sge[i].length;
		}
	}
	w->length = len;
	sib_wq_commit(wq);
}

void sib_wq_put_recv(struct sib_wq *wq, uint64_t wr_id, const struct sib_sge *sge,
		     uint32_t num_sge)
{
	struct sib_recv_wqe *w = sib_wq_tail(wq);

	w->wr_id = wr_id;
	w->num_sge = num_sge;
	w->length = 0;
	fix_recv(w);
	for (uint32_t i = 0; i < num_sge; i++) {
		w->sge[i] = sge[i];
		w->length += sge[i].length;
	}
	sib_wq_commit(wq);
}
