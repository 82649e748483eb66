/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * XRC domains: open_xrcd with the file-sharing semantics of
 * ibv_open_xrcd(3) (the same file means the same domain), close_xrcd.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "provider/handles.h"
#include "provider/queues.h"
#include "base/log.h"

static struct ibv_xrcd *softib_open_xrcd(struct ibv_context *ctx,
					 struct ibv_xrcd_init_attr *attr)
{
	const uint32_t known = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
	struct softib_xrcd *sx;
	struct stat st = { 0 };
	bool has_file;
	int err;

	if (attr->comp_mask & ~known) {
		sib_warn("open_xrcd: unknown comp_mask bits 0x%x", attr->comp_mask & ~known);
		errno = EINVAL;
		return NULL;
	}
	if ((attr->comp_mask & known) != known) {
		sib_warn("open_xrcd: comp_mask must carry IBV_XRCD_INIT_ATTR_FD and _OFLAGS");
		errno = EINVAL;
		return NULL;
	}
	has_file = attr->fd != -1;
	if (has_file && fstat(attr->fd, &st)) {
		sib_warn("open_xrcd: fd %d is not an open file", attr->fd);
		errno = EBADF;
		return NULL;
	}
	sx = sib_obj_new(SIB_OBJ_XRCD, sizeof(*sx));
	if (!sx) {
		errno = ENOMEM;
		return NULL;
	}
	err = sib_xrcd_open(has_file, st.st_dev, st.st_ino, attr->oflags, &sx->x);
	if (err) {
		if (err == EAGAIN)
			sib_warn("open_xrcd: no XRC domain for this file yet and no O_CREAT");
		else if (err == EINVAL && has_file && (attr->oflags & O_EXCL))
			sib_warn("open_xrcd: O_EXCL, but the file already has an XRC domain");
		else
			sib_warn("open_xrcd: oflags 0x%x are not valid (O_CREAT, O_EXCL)",
				 attr->oflags);
		sib_obj_discard(sx);
		errno = err;
		return NULL;
	}
	sx->vxrcd.xrcd.context = ctx;
	sx->vxrcd.comp_mask = VERBS_XRCD_HANDLE;
	sx->vxrcd.handle = sib_xrcd_num(sx->x);
	return &sx->vxrcd.xrcd;
}

static int softib_close_xrcd(struct ibv_xrcd *xrcd)
{
	struct softib_xrcd *sx = to_sxrcd(xrcd);
	int err = sib_obj_claim(sx, "close_xrcd");

	if (err)
		return err;
	err = sib_xrcd_close(sx->x);
	if (err) {
		sib_warn("close_xrcd: XRC SRQs or XRC_RECV QPs still use the domain");
		sib_obj_keep(sx);
		return err;
	}
	sib_obj_destroyed(sx);
	return 0;
}

const struct verbs_context_ops softib_xrcd_ops = {
	.open_xrcd = softib_open_xrcd,
	.close_xrcd = softib_close_xrcd,
};
