/* plan.c: manifest -> attach plan (see plan.h).
 *
 * Flow: resolve each target to a file and check its build-id; for each
 * event descriptor resolve its site(s) and verify instruction boundaries;
 * then group the sites into links and assign cookies. Every problem is a
 * positioned note in plan->notes (refusals are errors, the rest warnings).
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "contract/plan.h"
#include "elf/elf_image.h"
#include "elf/insn.h"
#include "elf/proc_maps.h"
#include "elf/usdt.h"
#include "common/digest.h"
#include "common/log.h"


static const char *const lib_dirs[] = {
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
	"/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
	"/lib64", "/usr/lib64", "/lib", "/usr/lib", "/usr/local/lib", NULL,
};

struct plan_ctx {
	const struct manifest *m;
	const struct plan_opts *opts;
	struct plan *p;
	struct elf_image **images;	/* per plan target, NULL when unusable */
	struct proc_mapping *maps;
	int n_maps;
	size_t *n_dynsym;		/* per target: sites found only in .dynsym */
	size_t cap_sites;
};

const char *plan_link_type_str(enum plan_link_type t)
{
	switch (t) {
	case PLAN_LINK_UPROBE_MULTI: return "uprobe_multi";
	case PLAN_LINK_URETPROBE_MULTI: return "uretprobe_multi";
	case PLAN_LINK_USDT: return "usdt";
	}
	return "?";
}

static void note(struct plan_ctx *c, enum diag_severity sev, struct pb_loc loc,
		 const char *field, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void note(struct plan_ctx *c, enum diag_severity sev, struct pb_loc loc,
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

static bool is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static char *manifest_dir(const struct manifest *m)
{
	char *copy, *dir;

	if (!m->path)
		return strdup(".");
	copy = strdup(m->path);
	if (!copy)
		return NULL;
	dir = strdup(dirname(copy));
	free(copy);
	return dir;
}

/* Find the file for a target's `binary` field when no pid/override applies:
 * absolute paths as they are; paths with a '/' relative to the manifest's
 * directory; bare names in the manifest's directory, then in the standard
 * library directories (sonames). */
static char *resolve_binary_path(const struct manifest *m, const char *binary)
{
	char buf[PATH_MAX], *dir, *res = NULL;
	int i;

	if (binary[0] == '/')
		return is_file(binary) ? realpath(binary, NULL) : NULL;
	dir = manifest_dir(m);
	if (!dir)
		return NULL;
	snprintf(buf, sizeof(buf), "%s/%s", dir, binary);
	free(dir);
	if (is_file(buf))
		return realpath(buf, NULL);
	if (strchr(binary, '/'))
		return NULL;
	for (i = 0; lib_dirs[i] && !res; i++) {
		snprintf(buf, sizeof(buf), "%s/%s", lib_dirs[i], binary);
		if (is_file(buf))
			res = realpath(buf, NULL);
	}
	return res;
}

/* --binary overrides: "ID=PATH" names a target; a bare "PATH" applies to
 * the only target, or to the target whose binary has the same basename. */
static const char *binary_override(const struct plan_ctx *c, int ti)
{
	const struct pb_target *t = &c->m->targets[ti];
	const char *bare = NULL;
	size_t i, idlen = strlen(t->id);

	for (i = 0; i < c->opts->n_binaries; i++) {
		const char *b = c->opts->binaries[i];
		const char *eq = strchr(b, '=');

		if (eq && (size_t)(eq - b) == idlen && !strncmp(b, t->id, idlen))
			return eq + 1;
		if (!eq) {
			char *a = strdup(b), *x = strdup(t->binary);

			if (a && x && (c->m->n_targets == 1 ||
				       !strcmp(basename(a), basename(x))))
				bare = b;
			free(a);
			free(x);
		}
	}
	return bare;
}

static bool build_id_matches(struct elf_image *img, const struct pb_target *t,
			     char *found_hex, size_t sz)
{
	uint8_t id[ELF_BUILD_ID_MAX];
	int n = elf_image__build_id(img, id, sizeof(id));

	found_hex[0] = '\0';
	if (n <= 0)
		return false;
	elf_image__build_id_hex(img, found_hex, sz);
	return (size_t)n == t->build_id_len && !memcmp(id, t->build_id, n);
}

/* In a process: the mapped file with the expected build-id wins; else the
 * mapping whose basename equals the target's (soname or file name). */
static char *resolve_in_process(struct plan_ctx *c, const struct pb_target *t,
				char **display)
{
	char *want = strdup(t->binary), *base;
	int i, by_name = -1;

	if (!want)
		return NULL;
	base = basename(want);
	for (i = 0; i < c->n_maps; i++) {
		struct elf_image *img = elf_image__open(c->maps[i].path);
		char hex[2 * ELF_BUILD_ID_MAX + 1];
		bool match;
		char *mb;

		if (!img)
			continue;
		match = build_id_matches(img, t, hex, sizeof(hex));
		elf_image__free(img);
		if (match) {
			free(want);
			*display = strdup(c->maps[i].map_path);
			return strdup(c->maps[i].path);
		}
		mb = strrchr(c->maps[i].map_path, '/');
		mb = mb ? mb + 1 : c->maps[i].map_path;
		if (by_name < 0 && !strcmp(mb, base))
			by_name = i;
	}
	free(want);
	if (by_name < 0)
		return NULL;
	*display = strdup(c->maps[by_name].map_path);
	return strdup(c->maps[by_name].path);
}

static int resolve_targets(struct plan_ctx *c)
{
	const struct manifest *m = c->m;
	struct plan *p = c->p;
	size_t i;
	int err;

	if (c->opts->pid > 0) {
		err = proc_mappings__read(c->opts->pid, &c->maps);
		if (err < 0) {
			note(c, DIAG_ERROR, (struct pb_loc){ 0, 0 }, NULL,
			     "cannot read the mappings of process %d: %s",
			     (int)c->opts->pid, strerror(-err));
			return err;
		}
		c->n_maps = err;
	}
	p->targets = calloc(m->n_targets, sizeof(*p->targets));
	c->images = calloc(m->n_targets, sizeof(*c->images));
	c->n_dynsym = calloc(m->n_targets, sizeof(*c->n_dynsym));
	if (!p->targets || !c->images || !c->n_dynsym)
		return -ENOMEM;
	p->n_targets = m->n_targets;

	for (i = 0; i < m->n_targets; i++) {
		const struct pb_target *t = &m->targets[i];
		struct plan_target *pt = &p->targets[i];
		const char *ovr = binary_override(c, i);
		struct elf_image *img;
		char *display = NULL;

		pt->manifest_idx = i;
		pb_hex(t->build_id, t->build_id_len, pt->build_id_expected);
		if (ovr) {
			pt->path = is_file(ovr) ? realpath(ovr, NULL) : NULL;
			display = strdup(ovr);
		} else if (c->opts->pid > 0) {
			pt->path = resolve_in_process(c, t, &display);
		} else {
			pt->path = resolve_binary_path(m, t->binary);
			display = pt->path ? strdup(pt->path) : NULL;
		}
		pt->display_path = display ? display : strdup(t->binary);
		if (!pt->path) {
			if (c->opts->pid > 0)
				note(c, DIAG_ERROR, t->loc, "binary",
				     "target '%s': no file mapped by process %d has build-id %s or is named '%s'",
				     t->id, (int)c->opts->pid, pt->build_id_expected, t->binary);
			else
				note(c, DIAG_ERROR, t->loc, "binary",
				     "target '%s': cannot find '%s'%s", t->id,
				     ovr ? ovr : t->binary,
				     ovr ? "" : " (relative paths are resolved from the manifest's directory; use --binary PATH)");
			continue;
		}
		img = elf_image__open(pt->path);
		if (!img) {
			note(c, DIAG_ERROR, t->loc, "binary", "target '%s': cannot read %s as ELF: %s",
			     t->id, pt->path, strerror(errno));
			continue;
		}
		pt->resolved = true;
		pt->build_id_match = build_id_matches(img, t, pt->build_id_found,
						      sizeof(pt->build_id_found));
		if (!pt->build_id_match) {
			if (!c->opts->rebind) {
				note(c, DIAG_ERROR, t->loc, "build_id",
				     "target '%s': build-id mismatch: the manifest is for %s, %s has %s; refusing to attach (use --rebind to re-resolve by symbol name; descriptors then become 'degraded')",
				     t->id, pt->build_id_expected, pt->display_path,
				     pt->build_id_found[0] ? pt->build_id_found : "no build-id");
				elf_image__free(img);
				continue;
			}
			pt->rebound = true;
			note(c, DIAG_WARNING, t->loc, "build_id",
			     "target '%s': build-id mismatch (manifest %s, %s has %s); re-bound by symbol name under --rebind: its descriptors are 'degraded'",
			     t->id, pt->build_id_expected, pt->display_path,
			     pt->build_id_found[0] ? pt->build_id_found : "none");
		}
		c->images[i] = img;
	}
	return 0;
}

static struct plan_site *add_site(struct plan_ctx *c)
{
	struct plan *p = c->p;

	if (p->n_sites == c->cap_sites) {
		size_t cap = c->cap_sites ? c->cap_sites * 2 : 32;
		struct plan_site *s = realloc(p->sites, cap * sizeof(*s));

		if (!s)
			return NULL;
		p->sites = s;
		c->cap_sites = cap;
	}
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
		note(c, DIAG_ERROR, loc, field, "event '%s' refused: %s", c->m->events[ei].id, msg);
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

static int plan_symbol_event(struct plan_ctx *c, int ei)
{
	const struct pb_event *e = &c->m->events[ei];
	const struct plan_target *pt = &c->p->targets[e->site.target_idx];
	struct elf_image *img = c->images[e->site.target_idx];
	struct insn_site_check chk = {};
	struct elf_symbol sym;
	uint64_t vaddr, foff;
	struct plan_site *s;
	int err;

	err = elf_image__find_symbol(img, e->site.symbol, &sym);
	if (err == -ENOENT) {
		refuse(c, ei, e->site.loc, "site.symbol",
		       "function '%s' not found in %s (.symtab%s)", e->site.symbol,
		       pt->display_path, elf_image__has_symtab(img) ? " and .dynsym" :
		       " is stripped; .dynsym searched");
		return 0;
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
		return 0;
	}
	if (err) {
		refuse(c, ei, e->site.loc, "site.symbol", "looking up '%s': %s", e->site.symbol,
		       strerror(-err));
		return 0;
	}
	if (sym.ifunc) {
		refuse(c, ei, e->site.loc, "site.symbol",
		       "'%s' is a GNU IFUNC: its address is the resolver, not the code that runs; name the implementation the resolver picks instead",
		       e->site.symbol);
		return 0;
	}
	if (pt->rebound && e->site.offset) {
		refuse(c, ei, e->site.loc, "site.offset",
		       "offset +0x%llx inside '%s' cannot be re-bound by name: the function's code differs from the manifest's build",
		       (unsigned long long)e->site.offset, e->site.symbol);
		return 0;
	}
	err = elf_image__check_insn_boundary(img, &sym, e->site.offset, &chk);
	if (err) {
		refuse(c, ei, e->site.loc, "site.offset",
		       "cannot verify that %s+0x%llx starts an instruction: %s", e->site.symbol,
		       (unsigned long long)e->site.offset,
		       err == -EOPNOTSUPP ? "unsupported architecture" : strerror(-err));
		goto out;
	}
	if (!chk.in_bounds) {
		refuse(c, ei, e->site.loc, "site.offset",
		       "offset +0x%llx is outside '%s' (%llu bytes)",
		       (unsigned long long)e->site.offset, e->site.symbol,
		       (unsigned long long)sym.size);
		goto out;
	}
	if (chk.decode_failed) {
		refuse(c, ei, e->site.loc, "site.offset",
		       "cannot verify %s+0x%llx: Capstone could not decode the instruction at +0x%llx, so the site is not known to start an instruction:\n%s",
		       e->site.symbol, (unsigned long long)e->site.offset,
		       (unsigned long long)chk.decode_failed_at, chk.listing ? chk.listing : "");
		goto out;
	}
	if (!chk.on_boundary) {
		refuse(c, ei, e->site.loc, "site.offset",
		       "%s+0x%llx is not an instruction boundary (nearest: +0x%llx, +0x%llx); a probe there would corrupt the target:\n%s",
		       e->site.symbol, (unsigned long long)e->site.offset,
		       (unsigned long long)chk.prev_boundary, (unsigned long long)chk.next_boundary,
		       chk.listing ? chk.listing : "");
		goto out;
	}
	vaddr = sym.vaddr + e->site.offset;
	err = elf_image__vaddr_to_offset(img, vaddr, &foff);
	if (err) {
		refuse(c, ei, e->site.loc, "site", "%s+0x%llx (0x%llx) is not in a loaded segment",
		       e->site.symbol, (unsigned long long)e->site.offset, (unsigned long long)vaddr);
		goto out;
	}

	/* at: entry  -> one entry site
	 * at: return -> a return site, plus an entry "stash" site when the
	 *               event reads arguments (registers are clobbered by then)
	 *               or predicts an in-call effect (counters at entry)
	 * at: span   -> entry (begin) and return (end) sites */
	if (e->site.at != PB_AT_RETURN || event_uses(e, PB_VAL_ARG) || predicts_in_call(e)) {
		s = add_site(c);
		if (!s)
			return -ENOMEM;
		s->descriptor = ei;
		s->target = e->site.target_idx;
		s->vaddr = vaddr;
		s->file_offset = foff;
		s->sym_vaddr = sym.vaddr;
		s->offset = e->site.offset;
		s->cookie = (uint64_t)ei;
		if (e->site.at == PB_AT_RETURN)
			s->cookie |= PLAN_COOKIE_STASH;
		s->insn_len = chk.insn_len;
		snprintf(s->insn_text, sizeof(s->insn_text), "%s", chk.insn_text);
		if (chk.note[0])
			s->note = strdup(chk.note);
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
		s->sym_vaddr = sym.vaddr;
		s->cookie = (uint64_t)ei | PLAN_COOKIE_RETURN;
		s->insn_len = chk.insn_len;
		snprintf(s->insn_text, sizeof(s->insn_text), "%s", chk.insn_text);
	}
	if (sym.from_dynsym)
		c->n_dynsym[e->site.target_idx]++;
out:
	insn_site_check__clear(&chk);
	return 0;
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
			note(c, DIAG_WARNING, first, "confidence",
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
		note(c, DIAG_NOTE, (struct pb_loc){ 0, 0 }, NULL,
		     "%zu entry site(s) start on an instruction the kernel emulates or single-steps out of line (slower than an optimized probe); %zu on a 5-byte nop it can optimize; see the 'insn'/'note' columns",
		     emulated, nop5);
	for (i = 0; i < p->n_targets; i++)
		if (c->n_dynsym[i])
			note(c, DIAG_NOTE, c->m->targets[i].loc, "binary",
			     "target '%s': %zu symbol(s) resolved from .dynsym only (%s has no .symtab)",
			     c->m->targets[i].id, c->n_dynsym[i], p->targets[i].display_path);
	conf_warnings(c);
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

	err = resolve_targets(&c);
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

	for (i = 0; i < p->n_targets; i++)
		elf_image__free(c.images[i]);
	free(c.images);
	free(c.n_dynsym);
	proc_mappings__free(c.maps, c.n_maps);
	*out = p;
	return p->n_refused ? -EPERM : 0;

err_out:
	for (i = 0; c.images && i < p->n_targets; i++)
		elf_image__free(c.images[i]);
	free(c.images);
	free(c.n_dynsym);
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
