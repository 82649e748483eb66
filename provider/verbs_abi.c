/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Is the libibverbs we were loaded into the one this libsoftib.so was built
 * for?  Checked once, before softib0 is listed: the private node, the
 * newest public node, and where the library reads verbs_qp.comp_mask
 * (verbs_abi.h lists what differs between layouts).  The private functions
 * are looked up here, at the build's node, rather than linked, so that a
 * mismatch ends in one log line instead of ld.so stopping the program.
 */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "provider/softib.h"
#include "base/log.h"

static struct softib_abi abi;
static const struct softib_abi *abi_ok;
static pthread_once_t abi_once = PTHREAD_ONCE_INIT;

/* The newest public node each later release added, and one symbol in it. */
static const struct {
	const char *node, *symbol;
} public_nodes[] = {
	{ "IBVERBS_1.18", "ibv_create_comp_cntr" }, { "IBVERBS_1.17", "ibv_alloc_buf" },
	{ "IBVERBS_1.16", "ibv_query_port_speed" }, { "IBVERBS_1.15", "ibv_reg_mr_ex" },
	{ "IBVERBS_1.14", "ibv_query_qp_data_in_order" },
};

static const char *newest_public_node(void *lib)
{
	for (size_t i = 0; i < sizeof(public_nodes) / sizeof(public_nodes[0]); i++)
		if (dlvsym(lib, public_nodes[i].symbol, public_nodes[i].node))
			return public_nodes[i].node;
	return "no IBVERBS_1.14";
}

/* The private node the library has, named for the log line. */
static void private_node(void *lib, char *buf, size_t size)
{
	char node[32];

	for (int n = 30; n < 200; n++) {
		snprintf(node, sizeof(node), "IBVERBS_PRIVATE_%d", n);
		if (dlvsym(lib, "verbs_set_ops", node)) {
			snprintf(buf, size, "%s", node);
			return;
		}
	}
	snprintf(buf, size, "no IBVERBS_PRIVATE_ node we can find");
}

/* ibv_qp_to_qp_ex (public, every release) answers only when it finds
 * VERBS_QP_EX in comp_mask, read at the library's offsetof(verbs_qp,
 * comp_mask): set it at ours alone, in a zeroed verbs_qp with room behind
 * it for a library whose ibv_qp_ex is longer. */
static bool qp_layout_matches(void)
{
	union {
		struct verbs_qp vqp;
		char room[sizeof(struct verbs_qp) + 64];
	} probe;

	memset(&probe, 0, sizeof(probe));
	probe.vqp.comp_mask = VERBS_QP_EX;
	return ibv_qp_to_qp_ex(&probe.vqp.qp) == &probe.vqp.qp_ex;
}

static void abi_check_once(void)
{
	const char *public;
	char priv[48], path[256] = "libibverbs.so.1";
	struct link_map *lm = NULL;
	void *lib;

	lib = dlopen("libibverbs.so.1", RTLD_LAZY | RTLD_NOLOAD);
	if (!lib)
		lib = dlopen("libibverbs.so.1", RTLD_LAZY);
	if (!lib) {
		sib_err("cannot find the libibverbs we run in (%s); softib0 is not listed",
			dlerror());
		return;
	}
	if (!dlinfo(lib, RTLD_DI_LINKMAP, &lm) && lm && lm->l_name && *lm->l_name)
		snprintf(path, sizeof(path), "%s", lm->l_name);
	abi.init_and_alloc_context = (__typeof__(abi.init_and_alloc_context))dlvsym(
		lib, "_verbs_init_and_alloc_context", SIB_ABI_PRIVATE_NODE);
	abi.uninit_context = (__typeof__(abi.uninit_context))dlvsym(lib, "verbs_uninit_context",
								    SIB_ABI_PRIVATE_NODE);
	abi.set_ops = (__typeof__(abi.set_ops))dlvsym(lib, "verbs_set_ops", SIB_ABI_PRIVATE_NODE);
	public = newest_public_node(lib);
	if (abi.init_and_alloc_context && abi.uninit_context && abi.set_ops &&
	    !strcmp(public, SIB_ABI_PUBLIC_NODE) && qp_layout_matches()) {
		abi_ok = &abi;
		return; /* the handle stays open: libsoftib.so links the library anyway */
	}
	private_node(lib, priv, sizeof(priv));
	sib_err("%s has the provider ABI %s, %s%s; this libsoftib.so was built for rdma-core %s "
		"(%s, %s, a %zu-byte struct ibv_qp_ex), so softib0 is not listed: rebuild softib "
		"against the rdma-core you run",
		path, priv, public,
		strcmp(priv, SIB_ABI_PRIVATE_NODE) || strcmp(public, SIB_ABI_PUBLIC_NODE)
			? ""
			: " with another struct ibv_qp_ex",
		SIB_ABI_RDMA_CORE, SIB_ABI_PRIVATE_NODE, SIB_ABI_PUBLIC_NODE,
		sizeof(struct ibv_qp_ex));
}

const struct softib_abi *softib_abi_check(void)
{
	pthread_once(&abi_once, abi_check_once);
	return abi_ok;
}
