/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The routing engines (routing.h).  Distances are hop counts between
 * switches, computed once per switch a LID lives at.
 */
#include "fabric/routing.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum { FAR = INT_MAX / 2 };

/* Hop counts from a set of switches (each at 0). */
static void bfs_from(const struct sib_rt_fabric *f, const int *from, unsigned nfrom, int *dist,
		     int *queue)
{
	int head = 0, tail = 0;

	for (unsigned s = 0; s < f->nsw; s++)
		dist[s] = FAR;
	for (unsigned i = 0; i < nfrom; i++) {
		dist[from[i]] = 0;
		queue[tail++] = from[i];
	}
	while (head < tail) {
		int x = queue[head++];
		const struct sib_rt_switch *sx = &f->sw[x];

		for (unsigned p = 1; p <= sx->nports; p++) {
			int y = sx->peer[p];

			if (y >= 0 && dist[y] == FAR) {
				dist[y] = dist[x] + 1;
				queue[tail++] = y;
			}
		}
	}
}

static void bfs(const struct sib_rt_fabric *f, int from, int *dist, int *queue)
{
	bfs_from(f, &from, 1, dist, queue);
}

int sib_route_updn_roots(const struct sib_rt_fabric *f, int *roots)
{
	int *dist = malloc(2 * f->nsw * sizeof(int) + 1), best_ecc = FAR;
	bool *has_ca = calloc(f->nsw + 1, sizeof(bool)), any_ca = false;
	unsigned nroots = 0;

	if (!dist || !has_ca) {
		free(dist);
		free(has_ca);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < f->ndest; i++)
		if (f->dest[i].port && f->dest[i].sw >= 0 && (unsigned)f->dest[i].sw < f->nsw)
			any_ca = has_ca[f->dest[i].sw] = true;
	for (unsigned s = 0; s < f->nsw; s++) {
		int ecc = 0;

		bfs(f, (int)s, dist, dist + f->nsw);
		for (unsigned t = 0; t < f->nsw; t++)
			if ((has_ca[t] || !any_ca) && dist[t] != FAR && dist[t] > ecc)
				ecc = dist[t];
		if (ecc < best_ecc) {
			best_ecc = ecc;
			nroots = 0;
		}
		if (ecc == best_ecc)
			roots[nroots++] = (int)s;
	}
	free(dist);
	free(has_ca);
	return (int)nroots;
}

/* Per-destination-switch state of one engine run. */
struct run {
	const struct sib_rt_fabric *f;
	enum sib_rt_engine engine;
	int *level;	    /* updn: BFS level from the root */
	int *dist;	    /* minhop: hops to the target; updn: the legal route's length */
	int *down;	    /* updn: hops of the down-only route, FAR: none */
	int *queue;
	unsigned **load;    /* [switch][port]: LIDs routed out of it so far */
};

/* updn: does the cable from a to b point up? */
static bool up(const struct run *r, int a, int b)
{
	return r->level[b] < r->level[a] ||
	       (r->level[b] == r->level[a] && r->f->sw[b].guid < r->f->sw[a].guid);
}

/* updn distances to target t: down[] over down-only routes (from t, walk
 * up cables backwards), then dist[] for the rest, which climb first: from
 * every switch with a known distance, walk back down the cables that lead
 * up to it, shortest first (distances start uneven: a bucket queue). */
static void updn_dist(struct run *r, int t)
{
	const struct sib_rt_fabric *f = r->f;
	unsigned n = f->nsw;
	int head = 0, tail = 0;

	for (unsigned s = 0; s < n; s++)
		r->down[s] = r->dist[s] = FAR;
	r->down[t] = 0;
	r->queue[tail++] = t;
	while (head < tail) {
		int x = r->queue[head++];

		for (unsigned p = 1; p <= f->sw[x].nports; p++) {
			int y = f->sw[x].peer[p];

			/* y reaches x by a down cable when x -> y points up */
			if (y >= 0 && r->down[y] == FAR && up(r, x, y)) {
				r->down[y] = r->down[x] + 1;
				r->queue[tail++] = y;
			}
		}
	}
	for (unsigned s = 0; s < n; s++)
		r->dist[s] = r->down[s];
	/* distances are below 2n: relax in rounds of increasing distance */
	for (int d = 0; d < (int)(2 * n); d++)
		for (unsigned x = 0; x < n; x++) {
			if (r->dist[x] != d)
				continue;
			for (unsigned p = 1; p <= f->sw[x].nports; p++) {
				int y = f->sw[x].peer[p];

				if (y >= 0 && r->down[y] == FAR && up(r, y, (int)x) &&
				    r->dist[y] > d + 1)
					r->dist[y] = d + 1;
			}
		}
}

/* The output port of switch s toward target t: among the ports the
 * engine allows, the least loaded. */
static unsigned choose(struct run *r, int s)
{
	const struct sib_rt_switch *sw = &r->f->sw[s];
	unsigned best = SIB_RT_NONE, best_load = UINT_MAX;

	if (r->dist[s] == FAR)
		return SIB_RT_NONE;
	for (unsigned p = 1; p <= sw->nports; p++) {
		int n = sw->peer[p];
		bool ok;

		if (n < 0)
			continue;
		if (r->engine == SIB_RT_MINHOP)
			ok = r->dist[n] == r->dist[s] - 1;
		else if (r->down[s] != FAR) /* below: down only, staying below */
			ok = up(r, n, s) && r->down[n] == r->down[s] - 1;
		else /* climb toward the nearest switch it lies below */
			ok = up(r, s, n) && r->dist[n] == r->dist[s] - 1;
		if (ok && r->load[s][p] < best_load) {
			best = p;
			best_load = r->load[s][p];
		}
	}
	if (best != SIB_RT_NONE)
		r->load[s][best]++;
	return best;
}

static int by_switch_then_lid(const void *a, const void *b, void *arg)
{
	const struct sib_rt_dest *d = arg, *x = &d[*(const int *)a], *y = &d[*(const int *)b];

	if (x->sw != y->sw)
		return x->sw < y->sw ? -1 : 1;
	return x->lid < y->lid ? -1 : x->lid > y->lid;
}

int sib_route(const struct sib_rt_fabric *f, enum sib_rt_engine engine, int root, uint8_t **lft)
{
	unsigned n = f->nsw;
	struct run r = { .f = f, .engine = engine };
	int *order = NULL, rc = 0, last_t = -1;

	for (unsigned i = 0; i < f->ndest; i++)
		if (f->dest[i].sw < 0 || (unsigned)f->dest[i].sw >= n ||
		    f->dest[i].port > f->sw[f->dest[i].sw].nports || f->dest[i].lid > f->max_lid)
			return -EINVAL;
	if (engine == SIB_RT_UPDN && root >= 0 && (unsigned)root >= n)
		return -EINVAL;
	r.level = calloc(n, sizeof(int));
	r.dist = calloc(n, sizeof(int));
	r.down = calloc(n, sizeof(int));
	r.queue = calloc(n, sizeof(int));
	r.load = calloc(n, sizeof(*r.load));
	order = calloc(f->ndest > n ? f->ndest : n, sizeof(int));
	if (!r.level || !r.dist || !r.down || !r.queue || !r.load || !order) {
		rc = -ENOMEM;
		goto out;
	}
	for (unsigned s = 0; s < n; s++) {
		r.load[s] = calloc(f->sw[s].nports + 1u, sizeof(unsigned));
		if (!r.load[s]) {
			rc = -ENOMEM;
			goto out;
		}
		memset(lft[s], SIB_RT_NONE, f->max_lid + 1u);
	}
	if (engine == SIB_RT_UPDN) {
		int nroots = 1;

		if (root >= 0)
			order[0] = root; /* order[] is free until the sort below */
		else if ((nroots = sib_route_updn_roots(f, order)) <= 0) {
			rc = nroots ? nroots : -EINVAL;
			goto out;
		}
		bfs_from(f, order, (unsigned)nroots, r.level, r.queue);
	}
	/* LIDs grouped by the switch they live at, in LID order within it,
	 * so distances are computed once per switch. */
	for (unsigned i = 0; i < f->ndest; i++)
		order[i] = (int)i;
	qsort_r(order, f->ndest, sizeof(int), by_switch_then_lid, (void *)f->dest);
	for (unsigned i = 0; i < f->ndest; i++) {
		const struct sib_rt_dest *d = &f->dest[order[i]];

		if (d->sw != last_t) {
			if (engine == SIB_RT_MINHOP)
				bfs(f, d->sw, r.dist, r.queue);
			else
				updn_dist(&r, d->sw);
			last_t = d->sw;
		}
		for (unsigned s = 0; s < n; s++)
			lft[s][d->lid] = (int)s == d->sw ? d->port : (uint8_t)choose(&r, (int)s);
	}
out:
	if (r.load)
		for (unsigned s = 0; s < n; s++)
			free(r.load[s]);
	free(r.load);
	free(r.level);
	free(r.dist);
	free(r.down);
	free(r.queue);
	free(order);
	return rc;
}

int sib_route_engine_parse(const char *name)
{
	if (!strcmp(name, "minhop"))
		return SIB_RT_MINHOP;
	if (!strcmp(name, "updn"))
		return SIB_RT_UPDN;
	return -1;
}

const char *sib_route_engine_name(enum sib_rt_engine e)
{
	return e == SIB_RT_UPDN ? "updn" : "minhop";
}
