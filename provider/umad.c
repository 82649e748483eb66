/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * /dev/infiniband/umad31 and issm31 (umad.h).  Descriptors are eventfds
 * in semaphore mode whose count is the number of MADs queued, so poll and
 * epoll see a descriptor readable exactly while read(2) has something.
 */
#include "provider/umad.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/log.h"
#include "hca/hca.h"
#include "mgmt/mad_send.h"
#include "mgmt/sa_client.h"
#include "provider/softib.h"
#include "wire/sa.h"
#include "wire/smp.h"

/* The kernel's ABI (include/uapi/rdma/ib_user_mad.h), version 5 with
 * P_Key indexes: 64 bytes of header before each MAD. */
struct umad_hdr {
	uint32_t agent_id;
	uint32_t status;
	uint32_t timeout_ms;
	uint32_t retries;
	uint32_t length;
	uint32_t qpn;	 /* big-endian */
	uint32_t qkey;	 /* big-endian */
	uint16_t lid;	 /* big-endian */
	uint8_t sl;
	uint8_t path_bits;
	uint8_t grh_present;
	uint8_t gid_index;
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint8_t gid[16];
	uint32_t flow_label; /* big-endian */
	uint16_t pkey_index;
	uint8_t reserved[6];
};
_Static_assert(sizeof(struct umad_hdr) == 64, "struct ib_user_mad_hdr is 64 bytes");

struct umad_reg_req {
	uint32_t id;
	uint32_t method_mask[4];
	uint8_t qpn;
	uint8_t mgmt_class;
	uint8_t mgmt_class_version;
	uint8_t oui[3];
	uint8_t rmpp_version;
};

#define UMAD_IOC_MAGIC 0x1b
#define UMAD_REGISTER_AGENT _IOWR(UMAD_IOC_MAGIC, 1, struct umad_reg_req)
#define UMAD_UNREGISTER_AGENT _IOW(UMAD_IOC_MAGIC, 2, uint32_t)
#define UMAD_ENABLE_PKEY _IO(UMAD_IOC_MAGIC, 3)

enum {
	UMAD_MAX_AGENTS = 32,	/* IB_UMAD_MAX_AGENTS */
	UMAD_MAX_QUEUED = 1024, /* MADs waiting for read(2) on one descriptor */
	UMAD_MAX_QUEUED_BYTES = 64 << 20, /* and their bytes (reassembled answers) */
	UMAD_MAX_FILES = 64,
	UMAD_MAD_HDR = 24,	/* the common MAD header: the least a write carries */
	UMAD_SA_HDR = UMAD_MAD_HDR + 12 + IB_SA_CLASS_HDR_BYTES, /* and RMPP's, and the SA's */
	UMAD_RMPP_MAX = 1 << 24, /* bytes of one reassembled answer */
	UMAD_RMPP_WINDOW = 16,	 /* segments the sender may send ahead */
};

struct umad_pkt {
	struct umad_pkt *next;
	struct umad_hdr hdr;
	uint32_t len; /* bytes of MAD: 256, or more for a reassembled RMPP answer */
	uint8_t mad[];
};

struct umad_agent {
	bool used;
	uint8_t qpn, mclass, version, rmpp;
	uint64_t methods; /* the requests it serves (SIB_MAD_METHOD bits) */
	const struct sib_mad_agent *layer; /* the node's agent it sends through */
};

struct umad_file {
	int fd; /* the eventfd the caller holds */
	struct sib_hca *hca;
	pthread_mutex_t lock;
	struct umad_pkt *head, *tail;
	unsigned queued, refs; /* refs: the descriptor, and each send out */
	size_t queued_bytes;
	bool closed;
	uint64_t dropped; /* MADs that found the queue full */
	struct umad_agent agent[UMAD_MAX_AGENTS];
};

/* One send out: where its answer or its end goes, and an RMPP answer
 * being put together (IBA 13.6) for an agent that asked for RMPP. */
struct umad_send {
	struct umad_file *f;
	struct umad_hdr hdr; /* as written */
	uint8_t mad[IB_MAD_BYTES];
	const struct sib_mad_agent *layer;
	bool rmpp;
	uint8_t *rbuf; /* the first segment's headers, then every segment's records */
	uint32_t rlen, next_seg;
};

static pthread_mutex_t files_lock = PTHREAD_MUTEX_INITIALIZER;
static struct umad_file *files[UMAD_MAX_FILES];

/* The file of descriptor fd, with a reference: a close on another thread
 * cannot free it under the call. */
static struct umad_file *file_get(int fd)
{
	struct umad_file *f = NULL;

	pthread_mutex_lock(&files_lock);
	for (unsigned i = 0; i < UMAD_MAX_FILES && !f; i++)
		if (files[i] && files[i]->fd == fd) {
			f = files[i];
			pthread_mutex_lock(&f->lock);
			f->refs++;
			pthread_mutex_unlock(&f->lock);
		}
	pthread_mutex_unlock(&files_lock);
	return f;
}

static void file_put(struct umad_file *f)
{
	bool last;

	pthread_mutex_lock(&f->lock);
	last = --f->refs == 0;
	pthread_mutex_unlock(&f->lock);
	if (!last)
		return;
	while (f->head) {
		struct umad_pkt *p = f->head;

		f->head = p->next;
		free(p);
	}
	sib_hca_put(f->hca);
	pthread_mutex_destroy(&f->lock);
	free(f);
}

/* Queues a MAD for read(2); the eventfd counts it. */
static void enqueue(struct umad_file *f, const struct umad_hdr *h, const uint8_t *mad,
		    uint32_t len)
{
	struct umad_pkt *p;
	uint64_t one = 1;

	pthread_mutex_lock(&f->lock);
	if (f->closed || f->queued >= UMAD_MAX_QUEUED ||
	    f->queued_bytes + len > UMAD_MAX_QUEUED_BYTES || !(p = malloc(sizeof(*p) + len))) {
		/* a program that does not read, or a flood of answers */
		uint64_t n = ++f->dropped;
		unsigned queued = f->queued;
		size_t bytes = f->queued_bytes;
		bool closed = f->closed;

		pthread_mutex_unlock(&f->lock);
		sib_log(sib_log_nth(n),
			"umad: a MAD of %u bytes dropped: its descriptor %s (%u MADs, %zu bytes "
			"unread; at most %u, %u MiB) (%llu so far)",
			len, closed ? "is closed" : "holds too much", queued, bytes, UMAD_MAX_QUEUED,
			UMAD_MAX_QUEUED_BYTES >> 20, (unsigned long long)n);
		return;
	}
	p->next = NULL;
	p->hdr = *h;
	p->hdr.length = (uint32_t)sizeof(*h) + len;
	p->len = len;
	memcpy(p->mad, mad, len);
	if (f->tail)
		f->tail->next = p;
	else
		f->head = p;
	f->tail = p;
	f->queued++;
	f->queued_bytes += len;
	syscall(SYS_write, f->fd, &one, sizeof(one));
	pthread_mutex_unlock(&f->lock);
}

/* ---------------------------------------------------------------- the node's agents */

/* One agent of the node's MAD layer per QP and class that umad sends on,
 * serving no request (methods 0): its sends' answers come by TID. */
static pthread_mutex_t layer_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sib_mad_agent layer_agents[2][256];

static bool layer_rx(void *owner, const struct sib_mad_recv *r)
{
	(void)owner;
	(void)r;
	return false; /* a response no send of ours took: the layer counts it */
}

static const struct sib_mad_agent *layer_agent(struct sib_hca *hca, uint8_t qpn, uint8_t mclass)
{
	struct sib_mad_agent *a = &layer_agents[qpn ? 1 : 0][mclass];
	int rc = 0;

	pthread_mutex_lock(&layer_lock);
	if (!a->name) {
		a->name = "umad";
		a->qp = qpn ? SIB_QP1 : SIB_QP0;
		a->mgmt_class = mclass;
		a->rx = layer_rx;
	}
	if (!sib_mad_agent_id(&hca->node.mads, a))
		rc = sib_mad_agent_register(&hca->node, a);
	pthread_mutex_unlock(&layer_lock);
	return rc ? NULL : a;
}

/*
 * Requests for umad agents with a method mask: one more agent of the
 * node's layer per QP and class, serving the methods no agent of softib's
 * own serves there (a real HCA's own agents answer first, too), and, for
 * the SM classes, the SMA's hook (node.h: user_sm) for SMInfo and traps.
 * The first umad agent whose class, version and mask match takes it.
 */
static struct sib_mad_agent server_agents[2][256];

static bool deliver_request(struct sib_node *node, const struct sib_mad_recv *r)
{
	const uint8_t *mad = r->mad;
	uint8_t qpn = r->a->DestQP ? 1 : 0;
	struct umad_file *f = NULL;
	unsigned id = 0;
	struct umad_hdr h;

	(void)node;
	/* RMPP ACK, STOP and ABORT are the sender's business (kernel's too) */
	if ((mad[26] & IB_RMPP_FLAG_ACTIVE) && mad[25] != IB_RMPP_TYPE_DATA)
		return true;
	pthread_mutex_lock(&files_lock);
	for (unsigned i = 0; i < UMAD_MAX_FILES && !f; i++) {
		if (!files[i])
			continue;
		pthread_mutex_lock(&files[i]->lock);
		for (id = 0; id < UMAD_MAX_AGENTS; id++) {
			const struct umad_agent *a = &files[i]->agent[id];

			if (a->used && a->qpn == qpn && a->mclass == mad[1] &&
			    (!a->version || a->version == mad[2]) &&
			    (a->methods & SIB_MAD_METHOD(mad[3]))) {
				f = files[i];
				f->refs++;
				break;
			}
		}
		pthread_mutex_unlock(&files[i]->lock);
	}
	pthread_mutex_unlock(&files_lock);
	sib_dbg("umad: a request of class 0x%02x method 0x%02x attribute 0x%04x from LID %u: %s",
		mad[1], mad[3], (unsigned)(mad[16] << 8 | mad[17]), r->a->SLID,
		f ? "to an agent" : "no agent takes it");
	if (!f)
		return false;
	memset(&h, 0, sizeof(h));
	h.agent_id = id;
	h.qpn = htonl(r->a->SrcQP);
	h.qkey = htonl(r->a->Q_Key);
	h.lid = htons(r->a->SLID);
	h.sl = r->a->SL;
	enqueue(f, &h, mad, IB_MAD_BYTES);
	file_put(f);
	return true;
}

static bool server_rx(void *owner, const struct sib_mad_recv *r)
{
	return deliver_request(owner, r);
}

/* Makes requests of qpn and mclass reach umad agents; false when softib's
 * own agents serve every method of the class. */
static bool serve_class(struct sib_hca *hca, uint8_t qpn, uint8_t mclass)
{
	struct sib_mad_agent *a = &server_agents[qpn ? 1 : 0][mclass];
	struct sib_mad_layer *l = &hca->node.mads;
	bool ok = true;

	if (mclass == IB_MGMT_CLASS_SUBN_LID_ROUTED || mclass == IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE) {
		__atomic_store_n(&hca->node.user_sm, deliver_request, __ATOMIC_RELEASE);
		return true;
	}
	pthread_mutex_lock(&layer_lock);
	if (!sib_mad_agent_id(l, a)) {
		a->name = "umad";
		a->qp = qpn ? SIB_QP1 : SIB_QP0;
		a->mgmt_class = mclass;
		a->methods = SIB_MAD_METHODS_ALL & ~sib_mad_methods_served(l, a->qp, mclass);
		a->rx = server_rx;
		ok = a->methods && !sib_mad_agent_register(&hca->node, a);
	}
	pthread_mutex_unlock(&layer_lock);
	return ok;
}

/* ---------------------------------------------------------------- open, close */

static int umad_open(int flags)
{
	struct umad_file *f = calloc(1, sizeof(*f));
	int err;

	if (!f) {
		errno = ENOMEM;
		return -1;
	}
	f->hca = sib_hca_get();
	if (!f->hca) {
		err = errno ? errno : ENODEV;
		free(f);
		errno = err;
		return -1;
	}
	f->fd = eventfd(0, EFD_SEMAPHORE | (flags & O_CLOEXEC ? EFD_CLOEXEC : 0) |
				   (flags & O_NONBLOCK ? EFD_NONBLOCK : 0));
	if (f->fd < 0) {
		err = errno;
		sib_hca_put(f->hca);
		free(f);
		errno = err;
		return -1;
	}
	pthread_mutex_init(&f->lock, NULL);
	f->refs = 1;
	pthread_mutex_lock(&files_lock);
	for (unsigned i = 0; i < UMAD_MAX_FILES; i++)
		if (!files[i]) {
			files[i] = f;
			pthread_mutex_unlock(&files_lock);
			return f->fd;
		}
	pthread_mutex_unlock(&files_lock);
	syscall(SYS_close, f->fd);
	sib_hca_put(f->hca);
	pthread_mutex_destroy(&f->lock);
	free(f);
	sib_warn("open /dev/infiniband/%s: %d descriptors are open already", SIB_UMAD_NAME,
		 UMAD_MAX_FILES);
	errno = EMFILE;
	return -1;
}

static void umad_close(int fd)
{
	struct umad_file *f = NULL;

	pthread_mutex_lock(&files_lock);
	for (unsigned i = 0; i < UMAD_MAX_FILES; i++)
		if (files[i] && files[i]->fd == fd) {
			f = files[i];
			files[i] = NULL;
		}
	pthread_mutex_unlock(&files_lock);
	if (!f)
		return;
	pthread_mutex_lock(&f->lock);
	f->closed = true;
	pthread_mutex_unlock(&f->lock);
	file_put(f); /* sends still out hold it until they end */
}

/* ---------------------------------------------------------------- ioctl */

static int register_agent(struct umad_file *f, struct umad_reg_req *req)
{
	unsigned id;

	if (!req) {
		errno = EFAULT;
		return -1;
	}
	if (req->qpn > 1 || (req->qpn == 0) != (req->mgmt_class == IB_MGMT_CLASS_SUBN_LID_ROUTED ||
						   req->mgmt_class == IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE)) {
		errno = EINVAL; /* SMPs on QP0, everything else on QP1 (IBA 13.5.1) */
		return -1;
	}
	pthread_mutex_lock(&f->lock);
	for (id = 0; id < UMAD_MAX_AGENTS && f->agent[id].used; id++)
		;
	if (id == UMAD_MAX_AGENTS) {
		pthread_mutex_unlock(&f->lock);
		errno = ENOMEM;
		return -1;
	}
	f->agent[id] = (struct umad_agent){ .used = true,
					    .qpn = req->qpn,
					    .mclass = req->mgmt_class,
					    .version = req->mgmt_class_version,
					    .rmpp = req->rmpp_version };
	pthread_mutex_unlock(&f->lock);
	f->agent[id].layer = layer_agent(f->hca, req->qpn, req->mgmt_class);
	if (f->agent[id].layer &&
	    (req->method_mask[0] | req->method_mask[1] | req->method_mask[2] | req->method_mask[3]) &&
	    !serve_class(f->hca, req->qpn, req->mgmt_class)) {
		sib_warn("umad: class 0x%02x: every request method is served by softib's own agent",
			 req->mgmt_class);
		f->agent[id].layer = NULL;
	}
	pthread_mutex_lock(&f->lock);
	f->agent[id].methods = (uint64_t)req->method_mask[1] << 32 | req->method_mask[0];
	pthread_mutex_unlock(&f->lock);
	if (!f->agent[id].layer) {
		pthread_mutex_lock(&f->lock);
		f->agent[id].used = false;
		pthread_mutex_unlock(&f->lock);
		errno = ENOMEM;
		return -1;
	}
	req->id = id;
	return 0;
}

static int ioctl_on(struct umad_file *f, unsigned long request, void *arg)
{
	uint32_t id;

	switch (request) {
	case UMAD_REGISTER_AGENT:
		return register_agent(f, arg);
	case UMAD_UNREGISTER_AGENT:
		if (!arg) {
			errno = EFAULT;
			return -1;
		}
		memcpy(&id, arg, sizeof(id));
		pthread_mutex_lock(&f->lock);
		if (id >= UMAD_MAX_AGENTS || !f->agent[id].used) {
			pthread_mutex_unlock(&f->lock);
			errno = EINVAL;
			return -1;
		}
		f->agent[id].used = false; /* its sends still out end unseen */
		pthread_mutex_unlock(&f->lock);
		return 0;
	case UMAD_ENABLE_PKEY:
		return 0; /* the 64-byte header is the only one softib has */
	default:
		/* REGISTER_AGENT2 among them: libibumad falls back to the
		 * first interface on EINVAL, as with older kernels.  Others
		 * (FIONBIO ...) are the descriptor's: ENOTTY hands them on. */
		errno = _IOC_TYPE(request) == UMAD_IOC_MAGIC ? EINVAL : ENOTTY;
		return -1;
	}
}

/* The calls on a descriptor hold its file while they run (file_get);
 * letting go keeps the call's errno. */
static void file_done(struct umad_file *f)
{
	int e = errno;

	file_put(f);
	errno = e;
}

static int umad_ioctl(int fd, unsigned long request, void *arg)
{
	struct umad_file *f = file_get(fd);
	int rc;

	if (!f) {
		errno = EBADF;
		return -1;
	}
	rc = ioctl_on(f, request, arg);
	file_done(f);
	return rc;
}

/* ---------------------------------------------------------------- write: send */

/* An RMPP ACK of segment seg back to where the answer came from (IBA
 * 13.6.2.2), under its TID, with room for UMAD_RMPP_WINDOW more. */
static void rmpp_ack(struct umad_send *s, const struct sib_mad_send_wc *wc, uint32_t seg)
{
	const struct sib_mad_addr *a = wc->resp->a;
	struct sib_mad_send_req req = { .port_num = SIB_UMAD_PORT, .dst = *wc->dst };
	uint8_t ack[IB_MAD_BYTES];
	uint32_t be;

	memcpy(ack, wc->resp->mad, UMAD_SA_HDR);
	memset(ack + UMAD_SA_HDR, 0, sizeof(ack) - UMAD_SA_HDR);
	ack[25] = IB_RMPP_TYPE_ACK;
	ack[26] = (uint8_t)((ack[26] & 0xf8) | IB_RMPP_FLAG_ACTIVE);
	ack[27] = 0;
	be = htonl(seg);
	memcpy(ack + 28, &be, 4);
	be = htonl(seg + UMAD_RMPP_WINDOW);
	memcpy(ack + 32, &be, 4);
	req.addr = *a;
	req.addr.DLID = a->SLID;
	req.addr.SLID = a->DLID;
	req.addr.DestQP = a->SrcQP;
	req.addr.SrcQP = a->DestQP;
	req.mad = ack;
	req.tid = wc->tid;
	sib_mad_post(&s->f->hca->node.mads, s->layer, &req, NULL);
}

/*
 * One segment of an SA answer that travels by RMPP (sa.h's conventions:
 * 200 bytes of records a segment, the last one's PayloadLength its own
 * bytes with the SA header).  True once the last one is in (s->rbuf then
 * holds the whole answer, s->rlen bytes); a duplicate, a gap or nonsense
 * is ACKed at what is in order and waited past, as the sender resends.
 */
static bool rmpp_take(struct umad_send *s, const struct sib_mad_send_wc *wc)
{
	const uint8_t *m = wc->resp->mad;
	uint32_t seg, paylen, n;
	bool last = m[26] & IB_RMPP_FLAG_LAST;
	uint8_t *nb;

	memcpy(&seg, m + 28, 4);
	seg = ntohl(seg);
	memcpy(&paylen, m + 32, 4);
	paylen = ntohl(paylen);
	if (seg == 1)
		s->next_seg = 1; /* the sender started over */
	if (seg != s->next_seg) {
		if (s->next_seg > 1)
			rmpp_ack(s, wc, s->next_seg - 1);
		return false;
	}
	n = last ? (paylen >= IB_SA_CLASS_HDR_BYTES ? paylen - IB_SA_CLASS_HDR_BYTES : 0)
		 : IB_SA_DATA_BYTES;
	if (n > IB_SA_DATA_BYTES || (seg == 1 ? 0 : s->rlen) + n + UMAD_SA_HDR > UMAD_RMPP_MAX)
		return false;
	if (seg == 1) {
		free(s->rbuf);
		s->rbuf = NULL;
		s->rlen = UMAD_SA_HDR;
	}
	if (!(nb = realloc(s->rbuf, s->rlen + n)))
		return false;
	s->rbuf = nb;
	if (seg == 1)
		memcpy(s->rbuf, m, UMAD_SA_HDR);
	memcpy(s->rbuf + s->rlen, m + UMAD_SA_HDR, n);
	s->rlen += n;
	s->next_seg++;
	rmpp_ack(s, wc, seg);
	return last;
}

static enum sib_mad_verdict send_done(void *owner, const struct sib_mad_send_wc *wc)
{
	struct umad_send *s = wc->context;
	struct umad_hdr h = s->hdr;

	(void)owner;
	switch (wc->status) {
	case SIB_MAD_RESENT:
		return SIB_MAD_DONE;
	case SIB_MAD_RESPONSE: {
		const struct sib_mad_addr *a = wc->resp->a;
		const uint8_t *m = wc->resp->mad;

		memset(&h, 0, sizeof(h));
		h.agent_id = s->hdr.agent_id;
		h.qpn = htonl(a->SrcQP);
		h.qkey = htonl(a->Q_Key);
		h.lid = htons(a->SLID);
		h.sl = a->SL;
		/* An SA answer by RMPP for an agent that asked for RMPP: the
		 * segments put together, as the kernel does, and cut to the
		 * last segment's PayloadLength even when it is the only one
		 * (saquery counts records by the length it reads). */
		if (s->rmpp && m[1] == IB_MGMT_CLASS_SUBN_ADM && (m[26] & IB_RMPP_FLAG_ACTIVE) &&
		    m[25] == IB_RMPP_TYPE_DATA) {
			if (!rmpp_take(s, wc))
				return SIB_MAD_MORE;
			enqueue(s->f, &h, s->rbuf, s->rlen);
			break;
		}
		enqueue(s->f, &h, m, IB_MAD_BYTES);
		break;
	}
	case SIB_MAD_TIMEOUT:
		h.status = ETIMEDOUT; /* the request comes back (umad_send(3)) */
		enqueue(s->f, &h, s->mad, IB_MAD_BYTES);
		break;
	case SIB_MAD_CANCELED:
		break;
	}
	file_put(s->f);
	free(s->rbuf);
	free(s);
	return SIB_MAD_DONE;
}

/* Where a MAD to dlid leaves for: the cable on a fabric, this port's own
 * socket for its own LID or a directed route that ends here, else where
 * the SA says the LID lives (the SM's LID, and a directed route's first
 * hop, in a subnet without switches: the SM's port, the far end of every
 * port's cable). */
static int destination(struct sib_hca *hca, uint16_t dlid, bool dr_here, struct sib_endpoint *ep)
{
	struct sib_node *node = &hca->node;
	struct sib_port_mgmt *pm = &node->mgmt[0];
	uint16_t my_lid;

	pthread_mutex_lock(&node->lock);
	my_lid = node->ports[0].LID;
	if (pm->link && (dr_here || (dlid && dlid == my_lid))) {
		*ep = pm->link->local;
		pthread_mutex_unlock(&node->lock);
		return 0;
	}
	if (pm->fabric) {
		*ep = pm->cable;
		pthread_mutex_unlock(&node->lock);
		return 0;
	}
	if (dlid == SIB_LID_PERMISSIVE || (dlid && dlid == node->ports[0].SMLID)) {
		int rc = pm->sm_heard ? 0 : -ENETDOWN;

		*ep = pm->sm_ep;
		pthread_mutex_unlock(&node->lock);
		return rc;
	}
	pthread_mutex_unlock(&node->lock);
	return sib_sa_resolve_lid(node, SIB_UMAD_PORT, dlid, ep);
}

/* req's port, destination and address for a MAD with header h from
 * agent ag; 0 or a negative errno.  A directed-route SMP goes with the
 * permissive LID as its SLID too, as softib-sm's (mgmt/mad_packet.h): on
 * its directed part no LFT need know the sender yet. */
static int mad_route(struct umad_file *f, const struct umad_hdr *h, const struct umad_agent *ag,
		     const uint8_t *mad, bool dr_here, struct sib_mad_send_req *req)
{
	uint16_t my_lid;
	int rc;

	memset(req, 0, sizeof(*req));
	req->port_num = SIB_UMAD_PORT;
	rc = destination(f->hca, ntohs(h->lid), dr_here, &req->dst);
	if (rc)
		return rc == -ENOENT ? -EHOSTUNREACH : rc;
	pthread_mutex_lock(&f->hca->node.lock);
	my_lid = f->hca->node.ports[0].LID;
	pthread_mutex_unlock(&f->hca->node.lock);
	req->addr.DLID = ntohs(h->lid);
	/* the MAD's class, not the agent's: an SM answers LID-routed SMPs
	 * through its directed-route agent */
	req->addr.SLID = my_lid && mad[1] != IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE
				 ? my_lid
				 : SIB_LID_PERMISSIVE;
	req->addr.SL = h->sl & 0xf;
	req->addr.P_Key = 0xffff;
	req->addr.DestQP = ntohl(h->qpn) & 0xffffff;
	req->addr.SrcQP = ag->qpn ? SIB_QP1 : SIB_QP0;
	req->addr.Q_Key = ntohl(h->qkey);
	return 0;
}

/*
 * A response longer than one MAD (an SA GetTableResp an SM wrote whole,
 * IBA 13.6): cut into RMPP DATA segments of 200 bytes of records, each
 * behind the SA header, and sent at once.  The requester's ACKs are not
 * waited for (deliver_request drops them): a lost segment makes it ask
 * again.  Other classes' RMPP: EINVAL.
 */
static ssize_t rmpp_send(struct umad_file *f, const struct umad_hdr *h, const struct umad_agent *ag,
			 const uint8_t *mad, size_t len)
{
	const size_t hdr = UMAD_SA_HDR;
	struct sib_mad_send_req req;
	uint32_t dlen, n;
	int rc;

	if (mad[1] != IB_MGMT_CLASS_SUBN_ADM || !sib_mad_is_response(mad) ||
	    !(mad[26] & IB_RMPP_FLAG_ACTIVE) || len < hdr || len > (1u << 24)) {
		sib_warn("umad: a MAD of %zu bytes of class 0x%02x: only SA responses are cut "
			 "into RMPP segments", len, mad[1]);
		errno = EINVAL;
		return -1;
	}
	rc = mad_route(f, h, ag, mad, false, &req);
	if (rc) {
		errno = -rc;
		return -1;
	}
	dlen = (uint32_t)(len - hdr);
	n = ib_sa_rmpp_segments(dlen);
	for (uint32_t i = 1; i <= n; i++) {
		uint8_t seg[IB_MAD_BYTES] = { 0 };
		uint32_t off = (i - 1) * IB_SA_DATA_BYTES, chunk = dlen - off;
		uint32_t be;

		if (chunk > IB_SA_DATA_BYTES)
			chunk = IB_SA_DATA_BYTES;
		memcpy(seg, mad, hdr);
		memcpy(seg + hdr, mad + hdr + off, chunk);
		seg[24] = IB_RMPP_VERSION;
		seg[25] = IB_RMPP_TYPE_DATA;
		seg[26] = (uint8_t)((mad[26] & 0xf8) | ib_sa_rmpp_flags(dlen, i));
		seg[27] = 0;
		be = htonl(i);
		memcpy(seg + 28, &be, 4);
		be = htonl(ib_sa_rmpp_payload_length(dlen, i));
		memcpy(seg + 32, &be, 4);
		req.mad = seg;
		memcpy(&req.tid, seg + 8, sizeof(req.tid));
		req.tid = be64toh(req.tid);
		rc = sib_mad_post(&f->hca->node.mads, ag->layer, &req, NULL);
		if (rc) {
			errno = -rc;
			return -1;
		}
	}
	return (ssize_t)(len + sizeof(*h));
}

static ssize_t write_on(struct umad_file *f, const void *buf, size_t len)
{
	struct sib_mad_send_req req;
	const struct sib_mad_agent *la;
	struct umad_send *s;
	struct umad_agent ag;
	struct umad_hdr h;
	bool dr_here = false, request;
	int rc;

	if (!buf || len < sizeof(h) + UMAD_MAD_HDR) {
		errno = EINVAL;
		return -1;
	}
	memcpy(&h, buf, sizeof(h));
	pthread_mutex_lock(&f->lock);
	ag = h.agent_id < UMAD_MAX_AGENTS ? f->agent[h.agent_id] : (struct umad_agent){ 0 };
	pthread_mutex_unlock(&f->lock);
	if (!ag.used || !(la = ag.layer)) {
		sib_dbg("umad: a write for agent %u, which is not registered: EINVAL", h.agent_id);
		errno = EINVAL;
		return -1;
	}
	/* An SA response with RMPP active gets its RMPP header from the
	 * "kernel", however short (a GetTableResp always travels by RMPP,
	 * IBA 15.2.5.x; the SM leaves SegmentNumber and PayloadLength to us). */
	if (len > sizeof(h) + IB_MAD_BYTES ||
	    (len >= sizeof(h) + 27 && ((const uint8_t *)buf)[sizeof(h) + 1] == IB_MGMT_CLASS_SUBN_ADM &&
	     (((const uint8_t *)buf)[sizeof(h) + 26] & IB_RMPP_FLAG_ACTIVE) &&
	     sib_mad_is_response((const uint8_t *)buf + sizeof(h))))
		return rmpp_send(f, &h, &ag, (const uint8_t *)buf + sizeof(h), len - sizeof(h));
	if (!(s = calloc(1, sizeof(*s)))) {
		errno = ENOMEM;
		return -1;
	}
	s->f = f;
	s->hdr = h;
	s->layer = la;
	s->rmpp = ag.rmpp != 0;
	memcpy(s->mad, (const uint8_t *)buf + sizeof(h), len - sizeof(h));
	request = !sib_mad_is_response(s->mad);
	/* A directed-route request leaves as its first node sends it
	 * (IBA C14-9:1: HopPointer and the first ReturnPath entry). */
	if (s->mad[1] == IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE && request) {
		struct ib_dr_smp dr;
		const char *why;
		unsigned out;

		ib_dr_smp_decode(&dr, s->mad);
		switch (ib_dr_smp_depart(&dr, &out, &why)) {
		case IB_DR_FORWARD:
			if (out != SIB_UMAD_PORT) {
				free(s);
				errno = EINVAL;
				return -1;
			}
			break;
		case IB_DR_DELIVER:
			dr_here = true; /* HopCount 0: this port's own SMA */
			break;
		default:
			sib_dbg("umad: a directed-route SMP refused: %s", why);
			free(s);
			errno = EINVAL;
			return -1;
		}
		ib_dr_smp_encode(&dr, s->mad);
	}
	rc = mad_route(f, &h, &ag, s->mad, dr_here, &req);
	if (rc) {
		sib_dbg("umad: no route to LID %u: %s", ntohs(h.lid), strerror(-rc));
		free(s);
		errno = -rc;
		return -1;
	}
	req.mad = s->mad;
	/* A request keeps the caller's low TID half; the layer's agent id
	 * goes above it, as the kernel's hi_tid (consumers match 32 bits). */
	memcpy(&req.tid, s->mad + 8, sizeof(req.tid));
	req.tid = be64toh(req.tid);
	if (request)
		req.tid = (uint64_t)sib_mad_agent_id(&f->hca->node.mads, la) << 32 |
			  (req.tid & 0xffffffffu);
	if (request && h.timeout_ms) {
		req.timeout_ns = (uint64_t)h.timeout_ms * 1000000ull;
		req.retries = h.retries;
		req.fn = send_done;
		req.context = s;
		pthread_mutex_lock(&f->lock);
		f->refs++;
		pthread_mutex_unlock(&f->lock);
	}
	rc = sib_mad_post(&f->hca->node.mads, la, &req, NULL);
	if (rc)
		sib_dbg("umad: the send failed: %s", strerror(-rc));
	if (rc || !req.timeout_ns) {
		if (req.timeout_ns)
			file_put(f);
		free(s);
		if (rc) {
			errno = -rc;
			return -1;
		}
	}
	return (ssize_t)len;
}

/* ---------------------------------------------------------------- read */

static ssize_t read_on(struct umad_file *f, void *buf, size_t len)
{
	struct umad_pkt *p;
	uint64_t v;

	for (;;) {
		size_t need;

		pthread_mutex_lock(&f->lock);
		p = f->head;
		need = p ? sizeof(p->hdr) + p->len : 0;
		if (p && len >= need) {
			f->head = p->next;
			if (!f->head)
				f->tail = NULL;
			f->queued--;
			f->queued_bytes -= p->len;
			syscall(SYS_read, f->fd, &v, sizeof(v)); /* the count goes with it */
		} else if (p && p->len > IB_MAD_BYTES && len >= sizeof(p->hdr)) {
			/* A reassembled answer the buffer cannot hold: its header,
			 * with the length it needs, and ENOSPC; it stays queued
			 * (libibumad reads again with a bigger buffer). */
			memcpy(buf, &p->hdr, sizeof(p->hdr));
			pthread_mutex_unlock(&f->lock);
			errno = ENOSPC;
			return -1;
		}
		pthread_mutex_unlock(&f->lock);
		if (p && len < need) {
			errno = EINVAL; /* too small for the MAD: it stays queued */
			return -1;
		}
		if (p)
			break;
		if (syscall(SYS_fcntl, f->fd, F_GETFL) & O_NONBLOCK) {
			errno = EAGAIN;
			return -1;
		}
		struct pollfd pfd = { .fd = f->fd, .events = POLLIN };

		if (poll(&pfd, 1, -1) < 0 && errno == EINTR)
			return -1;
	}
	{
		ssize_t n = (ssize_t)(sizeof(p->hdr) + p->len);

		memcpy(buf, &p->hdr, sizeof(p->hdr));
		memcpy((uint8_t *)buf + sizeof(p->hdr), p->mad, p->len);
		free(p);
		return n;
	}
}

static ssize_t umad_write(int fd, const void *buf, size_t len)
{
	struct umad_file *f = file_get(fd);
	ssize_t n;

	if (!f) {
		errno = EBADF;
		return -1;
	}
	n = write_on(f, buf, len);
	file_done(f);
	return n;
}

static ssize_t umad_read(int fd, void *buf, size_t len)
{
	struct umad_file *f = file_get(fd);
	ssize_t n;

	if (!f) {
		errno = EBADF;
		return -1;
	}
	n = read_on(f, buf, len);
	file_done(f);
	return n;
}

const struct softib_cdev_ops sib_umad_cdev = {
	.name = SIB_UMAD_NAME,
	.major = SIB_UMAD_MAJOR,
	.minor = SIB_UMAD_MINOR,
	.open = umad_open,
	.write = umad_write,
	.read = umad_read,
	.close = umad_close,
	.ioctl = umad_ioctl,
};

/* ---------------------------------------------------------------- issm */

/* Holding issm31 open says "an SM is here": the port's PortInfo:
 * CapabilityMask has IsSM while it is open (IBA 14.2.5.6; the kernel's
 * issm does the same), as OpenSM holds it. */
static pthread_mutex_t issm_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sib_hca *issm_hca;
static int issm_fd = -1;

static int issm_open(int flags)
{
	struct sib_hca *hca;
	int fd;

	pthread_mutex_lock(&issm_lock);
	if (issm_fd >= 0) {
		pthread_mutex_unlock(&issm_lock);
		errno = EBUSY; /* one SM a port, as the kernel's issm */
		return -1;
	}
	if (!(hca = sib_hca_get())) {
		pthread_mutex_unlock(&issm_lock);
		return -1;
	}
	fd = eventfd(0, flags & O_CLOEXEC ? EFD_CLOEXEC : 0);
	if (fd < 0) {
		sib_hca_put(hca);
	} else {
		issm_hca = hca;
		issm_fd = fd;
		__atomic_store_n(&hca->node.is_sm, true, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&issm_lock);
	return fd;
}

static void issm_close(int fd)
{
	struct sib_hca *hca = NULL;

	pthread_mutex_lock(&issm_lock);
	if (fd == issm_fd) {
		hca = issm_hca;
		issm_hca = NULL;
		issm_fd = -1;
		__atomic_store_n(&hca->node.is_sm, false, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&issm_lock);
	sib_hca_put(hca);
}

const struct softib_cdev_ops sib_issm_cdev = {
	.name = SIB_ISSM_NAME,
	.major = SIB_UMAD_MAJOR,
	.minor = SIB_ISSM_MINOR,
	.open = issm_open,
	.close = issm_close,
};

__attribute__((constructor)) static void umad_register(void)
{
	if (softib_fs_add_cdev(&sib_umad_cdev) || softib_fs_add_cdev(&sib_issm_cdev))
		sib_warn("umad: /dev/infiniband/%s could not be added", SIB_UMAD_NAME);
}
