/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The topology file reader (fabric/topology.h): ibsim's netfile as ibsim's
 * examples and ibnetdiscover write it, softib's own port options, and each
 * way a file can be wrong, named with its line.  The fabrics shipped in
 * tests/fabric/ load and are what their comments say.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fabric/topology.c"

static char err[256];

static struct sib_topo parse_ok(const char *text)
{
	struct sib_topo t;

	if (sib_topo_parse(&t, text, "test", NULL, err, sizeof(err)))
		fail_msg("parse failed: %s", err);
	return t;
}

static const struct sib_topo_link *link_of(const struct sib_topo *t, const char *id, unsigned p)
{
	int i = sib_topo_find(t, id);

	assert_true(i >= 0);
	assert_true(p <= t->node[i].nports);
	return &t->node[i].port[p];
}

static void assert_cable(const struct sib_topo *t, const char *a, unsigned pa, const char *b,
			 unsigned pb)
{
	const struct sib_topo_link *la = link_of(t, a, pa), *lb = link_of(t, b, pb);

	assert_int_equal(la->peer, sib_topo_find(t, b));
	assert_int_equal(la->peer_port, pb);
	assert_int_equal(lb->peer, sib_topo_find(t, a));
	assert_int_equal(lb->peer_port, pa);
}

/* ibsim's own style: tabs, links written at both ends, ports unused. */
static void test_ibsim_style_file(void **state)
{
	struct sib_topo t = parse_ok("# two switches\n"
				     "\n"
				     "Switch\t8 \"SwA\"\n"
				     "[1]\t\"HcaA\"[1]\n"
				     "[3]\t\"SwB\"[3]\tw=2\n"
				     "[4]\t\"SwB\"[4]\n"
				     "\n"
				     "Switch 8 \"SwB\"\n"
				     "[3]\t\"SwA\"[3]\n"
				     "[4]\t\"SwA\"[4]\n"
				     "\n"
				     "Hca\t2 \"HcaA\"\n"
				     "[1]\t\"SwA\"[1]\n");

	(void)state;
	assert_int_equal(t.nnodes, 3);
	assert_int_equal(t.node[0].type, SIB_TOPO_SWITCH);
	assert_int_equal(t.node[0].nports, 8);
	assert_int_equal(t.node[2].type, SIB_TOPO_CA);
	assert_int_equal(t.node[2].nports, 2);
	assert_cable(&t, "SwA", 1, "HcaA", 1);
	assert_cable(&t, "SwA", 3, "SwB", 3);
	assert_cable(&t, "SwA", 4, "SwB", 4);
	assert_int_equal(link_of(&t, "SwA", 3)->width, 2);
	assert_int_equal(link_of(&t, "SwB", 3)->width, 2);
	assert_int_equal(link_of(&t, "SwA", 2)->peer, -1);
	assert_int_equal(link_of(&t, "HcaA", 2)->peer, -1);
	assert_int_equal(link_of(&t, "SwA", 0)->peer, -1);
	assert_string_equal(t.node[1].desc, "SwB");
	/* distinct GUIDs without keywords; a CA's ports follow its node GUID */
	assert_true(t.node[0].node_guid != t.node[1].node_guid);
	assert_true(sib_topo_port_guid(&t.node[2], 1) == t.node[2].node_guid + 1);
	assert_true(sib_topo_port_guid(&t.node[0], 5) == t.node[0].node_guid);
	assert_int_equal(t.node[0].node_guid >> 56, 0x02); /* locally administered */
	sib_topo_free(&t);
}

/* What ibnetdiscover prints: keywords, GUIDs in parentheses, comments with
 * descriptions and rates. */
static void test_ibnetdiscover_output(void **state)
{
	struct sib_topo t = parse_ok(
		"#\n# Topology file: generated on Tue Jan  1 00:00:00 2030\n#\n"
		"vendid=0x2c9\n"
		"devid=0xb924\n"
		"sysimgguid=0x8f10400411f56\n"
		"switchguid=0x8f10400411f56(8f10400411f56)\n"
		"Switch\t24 \"S-0008f10400411f56\"\t\t# \"ISR9024D Voltaire\" base port 0 lid 6 "
		"lmc 0\n"
		"[1]\t\"H-0002c9030000abc0\"[1](2c9030000abc1) \t\t# \"node1 HCA-1\" lid 3 4xQDR\n"
		"[2]\t\"H-0002c9030000abd0\"[1](2c9030000abd1) \t\t# \"node2 HCA-1\" lid 4 4xDDR\n"
		"\n"
		"vendid=0x2c9\n"
		"devid=0x673c\n"
		"sysimgguid=0x2c9030000abc3\n"
		"caguid=0x2c9030000abc0\n"
		"Ca\t2 \"H-0002c9030000abc0\"\t\t# \"node1 HCA-1\"\n"
		"[1](2c9030000abc1) \t\"S-0008f10400411f56\"[1]\t\t# lid 3 lmc 0 \"ISR9024D "
		"Voltaire\" lid 6 4xQDR\n"
		"\n"
		"caguid=0x2c9030000abd0\n"
		"Ca\t2 \"H-0002c9030000abd0\"\t\t# \"node2 HCA-1\"\n"
		"[1](2c9030000abd1) \t\"S-0008f10400411f56\"[2]\t\t# lid 4 lmc 0 \"ISR9024D "
		"Voltaire\" lid 6 4xDDR\n");
	int sw = sib_topo_find(&t, "S-0008f10400411f56"), h1 = sib_topo_find(&t, "H-0002c9030000abc0");

	(void)state;
	assert_int_equal(t.nnodes, 3);
	assert_true(t.node[sw].node_guid == 0x8f10400411f56ull);
	assert_true(t.node[sw].sys_image_guid == 0x8f10400411f56ull);
	assert_int_equal(t.node[sw].vendor_id, 0x2c9);
	assert_int_equal(t.node[sw].device_id, 0xb924);
	assert_string_equal(t.node[sw].desc, "ISR9024D Voltaire");
	assert_true(t.node[h1].node_guid == 0x2c9030000abc0ull);
	assert_true(sib_topo_port_guid(&t.node[h1], 1) == 0x2c9030000abc1ull);
	assert_int_equal(t.node[h1].device_id, 0x673c);
	assert_string_equal(t.node[h1].desc, "node1 HCA-1");
	assert_cable(&t, "S-0008f10400411f56", 2, "H-0002c9030000abd0", 1);
	/* 4xQDR, 4xDDR from the comments */
	assert_int_equal(link_of(&t, "S-0008f10400411f56", 1)->width, 2);
	assert_int_equal(link_of(&t, "S-0008f10400411f56", 1)->speed, 4);
	assert_int_equal(link_of(&t, "S-0008f10400411f56", 2)->speed, 2);
	/* keywords applied once: the second CA has no devid of its own */
	assert_int_equal(t.node[sib_topo_find(&t, "H-0002c9030000abd0")].device_id, 0);
	sib_topo_free(&t);
}

static void test_softib_port_options(void **state)
{
	struct sib_topo t = parse_ok("Switch 4 \"S\"\n"
				     "[1] \"A\"[1] gbit=2.5 lat=500n buf=4096\n"
				     "[2] \"B\"[1] lat=2u s=2 e=1\n"
				     "[3] \"C\"[1] lat=1m\n"
				     "\n"
				     "Hca 1 \"A\"\n\nHca 1 \"B\"\n\nHca 1 \"C\"\n");
	const struct sib_topo_link *l = link_of(&t, "S", 1);

	(void)state;
	assert_int_equal(l->mbit, 2500);
	assert_int_equal(l->delay_ns, 500);
	assert_int_equal(l->buf, 4096);
	assert_int_equal(link_of(&t, "A", 1)->mbit, 2500); /* both ends of the cable */
	assert_int_equal(link_of(&t, "S", 2)->delay_ns, 2000);
	assert_int_equal(link_of(&t, "S", 2)->speed, 2);
	assert_int_equal(link_of(&t, "S", 2)->ext_speed, 1);
	assert_int_equal(link_of(&t, "S", 3)->delay_ns, 1000000);
	sib_topo_free(&t);
}

static void expect_error(const char *text, unsigned line, const char *what)
{
	struct sib_topo t;
	char want[32];

	if (!sib_topo_parse(&t, text, "bad", NULL, err, sizeof(err)))
		fail_msg("accepted, expected \"%s\"", what);
	snprintf(want, sizeof(want), "bad:%u: ", line);
	if (strncmp(err, want, strlen(want)) || !strstr(err, what))
		fail_msg("said \"%s\", expected \"%s%s\"", err, want, what);
	assert_int_equal(t.nnodes, 0);
	assert_null(t.node);
}

static void test_bad_files_name_their_line(void **state)
{
	(void)state;
	expect_error("Switch 4 \"S\"\n[1] \"X\"[1]\n", 2, "which no record defines");
	expect_error("Switch 4 \"S\"\n[5] \"X\"[1]\n", 2, "1..4");
	expect_error("Switch 4 \"S\"\n[1] \"H\"[2]\n\nHca 1 \"H\"\n", 2, "has 1 ports, not 2");
	expect_error("Switch 4 \"S\"\n[1] \"H\"[1]\n[2] \"H\"[1]\n\nHca 1 \"H\"\n", 3,
		     "and to");
	expect_error("Switch 4 \"S\"\n[1] \"H\"[1]\n\nHca 1 \"H\"\n[1] \"S\"[2]\n", 5,
		     "and to");
	expect_error("Switch 4 \"S\"\n\nSwitch 4 \"S\"\n", 3, "defined twice");
	expect_error("Switch 4 \"S\"\n[1] \"S\"[1]\n", 2, "to itself");
	expect_error("Switch 4 \"S\"\n[1] \"H\"[1] bw=4\n\nHca 1 \"H\"\n", 2,
		     "unknown port option bw=");
	expect_error("Switch 4 \"S\"\n[1] \"H\"[1] w=0\n\nHca 1 \"H\"\n", 2, "1..31");
	expect_error("Switch 4 \"S\"\n[1] \"H\"[1] lat=5x\n\nHca 1 \"H\"\n", 2, "lat=5x");
	expect_error("Switch 4 \"S\"\n[1] \"H\"[1] gbit=0\n\nHca 1 \"H\"\n", 2, "gbit=0");
	expect_error("\n[1] \"H\"[1]\n", 2, "outside a record");
	expect_error("colour=3\n", 1, "unknown keyword colour");
	expect_error("switchguid=0\nSwitch 4 \"S\"\n", 1, "never 0");
	expect_error("do Unlink \"S\" 1\n", 1, "console command");
	expect_error("Switch 300 \"S\"\n", 1, "1..254 ports");
	expect_error("Router 4 \"R\"\n", 1, "Switch, Hca, Ca or Rt");
	expect_error("Switch 4 \"\"\n", 1, "nodeid");
	expect_error("switchguid=0x10\nSwitch 4 \"S\"\n\ncaguid=0x10\nHca 1 \"H\"\n", 5,
		     "share GUIDs");
	expect_error("# nothing\n", 1, "no Switch");
}

static void test_include_reads_relative_to_the_file(void **state)
{
	char dir[] = "/tmp/sib-topo.XXXXXX", path[300], err2[256];
	struct sib_topo t;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/hcas.topo", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("Hca 1 \"H1\"\n\nHca 1 \"H2\"\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/main.topo", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("include hcas.topo\n\nSwitch 4 \"S\"\n[1] \"H1\"[1]\n[2] \"H2\"[1]\n", f);
	fclose(f);
	assert_int_equal(sib_topo_load(&t, path, err2, sizeof(err2)), 0);
	assert_int_equal(t.nnodes, 3);
	assert_cable(&t, "S", 2, "H2", 1);
	sib_topo_free(&t);

	/* a file that includes itself stops at the depth limit */
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("include main.topo\n", f);
	fclose(f);
	assert_int_equal(sib_topo_load(&t, path, err2, sizeof(err2)), -1);
	assert_non_null(strstr(err2, "nest deeper"));
	unlink(path);
	snprintf(path, sizeof(path), "%s/hcas.topo", dir);
	unlink(path);
	rmdir(dir);
	assert_int_equal(sib_topo_load(&t, "/nonexistent/x.topo", err2, sizeof(err2)), -1);
	assert_non_null(strstr(err2, "No such file"));
}

static struct sib_topo load_shipped(const char *name)
{
	const char *top = getenv("SOFTIB_TOP");
	char path[512];
	struct sib_topo t;

	snprintf(path, sizeof(path), "%s/tests/fabric/%s", top ? top : ".", name);
	if (sib_topo_load(&t, path, err, sizeof(err)))
		fail_msg("%s", err);
	return t;
}

static unsigned count(const struct sib_topo *t, enum sib_topo_type type)
{
	unsigned n = 0;

	for (unsigned i = 0; i < t->nnodes; i++)
		n += t->node[i].type == type;
	return n;
}

/* Every switch reaches every other through switch links (breadth first). */
static bool connected(const struct sib_topo *t)
{
	int queue[SIB_TOPO_MAX_NODES], head = 0, tail = 0;
	bool seen[SIB_TOPO_MAX_NODES] = { false };
	unsigned reached = 0;

	queue[tail++] = 0;
	seen[0] = true;
	while (head < tail) {
		const struct sib_topo_node *n = &t->node[queue[head++]];

		reached++;
		for (unsigned p = 1; p <= n->nports; p++)
			if (n->port[p].peer >= 0 && !seen[n->port[p].peer]) {
				seen[n->port[p].peer] = true;
				queue[tail++] = n->port[p].peer;
			}
	}
	return reached == t->nnodes;
}

static void test_shipped_fabrics(void **state)
{
	static const struct {
		const char *file;
		unsigned switches, cas;
	} files[] = {
		{ "one-switch-8.topo", 1, 8 },
		{ "two-switches-2-links.topo", 2, 4 },
		{ "fat-tree-4x2.topo", 6, 8 },
		{ "irregular-16x14.topo", 16, 14 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct sib_topo t = load_shipped(files[i].file);

		if (count(&t, SIB_TOPO_SWITCH) != files[i].switches ||
		    count(&t, SIB_TOPO_CA) != files[i].cas)
			fail_msg("%s: %u switches and %u CAs", files[i].file,
				 count(&t, SIB_TOPO_SWITCH), count(&t, SIB_TOPO_CA));
		if (!connected(&t))
			fail_msg("%s is not connected", files[i].file);
		for (unsigned n = 0; n < t.nnodes; n++)
			if (t.node[n].type == SIB_TOPO_CA && t.node[n].port[1].peer < 0)
				fail_msg("%s: %s is cabled to nothing", files[i].file,
					 t.node[n].id);
		sib_topo_free(&t);
	}
	/* two links between the two switches */
	{
		struct sib_topo t = load_shipped("two-switches-2-links.topo");

		assert_cable(&t, "S1", 7, "S2", 7);
		assert_cable(&t, "S1", 8, "S2", 8);
		sib_topo_free(&t);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ibsim_style_file),
		cmocka_unit_test(test_ibnetdiscover_output),
		cmocka_unit_test(test_softib_port_options),
		cmocka_unit_test(test_bad_files_name_their_line),
		cmocka_unit_test(test_include_reads_relative_to_the_file),
		cmocka_unit_test(test_shipped_fabrics),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
