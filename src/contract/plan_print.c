/* SPDX-License-Identifier: BSD-2-Clause */
/* plan_print.c: the attach plan as a table (plain) or a JSON document. */
#include <string.h>
#include "contract/plan.h"
#include "common/digest.h"

static const char *target_id(const struct plan *p, int ti)
{
	return p->manifest->targets[p->targets[ti].manifest_idx].id;
}

static void site_name(const struct plan *p, const struct plan_site *s, char *buf, size_t sz)
{
	const struct pb_event *e = &p->manifest->events[s->descriptor];

	if (s->usdt)
		snprintf(buf, sz, "usdt %s:%s", e->site.usdt_provider, e->site.usdt_name);
	else
		snprintf(buf, sz, "%s+0x%llx", e->site.symbol, (unsigned long long)s->offset);
}

static const char *site_role(const struct plan_site *s)
{
	if (s->retprobe)
		return "return";
	if (s->cookie & PLAN_COOKIE_STASH)
		return "entry (args)";
	return "entry";
}

static void print_targets(const struct plan *p, FILE *out)
{
	size_t i;

	fprintf(out, "\ntargets:\n");
	for (i = 0; i < p->n_targets; i++) {
		const struct plan_target *t = &p->targets[i];
		const char *state = !t->resolved ? "NOT FOUND" :
				    t->build_id_match ? "build-id matches" :
				    t->rebound ? "build-id MISMATCH, re-bound (degraded)" :
				    "build-id MISMATCH: refused";

		fprintf(out, "  %-10s %s\n", target_id(p, i), t->display_path);
		fprintf(out, "  %-10s build-id %s (%s)\n", "", t->build_id_found[0] ?
			t->build_id_found : t->build_id_expected, state);
	}
}

static void print_descriptors(const struct plan *p, FILE *out)
{
	const struct manifest *m = p->manifest;
	size_t i, ew, rw;

	ew = 5;
	for (i = 0; i < p->n_descriptors; i++) {
		size_t l = strlen(m->events[p->descriptors[i].event].id);

		ew = l > ew ? l : ew;
	}
	rw = 8;
	for (i = 0; i < m->n_resources; i++)
		rw = strlen(m->resources[i].name) > rw ? strlen(m->resources[i].name) : rw;
	fprintf(out, "\ndescriptors:\n  %3s  %-*s %-8s %-*s %-10s %5s  %s\n", "#", (int)ew, "event",
		"kind", (int)rw, "resource", "confidence", "sites", "status");
	for (i = 0; i < p->n_descriptors; i++) {
		const struct plan_descriptor *d = &p->descriptors[i];
		const struct pb_event *e = &m->events[d->event];

		fprintf(out, "  %3zu  %-*s %-8s %-*s %-10s %5zu  %s\n", i, (int)ew, e->id,
			pb_event_kind_str(e->kind), (int)rw, e->resource,
			pb_confidence_str(d->confidence), d->n_sites,
			d->status == PLAN_DESC_OK ? "ok" : "REFUSED");
	}
}

static void print_sites(const struct plan *p, FILE *out)
{
	char buf[256];
	size_t i, sw;

	sw = 4;
	for (i = 0; i < p->n_sites; i++) {
		site_name(p, &p->sites[i], buf, sizeof(buf));
		sw = strlen(buf) > sw ? strlen(buf) : sw;
	}
	fprintf(out, "\nsites (descriptor -> site -> file offset -> link/cookie):\n");
	fprintf(out, "  %4s  %-*s %-12s %-11s %-12s %4s  %-12s %s\n", "desc", (int)sw, "site",
		"at", "cost class", "file offset", "link", "cookie",
		"first insn / USDT args; note");
	for (i = 0; i < p->n_sites; i++) {
		const struct plan_site *s = &p->sites[i];
		char insn[128];

		site_name(p, s, buf, sizeof(buf));
		if (s->usdt)
			snprintf(insn, sizeof(insn), "args \"%s\"", s->usdt_args ? s->usdt_args : "");
		else
			snprintf(insn, sizeof(insn), "%s (%u B)", s->insn_text, s->insn_len);
		fprintf(out, "  %4d  %-*s %-12s %-11s 0x%-10llx %4d  0x%-10llx %s%s%s\n",
			s->descriptor, (int)sw, buf, site_role(s), plan_site_cost_class(s),
			(unsigned long long)s->file_offset,
			s->link, (unsigned long long)s->cookie, insn, s->note ? "; " : "",
			s->note ? s->note : "");
	}
}

const char *plan_site_cost_class(const struct plan_site *s)
{
	if (s->usdt)
		return "usdt";
	if (s->retprobe)
		return "return";
	switch (s->exec) {
	case INSN_EXEC_OPTIMIZABLE:
		return "nop5";
	case INSN_EXEC_EMULATED:
		return "emulated";
	default:
		return "single-step";
	}
}

static void print_links(const struct plan *p, FILE *out)
{
	size_t i;

	fprintf(out, "\nlinks:\n");
	for (i = 0; i < p->n_links; i++) {
		const struct plan_link *l = &p->links[i];

		if (l->type == PLAN_LINK_USDT)
			fprintf(out, "  %2zu  %-16s %-10s %s:%s, %zu location(s)\n", i,
				plan_link_type_str(l->type), target_id(p, l->target),
				l->usdt_provider, l->usdt_name, l->n_sites);
		else
			fprintf(out, "  %2zu  %-16s %-10s %zu site(s)\n", i,
				plan_link_type_str(l->type), target_id(p, l->target), l->n_sites);
	}
}

void plan__print(const struct plan *p, FILE *out)
{
	const struct manifest *m = p->manifest;
	char digest[PB_DIGEST_HEX_LEN];

	pb_hex(m->digest, 16, digest);
	fprintf(out, "plan for manifest '%s' (%s, sha256 %s...)\n", m->name,
		m->path ? m->path : "<memory>", digest);
	if (p->pid > 0)
		fprintf(out, "process: %d\n", (int)p->pid);
	print_targets(p, out);
	print_descriptors(p, out);
	print_sites(p, out);
	print_links(p, out);
	if (diags__count(p->notes)) {
		fprintf(out, "\nnotes:\n");
		diags__print(p->notes, out);
	}
	fprintf(out, "\n%zu descriptor(s), %zu site(s), %zu link(s), %zu refused\n",
		p->n_descriptors, p->n_sites, p->n_links, p->n_refused);
}

static json_t *hex_u64(uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)v);
	return json_string(buf);
}

json_t *plan__to_json(const struct plan *p)
{
	const struct manifest *m = p->manifest;
	json_t *doc, *targets, *descs, *sites, *links;
	char digest[PB_DIGEST_HEX_LEN];
	size_t i;

	pb_hex(m->digest, 32, digest);
	targets = json_array();
	for (i = 0; i < p->n_targets; i++) {
		const struct plan_target *t = &p->targets[i];

		json_array_append_new(targets, json_pack(
			"{s:s, s:s?, s:s, s:s, s:s, s:b, s:b, s:b}",
			"id", target_id(p, i), "path", t->path, "display_path", t->display_path,
			"build_id_expected", t->build_id_expected,
			"build_id_found", t->build_id_found, "resolved", t->resolved,
			"build_id_match", t->build_id_match, "rebound", t->rebound));
	}
	descs = json_array();
	for (i = 0; i < p->n_descriptors; i++) {
		const struct plan_descriptor *d = &p->descriptors[i];
		const struct pb_event *e = &m->events[d->event];

		json_array_append_new(descs, json_pack(
			"{s:I, s:s, s:s, s:s, s:s, s:I, s:s, s:s?}",
			"index", (json_int_t)i, "event", e->id, "kind", pb_event_kind_str(e->kind),
			"resource", e->resource, "confidence", pb_confidence_str(d->confidence),
			"sites", (json_int_t)d->n_sites,
			"status", d->status == PLAN_DESC_OK ? "ok" : "refused", "reason", d->reason));
	}
	sites = json_array();
	for (i = 0; i < p->n_sites; i++) {
		const struct plan_site *s = &p->sites[i];
		const struct pb_event *e = &m->events[s->descriptor];
		json_t *o = json_pack("{s:I, s:s, s:s, s:s, s:o, s:o, s:I, s:o}",
			"descriptor", (json_int_t)s->descriptor, "event", e->id,
			"target", target_id(p, s->target), "at", site_role(s),
			"vaddr", hex_u64(s->vaddr), "file_offset", hex_u64(s->file_offset),
			"link", (json_int_t)s->link, "cookie", hex_u64(s->cookie));

		json_object_set_new(o, "cost_class", json_string(plan_site_cost_class(s)));
		if (s->usdt) {
			json_object_set_new(o, "usdt", json_pack("{s:s, s:s, s:s?}",
				"provider", e->site.usdt_provider, "name", e->site.usdt_name,
				"args", s->usdt_args));
			if (s->ref_ctr_offset)
				json_object_set_new(o, "semaphore_offset", hex_u64(s->ref_ctr_offset));
		} else {
			json_object_set_new(o, "symbol", json_string(e->site.symbol));
			json_object_set_new(o, "offset", json_integer((json_int_t)s->offset));
			json_object_set_new(o, "insn", json_string(s->insn_text));
			json_object_set_new(o, "insn_len", json_integer(s->insn_len));
		}
		if (s->note)
			json_object_set_new(o, "note", json_string(s->note));
		json_array_append_new(sites, o);
	}
	links = json_array();
	for (i = 0; i < p->n_links; i++) {
		const struct plan_link *l = &p->links[i];
		json_t *o = json_pack("{s:I, s:s, s:s, s:I}", "index", (json_int_t)i,
				      "type", plan_link_type_str(l->type),
				      "target", target_id(p, l->target),
				      "sites", (json_int_t)l->n_sites);

		if (l->type == PLAN_LINK_USDT) {
			json_object_set_new(o, "provider", json_string(l->usdt_provider));
			json_object_set_new(o, "name", json_string(l->usdt_name));
		}
		json_array_append_new(links, o);
	}
	doc = json_pack("{s:{s:s, s:s?, s:s}, s:I, s:o, s:o, s:o, s:o, s:o, s:I}",
			"manifest", "name", m->name, "path", m->path, "sha256", digest,
			"pid", (json_int_t)p->pid, "targets", targets, "descriptors", descs,
			"sites", sites, "links", links, "notes", diags__to_json(p->notes),
			"refused", (json_int_t)p->n_refused);
	return doc;
}
