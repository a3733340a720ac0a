/* SPDX-License-Identifier: BSD-2-Clause */
/* train.c: training a distribution envelope on clean traces (train.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/diag.h"
#include "common/digest.h"
#include "contract/manifest.h"
#include "trace/trace.h"
#include "validate/confidence.h"
#include "validate/train.h"

struct trainer {
	struct trainer_opts o;
	struct manifest *m;		/* the first trace's embedded manifest */
	struct envelope_binding b;
	struct pb_envelope *env;
	char *first;
	char cut[256];
};

/* one replay: the trace and its confidence controller */
struct replay {
	struct trace_reader *r;
	const char *path;
	const struct trace_plan_desc *pd;
	size_t n_desc;
	struct confidence *conf;
	const struct manifest *m;	/* the leak hypothesis */
};

static void say(const struct trainer *t, enum pb_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void say(const struct trainer *t, enum pb_log_level level, const char *fmt, ...)
{
	char text[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (t->o.message)
		t->o.message(level, text, t->o.ctx);
	else
		pb_log(level, "%s\n", text);
}

struct trainer *trainer__new(const struct trainer_opts *opts)
{
	struct trainer *t = calloc(1, sizeof(*t));

	if (t && opts)
		t->o = *opts;
	return t;
}

static void binding_from_header(const struct trace_header *h, size_t n_targets,
				struct envelope_binding *b)
{
	size_t i;

	memset(b, 0, sizeof(*b));
	memcpy(b->manifest_sha256, h->manifest_sha256, sizeof(b->manifest_sha256));
	for (i = 0; i < n_targets && i < h->n_targets && i < ENVELOPE_MAX_TARGETS; i++) {
		uint32_t len = h->build_ids[i].len > sizeof(h->build_ids[i].id) ?
			       (uint32_t)sizeof(h->build_ids[i].id) : h->build_ids[i].len;

		pb_hex(h->build_ids[i].id, len, b->build_id[i]);
	}
	b->n_targets = n_targets < ENVELOPE_MAX_TARGETS ? n_targets : ENVELOPE_MAX_TARGETS;
}

/* The first trace: its embedded manifest and binding become the
 * trainer's. */
static int bind_first(struct trainer *t, struct trace_reader *r, const char *path)
{
	struct diags *d;
	const void *mb;
	size_t ml;
	int err;

	mb = trace_reader__manifest(r, &ml);
	d = diags__new();
	if (!d)
		return -ENOMEM;
	err = manifest__parse("embedded manifest", mb, ml, &t->m, d);
	diags__free(d);
	if (err) {
		say(t, PB_LOG_ERROR, "%s: the embedded manifest does not parse", path);
		return err == -ENOMEM ? -ENOMEM : -EINVAL;
	}
	if (t->m->n_targets > ENVELOPE_MAX_TARGETS) {
		say(t, PB_LOG_ERROR, "%s: more than %d targets", path, ENVELOPE_MAX_TARGETS);
		return -EINVAL;
	}
	t->first = strdup(path);
	if (!t->first)
		return -ENOMEM;
	binding_from_header(trace_reader__header(r), t->m->n_targets, &t->b);
	return 0;
}

/* The first trace fixes the manifest and the binding; the others must match. */
static int bind_trace(struct trainer *t, struct trace_reader *r, const char *path)
{
	struct envelope_binding b;
	size_t i;

	if (!t->m)
		return bind_first(t, r, path);
	binding_from_header(trace_reader__header(r), t->m->n_targets, &b);
	if (memcmp(b.manifest_sha256, t->b.manifest_sha256, 32)) {
		say(t, PB_LOG_ERROR, "%s: recorded with another manifest than %s: an envelope is "
		    "bound to one manifest", path, t->first);
		return -EINVAL;
	}
	for (i = 0; i < b.n_targets; i++)
		if (strcmp(b.build_id[i], t->b.build_id[i])) {
			say(t, PB_LOG_ERROR, "%s: target '%s' has build-id %s, %s had %s: an "
			    "envelope is bound to one build", path, t->m->targets[i].id,
			    b.build_id[i], t->first, t->b.build_id[i]);
			return -EINVAL;
		}
	return 0;
}

static int open_replay(struct trainer *t, struct replay *rp, const char *path)
{
	int err;

	rp->path = path;
	rp->r = trace_reader__open(path);
	if (!rp->r) {
		err = errno;
		say(t, PB_LOG_ERROR, "%s: %s", path,
		    err == EBADMSG ? "not a probity trace, or its header is corrupt" :
		    err == EPROTONOSUPPORT ? "trace written by a newer probity" : strerror(err));
		return err == ENOMEM ? -ENOMEM : -EINVAL;
	}
	err = bind_trace(t, rp->r, path);
	if (err)
		return err;
	rp->pd = trace_reader__descriptors(rp->r, &rp->n_desc);
	if (rp->n_desc != t->m->n_events) {
		say(t, PB_LOG_ERROR, "%s: %zu descriptors for %zu manifest events", path,
		    rp->n_desc, t->m->n_events);
		return -EINVAL;
	}
	return 0;
}

/* The confidence controller the replay feeds, as `record` started it. */
static int start_confidence(struct replay *rp)
{
	struct confidence_opts co = { 0 };
	enum pb_confidence *init;
	uint32_t *ev;
	size_t i;

	init = calloc(rp->n_desc + 1, sizeof(*init));
	ev = calloc(rp->n_desc + 1, sizeof(*ev));
	if (!init || !ev) {
		free(init);
		free(ev);
		return -ENOMEM;
	}
	for (i = 0; i < rp->n_desc; i++) {
		init[i] = rp->pd[i].confidence <= PB_CONF_DEGRADED ?
			  (enum pb_confidence)rp->pd[i].confidence : PB_CONF_CANDIDATE;
		ev[i] = rp->pd[i].event;
	}
	co.manifest = rp->m;
	co.desc_event = ev;
	if (!(trace_reader__header(rp->r)->flags & TRACE_F_SPAWNED))
		co.grace_ns = CONFIDENCE_ATTACH_GRACE_NS;
	rp->conf = confidence__new(rp->n_desc, init, &co);
	free(init);
	free(ev);
	return rp->conf ? 0 : -ENOMEM;
}

/* Every record and snapshot into the envelope and the controller. */
static int replay_items(struct trainer *t, struct replay *rp, struct trainer_trace_stats *st)
{
	struct trace_item it;
	size_t i;
	int rc;

	while ((rc = trace_reader__next(rp->r, &it)) > 0) {
		if (it.type == TRACE_ITEM_RECORD) {
			if (it.rec->type == PB_REC_VIOLATION)
				confidence__sample(rp->conf, (const void *)it.rec, it.rec_len);
			else
				envelope__record(t->env, it.rec, it.rec_len);
			confidence__window(rp->conf, it.rec, it.rec_len);
		} else if (it.type == TRACE_ITEM_SNAPSHOT) {
			if (confidence__snapshot_res(rp->conf, it.snap.ts_ns, it.snap.desc,
						     it.snap.n_desc, it.snap.res,
						     it.snap.n_res) == -ENOMEM ||
			    envelope__snapshot(t->env, it.snap.ts_ns, it.snap.desc,
					       it.snap.n_desc) == -ENOMEM)
				return -ENOMEM;
			for (i = 0, st->events = 0; i < it.snap.n_desc; i++)
				st->events += it.snap.desc[i].events;
		}
	}
	if (rc < 0) {
		say(t, PB_LOG_ERROR, "%s: %s", rp->path, strerror(-rc));
		return rc == -EINVAL ? -EIO : rc;	/* -EINVAL means "does not fit" */
	}
	return 0;
}

/* a descriptor that went suspect even once (and recovered) is not clean */
static int check_clean(struct trainer *t, const struct replay *rp)
{
	const struct confidence_change *ch;
	size_t n_ch, i;

	ch = confidence__changes(rp->conf, &n_ch);
	for (i = 0; i < n_ch; i++) {
		uint32_t ev = ch[i].descriptor < rp->n_desc ? rp->pd[ch[i].descriptor].event : 0;

		if (ch[i].to != PB_CONF_SUSPECT && ch[i].to != PB_CONF_STALE)
			continue;
		say(t, PB_LOG_ERROR, "%s: not a clean run: %s went %s (%s); no envelope is "
		    "trained on it", rp->path, ev < t->m->n_events ? t->m->events[ev].id : "?",
		    pb_confidence_str(ch[i].to), ch[i].reason);
		return -EUCLEAN;
	}
	return 0;
}

int trainer__add_trace(struct trainer *t, const char *path, struct trainer_trace_stats *st)
{
	struct replay rp = { 0 };
	size_t windows0;
	int err;

	memset(st, 0, sizeof(*st));
	err = open_replay(t, &rp, path);
	if (err)
		goto out;
	if (!t->env) {
		t->env = envelope__new(t->m, &t->b);
		if (!t->env) {
			err = errno == EINVAL ? -EIO : -errno;
			say(t, PB_LOG_ERROR, "envelope: %s", strerror(errno));
			goto out;
		}
	}
	rp.m = t->m;
	err = start_confidence(&rp);
	if (err)
		goto out;
	windows0 = envelope__n_windows(t->env);
	st->records = trace_reader__header(rp.r)->flags & TRACE_F_EVENTS;
	err = envelope__begin_run(t->env, st->records);
	if (err) {
		err = err == -EINVAL ? -EIO : err;	/* -EINVAL means "does not fit" */
		goto out;
	}
	err = replay_items(t, &rp, st);
	if (err)
		goto out;
	err = check_clean(t, &rp);
	if (err)
		goto out;
	if (trace_reader__cut_reason(rp.r)) {
		snprintf(t->cut, sizeof(t->cut), "%s", trace_reader__cut_reason(rp.r));
		st->cut_reason = t->cut;
	}
	st->windows = envelope__n_windows(t->env) - windows0;
out:
	confidence__free(rp.conf);
	trace_reader__free(rp.r);
	return err;
}

int trainer__finish(struct trainer *t)
{
	return t->env ? envelope__finish(t->env) : -ENODATA;
}

const struct manifest *trainer__manifest(const struct trainer *t)
{
	return t->m;
}

const struct envelope_binding *trainer__binding(const struct trainer *t)
{
	return &t->b;
}

const char *trainer__first(const struct trainer *t)
{
	return t->first;
}

const struct pb_envelope *trainer__envelope(const struct trainer *t)
{
	return t->env;
}

void trainer__free(struct trainer *t)
{
	if (!t)
		return;
	envelope__free(t->env);
	manifest__free(t->m);
	free(t->first);
	free(t);
}
