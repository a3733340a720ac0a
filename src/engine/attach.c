/* SPDX-License-Identifier: BSD-2-Clause */
/* attach.c: plan -> kernel links (see attach.h). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "engine/attach.h"
#include "common/log.h"

/* one kernel link: a plan link, or (opts.split) the sites of one
 * descriptor in a plan link; link is NULL while detached */
struct att_link {
	struct bpf_link *link;
	size_t plan_link;
	int desc;		/* -1: every descriptor of the plan link */
};

struct attacher {
	struct att_link *links;
	size_t n_links, cap;
	const struct plan *p;
	struct attacher_opts o;
};

static int site_desc(const struct plan_site *s)
{
	return (int)(s->cookie & PLAN_COOKIE_DESC_MASK);
}

/* the sites of plan link li (of descriptor desc, or all when desc < 0) */
static struct bpf_link *attach_multi(const struct plan *p, size_t li, int desc,
				     const struct attacher_opts *o)
{
	const struct plan_link *l = &p->links[li];
	const char *path = p->targets[l->target].path;
	LIBBPF_OPTS(bpf_uprobe_multi_opts, mo);
	unsigned long *offsets = NULL, *ref_ctr = NULL;
	__u64 *cookies = NULL;
	struct bpf_link *link = NULL;
	bool any_ref = false;
	size_t i, n = 0;

	offsets = calloc(l->n_sites, sizeof(*offsets));
	ref_ctr = calloc(l->n_sites, sizeof(*ref_ctr));
	cookies = calloc(l->n_sites, sizeof(*cookies));
	if (!offsets || !ref_ctr || !cookies) {
		errno = ENOMEM;
		goto out;
	}
	for (i = 0; i < p->n_sites; i++) {
		const struct plan_site *s = &p->sites[i];

		if (s->link != (int)li || n == l->n_sites || (desc >= 0 && site_desc(s) != desc))
			continue;
		offsets[n] = s->file_offset;
		ref_ctr[n] = s->ref_ctr_offset;
		cookies[n] = s->cookie;
		any_ref |= s->ref_ctr_offset != 0;
		n++;
	}
	mo.offsets = offsets;
	mo.cookies = cookies;
	mo.ref_ctr_offsets = any_ref ? ref_ctr : NULL;
	mo.cnt = n;
	mo.retprobe = l->type == PLAN_LINK_URETPROBE_MULTI;
	link = bpf_program__attach_uprobe_multi(
		mo.retprobe ? o->return_prog : o->entry_prog,
		o->pid > 0 ? o->pid : -1, path, NULL, &mo);
	if (!link)
		pr_warn("attach: link %zu (%s, %zu sites in %s): %s\n", li,
			plan_link_type_str(l->type), n, path, strerror(errno));
out:
	free(offsets);
	free(ref_ctr);
	free(cookies);
	return link;
}

static struct bpf_link *attach_usdt(const struct plan *p, size_t li,
				    const struct attacher_opts *o)
{
	const struct plan_link *l = &p->links[li];
	const char *path = p->targets[l->target].path;
	LIBBPF_OPTS(bpf_usdt_opts, uo, .usdt_cookie = (__u64)l->descriptor);
	struct bpf_link *link;

	if (!o->usdt_prog) {
		pr_warn("attach: link %zu is USDT but no USDT program was given\n", li);
		errno = EINVAL;
		return NULL;
	}
	link = bpf_program__attach_usdt(o->usdt_prog, o->pid > 0 ? o->pid : -1, path,
					l->usdt_provider, l->usdt_name, &uo);
	if (!link)
		pr_warn("attach: link %zu (usdt %s:%s in %s): %s\n", li, l->usdt_provider,
			l->usdt_name, path, strerror(errno));
	return link;
}

static struct bpf_link *attach_one(const struct attacher *a, const struct att_link *l)
{
	if (a->p->links[l->plan_link].type == PLAN_LINK_USDT)
		return attach_usdt(a->p, l->plan_link, &a->o);
	return attach_multi(a->p, l->plan_link, l->desc, &a->o);
}

static int add_link(struct attacher *a, size_t li, int desc)
{
	struct att_link *l;

	if (a->n_links == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 16;
		struct att_link *n = realloc(a->links, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		a->links = n;
		a->cap = cap;
	}
	l = &a->links[a->n_links];
	l->plan_link = li;
	l->desc = desc;
	l->link = attach_one(a, l);
	if (!l->link)
		return errno ? -errno : -EINVAL;
	a->n_links++;
	return 0;
}

/* opts.split: one link per descriptor of a uprobe_multi plan link */
static int add_split(struct attacher *a, size_t li)
{
	const struct plan *p = a->p;
	size_t i, k;
	int err;

	for (i = 0; i < p->n_sites; i++) {
		int d = site_desc(&p->sites[i]);
		bool seen = false;

		if (p->sites[i].link != (int)li)
			continue;
		for (k = 0; k < i && !seen; k++)
			seen = p->sites[k].link == (int)li && site_desc(&p->sites[k]) == d;
		if (seen)
			continue;
		err = add_link(a, li, d);
		if (err)
			return err;
	}
	return 0;
}

struct attacher *attacher__new(const struct plan *p, const struct attacher_opts *opts)
{
	struct attacher *a;
	size_t i;
	int err = 0, pass;

	if (!opts || !opts->entry_prog || !opts->return_prog) {
		errno = EINVAL;
		return NULL;
	}
	a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->p = p;
	a->o = *opts;
	/* return links first (as set_pass does): an entry attached before
	 * its return pushes a stash for every call that returns before the
	 * return link exists, and a hot function (PostgreSQL's
	 * LWLockAcquire, 150 k calls/s) overflows its per-thread stash for
	 * good in the gap: every later call then balances push and pop above
	 * PB_STASH_DEPTH, and its ACQUIREs and spans are lost */
	for (pass = 0; pass < 2 && !err; pass++)
		for (i = 0; i < p->n_links && !err; i++) {
			if ((p->links[i].type == PLAN_LINK_URETPROBE_MULTI) != !pass)
				continue;
			if (opts->split && p->links[i].type != PLAN_LINK_USDT)
				err = add_split(a, i);
			else
				err = add_link(a, i, p->links[i].type == PLAN_LINK_USDT ?
						     p->links[i].descriptor : -1);
		}
	if (err) {
		attacher__free(a);
		errno = -err;
		return NULL;
	}
	return a;
}

/* Return links before entry links when attaching, after them when
 * detaching: an entry never pushes a stash (arguments, a span's start)
 * that no return pops; a return without its entry is counted
 * (stash_missing) and, when it needs the arguments, dropped. */
static int set_pass(struct attacher *a, int desc, bool on, bool ret, size_t *changed)
{
	size_t i;
	int err = 0;

	for (i = 0; i < a->n_links; i++) {
		struct att_link *l = &a->links[i];

		if (l->desc != desc || !!l->link == on ||
		    (a->p->links[l->plan_link].type == PLAN_LINK_URETPROBE_MULTI) != ret)
			continue;
		if (on) {
			l->link = attach_one(a, l);
			if (!l->link) {
				err = errno ? -errno : -EINVAL;
				continue;
			}
		} else {
			bpf_link__destroy(l->link);	/* returns once no probe runs */
			l->link = NULL;
		}
		if (changed)
			(*changed)++;
	}
	return err;
}

int attacher__set_desc(struct attacher *a, int desc, bool on, size_t *changed)
{
	int err, err2;

	if (changed)
		*changed = 0;
	if (!a->o.split)
		return -EOPNOTSUPP;
	err = set_pass(a, desc, on, on, changed);
	err2 = set_pass(a, desc, on, !on, changed);
	return err ? err : err2;
}

/* At most this many threads destroy links at once. A link's destroy
 * removes its breakpoints at once but returns only after an RCU grace
 * period (tens of ms); one after another, a descriptor's return link kept
 * trapping through its entry link's wait, so a PostgreSQL close cost
 * 40-115 ms of probe time at full rate (issue 13). */
#define ATT_DETACH_WORKERS	32

struct att_detach {
	struct bpf_link **links;
	size_t n, next;
};

static void *detach_worker(void *arg)
{
	struct att_detach *d = arg;
	size_t i;

	while ((i = __atomic_fetch_add(&d->next, 1, __ATOMIC_RELAXED)) < d->n)
		bpf_link__destroy(d->links[i]);
	return NULL;
}

static bool in_descs(int desc, const uint32_t *descs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((int)descs[i] == desc)
			return true;
	return false;
}

int attacher__detach_descs(struct attacher *a, const uint32_t *descs, size_t n_descs,
			   size_t *changed)
{
	struct att_detach d = { 0 };
	pthread_t th[ATT_DETACH_WORKERS];
	size_t i, k, started = 0;

	if (changed)
		*changed = 0;
	if (!a->o.split)
		return -EOPNOTSUPP;
	d.links = calloc(a->n_links + 1, sizeof(*d.links));
	if (!d.links)
		return -ENOMEM;
	for (i = 0; i < a->n_links; i++) {
		struct att_link *l = &a->links[i];

		if (!l->link || !in_descs(l->desc, descs, n_descs))
			continue;
		d.links[d.n++] = l->link;
		l->link = NULL;
	}
	for (k = 0; k + 1 < d.n && k < ATT_DETACH_WORKERS; k++) {
		if (pthread_create(&th[started], NULL, detach_worker, &d))
			break;
		started++;
	}
	detach_worker(&d);	/* this thread works too, and alone if no
				 * worker could start */
	for (k = 0; k < started; k++)
		pthread_join(th[k], NULL);
	if (changed)
		*changed = d.n;
	free(d.links);
	return 0;
}

size_t attacher__n_links(const struct attacher *a)
{
	return a ? a->n_links : 0;
}

void attacher__free(struct attacher *a)
{
	size_t i;

	if (!a)
		return;
	/* the reverse of attaching: entry links before return links */
	for (i = a->n_links; i-- > 0;)
		bpf_link__destroy(a->links[i].link);
	free(a->links);
	free(a);
}
