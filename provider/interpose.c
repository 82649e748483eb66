/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The libibverbs entry points that never reach a provider (device list,
 * device GUID and index, GID and P_Key queries, completion channels,
 * device import; rdma-core's libibverbs/device.c, verbs.c).  libsoftib.so
 * exports exactly these, at the version nodes libibverbs uses
 * (softib.map), so LD_PRELOAD puts them in front of the library's own.
 * Anything that is not softib0's goes to the real function untouched.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "provider/fs_view.h"
#include "provider/softib.h"
#include "transport/caps.h"
#include "base/log.h"

/* The real function of the given version, looked up once. */
#define REAL(fn, ver)                                                                              \
	({                                                                                         \
		static __typeof__(&fn) real_##fn;                                                 \
		__typeof__(&fn) f_ = __atomic_load_n(&real_##fn, __ATOMIC_ACQUIRE);               \
		if (!f_) {                                                                         \
			f_ = (__typeof__(&fn))dlvsym(RTLD_NEXT, #fn, ver);                        \
			__atomic_store_n(&real_##fn, f_, __ATOMIC_RELEASE);                        \
		}                                                                                  \
		if (!f_)                                                                           \
			sib_err("libibverbs has no %s@%s: cannot forward", #fn, ver);              \
		f_;                                                                                \
	})

/* Set while ibv_import_device runs the real code, which must not see
 * softib0 (it would dereference our NULL sysfs). */
static __thread int hide_softib;

struct ibv_device **ibv_get_device_list(int *num_devices)
{
	__typeof__(&ibv_get_device_list) real = REAL(ibv_get_device_list, "IBVERBS_1.1");
	struct ibv_device **real_list = NULL, **list;
	/* softib0 only where this build's provider ABI is the library's. */
	int n = 0, extra = hide_softib || !softib_abi_check() ? 0 : 1;

	/* Always call the real one first: its first call initialises
	 * libibverbs (fork safety, VERBS_LOG_*).  With no RDMA stack it
	 * returns NULL with ENOSYS: softib0 is then the only device. */
	if (real)
		real_list = real(&n);
	if (!real_list)
		n = 0;
	list = calloc((size_t)n + (size_t)extra + 1, sizeof(*list));
	if (!list) {
		if (real_list)
			REAL(ibv_free_device_list, "IBVERBS_1.1")(real_list);
		if (num_devices)
			*num_devices = 0;
		errno = ENOMEM;
		return NULL;
	}
	if (real_list)
		memcpy(list, real_list, (size_t)n * sizeof(*list));
	if (extra) {
		list[n] = &softib_dev.vdev.device;
		/* The real ibv_free_device_list drops one reference per entry. */
		atomic_fetch_add(&softib_dev.vdev.refcount, 1);
	}
	/* The real array's holds now belong to our array: free() it, do not
	 * "free the list", which would drop them. */
	free(real_list);
	if (num_devices)
		*num_devices = n + extra;
	return list;
}

void ibv_free_device_list(struct ibv_device **list)
{
	/* Our array has the real layout (calloc'd, NULL-terminated, one
	 * reference per entry), so the real function frees it correctly. */
	__typeof__(&ibv_free_device_list) real = REAL(ibv_free_device_list, "IBVERBS_1.1");

	if (!list)
		return;
	if (real)
		real(list);
}

__be64 ibv_get_device_guid(struct ibv_device *device)
{
	if (softib_device_is_ours(device))
		return htobe64(sib_fs_node_guid());
	return REAL(ibv_get_device_guid, "IBVERBS_1.1")(device);
}

int ibv_get_device_index(struct ibv_device *device)
{
	/* softib0 has no kernel index; -1 is the documented "not available". */
	if (softib_device_is_ours(device))
		return -1;
	return REAL(ibv_get_device_index, "IBVERBS_1.9")(device);
}

/* Port and GID index checks shared by the GID queries; NULL + log if bad. */
static struct sib_port *gid_port(struct ibv_context *ctx, unsigned port_num, unsigned index,
				 const char *verb)
{
	struct sib_port *port = softib_port(to_sctx(ctx), port_num, verb);

	if (port && index >= SIB_GID_TBL_LEN) {
		sib_warn("%s on %s port %u: GID index %u is outside the GID table (%d entries)",
			 verb, SIB_DEV_NAME, port_num, index, SIB_GID_TBL_LEN);
		return NULL;
	}
	return port;
}

int ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index, union ibv_gid *gid)
{
	struct sib_port *port;

	if (!softib_context_is_ours(context))
		return REAL(ibv_query_gid, "IBVERBS_1.1")(context, port_num, index, gid);
	if (!gid) {
		sib_warn("query_gid on %s: gid is NULL", SIB_DEV_NAME);
		errno = EINVAL;
		return -1;
	}
	port = gid_port(context, port_num, index < 0 ? (unsigned)SIB_GID_TBL_LEN : (unsigned)index,
			"query_gid");
	if (!port) {
		errno = EINVAL;
		return -1;
	}
	sib_port_gid(port, (unsigned)index, gid->raw);
	return 0;
}

int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
		       enum ibv_gid_type_sysfs *type)
{
	if (!softib_context_is_ours(context))
		return REAL(ibv_query_gid_type, SIB_ABI_PRIVATE_NODE)(context, port_num, index,
								      type);
	if (!type || !gid_port(context, port_num, index, "query_gid_type")) {
		errno = EINVAL;
		return -1;
	}
	*type = IBV_GID_TYPE_SYSFS_IB_ROCE_V1; /* an IB GID (v1 and IB share the value) */
	return 0;
}

static void fill_gid_entry(struct sib_port *port, unsigned index, struct ibv_gid_entry *e)
{
	memset(e, 0, sizeof(*e));
	sib_port_gid(port, index, e->gid.raw);
	e->gid_index = index;
	e->port_num = port->port_num;
	e->gid_type = IBV_GID_TYPE_IB;
	e->ndev_ifindex = 0; /* no netdev behind an IB port */
}

static bool gid_is_zero(const union ibv_gid *gid)
{
	for (int i = 0; i < 16; i++)
		if (gid->raw[i])
			return false;
	return true;
}

int _ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num, uint32_t gid_index,
		      struct ibv_gid_entry *entry, uint32_t flags, size_t entry_size)
{
	struct ibv_gid_entry e;
	struct sib_port *port;

	if (!softib_context_is_ours(context))
		return REAL(_ibv_query_gid_ex, "IBVERBS_1.11")(context, port_num, gid_index, entry,
							       flags, entry_size);
	if (flags) {
		sib_warn("query_gid_ex on %s: flags 0x%x must be 0", SIB_DEV_NAME, flags);
		return EINVAL;
	}
	if (!entry || entry_size < sizeof(*entry)) {
		sib_warn("query_gid_ex on %s: entry_size %zu is smaller than ibv_gid_entry (%zu)",
			 SIB_DEV_NAME, entry_size, sizeof(*entry));
		return EINVAL;
	}
	port = gid_port(context, port_num > 0xff ? 0 : port_num, gid_index, "query_gid_ex");
	if (!port)
		return EINVAL;
	fill_gid_entry(port, gid_index, &e);
	if (gid_is_zero(&e.gid))
		return ENODATA; /* an empty slot, as the kernel reports it */
	memset(entry, 0, entry_size);
	memcpy(entry, &e, sizeof(e));
	return 0;
}

ssize_t _ibv_query_gid_table(struct ibv_context *context, struct ibv_gid_entry *entries,
			     size_t max_entries, uint32_t flags, size_t entry_size)
{
	struct softib_context *sctx;
	size_t n = 0;

	if (!softib_context_is_ours(context))
		return REAL(_ibv_query_gid_table, "IBVERBS_1.11")(context, entries, max_entries,
								  flags, entry_size);
	sctx = to_sctx(context);
	if (flags) {
		sib_warn("query_gid_table on %s: flags 0x%x must be 0", SIB_DEV_NAME, flags);
		return -EINVAL;
	}
	if (entry_size < sizeof(struct ibv_gid_entry) || (max_entries && !entries)) {
		sib_warn("query_gid_table on %s: entry_size %zu is smaller than ibv_gid_entry (%zu)",
			 SIB_DEV_NAME, entry_size, sizeof(struct ibv_gid_entry));
		return -EINVAL;
	}
	for (unsigned p = 1; p <= SIB_NUM_PORTS; p++) {
		struct sib_port *port = sib_hca_port(sctx->hca, p);

		for (unsigned i = 0; i < SIB_GID_TBL_LEN; i++) {
			struct ibv_gid_entry e;

			fill_gid_entry(port, i, &e);
			if (gid_is_zero(&e.gid))
				continue;
			if (n == max_entries) {
				sib_warn("query_gid_table on %s: %zu entries do not hold every valid GID",
					 SIB_DEV_NAME, max_entries);
				return -EINVAL;
			}
			char *slot = (char *)entries + n * entry_size;

			memset(slot, 0, entry_size);
			memcpy(slot, &e, sizeof(e));
			n++;
		}
	}
	return (ssize_t)n;
}

int ibv_query_pkey(struct ibv_context *context, uint8_t port_num, int index, __be16 *pkey)
{
	struct sib_port *port;
	uint16_t v;

	if (!softib_context_is_ours(context))
		return REAL(ibv_query_pkey, "IBVERBS_1.1")(context, port_num, index, pkey);
	port = softib_port(to_sctx(context), port_num, "query_pkey");
	if (!port || !pkey) {
		errno = EINVAL;
		return -1;
	}
	if (index < 0 || sib_port_pkey(port, (unsigned)index, &v)) {
		sib_warn("query_pkey on %s port %u: P_Key index %d is outside the P_Key table (%d entries)",
			 SIB_DEV_NAME, port_num, index, SIB_MAX_PKEYS);
		errno = EINVAL;
		return -1;
	}
	*pkey = htobe16(v);
	return 0;
}

int ibv_get_pkey_index(struct ibv_context *context, uint8_t port_num, __be16 pkey)
{
	struct sib_port *port;

	if (!softib_context_is_ours(context))
		return REAL(ibv_get_pkey_index, "IBVERBS_1.5")(context, port_num, pkey);
	port = softib_port(to_sctx(context), port_num, "get_pkey_index");
	if (!port) {
		errno = EINVAL;
		return -1;
	}
	for (unsigned i = 0; i < SIB_MAX_PKEYS; i++) {
		uint16_t v;

		if (!sib_port_pkey(port, i, &v) && v == be16toh(pkey))
			return (int)i;
	}
	errno = ENOENT;
	return -1; /* not in the table: the documented answer, not an error to log */
}

/* A completion channel on softib0: the library's struct, then the pipe's
 * write end that CQ events go to.  channel->fd is the read end. */
struct softib_comp_channel {
	struct ibv_comp_channel ch;
	int wr_fd;
};

struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
	struct softib_comp_channel *sch;
	int fds[2];

	if (!softib_context_is_ours(context))
		return REAL(ibv_create_comp_channel, "IBVERBS_1.0")(context);
	sch = calloc(1, sizeof(*sch));
	if (!sch) {
		errno = ENOMEM;
		return NULL;
	}
	if (pipe2(fds, O_CLOEXEC)) {
		int err = errno;

		sib_warn("create_comp_channel on %s: pipe: %s", SIB_DEV_NAME, strerror(err));
		free(sch);
		errno = err;
		return NULL;
	}
	/* Events never block the HCA; the reader decides about O_NONBLOCK. */
	if (fcntl(fds[1], F_SETFL, O_NONBLOCK)) {
		int err = errno;

		close(fds[0]);
		close(fds[1]);
		free(sch);
		errno = err;
		return NULL;
	}
	sch->ch.context = context;
	sch->ch.fd = fds[0];
	sch->ch.refcnt = 0;
	sch->wr_fd = fds[1];
	return &sch->ch;
}

int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct softib_comp_channel *sch;
	struct ibv_context *context;

	if (!channel || !softib_context_is_ours(channel->context))
		return REAL(ibv_destroy_comp_channel, "IBVERBS_1.0")(channel);
	context = channel->context;
	sch = softib_container_of(channel, struct softib_comp_channel, ch);
	/* ibv_create_cq / ibv_destroy_cq count users under context->mutex. */
	pthread_mutex_lock(&context->mutex);
	if (channel->refcnt) {
		pthread_mutex_unlock(&context->mutex);
		sib_warn("destroy_comp_channel on %s: %d CQ(s) still use this channel",
			 SIB_DEV_NAME, channel->refcnt);
		return EBUSY;
	}
	close(channel->fd);
	close(sch->wr_fd);
	pthread_mutex_unlock(&context->mutex);
	free(sch);
	return 0;
}

bool softib_comp_channel_is_ours(const struct ibv_comp_channel *ch)
{
	return ch && softib_context_is_ours(ch->context);
}

int softib_comp_channel_write_fd(const struct ibv_comp_channel *ch)
{
	if (!softib_comp_channel_is_ours(ch))
		return -1;
	return softib_container_of(ch, struct softib_comp_channel, ch)->wr_fd;
}

/*
 * A thread about to block for a completion event waits on softib's links
 * meanwhile and handles what arrives itself (hca/progress.h, the wake-up
 * rule): the packet that completes its work wakes it, and no other
 * thread.  Then the library's own code reads the event as always.  A
 * channel set O_NONBLOCK is read at once, as the caller asked.
 */
int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context)
{
	__typeof__(&ibv_get_cq_event) real = REAL(ibv_get_cq_event, "IBVERBS_1.1");
	int fl;

	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	if (softib_comp_channel_is_ours(channel) && (fl = fcntl(channel->fd, F_GETFL)) >= 0 &&
	    !(fl & O_NONBLOCK)) {
		int rc = sib_progress_wait(to_sctx(channel->context)->hca, channel->fd);
		struct ibv_cq *own = softib_comp_channel_take_own(channel);

		/* What the library's code does with a record it read; the
		 * provider's cq_event has nothing to do (cq.c). */
		if (own) {
			*cq = own;
			*cq_context = own->cq_context;
			return 0;
		}
		if (rc == -EINTR) { /* as the read would have been */
			errno = EINTR;
			return -1;
		}
	}
	return real(channel, cq, cq_context);
}

struct ibv_context *ibv_import_device(int cmd_fd)
{
	__typeof__(&ibv_import_device) real = REAL(ibv_import_device, "IBVERBS_1.10");
	struct ibv_context *ctx;
	struct stat st;

	/* A softib context's cmd_fd is an O_PATH placeholder (device.c) with
	 * no kernel object behind it to share the context's objects through. */
	if (cmd_fd < 0 || fstat(cmd_fd, &st) || !S_ISCHR(st.st_mode)) {
		softib_probe_refused("import_device: fd %d is not a uverbs command fd; %s contexts "
				     "cannot be imported",
				     cmd_fd, SIB_DEV_NAME);
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!real) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	hide_softib++;
	ctx = real(cmd_fd);
	hide_softib--;
	return ctx;
}
