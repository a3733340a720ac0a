/* SPDX-License-Identifier: BSD-2-Clause */
/* attach.c: plan -> kernel links (see attach.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "engine/attach.h"
#include "common/log.h"

struct attacher {
	struct bpf_link **links;
	size_t n_links;
};

static struct bpf_link *attach_multi(const struct plan *p, size_t li,
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

		if (s->link != (int)li || n == l->n_sites)
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

struct attacher *attacher__new(const struct plan *p, const struct attacher_opts *opts)
{
	struct attacher *a;
	size_t i;
	int err = 0;

	if (!opts || !opts->entry_prog || !opts->return_prog) {
		errno = EINVAL;
		return NULL;
	}
	a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->links = calloc(p->n_links ? p->n_links : 1, sizeof(*a->links));
	if (!a->links) {
		free(a);
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < p->n_links; i++) {
		struct bpf_link *link = p->links[i].type == PLAN_LINK_USDT ?
					attach_usdt(p, i, opts) : attach_multi(p, i, opts);

		if (!link) {
			err = errno ? errno : EINVAL;
			break;
		}
		a->links[a->n_links++] = link;
	}
	if (err) {
		attacher__free(a);
		errno = err;
		return NULL;
	}
	return a;
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
	for (i = 0; i < a->n_links; i++)
		bpf_link__destroy(a->links[i]);
	free(a->links);
	free(a);
}
