/* SPDX-License-Identifier: BSD-2-Clause */
/* plan.c: manifest -> attach plan (see plan.h).
 *
 * Flow: resolve each target to a file and check its build-id; for each
 * event descriptor resolve its site(s) and verify instruction boundaries;
 * then group the sites into links and assign cookies. Every problem is a
 * positioned note in plan->notes (refusals are errors, the rest warnings).
 * Resolving the targets to files is in plan_targets.c.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "contract/plan_int.h"
#include "elf/elf_image.h"
#include "elf/insn.h"
#include "elf/proc_maps.h"
#include "elf/usdt.h"
#include "common/digest.h"
#include "common/log.h"
#include "common/array.h"



const char *plan_link_type_str(enum plan_link_type t)
{
	switch (t) {
	case PLAN_LINK_UPROBE_MULTI: return "uprobe_multi";
	case PLAN_LINK_URETPROBE_MULTI: return "uretprobe_multi";
	case PLAN_LINK_USDT: return "usdt";
	}
	return "?";
}

void plan_ctx__note(struct plan_ctx *c, enum diag_severity sev, struct pb_loc loc,
		    const char *field, const char *fmt, ...)
{
	char *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (msg)
		diags__add(c->p->notes, sev, c->m->path, loc.line, loc.col, field, "%s", msg);
	free(msg);
}

static struct plan_site *add_site(struct plan_ctx *c)
{
	struct plan *p = c->p;

	if (PB_ARRAY_RESERVE_ONE(p->sites, p->n_sites, c->cap_sites))
		return NULL;
	memset(&p->sites[p->n_sites], 0, sizeof(p->sites[0]));
	p->sites[p->n_sites].link = -1;
	return &p->sites[p->n_sites++];
}

static void refuse(struct plan_ctx *c, int ei, struct pb_loc loc, const char *field,
		   const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void refuse(struct plan_ctx *c, int ei, struct pb_loc loc, const char *field,
		   const char *fmt, ...)
{
	struct plan_descriptor *d = &c->p->descriptors[ei];
	char *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (d->status != PLAN_DESC_REFUSED)
		c->p->n_refused++;
	d->status = PLAN_DESC_REFUSED;
	if (!d->reason && msg)
		d->reason = strdup(msg);
	if (msg)
		plan_ctx__note(c, DIAG_ERROR, loc, field, "event '%s' refused: %s", c->m->events[ei].id, msg);
	free(msg);
}

static bool value_uses(const struct pb_value *v, enum pb_val_base base)
{
	return v->base == base;
}

static bool event_uses(const struct pb_event *e, enum pb_val_base base)
{
	return value_uses(&e->instance, base) || value_uses(&e->units, base) ||
	       value_uses(&e->target, base) || value_uses(&e->generation, base) ||
	       (e->when.present && value_uses(&e->when.lhs, base));
}

/* an `at: return` event predicting an in-call effect needs the thread's
 * effect counters at the call's entry, i.e. an entry stash site */
static bool predicts_in_call(const struct pb_event *e)
{
	size_t i;

	for (i = 0; i < e->n_predicts; i++)
		if (e->predicts[i].effect < PB_FX__COUNT && pb_effect_in_call(e->predicts[i].effect))
			return true;
	return false;
}

static int max_arg(const struct pb_event *e)
{
	const struct pb_value *vals[] = { &e->instance, &e->units, &e->target,
					  &e->generation, e->when.present ? &e->when.lhs : NULL };
	int i, mx = -1;

	for (i = 0; i < 5; i++)
		if (vals[i] && vals[i]->base == PB_VAL_ARG && vals[i]->arg > mx)
			mx = vals[i]->arg;
	return mx;
}

static int plan_usdt_event(struct plan_ctx *c, int ei)
{
	const struct pb_event *e = &c->m->events[ei];
	struct elf_image *img = c->images[e->site.target_idx];
	const struct elf_usdt_note *notes;
	int n, i, found = 0, need = max_arg(e);

	n = elf_image__usdt_notes(img, &notes);
	if (n < 0) {
		refuse(c, ei, e->site.loc, "site.usdt", "cannot read USDT notes of %s: %s",
		       elf_image__path(img), strerror(-n));
		return 0;
	}
	for (i = 0; i < n; i++) {
		struct plan_site *s;

		if (strcmp(notes[i].provider, e->site.usdt_provider) ||
		    strcmp(notes[i].name, e->site.usdt_name))
			continue;
		if (need >= notes[i].n_args) {
			refuse(c, ei, e->site.loc, "site.usdt",
			       "USDT probe %s:%s at 0x%llx has %d argument(s), the event reads arg%d",
			       notes[i].provider, notes[i].name, (unsigned long long)notes[i].pc,
			       notes[i].n_args, need);
			return 0;
		}
		s = add_site(c);
		if (!s)
			return -ENOMEM;
		s->descriptor = ei;
		s->target = e->site.target_idx;
		s->usdt = true;
		s->vaddr = notes[i].pc;
		s->file_offset = notes[i].file_offset;
		s->ref_ctr_offset = notes[i].semaphore_file_offset;
		s->usdt_args = strdup(notes[i].args ? notes[i].args : "");
		s->cookie = (uint64_t)ei;
		if (notes[i].semaphore)
			s->note = strdup("USDT semaphore: the kernel counts it up while attached");
		found++;
	}
	if (!found)
		refuse(c, ei, e->site.loc, "site.usdt", "no USDT probe %s:%s in %s",
		       e->site.usdt_provider, e->site.usdt_name, elf_image__path(img));
	return 0;
}

/* An offset inside a function on a re-bound target: kept only when the
 * function's code is the same as on the manifest's own build (on disk),
 * but for the addresses it reaches (samecode.c); refused otherwise, with
 * what was found. */
static bool rebound_offset_ok(struct plan_ctx *c, int ei, struct elf_image *img,
			      const struct elf_symbol *sym)
{
	const struct pb_event *e = &c->m->events[ei];
	struct elf_image *old = plan_ctx__old_build(c, e->site.target_idx);
	unsigned long long off = e->site.offset;
	struct elf_symbol osym;
	struct same_code sc;
	int err;

	if (!old) {
		refuse(c, ei, e->site.loc, "site.offset",
		       "offset +0x%llx inside '%s' cannot be re-bound by name: the manifest's own build (%s, build-id %s) is not on disk to compare the function's code with",
		       off, e->site.symbol, c->m->targets[e->site.target_idx].binary,
		       c->p->targets[e->site.target_idx].build_id_expected);
		return false;
	}
	err = elf_image__find_symbol(old, e->site.symbol, &osym);
	if (!err)
		err = elf_image__same_code(old, &osym, img, sym, &sc);
	if (err) {
		refuse(c, ei, e->site.loc, "site.offset",
		       "offset +0x%llx inside '%s' cannot be re-bound by name: comparing the function with the manifest's build failed: %s",
		       off, e->site.symbol, strerror(-err));
		return false;
	}
	if (!sc.same) {
		if (sc.size_differs)
			refuse(c, ei, e->site.loc, "site.offset",
			       "offset +0x%llx inside '%s' cannot be re-bound by name: the function's code differs from the manifest's build (%llu bytes there, %llu here)",
			       off, e->site.symbol, (unsigned long long)osym.size,
			       (unsigned long long)sym->size);
		else
			refuse(c, ei, e->site.loc, "site.offset",
			       "offset +0x%llx inside '%s' cannot be re-bound by name: the function's code differs from the manifest's build (first at +0x%llx)",
			       off, e->site.symbol, (unsigned long long)sc.first_difference);
		return false;
	}
	plan_ctx__note(c, DIAG_NOTE, e->site.loc, "site.offset",
		       "event '%s': offset +0x%llx inside '%s' re-bound: the function's code is the manifest's build's (%u instructions, the same but for %u address fields)",
		       e->id, off, e->site.symbol, sc.insns, sc.masked);
	return true;
}

/* Find the function the event's site names: false (refused, with the
 * reason) when it is missing, ambiguous, an IFUNC, or an offset inside it
 * cannot be trusted after a re-bind. */
static bool find_site_symbol(struct plan_ctx *c, int ei, struct elf_image *img,
			     struct elf_symbol *sym)
{
	const struct pb_event *e = &c->m->events[ei];
	const struct plan_target *pt = &c->p->targets[e->site.target_idx];
	int err;

	err = elf_image__find_symbol(img, e->site.symbol, sym);
	if (err == -ENOENT) {
		refuse(c, ei, e->site.loc, "site.symbol",
		       "function '%s' not found in %s (.symtab%s)", e->site.symbol,
		       pt->display_path, elf_image__has_symtab(img) ? " and .dynsym" :
		       " is stripped; .dynsym searched");
		return false;
	}
	if (err == -ENOTUNIQ) {
		struct elf_symbol cand[8];
		char list[512] = "";
		int i, n = elf_image__find_symbols(img, e->site.symbol, cand, 8);

		for (i = 0; i < n && i < 8; i++) {
			size_t len = strlen(list);

			snprintf(list + len, sizeof(list) - len, "%s0x%llx", i ? ", " : "",
				 (unsigned long long)cand[i].vaddr);
		}
		refuse(c, ei, e->site.loc, "site.symbol",
		       "%d different functions are named '%s' in %s (at %s%s); the site is ambiguous",
		       n, e->site.symbol, pt->display_path, list, n > 8 ? ", ..." : "");
		return false;
	}
	if (err) {
		refuse(c, ei, e->site.loc, "site.symbol", "looking up '%s': %s", e->site.symbol,
		       strerror(-err));
		return false;
	}
	if (sym->ifunc) {
		refuse(c, ei, e->site.loc, "site.symbol",
		       "'%s' is a GNU IFUNC: its address is the resolver, not the code that runs; name the implementation the resolver picks instead",
		       e->site.symbol);
		return false;
	}
	if (pt->rebound && e->site.offset)
		return rebound_offset_ok(c, ei, img, sym);
	return true;
}

/* Is symbol+offset the start of an instruction in a loaded segment? false
 * (refused, with the disassembly when there is one) when not; *vaddr and
 * *foff get the site's address and file offset. */
static bool check_site_offset(struct plan_ctx *c, int ei, struct elf_image *img,
			      const struct elf_symbol *sym, struct insn_site_check *chk,
			      uint64_t *vaddr, uint64_t *foff)
{
	const struct pb_event *e = &c->m->events[ei];
	int err;

	err = elf_image__check_insn_boundary(img, sym, e->site.offset, chk);
	if (err) {
		refuse(c, ei, e->site.loc, "site.offset",
		       "cannot verify that %s+0x%llx starts an instruction: %s", e->site.symbol,
		       (unsigned long long)e->site.offset,
		       err == -EOPNOTSUPP ? "unsupported architecture" : strerror(-err));
		return false;
	}
	if (!chk->in_bounds) {
		refuse(c, ei, e->site.loc, "site.offset",
		       "offset +0x%llx is outside '%s' (%llu bytes)",
		       (unsigned long long)e->site.offset, e->site.symbol,
		       (unsigned long long)sym->size);
		return false;
	}
	if (chk->decode_failed) {
		refuse(c, ei, e->site.loc, "site.offset",
		       "cannot verify %s+0x%llx: Capstone could not decode the instruction at +0x%llx, so the site is not known to start an instruction:\n%s",
		       e->site.symbol, (unsigned long long)e->site.offset,
		       (unsigned long long)chk->decode_failed_at, chk->listing ? chk->listing : "");
		return false;
	}
	if (!chk->on_boundary) {
		refuse(c, ei, e->site.loc, "site.offset",
		       "%s+0x%llx is not an instruction boundary (nearest: +0x%llx, +0x%llx); a probe there would corrupt the target:\n%s",
		       e->site.symbol, (unsigned long long)e->site.offset,
		       (unsigned long long)chk->prev_boundary, (unsigned long long)chk->next_boundary,
		       chk->listing ? chk->listing : "");
		return false;
	}
	*vaddr = sym->vaddr + e->site.offset;
	err = elf_image__vaddr_to_offset(img, *vaddr, foff);
	if (err) {
		refuse(c, ei, e->site.loc, "site", "%s+0x%llx (0x%llx) is not in a loaded segment",
		       e->site.symbol, (unsigned long long)e->site.offset, (unsigned long long)*vaddr);
		return false;
	}
	return true;
}

/* The probe sites of a checked symbol site:
 * at: entry  -> one entry site
 * at: return -> a return site, plus an entry "stash" site when the
 *               event reads arguments (registers are clobbered by then),
 *               predicts an in-call effect (counters at entry) or is an
 *               ACQUIRE (its call's entry time orders what it held back:
 *               docs/validation.md "Observation order")
 * at: span   -> entry (begin) and return (end) sites
 * 0 or -ENOMEM. */
static int add_symbol_sites(struct plan_ctx *c, int ei, const struct elf_symbol *sym,
			    const struct insn_site_check *chk, uint64_t vaddr, uint64_t foff)
{
	const struct pb_event *e = &c->m->events[ei];
	struct plan_site *s;

	if (e->site.at != PB_AT_RETURN || event_uses(e, PB_VAL_ARG) || predicts_in_call(e) ||
	    e->kind == PB_EV_ACQUIRE) {
		s = add_site(c);
		if (!s)
			return -ENOMEM;
		s->descriptor = ei;
		s->target = e->site.target_idx;
		s->vaddr = vaddr;
		s->file_offset = foff;
		s->sym_vaddr = sym->vaddr;
		s->offset = e->site.offset;
		s->cookie = (uint64_t)ei;
		if (e->site.at == PB_AT_RETURN)
			s->cookie |= PLAN_COOKIE_STASH;
		s->insn_len = chk->insn_len;
		s->exec = chk->exec;
		snprintf(s->insn_text, sizeof(s->insn_text), "%s", chk->insn_text);
		if (chk->note[0])
			s->note = strdup(chk->note);
	}
	if (e->site.at != PB_AT_ENTRY) {
		s = add_site(c);
		if (!s)
			return -ENOMEM;
		s->descriptor = ei;
		s->target = e->site.target_idx;
		s->retprobe = true;
		s->vaddr = vaddr;
		s->file_offset = foff;
		s->sym_vaddr = sym->vaddr;
		s->cookie = (uint64_t)ei | PLAN_COOKIE_RETURN;
		s->insn_len = chk->insn_len;
		s->exec = chk->exec;
		snprintf(s->insn_text, sizeof(s->insn_text), "%s", chk->insn_text);
	}
	if (sym->from_dynsym)
		c->n_dynsym[e->site.target_idx]++;
	return 0;
}

/* A symbol (+offset) site: refused with the reason, or its probe sites. */
static int plan_symbol_event(struct plan_ctx *c, int ei)
{
	const struct pb_event *e = &c->m->events[ei];
	struct elf_image *img = c->images[e->site.target_idx];
	struct insn_site_check chk = {};
	struct elf_symbol sym;
	uint64_t vaddr, foff;
	int err = 0;

	if (!find_site_symbol(c, ei, img, &sym))
		return 0;
	if (check_site_offset(c, ei, img, &sym, &chk, &vaddr, &foff))
		err = add_symbol_sites(c, ei, &sym, &chk, vaddr, foff);
	insn_site_check__clear(&chk);
	return err;
}

/* Sites are listed per descriptor (the order of the manifest), entry
 * before return; the links table shows how they are grouped. */
static int site_cmp(const void *a, const void *b)
{
	const struct plan_site *x = a, *y = b;

	if (x->descriptor != y->descriptor)
		return x->descriptor < y->descriptor ? -1 : 1;
	if (x->retprobe != y->retprobe)
		return x->retprobe ? 1 : -1;
	if (x->file_offset != y->file_offset)
		return x->file_offset < y->file_offset ? -1 : 1;
	return 0;
}

static struct plan_link *add_link(struct plan *p, enum plan_link_type type, int target)
{
	struct plan_link *l = realloc(p->links, (p->n_links + 1) * sizeof(*l));

	if (!l)
		return NULL;
	p->links = l;
	l = &p->links[p->n_links++];
	memset(l, 0, sizeof(*l));
	l->type = type;
	l->target = target;
	l->descriptor = -1;
	return l;
}

/* Fewest links: one uprobe_multi link per (target, entry|return). Two
 * descriptors on one instruction share the link: the kernel registers one
 * consumer per (offset, cookie) pair, so both cookies fire (checked by
 * tests/unit/test_plan.c). USDT probes go through libbpf's USDT attach:
 * one link per (descriptor, probe). */
static int group_links(struct plan_ctx *c)
{
	struct plan *p = c->p;
	size_t i, j;

	for (i = 0; i < p->n_sites; i++) {
		struct plan_site *s = &p->sites[i];
		const struct pb_event *e = &c->m->events[s->descriptor];
		enum plan_link_type type;
		int li;

		if (p->descriptors[s->descriptor].status == PLAN_DESC_REFUSED)
			continue;
		if (s->usdt) {
			/* one libbpf USDT attachment per (descriptor, probe) */
			for (li = 0; li < (int)p->n_links; li++)
				if (p->links[li].type == PLAN_LINK_USDT &&
				    p->links[li].descriptor == s->descriptor)
					break;
			if (li == (int)p->n_links) {
				struct plan_link *l = add_link(p, PLAN_LINK_USDT, s->target);

				if (!l)
					return -ENOMEM;
				l->descriptor = s->descriptor;
				l->usdt_provider = strdup(e->site.usdt_provider);
				l->usdt_name = strdup(e->site.usdt_name);
			}
			s->link = li;
			p->links[li].n_sites++;
			continue;
		}
		type = s->retprobe ? PLAN_LINK_URETPROBE_MULTI : PLAN_LINK_UPROBE_MULTI;
		for (li = 0; li < (int)p->n_links; li++)
			if (p->links[li].type == type && p->links[li].target == s->target)
				break;
		if (li == (int)p->n_links && !add_link(p, type, s->target))
			return -ENOMEM;
		s->link = li;
		p->links[li].n_sites++;
	}
	/* drop the sites of refused descriptors, then order by link */
	for (i = j = 0; i < p->n_sites; i++) {
		if (p->sites[i].link < 0) {
			free(p->sites[i].note);
			free(p->sites[i].usdt_args);
			continue;
		}
		p->sites[j++] = p->sites[i];
	}
	p->n_sites = j;
	if (p->n_sites)
		qsort(p->sites, p->n_sites, sizeof(*p->sites), site_cmp);
	for (i = 0; i < p->n_sites; i++)
		p->descriptors[p->sites[i].descriptor].n_sites++;
	return 0;
}

/* One warning per untrusted confidence level, listing its descriptors and
 * positioned at the first of them. */
static void conf_warnings(struct plan_ctx *c)
{
	static const enum pb_confidence levels[] = { PB_CONF_CANDIDATE, PB_CONF_SUSPECT,
						     PB_CONF_STALE };
	struct plan *p = c->p;
	size_t i, l;

	for (l = 0; l < sizeof(levels) / sizeof(levels[0]); l++) {
		char list[512] = "";
		struct pb_loc first = { 0, 0 };
		size_t n = 0;

		for (i = 0; i < p->n_descriptors; i++) {
			const struct pb_event *e = &c->m->events[i];
			size_t len = strlen(list);

			if (p->descriptors[i].status == PLAN_DESC_REFUSED ||
			    p->descriptors[i].confidence != levels[l])
				continue;
			if (!n++)
				first = e->loc;
			if (len + strlen(e->id) + 8 < sizeof(list))
				snprintf(list + len, sizeof(list) - len, "%s%s", len ? ", " : "", e->id);
			else if (!strstr(list, ", ..."))
				snprintf(list + len, sizeof(list) - len, ", ...");
		}
		if (n)
			plan_ctx__note(c, DIAG_WARNING, first, "confidence",
			     "%zu descriptor(s) are '%s' (%s): their events are recorded, but findings that rest on them are not trusted",
			     n, pb_confidence_str(levels[l]), list);
	}
}

static void site_warnings(struct plan_ctx *c)
{
	struct plan *p = c->p;
	size_t i, emulated = 0, nop5 = 0;

	for (i = 0; i < p->n_sites; i++) {
		const struct plan_site *s = &p->sites[i];

		if (s->usdt || s->retprobe)
			continue;
		if (s->note && strstr(s->note, "optimiz"))
			nop5++;
		else
			emulated++;
	}
	if (emulated)
		plan_ctx__note(c, DIAG_NOTE, (struct pb_loc){ 0, 0 }, NULL,
		     "%zu entry site(s) start on an instruction the kernel emulates or single-steps out of line (slower than an optimized probe); %zu on a 5-byte nop it can optimize; see the 'insn'/'note' columns",
		     emulated, nop5);
	for (i = 0; i < p->n_targets; i++)
		if (c->n_dynsym[i])
			plan_ctx__note(c, DIAG_NOTE, c->m->targets[i].loc, "binary",
			     "target '%s': %zu symbol(s) resolved from .dynsym only (%s has no .symtab)",
			     c->m->targets[i].id, c->n_dynsym[i], p->targets[i].display_path);
	conf_warnings(c);
}
static void plan_ctx__free_images(struct plan_ctx *c)
{
	size_t i;

	for (i = 0; c->images && i < c->p->n_targets; i++)
		elf_image__free(c->images[i]);
	for (i = 0; c->old_images && i < c->p->n_targets; i++)
		elf_image__free(c->old_images[i]);
	free(c->images);
	free(c->old_images);
	free(c->old_tried);
	free(c->n_dynsym);
}

int plan__build(const struct manifest *m, const struct plan_opts *opts,
		struct plan **out, struct diags *diags)
{
	struct plan_opts dflt = { 0 };
	struct plan_ctx c = {};
	struct plan *p;
	size_t i;
	int err;

	*out = NULL;
	if (!opts)
		opts = &dflt;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->manifest = m;
	p->pid = opts->pid;
	p->notes = diags__new();
	p->descriptors = calloc(m->n_events ? m->n_events : 1, sizeof(*p->descriptors));
	if (!p->notes || !p->descriptors) {
		err = -ENOMEM;
		goto err_out;
	}
	p->n_descriptors = m->n_events;
	c.m = m;
	c.opts = opts;
	c.p = p;

	err = plan_ctx__resolve_targets(&c);
	if (err)
		goto err_out;

	for (i = 0; i < m->n_events; i++) {
		const struct pb_event *e = &m->events[i];
		struct plan_descriptor *d = &p->descriptors[i];
		const struct plan_target *pt = &p->targets[e->site.target_idx];

		d->event = i;
		d->confidence = pt->rebound ? PB_CONF_DEGRADED : e->confidence;
		if (!c.images[e->site.target_idx]) {
			refuse(&c, i, e->site.loc, "site",
			       !pt->resolved ? "target '%s' could not be resolved" :
			       "target '%s' does not match the manifest's build-id",
			       m->targets[e->site.target_idx].id);
			continue;
		}
		err = e->site.usdt_name ? plan_usdt_event(&c, i) : plan_symbol_event(&c, i);
		if (err)
			goto err_out;
	}
	err = group_links(&c);
	if (err)
		goto err_out;
	site_warnings(&c);
	diags__sort(p->notes);

	plan_ctx__free_images(&c);
	proc_mappings__free(c.maps, c.n_maps);
	*out = p;
	return p->n_refused ? -EPERM : 0;

err_out:
	plan_ctx__free_images(&c);
	proc_mappings__free(c.maps, c.n_maps);
	/* pass the reasons on to the caller */
	for (i = 0; p->notes && i < diags__count(p->notes); i++) {
		const struct diag *g = diags__get(p->notes, i);

		diags__add(diags, g->severity, g->file, g->line, g->col, g->field, "%s", g->msg);
	}
	plan__free(p);
	return err;
}

void plan__free(struct plan *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->n_targets; i++) {
		free(p->targets[i].path);
		free(p->targets[i].display_path);
	}
	for (i = 0; i < p->n_descriptors; i++)
		free(p->descriptors[i].reason);
	for (i = 0; i < p->n_sites; i++) {
		free(p->sites[i].note);
		free(p->sites[i].usdt_args);
	}
	for (i = 0; i < p->n_links; i++) {
		free(p->links[i].usdt_provider);
		free(p->links[i].usdt_name);
	}
	free(p->targets);
	free(p->descriptors);
	free(p->sites);
	free(p->links);
	diags__free(p->notes);
	free(p);
}
