/* SPDX-License-Identifier: BSD-2-Clause */
/* itable_links.c: link segment queries of the generation interval table
 * (itable.h): the generations on a link in a window (`attribute
 * --window`), the generation on a link at a time (`receipts show --at`),
 * and the links with recorded activity. The segments themselves are
 * built in itable_build.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "attribute/itable_int.h"

/* ------------------------------ link segments ------------------------------ */

static json_t *ns_or_null(uint64_t v)
{
	return v == PB_NS_INF ? json_null() : json_integer((json_int_t)v);
}

static json_t *gen_or_null(const struct attr_table *t, int g)
{
	return itable_gen_name(t, g) ? json_string(itable_gen_name(t, g)) : json_null();
}

/* the last moment any image of prog was alive (address intervals) */
static json_t *image_until(const struct attr_table *t, uint32_t prog)
{
	uint64_t until = 0;
	bool open = false, any = false;
	size_t i;

	for (i = 0; prog && i < t->n_ivs; i++) {
		if (t->ivs[i].prog_id != prog)
			continue;
		any = true;
		if (t->ivs[i].end_hi == PB_NS_INF)
			open = true;
		else
			until = max64(until, t->ivs[i].end_hi);
	}
	if (!any)
		return json_null();
	return open ? json_string("still loaded") : json_integer((json_int_t)until);
}

static bool seg_lost(const struct attr_table *t, const struct segment *s, uint64_t lo, uint64_t hi)
{
	return s->observer_only && itable_lost_in(t->link_lost, t->n_link_lost, max64(lo, s->start_lo),
					   min64(hi, s->end_hi));
}

static json_t *seg_json(const struct attr_table *t, const struct segment *s, uint64_t t1, uint64_t t2)
{
	bool whole = s->start_hi <= t1 && s->end_lo >= t2;
	bool part = overlap(s->start_hi, s->end_lo, t1, t2) && s->start_hi <= s->end_lo;
	enum attr_status st = s->status;
	enum attr_reason reason = s->reason;
	json_t *j, *cands = json_array();
	int c;

	if (st == ATTR_GENERATION && seg_lost(t, s, t1, t2)) {
		st = ATTR_UNKNOWN;
		reason = ATTR_R_RECORDS_LOST;
	}
	for (c = 0; c < 2; c++)
		if (s->cand[c] >= 0 || (c == 1 && s->reason == ATTR_R_HANDOFF_LOST))
			json_array_append_new(cands, gen_or_null(t, s->cand[c]));
	j = json_pack("{s:s, s:s, s:o, s:I, s:{s:I, s:I}, s:{s:o, s:o}, s:s, s:s, s:o}",
		      SEGK_LINK, s->key, SEGK_STATUS, st == ATTR_GENERATION ? "generation" : "unknown",
		      SEGK_GENERATION_ID, st == ATTR_GENERATION ? gen_or_null(t, s->gen) : json_null(),
		      SEGK_PROG_ID, (json_int_t)s->prog_id,
		      SEGK_START, SEGK_EARLIEST, (json_int_t)s->start_lo, SEGK_LATEST, (json_int_t)s->start_hi,
		      SEGK_END, SEGK_EARLIEST, ns_or_null(s->end_lo), SEGK_LATEST, ns_or_null(s->end_hi),
		      SEGK_IN_WINDOW, whole ? "whole" : part ? "part" : "possibly",
		      SEGK_SOURCE, s->observer_only ? "observer" : "swapper",
		      SEGK_OLD_IMAGE_ALIVE_UNTIL, image_until(t, s->prog_id));
	if (st == ATTR_UNKNOWN) {
		json_object_set_new(j, SEGK_REASON, json_string(attr_reason__name(reason)));
		json_object_set_new(j, SEGK_CANDIDATES, cands);
		if (s->status == ATTR_UNKNOWN && reason == ATTR_R_NO_RECEIPT)
			json_object_set_new(j, SEGK_GENERATION_ID, json_null());
	} else {
		json_decref(cands);
	}
	return j;
}

json_t *attr_table__window(const struct attr_table *t, const char *key, uint64_t t1, uint64_t t2)
{
	json_t *arr = json_array();
	bool any = false;
	size_t i;

	for (i = 0; i < t->n_segs; i++) {
		const struct segment *s = &t->segs[i];

		if (strcmp(s->key, key))
			continue;
		any = true;
		if (overlap(s->start_lo, s->end_hi, t1, t2))
			json_array_append_new(arr, seg_json(t, s, t1, t2));
	}
	if (!any) {
		json_decref(arr);
		errno = ENOENT;
		return NULL;
	}
	return arr;
}

int attr_table__at(const struct attr_table *t, const char *key, uint64_t time, struct attr_result *r,
		   json_t **segments)
{
	const struct segment *cov[8], *pick = NULL;
	size_t i, n = 0, n_def = 0;
	bool any = false;

	memset(r, 0, sizeof(*r));
	if (segments)
		*segments = json_array();
	for (i = 0; i < t->n_segs; i++) {
		const struct segment *s = &t->segs[i];

		if (strcmp(s->key, key))
			continue;
		any = true;
		if (time < s->start_lo || time > s->end_hi)
			continue;
		if (n < 8)
			cov[n++] = s;
		if (segments)
			json_array_append_new(*segments, seg_json(t, s, time, time));
		if (s->start_hi <= time && time <= s->end_lo) {
			n_def++;
			pick = s;
		}
	}
	if (!any)
		return -ENOENT;
	r->status = ATTR_UNKNOWN;
	if (!n) {
		r->reason = ATTR_R_NO_ACTIVATION;
		snprintf(r->detail, sizeof(r->detail), "no activation recorded on %s before this time", key);
		return 0;
	}
	if (n == 1)
		pick = cov[0];
	else if (n_def != 1)
		pick = NULL;
	if (!pick) {
		const char *a = NULL, *b = NULL;

		r->reason = ATTR_R_SWAP_WINDOW;
		for (i = 0; i < n; i++) {
			if (cov[i]->status == ATTR_UNKNOWN)
				r->reason = cov[i]->reason;
			if (!a)
				a = itable_gen_name(t, cov[i]->gen);
			else if (!b && itable_gen_name(t, cov[i]->gen) && strcmp(a, itable_gen_name(t, cov[i]->gen)))
				b = itable_gen_name(t, cov[i]->gen);
		}
		snprintf(r->detail, sizeof(r->detail), "%zu segments cover this time: %.12s or %.12s", n,
			 a ?: "unknown", b ?: "unknown");
		return 0;
	}
	r->prog_id = pick->prog_id;
	r->definite = pick->start_hi <= time && time <= pick->end_lo;
	if (pick->status == ATTR_UNKNOWN) {
		const char *a = itable_gen_name(t, pick->cand[0]), *b = itable_gen_name(t, pick->cand[1]);

		r->reason = pick->reason;
		if (pick->reason == ATTR_R_NO_RECEIPT)
			snprintf(r->detail, sizeof(r->detail), "no receipt for prog %u", pick->prog_id);
		else
			snprintf(r->detail, sizeof(r->detail), "between %.12s and %.12s (%s)", a ?: "unknown",
				 b ?: "unknown", attr_reason__name(pick->reason));
		return 0;
	}
	if (seg_lost(t, pick, time, time)) {
		r->reason = ATTR_R_RECORDS_LOST;
		snprintf(r->detail, sizeof(r->detail), "the observer lost syscall records around this time");
		return 0;
	}
	r->status = ATTR_GENERATION;
	r->generation_id = itable_gen_name(t, pick->gen);
	itable_apply_horizon(t, time, r);
	return 0;
}

json_t *attr_table__links(const struct attr_table *t)
{
	json_t *o = json_object(), *arr = json_array();
	const char *k;
	json_t *v;
	size_t i;

	for (i = 0; i < t->n_segs; i++)
		json_object_set_new(o, t->segs[i].key, json_true());
	json_object_foreach(o, k, v)
		json_array_append_new(arr, json_string(k));
	json_decref(o);
	return arr;
}


/* ------------------------------ reading a segment ------------------------------ */

/* v: an integer, or null (0, *is_null) */
static int ns_value(const json_t *v, const char *key, int64_t *ns, bool *is_null, json_error_t *err)
{
	*ns = 0;
	if (is_null)
		*is_null = json_is_null(v);
	if (json_is_null(v))
		return 0;
	if (json_is_integer(v)) {
		*ns = json_integer_value(v);
		return 0;
	}
	if (err)
		snprintf(err->text, sizeof(err->text), "%s: Expected integer or null", key);
	return -EINVAL;
}

int attr_segment__decode(const json_t *j, struct attr_segment *out, json_error_t *err)
{
	json_t *gen = NULL, *end_lo = NULL, *end_hi = NULL, *until = NULL, *cands = NULL;
	json_int_t prog = 0, start_lo = 0, start_hi = 0;

	memset(out, 0, sizeof(*out));
	if (json_unpack_ex((json_t *)j, err, 0, "{s:s, s:s, s:o, s:I, s:{s:I, s:I}, s:{s:o, s:o}, s:s, s:s, s:o, s?s, s?o}",
			   SEGK_LINK, &out->link, SEGK_STATUS, &out->status, SEGK_GENERATION_ID, &gen,
			   SEGK_PROG_ID, &prog, SEGK_START, SEGK_EARLIEST, &start_lo, SEGK_LATEST, &start_hi,
			   SEGK_END, SEGK_EARLIEST, &end_lo, SEGK_LATEST, &end_hi, SEGK_IN_WINDOW, &out->in_window,
			   SEGK_SOURCE, &out->source, SEGK_OLD_IMAGE_ALIVE_UNTIL, &until, SEGK_REASON, &out->reason,
			   SEGK_CANDIDATES, &cands))
		return -EINVAL;
	out->generation_id = json_string_value(gen);
	out->prog_id = (uint32_t)prog;
	out->start_earliest = start_lo;
	out->start_latest = start_hi;
	if (ns_value(end_lo, SEGK_END "." SEGK_EARLIEST, &out->end_earliest, NULL, err) ||
	    ns_value(end_hi, SEGK_END "." SEGK_LATEST, &out->end_latest, &out->still_active, err))
		return -EINVAL;
	out->image_until_known = json_is_integer(until);
	out->image_until = json_integer_value(until);
	out->candidates = json_is_array(cands) ? cands : NULL;
	return 0;
}
