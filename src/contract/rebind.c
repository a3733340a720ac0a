/* SPDX-License-Identifier: BSD-2-Clause */
/* rebind.c: a manifest re-bound to another build (rebind.h): plan the
 * new build with --rebind, compare USDT argument shapes with the old build
 * when it is on disk, take confidence from a trace's evidence, edit the
 * text (rebind_edit.c) and check that only build_id, confidence and
 * provenance changed.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "common/digest.h"
#include "common/io.h"
#include "common/log.h"
#include "contract/plan.h"
#include "contract/rebind.h"
#include "contract/rebind_int.h"
#include "elf/elf_image.h"
#include "elf/usdt.h"

#define MANIFEST_MAX	(16u << 20)
#define EVIDENCE_MAX	1024

struct rctx {
	const char *path;
	const struct rebind_opts *o;
	char *buf;
	size_t len;
	struct plan *plan;
	struct rebind_result *r;
	struct diags *diags;
};

/* The shape of a USDT probe in one build: argument count and, per
 * argument, the largest size any of its sites passes (the sign of the
 * size is left out: a constant argument may be spelled -4 in one site and
 * 4 in another of the same build). n_args -1: absent, -2: sites differ. */
struct usdt_shape {
	int n_args;
	int size[12];
};

static void usdt_shape(const struct elf_image *img, const char *prov, const char *name,
		       struct usdt_shape *s)
{
	const struct elf_usdt_note *notes;
	int n = elf_image__usdt_notes(img, &notes), i, a;

	memset(s, 0, sizeof(*s));
	s->n_args = -1;
	for (i = 0; i < n; i++) {
		const char *p;

		if (strcmp(notes[i].provider, prov) || strcmp(notes[i].name, name))
			continue;
		s->n_args = s->n_args == -1 || s->n_args == notes[i].n_args ? notes[i].n_args : -2;
		for (a = 0, p = notes[i].args; p && *p && a < 12; a++) {
			int sz = abs(atoi(p));

			if (strchr(p, '@') && sz > s->size[a])
				s->size[a] = sz;
			p = strchr(p, ' ');
			while (p && *p == ' ')
				p++;
		}
	}
}

static void shape_str(const struct usdt_shape *s, char *buf, size_t sz)
{
	size_t n;
	int a;

	if (s->n_args < 0) {
		snprintf(buf, sz, s->n_args == -1 ? "absent" : "sites differ");
		return;
	}
	n = (size_t)snprintf(buf, sz, "%d arg(s)", s->n_args);
	for (a = 0; a < s->n_args && a < 12 && n + 8 < sz; a++)
		n += (size_t)snprintf(buf + n, sz - n, "%s%d", a ? "," : " (", s->size[a]);
	if (s->n_args > 0 && n + 2 < sz)
		snprintf(buf + n, sz - n, ")");
}

/* The manifest's own build of target ti, when it is still on disk: the
 * target's binary (absolute, or relative to the manifest) with the
 * manifest's build-id. NULL otherwise. */
static struct elf_image *open_old_build(struct rctx *c, size_t ti)
{
	const struct pb_target *t = &c->r->manifest->targets[ti];
	char buf[PATH_MAX], *copy;
	struct elf_image *img;
	char hex[2 * ELF_BUILD_ID_MAX + 1];

	if (t->binary[0] == '/') {
		snprintf(buf, sizeof(buf), "%s", t->binary);
	} else {
		copy = strdup(c->path);
		if (!copy)
			return NULL;
		snprintf(buf, sizeof(buf), "%s/%s", dirname(copy), t->binary);
		free(copy);
	}
	img = elf_image__open(buf);
	if (!img)
		return NULL;
	if (elf_image__build_id_hex(img, hex, sizeof(hex)) <= 0 || strcmp(hex, c->r->old_ids[ti])) {
		elf_image__free(img);
		return NULL;
	}
	return img;
}

static void refuse_event(struct rebind_event *e, struct rebind_result *r, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void refuse_event(struct rebind_event *e, struct rebind_result *r, const char *fmt, ...)
{
	va_list ap;

	if (e->status != REBIND_EV_REFUSED)
		r->n_refused++;
	e->status = REBIND_EV_REFUSED;
	free(e->reason);
	va_start(ap, fmt);
	if (vasprintf(&e->reason, fmt, ap) < 0)
		e->reason = NULL;
	va_end(ap);
}

/* USDT events of re-bound targets: the probe's shape on both builds. */
static void check_usdt_shapes(struct rctx *c)
{
	const struct manifest *m = c->r->manifest;
	size_t ti, ei;

	for (ti = 0; ti < m->n_targets; ti++) {
		struct elf_image *old = NULL, *new = NULL;

		if (!c->plan->targets[ti].rebound)
			continue;
		old = open_old_build(c, ti);
		new = old ? elf_image__open(c->plan->targets[ti].path) : NULL;
		for (ei = 0; ei < m->n_events; ei++) {
			const struct pb_event *ev = &m->events[ei];
			struct rebind_event *re = &c->r->events[ei];
			struct usdt_shape so, sn;
			char a[80], b[80];

			if (ev->site.target_idx != (int)ti || !ev->site.usdt_name)
				continue;
			if (!old || !new) {
				snprintf(re->shape, sizeof(re->shape),
					 "not compared: the manifest's build (%s) is not on disk", m->targets[ti].binary);
				c->r->n_shape_unchecked++;
				continue;
			}
			usdt_shape(old, ev->site.usdt_provider, ev->site.usdt_name, &so);
			usdt_shape(new, ev->site.usdt_provider, ev->site.usdt_name, &sn);
			shape_str(&so, a, sizeof(a));
			shape_str(&sn, b, sizeof(b));
			re->shape_checked = true;
			c->r->n_shape_checked++;
			if (so.n_args == sn.n_args && !memcmp(so.size, sn.size, sizeof(so.size))) {
				snprintf(re->shape, sizeof(re->shape), "usdt %s on both builds", a);
				continue;
			}
			snprintf(re->shape, sizeof(re->shape), "usdt %s -> %s", a, b);
			refuse_event(re, c->r, "USDT probe %s:%s changed its argument shape: %s on the manifest's build, %s on the new one",
				     ev->site.usdt_provider, ev->site.usdt_name, a, b);
		}
		elf_image__free(old);
		elf_image__free(new);
	}
}

static void today(char *date, size_t sz)
{
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(date, sz, "%Y-%m-%d", &tm);
}

/* The trace must have recorded this manifest on the new build. */
static int check_trace(struct rctx *c)
{
	const struct rebind_trace *t = c->o->trace;
	uint8_t sha[PB_SHA256_LEN];
	size_t i;

	pb_sha256(c->buf, c->len, sha);
	if (memcmp(sha, t->manifest_sha256, sizeof(sha))) {
		diags__add(c->diags, DIAG_ERROR, t->name, 0, 0, NULL,
			   "the trace recorded another manifest than %s (SHA-256 differs); record with this file",
			   c->path);
		return -EINVAL;
	}
	for (i = 0; i < c->r->n_targets; i++) {
		if (i < t->n_targets && !strcmp(t->build_ids[i], c->r->new_ids[i]))
			continue;
		diags__add(c->diags, DIAG_ERROR, t->name, 0, 0, NULL,
			   "target '%s': the trace recorded build-id %s, the new binary has %s; record the new build with --rebind",
			   c->r->manifest->targets[i].id, i < t->n_targets ? t->build_ids[i] : "none",
			   c->r->new_ids[i]);
		return -EINVAL;
	}
	if (t->n_events != c->r->n_events) {
		diags__add(c->diags, DIAG_ERROR, t->name, 0, 0, NULL,
			   "the trace has %zu descriptors, the manifest %zu events", t->n_events,
			   c->r->n_events);
		return -EINVAL;
	}
	return 0;
}

/* Confidence and provenance text of one re-bound event. */
static void decide(struct rctx *c, size_t ei, struct rebind_prov_text *p, char *evbuf,
		   const char *date)
{
	const struct pb_event *ev = &c->r->manifest->events[ei];
	const struct rebind_evidence *e = c->o->trace ? &c->o->trace->events[ei] : NULL;
	struct rebind_event *re = &c->r->events[ei];
	const char *ti = c->r->old_ids[ev->site.target_idx], *tn = c->r->new_ids[ev->site.target_idx];
	char earlier[EVIDENCE_MAX / 2] = "";
	int n;

	if (ev->provenance.present)
		snprintf(earlier, sizeof(earlier), "; earlier: %s%s%s", pb_prov_source_str(ev->provenance.source),
			 ev->provenance.evidence ? ": " : "",
			 ev->provenance.evidence ? ev->provenance.evidence : "");
	n = snprintf(evbuf, EVIDENCE_MAX, "re-bound by name from build-id %.12s to %.12s", ti, tn);
	p->date = date;
	if (e && e->judged && e->state == PB_CONF_VALIDATED && e->initial == PB_CONF_DEGRADED) {
		re->confidence = PB_CONF_VALIDATED;
		p->source = "runtime";
		p->date = c->o->trace->date;
		snprintf(evbuf + n, EVIDENCE_MAX - (size_t)n,
			 "; revalidated by trace %s: promoted after %u consecutive clean windows (%llu events, %llu predictions checked, no violation, no failed prediction); %llu events in the trace%s",
			 c->o->trace->name, e->windows, (unsigned long long)e->events,
			 (unsigned long long)e->checked, (unsigned long long)e->total_events, earlier);
	} else if (e && e->judged && (e->state == PB_CONF_SUSPECT || e->state == PB_CONF_STALE)) {
		re->confidence = e->state;
		p->source = "runtime";
		p->date = c->o->trace->date;
		snprintf(evbuf + n, EVIDENCE_MAX - (size_t)n, "; trace %s found it %s: %s%s",
			 c->o->trace->name, pb_confidence_str(e->state), e->reason, earlier);
		if (e->state == PB_CONF_STALE)
			refuse_event(re, c->r, "trace %s found it stale (the model does not hold on the new build): %s",
				     c->o->trace->name, e->reason);
	} else {
		re->confidence = PB_CONF_CANDIDATE;
		p->source = "static_analysis";
		snprintf(evbuf + n, EVIDENCE_MAX - (size_t)n, "; not revalidated at runtime%s%s%s",
			 e && e->judged ? " (trace " : "", e && e->judged ? c->o->trace->name : "",
			 e && e->judged ? ": not enough clean evidence yet)" : "");
		n = (int)strlen(evbuf);
		snprintf(evbuf + n, EVIDENCE_MAX - (size_t)n, "%s", earlier);
	}
	p->evidence = evbuf;
	switch (re->confidence) {
	case PB_CONF_VALIDATED: c->r->n_validated++; break;
	case PB_CONF_SUSPECT: c->r->n_suspect++; break;
	case PB_CONF_CANDIDATE: c->r->n_candidate++; break;
	default: break;
	}
}

/* Positions move when a field is inserted: leave them out of the comparison. */
static void strip_locs(json_t *j)
{
	const char *k;
	json_t *v;
	void *tmp;
	size_t i;

	if (json_is_array(j)) {
		json_array_foreach(j, i, v)
			strip_locs(v);
		return;
	}
	if (!json_is_object(j))
		return;
	json_object_del(j, "loc");
	json_object_foreach_safe(j, tmp, k, v)
		strip_locs(v);
}

/* The re-parsed text must be the same model but for build_id,
 * confidence and provenance: m2 gets m's values of those (its own
 * provenance is put back before it is freed), then both print the same. */
static int verify_text(struct rctx *c)
{
	struct manifest *m2 = NULL, *m = c->r->manifest;
	struct pb_provenance *own = NULL;
	struct diags *d = diags__new();
	char *a = NULL, *b = NULL;
	json_t *ja = NULL, *jb = NULL;
	size_t i;
	int err;

	if (!d)
		return -ENOMEM;
	err = manifest__parse(c->path, c->r->text, c->r->len, &m2, d);
	diags__free(d);
	if (err)
		return err == -ENOMEM ? err : -EIO;
	if (m2->n_events != m->n_events || m2->n_targets != m->n_targets) {
		err = -EIO;
		goto out;
	}
	own = calloc(m->n_events + 1, sizeof(*own));
	if (!own) {
		err = -ENOMEM;
		goto out;
	}
	memcpy(m2->digest, m->digest, sizeof(m2->digest));	/* of the file */
	for (i = 0; i < m->n_targets; i++) {
		memcpy(m2->targets[i].build_id, m->targets[i].build_id, PB_BUILD_ID_MAX);
		m2->targets[i].build_id_len = m->targets[i].build_id_len;
	}
	for (i = 0; i < m->n_events; i++) {
		own[i] = m2->events[i].provenance;
		m2->events[i].provenance = m->events[i].provenance;
		m2->events[i].confidence = m->events[i].confidence;
	}
	ja = manifest__to_json(m);
	jb = manifest__to_json(m2);
	for (i = 0; i < m->n_events; i++)
		m2->events[i].provenance = own[i];
	strip_locs(ja);
	strip_locs(jb);
	a = ja ? json_dumps(ja, JSON_SORT_KEYS) : NULL;
	b = jb ? json_dumps(jb, JSON_SORT_KEYS) : NULL;
	err = !a || !b ? -ENOMEM : strcmp(a, b) ? -EIO : 0;
out:
	if (err == -EIO)
		pr_err("manifest rebind: the edited text changed more than build_id, confidence and provenance (a bug; nothing written)\n");
	free(own);
	free(a);
	free(b);
	json_decref(ja);
	json_decref(jb);
	manifest__free(m2);
	return err;
}

/* Load and plan: the manifest parsed, the plan of the new build with
 * --rebind, and per target the old and new build-ids. */
static int load_and_plan(struct rctx *c)
{
	struct plan_opts po = { .binaries = c->o->binaries, .n_binaries = c->o->n_binaries,
				.rebind = true };
	struct rebind_result *r = c->r;
	size_t i, n_rebound = 0;
	int err;

	err = pb_read_file(c->path, MANIFEST_MAX, &c->buf, &c->len);
	if (err) {
		diags__add(c->diags, DIAG_ERROR, c->path, 0, 0, NULL, "cannot read file: %s", strerror(-err));
		return err == -ENOMEM ? err : -EINVAL;
	}
	err = manifest__parse(c->path, c->buf, c->len, &r->manifest, c->diags);
	if (err)
		return err;
	err = plan__build(r->manifest, &po, &c->plan, c->diags);
	if (!c->plan)
		return err ? err : -EINVAL;
	r->n_targets = c->plan->n_targets;
	r->n_events = r->manifest->n_events;
	r->old_ids = calloc(r->n_targets + 1, sizeof(*r->old_ids));
	r->new_ids = calloc(r->n_targets + 1, sizeof(*r->new_ids));
	r->events = calloc(r->n_events + 1, sizeof(*r->events));
	if (!r->old_ids || !r->new_ids || !r->events)
		return -ENOMEM;
	for (i = 0; i < r->n_targets; i++) {
		const struct plan_target *pt = &c->plan->targets[i];

		snprintf(r->old_ids[i], sizeof(r->old_ids[i]), "%s", pt->build_id_expected);
		snprintf(r->new_ids[i], sizeof(r->new_ids[i]), "%s", pt->build_id_found);
		n_rebound += pt->rebound;
		if (!pt->resolved || (pt->rebound && !pt->build_id_found[0])) {
			diags__add(c->diags, DIAG_ERROR, c->path, r->manifest->targets[i].loc.line,
				   r->manifest->targets[i].loc.col, "binary",
				   "target '%s': %s %s", r->manifest->targets[i].id,
				   pt->resolved ? "no GNU build-id in" : "cannot find or read",
				   pt->display_path ? pt->display_path : r->manifest->targets[i].binary);
			return -EINVAL;
		}
	}
	if (!n_rebound && !err) {
		diags__add(c->diags, DIAG_ERROR, c->path, 0, 0, NULL,
			   "nothing to re-bind: every target already has the manifest's build-id");
		return -EINVAL;
	}
	return 0;
}

/* Per event: refusals of the plan, then the shape checks. */
static void judge_events(struct rctx *c)
{
	struct rebind_result *r = c->r;
	size_t i;

	for (i = 0; i < r->n_events; i++) {
		const struct plan_descriptor *d = &c->plan->descriptors[i];
		struct rebind_event *e = &r->events[i];

		e->id = r->manifest->events[i].id;
		e->confidence = r->manifest->events[i].confidence;
		e->rebound = c->plan->targets[r->manifest->events[i].site.target_idx].rebound;
		if (d->status == PLAN_DESC_REFUSED)
			refuse_event(e, r, "%s", d->reason ? d->reason : "refused by the plan");
	}
	check_usdt_shapes(c);
}

static int edit_text(struct rctx *c)
{
	struct rebind_result *r = c->r;
	const char **ids = calloc(r->n_targets + 1, sizeof(*ids));
	const char **conf = calloc(r->n_events + 1, sizeof(*conf));
	struct rebind_prov_text *prov = calloc(r->n_events + 1, sizeof(*prov));
	char (*evbuf)[EVIDENCE_MAX] = calloc(r->n_events + 1, sizeof(*evbuf));
	struct rebind_edit_req req = { r->n_targets, ids, r->n_events, conf, prov };
	char date[16], why[256];
	size_t i;
	int err = -ENOMEM;

	if (!ids || !conf || !prov || !evbuf)
		goto out;
	if (c->o->date)
		snprintf(date, sizeof(date), "%s", c->o->date);
	else
		today(date, sizeof(date));
	for (i = 0; i < r->n_targets; i++)
		ids[i] = c->plan->targets[i].rebound ? r->new_ids[i] : NULL;
	for (i = 0; i < r->n_events; i++) {
		if (!r->events[i].rebound)
			continue;
		decide(c, i, &prov[i], evbuf[i], date);
		conf[i] = pb_confidence_str(r->events[i].confidence);
	}
	err = 0;
	if (r->n_refused)
		goto out;
	err = rebind_edit__apply(c->buf, c->len, &req, &r->text, &r->len, why, sizeof(why));
	if (err == -EINVAL)
		diags__add(c->diags, DIAG_ERROR, c->path, 0, 0, NULL, "cannot edit the text: %s", why);
	if (!err)
		err = verify_text(c);
out:
	free(ids);
	free(conf);
	free(prov);
	free(evbuf);
	return err;
}

int manifest_rebind__build(const char *path, const struct rebind_opts *o,
			   struct rebind_result **out, struct diags *diags)
{
	struct rctx c = { .path = path, .o = o, .diags = diags };
	int err;

	*out = NULL;
	c.r = calloc(1, sizeof(*c.r));
	if (!c.r)
		return -ENOMEM;
	c.r->from_trace = o->trace != NULL;
	err = load_and_plan(&c);
	if (!err && o->trace)
		err = check_trace(&c);
	if (err)
		goto out;
	judge_events(&c);
	err = edit_text(&c);
	if (!err && c.r->n_refused)
		err = -EPERM;
out:
	if (!err || err == -EPERM) {
		*out = c.r;
		c.r = NULL;
	}
	rebind_result__free(c.r);
	plan__free(c.plan);
	free(c.buf);
	return err;
}

void rebind_result__free(struct rebind_result *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; r->events && i < r->n_events; i++)
		free(r->events[i].reason);
	free(r->events);
	free(r->old_ids);
	free(r->new_ids);
	free(r->text);
	manifest__free(r->manifest);
	free(r);
}

int rebind_result__write(const struct rebind_result *r, const char *path)
{
	char tmp[PATH_MAX];
	int fd, err;

	if (!r || !r->text)
		return -EINVAL;
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	err = pb_write_all(fd, r->text, r->len);
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

json_t *rebind_result__to_json(const struct rebind_result *r)
{
	json_t *o = json_object(), *ts = json_array(), *es = json_array();
	size_t i;

	if (!o || !ts || !es) {
		json_decref(o);
		json_decref(ts);
		json_decref(es);
		return NULL;
	}
	for (i = 0; i < r->n_targets; i++)
		json_array_append_new(ts, json_pack("{s:s, s:s, s:s}", "id", r->manifest->targets[i].id,
						    "old_build_id", r->old_ids[i], "new_build_id", r->new_ids[i]));
	for (i = 0; i < r->n_events; i++) {
		const struct rebind_event *e = &r->events[i];

		json_array_append_new(es, json_pack("{s:s, s:s, s:s, s:b, s:s?, s:s?}", "id", e->id,
			"status", e->status == REBIND_EV_REFUSED ? "refused" : "ok",
			"confidence", pb_confidence_str(e->confidence), "rebound", e->rebound,
			"shape", e->shape[0] ? e->shape : NULL, "reason", e->reason));
	}
	json_object_set_new(o, "targets", ts);
	json_object_set_new(o, "events", es);
	json_object_set_new(o, "from_trace", json_boolean(r->from_trace));
	json_object_set_new(o, "refused", json_integer((json_int_t)r->n_refused));
	json_object_set_new(o, "validated", json_integer((json_int_t)r->n_validated));
	json_object_set_new(o, "candidate", json_integer((json_int_t)r->n_candidate));
	json_object_set_new(o, "suspect", json_integer((json_int_t)r->n_suspect));
	json_object_set_new(o, "usdt_shape_checked", json_integer((json_int_t)r->n_shape_checked));
	json_object_set_new(o, "usdt_shape_unchecked", json_integer((json_int_t)r->n_shape_unchecked));
	return o;
}

void rebind_result__print(const struct rebind_result *r, FILE *out)
{
	size_t i;

	for (i = 0; i < r->n_targets; i++)
		fprintf(out, "target %s: build-id %s -> %s\n", r->manifest->targets[i].id, r->old_ids[i],
			r->new_ids[i]);
	for (i = 0; i < r->n_events; i++) {
		const struct rebind_event *e = &r->events[i];

		fprintf(out, "  %-28s %-9s %s%s%s\n", e->id,
			e->status == REBIND_EV_REFUSED ? "REFUSED" :
			!e->rebound ? "unchanged" : pb_confidence_str(e->confidence),
			e->shape[0] ? e->shape : "", e->reason && e->shape[0] ? "; " : "",
			e->reason ? e->reason : "");
	}
	fprintf(out, "%zu validated, %zu candidate, %zu suspect, %zu refused; USDT shapes compared with the old build: %zu, not compared: %zu%s\n",
		r->n_validated, r->n_candidate, r->n_suspect, r->n_refused, r->n_shape_checked,
		r->n_shape_unchecked, r->from_trace ? "" : " (no --from-trace: nothing is revalidated)");
}
