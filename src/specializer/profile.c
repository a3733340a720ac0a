/* SPDX-License-Identifier: BSD-2-Clause */
/* profile.c: configuration and profile maps of lb_xdp (profile.h). */
#include <stddef.h>
#include <string.h>
#include <bpf/bpf.h>
#include "specializer/profile.h"

static volatile struct lb_cfg *cfg_live(struct specializer *s)
{
	return (volatile struct lb_cfg *)s->cfg_map;
}

void sp_cfg_read(struct specializer *s, struct lb_cfg *out)
{
	volatile struct lb_cfg *c = cfg_live(s);

	out->tag = c->tag;
	out->version = c->version;
	out->feature_acl = c->feature_acl;
	out->feature_stats = c->feature_stats;
	out->n_backends = c->n_backends;
	out->vip_port = c->vip_port;
	out->acl_prefix = c->acl_prefix;
	out->default_verdict = c->default_verdict;
}

uint32_t sp_cfg_get(const struct lb_cfg *c, uint32_t field)
{
	uint32_t v;

	memcpy(&v, (const uint8_t *)c + sp_cfg_fields[field].offset, 4);
	return v;
}

void sp_cfg_set(struct specializer *s, uint32_t field, uint32_t v)
{
	volatile uint32_t *p = (volatile uint32_t *)((volatile uint8_t *)cfg_live(s) +
						     sp_cfg_fields[field].offset);

	*p = v;
}

json_t *sp_cfg_json(const struct lb_cfg *c)
{
	json_t *j = json_object();
	size_t i;

	for (i = 0; i < sp_n_cfg_fields; i++)
		json_object_set_new(j, sp_cfg_fields[i].name, json_integer(sp_cfg_get(c, (uint32_t)i)));
	return j;
}

void sp_prof_read(struct specializer *s, struct lb_prof *out)
{
	memcpy(out, (const void *)s->prof_map, sizeof(*out));
}

uint64_t sp_guard_total(const struct lb_prof *p)
{
	uint64_t t = 0;
	int i;

	for (i = 0; i < LB_NSITES; i++)
		t += p->guard_fail[i];
	return t;
}

void sp_prof_delta(const struct lb_prof *a, const struct lb_prof *b, struct lb_prof *d)
{
	/* __u64, not uint64_t (unsigned long): the same type as the fields,
	 * or strict aliasing lets the compiler drop the stores */
	const __u64 *x = &a->site[0][0], *y = &b->site[0][0];
	__u64 *z = &d->site[0][0];
	size_t i, n = (sizeof(*a) - offsetof(struct lb_prof, site)) / 8;

	memset(d, 0, sizeof(*d));
	for (i = 0; i < n; i++)
		z[i] = y[i] - x[i];
}

void sp_prog_stats(int fd, uint64_t *cnt, uint64_t *ns)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (fd >= 0 && !bpf_prog_get_info_by_fd(fd, &info, &len)) {
		*cnt = info.run_cnt;
		*ns = info.run_time_ns;
	}
}
