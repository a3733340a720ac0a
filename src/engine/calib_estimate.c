// SPDX-License-Identifier: BSD-2-Clause
/* calib_estimate.c: `plan --estimate` (see calib_estimate.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <signal.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "engine/calib_estimate.h"
#include "contract/plan.h"
#include "common/clock.h"
#include "common/log.h"
#include "calib.skel.h"

#define EST_SLOTS 4096	/* = CALIB_SLOTS in calib.bpf.c */

int calib__proc_cpu_ns(pid_t pid, uint64_t *ns)
{
	unsigned long long ut = 0, st = 0;
	char path[64], buf[1024], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');	/* comm may hold spaces */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
			 &ut, &st) != 2)
		return -EINVAL;
	*ns = (ut + st) * (1000000000ull / (uint64_t)sysconf(_SC_CLK_TCK));
	return 0;
}

/* one plan link's sites [first, first + n) with cookies = site indexes */
static struct bpf_link *attach_link(struct calib_bpf *skel, const struct plan *p, size_t li,
				    size_t first, pid_t pid)
{
	const struct plan_link *l = &p->links[li];
	const char *path = p->targets[l->target].path;
	LIBBPF_OPTS(bpf_uprobe_multi_opts, mo);
	LIBBPF_OPTS(bpf_usdt_opts, uo);
	unsigned long *offs;
	__u64 *cookies;
	struct bpf_link *link = NULL;
	size_t i;

	if (l->type == PLAN_LINK_USDT) {
		uo.usdt_cookie = first;
		return bpf_program__attach_usdt(skel->progs.calib_usdt, pid, path,
						l->usdt_provider, l->usdt_name, &uo);
	}
	offs = calloc(l->n_sites, sizeof(*offs));
	cookies = calloc(l->n_sites, sizeof(*cookies));
	if (offs && cookies) {
		for (i = 0; i < l->n_sites; i++) {
			offs[i] = p->sites[first + i].file_offset;
			cookies[i] = first + i;
		}
		mo.offsets = offs;
		mo.cookies = cookies;
		mo.cnt = l->n_sites;
		mo.retprobe = l->type == PLAN_LINK_URETPROBE_MULTI;
		link = bpf_program__attach_uprobe_multi(mo.retprobe ? skel->progs.calib_return :
							skel->progs.calib_entry, pid, path, NULL, &mo);
	} else {
		errno = ENOMEM;
	}
	free(offs);
	free(cookies);
	return link;
}

/* a return site pays its function's entry trap when no entry site does */
static double site_cost(const struct pb_calib *c, const struct plan *p, size_t i)
{
	const struct plan_site *s = &p->sites[i];
	struct plan_site e;
	size_t k;

	if (!s->retprobe || s->usdt)
		return calib__site_cost_ns(c, calib__plan_site_class(s));
	for (k = 0; k < p->n_sites; k++)
		if (!p->sites[k].retprobe && !p->sites[k].usdt && p->sites[k].target == s->target &&
		    p->sites[k].file_offset == s->file_offset)
			return calib__site_cost_ns(c, PB_SITE_RET);
	e = *s;
	e.retprobe = false;
	return calib__site_cost_ns(c, PB_SITE_RET) +
	       calib__site_cost_ns(c, calib__plan_site_class(&e));
}

/* resources a and b are the same, or one is nested in the other by name
 * (pg.lwlock and pg.lwlock.tranche) */
static bool related(const struct manifest *m, int a, int b)
{
	const char *x, *y;
	size_t n;

	if (a == b)
		return true;
	if (a < 0 || b < 0)
		return false;
	x = m->resources[a].name;
	y = m->resources[b].name;
	if (strlen(x) > strlen(y)) {
		const char *t = x;

		x = y;
		y = t;
	}
	n = strlen(x);
	return !strncmp(x, y, n) && y[n] == '.';
}

/* does descriptor k of p have a USDT site? */
static bool desc_usdt(const struct plan *p, size_t k)
{
	size_t i;

	for (i = 0; i < p->n_sites; i++)
		if ((size_t)p->sites[i].descriptor == k && p->sites[i].usdt)
			return true;
	return false;
}

/* per descriptor: a USDT descriptor of the same kind, on the same resource
 * or one nested in it by name, that
 * costs less per event (the manifest's cheaper equivalent: a probe its
 * developers placed at that point, e.g. a wait-start USDT instead of a
 * span over the whole acquire), or -1. Two symbol sites of one kind are
 * not assumed to mean the same. */
static void find_cheaper(struct plan_estimate *e, const struct plan *p)
{
	const struct manifest *m = p->manifest;
	size_t d, k;

	for (d = 0; d < p->n_descriptors; d++) {
		double best = calib__desc_cost_ns(&e->calib, p, d, NULL);

		e->cheaper[d] = -1;
		for (k = 0; k < p->n_descriptors; k++) {
			double ck;

			if (k == d || !p->descriptors[k].n_sites || !desc_usdt(p, k) ||
			    !related(m, m->events[k].resource_idx, m->events[d].resource_idx) ||
			    m->events[k].kind != m->events[d].kind)
				continue;
			ck = calib__desc_cost_ns(&e->calib, p, k, NULL);
			if (ck < best) {
				best = ck;
				e->cheaper[d] = (int)k;
			}
		}
	}
}

/* an earlier site of the plan at the same place: the kernel runs both
 * consumers on one trap, so this one adds only its program */
static bool shares_trap(const struct plan *p, size_t i)
{
	const struct plan_site *s = &p->sites[i];
	size_t k;

	for (k = 0; k < i; k++)
		if (p->sites[k].target == s->target && p->sites[k].usdt == s->usdt &&
		    p->sites[k].retprobe == s->retprobe && p->sites[k].file_offset == s->file_offset)
			return true;
	return false;
}

/* a descriptor's events per second: its busiest site's hits */
static double desc_rate(const struct plan_estimate *e, const struct plan *p, size_t d)
{
	double secs = (double)e->dur_ns / 1e9, best = 0;
	size_t i;

	for (i = 0; secs > 0 && i < e->n_sites; i++)
		if ((size_t)p->sites[i].descriptor == d && (double)e->sites[i].hits / secs > best)
			best = (double)e->sites[i].hits / secs;
	return best;
}

static void count_hits(struct plan_estimate *e, struct calib_bpf *skel, const struct plan *p)
{
	int fd = bpf_map__fd(skel->maps.hits);
	size_t i;
	double secs = (double)e->dur_ns / 1e9;

	for (i = 0; i < p->n_sites; i++) {
		uint32_t k = (uint32_t)i;

		e->sites[i].site = i;
		e->sites[i].cls = calib__plan_site_class(&p->sites[i]);
		e->sites[i].cost_ns = shares_trap(p, i) ? 0 : site_cost(&e->calib, p, i);
		bpf_map_lookup_elem(fd, &k, &e->sites[i].hits);
	}
	for (i = 0; i < p->n_sites; i++) {
		e->sites[i].ns_per_s = secs > 0 ? (double)e->sites[i].hits * e->sites[i].cost_ns / secs : 0;
		e->total_ns_per_s += e->sites[i].ns_per_s;
	}
}

int plan_estimate__run(const struct plan *p, pid_t pid, uint64_t dur_ns,
		       const struct pb_calib *c, struct plan_estimate **out)
{
	struct plan_estimate *e = calloc(1, sizeof(*e));
	struct bpf_link **links = calloc(p->n_links + 1, sizeof(*links));
	struct calib_bpf *skel = NULL;
	uint64_t cpu0 = 0, cpu1 = 0, t0;
	size_t li, first = 0;
	int err = -ENOMEM;

	*out = NULL;
	if (!e || !links || !(e->sites = calloc(p->n_sites + 1, sizeof(*e->sites))) ||
	    !(e->cheaper = calloc(p->n_descriptors + 1, sizeof(*e->cheaper))))
		goto out;
	e->calib = *c;
	e->n_sites = p->n_sites;
	err = -E2BIG;
	if (p->n_sites > EST_SLOTS)
		goto out;
	skel = calib_bpf__open_and_load();
	err = skel ? 0 : -errno;
	for (li = 0; !err && li < p->n_links; first += p->links[li].n_sites, li++) {
		links[li] = attach_link(skel, p, li, first, pid);
		if (!links[li]) {
			err = -errno;
			pr_warn("estimate: link %zu (%s): %s\n", li, plan_link_type_str(p->links[li].type),
				strerror(errno));
		}
	}
	if (err)
		goto out;
	e->cpu_known = !calib__proc_cpu_ns(pid, &cpu0);
	t0 = pb_mono_ns();
	while (pb_mono_ns() - t0 < dur_ns && !kill(pid, 0))
		usleep(20000);
	e->dur_ns = pb_mono_ns() - t0;
	if (e->cpu_known && !calib__proc_cpu_ns(pid, &cpu1) && cpu1 >= cpu0)
		e->cpu_ns = cpu1 - cpu0;
	else
		e->cpu_known = false;
	count_hits(e, skel, p);
	find_cheaper(e, p);
	*out = e;
	e = NULL;
out:
	for (li = 0; links && li < p->n_links; li++)
		bpf_link__destroy(links[li]);
	free(links);
	calib_bpf__destroy(skel);
	plan_estimate__free(e);
	return err;
}

void plan_estimate__free(struct plan_estimate *e)
{
	if (!e)
		return;
	free(e->sites);
	free(e->cheaper);
	free(e);
}

static void site_label(const struct plan *p, size_t i, char *buf, size_t sz)
{
	const struct plan_site *s = &p->sites[i];
	const struct pb_event *ev = &p->manifest->events[s->descriptor];

	if (s->usdt)
		snprintf(buf, sz, "%s (%s:%s)", ev->id, ev->site.usdt_provider, ev->site.usdt_name);
	else
		snprintf(buf, sz, "%s (%s+0x%llx %s)", ev->id, ev->site.symbol,
			 (unsigned long long)s->offset, s->retprobe ? "return" : "entry");
}

static double pct(double part, double whole)
{
	return whole > 0 ? 100.0 * part / whole : 0;
}

void plan_estimate__print(const struct plan_estimate *e, const struct plan *p, FILE *out)
{
	double secs = (double)e->dur_ns / 1e9, cpu_s = (double)e->cpu_ns / 1e9;
	char label[160];
	size_t i, d;

	fprintf(out, "estimate: hits counted for %.2f s in pid %d (its CPU time %s%.2f s), "
		"priced with the %s figures\n", secs, (int)p->pid, e->cpu_known ? "" : "unknown, ",
		cpu_s, e->calib.valid ? "calibrated" : "default");
	fprintf(out, "  %-48s %-11s %10s %9s %10s %9s\n", "site", "class", "hits/s", "cost/hit",
		"% of 1 CPU", "% of its CPU");
	for (i = 0; i < e->n_sites; i++) {
		const struct plan_estimate_site *s = &e->sites[i];

		site_label(p, i, label, sizeof(label));
		fprintf(out, "  %-48s %-11s %10.1f %7.1f us %9.3f %% %9.3f %%\n", label,
			pb_site_class_str(s->cls), secs > 0 ? (double)s->hits / secs : 0,
			s->cost_ns / 1e3, pct(s->ns_per_s, 1e9),
			e->cpu_known ? pct(s->ns_per_s * secs, (double)e->cpu_ns) : 0);
	}
	fprintf(out, "total: %.2f ms per second = %.3f %% of one CPU", e->total_ns_per_s / 1e6,
		pct(e->total_ns_per_s, 1e9));
	if (e->cpu_known)
		fprintf(out, ", %.2f %% of the process's CPU time",
			pct(e->total_ns_per_s * secs, (double)e->cpu_ns));
	fprintf(out, "\n");
	for (d = 0; d < p->n_descriptors; d++)
		if (e->cheaper[d] >= 0)
			fprintf(out, "cheaper equivalent: %s (%.1f us per event, %.1f/s here) -> %s "
				"(%.1f us per event, %.1f/s here)\n", p->manifest->events[d].id,
				calib__desc_cost_ns(&e->calib, p, d, NULL) / 1e3, desc_rate(e, p, d),
				p->manifest->events[e->cheaper[d]].id,
				calib__desc_cost_ns(&e->calib, p, (size_t)e->cheaper[d], NULL) / 1e3,
				desc_rate(e, p, (size_t)e->cheaper[d]));
}

json_t *plan_estimate__to_json(const struct plan_estimate *e, const struct plan *p)
{
	double secs = (double)e->dur_ns / 1e9;
	json_t *sites = json_array(), *alt = json_array();
	char label[160];
	size_t i, d;

	for (i = 0; sites && i < e->n_sites; i++) {
		const struct plan_estimate_site *s = &e->sites[i];

		site_label(p, i, label, sizeof(label));
		json_array_append_new(sites, json_pack("{s:s, s:s, s:s, s:I, s:f, s:f, s:f, s:o*}",
			"site", label, "event", p->manifest->events[p->sites[i].descriptor].id,
			"class", pb_site_class_str(s->cls), "hits", (json_int_t)s->hits,
			"hits_per_s", secs > 0 ? (double)s->hits / secs : 0.0, "cost_ns", s->cost_ns,
			"cpu_share_pct", pct(s->ns_per_s, 1e9),
			"process_cpu_pct", e->cpu_known ?
				json_real(pct(s->ns_per_s * secs, (double)e->cpu_ns)) : NULL));
	}
	for (d = 0; alt && d < p->n_descriptors; d++)
		if (e->cheaper[d] >= 0)
			json_array_append_new(alt, json_pack("{s:s, s:f, s:s, s:f}",
				"event", p->manifest->events[d].id,
				"cost_ns", calib__desc_cost_ns(&e->calib, p, d, NULL),
				"cheaper", p->manifest->events[e->cheaper[d]].id,
				"cheaper_cost_ns",
				calib__desc_cost_ns(&e->calib, p, (size_t)e->cheaper[d], NULL)));
	return json_pack("{s:f, s:i, s:b, s:o*, s:f, s:f, s:o*, s:o, s:o}",
		"duration_s", secs, "pid", (int)p->pid, "calibrated", e->calib.valid,
		"process_cpu_s", e->cpu_known ? json_real((double)e->cpu_ns / 1e9) : NULL,
		"total_ms_per_s", e->total_ns_per_s / 1e6,
		"total_cpu_share_pct", pct(e->total_ns_per_s, 1e9),
		"total_process_cpu_pct", e->cpu_known ?
			json_real(pct(e->total_ns_per_s * secs, (double)e->cpu_ns)) : NULL,
		"sites", sites, "cheaper_equivalents", alt);
}
