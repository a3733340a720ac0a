/* SPDX-License-Identifier: BSD-2-Clause */
/* diff.c: what two generations differ in (see diff.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/bpf.h>
#include "receipts/diff.h"
#include "receipts/receipts_int.h"

/* Above this many instruction pairs the LCS table is not built. */
#define INSN_DIFF_MAX_CELLS 4000000

/* Differing fields of two generation bodies, recursing into objects;
 * the step lists are compared by step_diff. */
static json_t *field_diff(const json_t *a, const json_t *b, const char *prefix, json_t *out)
{
	const char *k;
	json_t *v;
	char path[512];

	json_object_foreach((json_t *)a, k, v) {
		json_t *w = json_object_get(b, k);

		snprintf(path, sizeof(path), "%s%s", prefix, k);
		if (!strcmp(k, GK_TRANSFORMS) || !strcmp(k, GK_ASSUMPTIONS))
			continue;
		if (json_is_object(v) && json_is_object(w)) {
			char sub[520];

			snprintf(sub, sizeof(sub), "%s.", path);
			field_diff(v, w, sub, out);
		} else if (!w || !json_equal(v, w)) {
			json_object_set_new(out, path, json_pack("{s:O, s:o}", "a", v, "b", w ? json_incref(w) : json_null()));
		}
	}
	json_object_foreach((json_t *)b, k, v) {
		snprintf(path, sizeof(path), "%s%s", prefix, k);
		if (!json_object_get(a, k))
			json_object_set_new(out, path, json_pack("{s:n, s:O}", "a", "b", v));
	}
	return out;
}

/* Steps (whole objects) of a not in b, and of b not in a. */
static int step_diff(const json_t *a, const json_t *b, struct step_diff *sd)
{
	json_t *added = json_array(), *removed = json_array(), *v, *w;
	size_t i, j;

	json_array_foreach(a, i, v) {
		int found = 0;

		json_array_foreach(b, j, w)
			found |= json_equal(v, w);
		if (!found)
			json_array_append(removed, v);
	}
	json_array_foreach(b, i, v) {
		int found = 0;

		json_array_foreach(a, j, w)
			found |= json_equal(v, w);
		if (!found)
			json_array_append(added, v);
	}
	sd->added = added;
	sd->removed = removed;
	return added && removed ? 0 : -ENOMEM;
}

json_t *step_diff__to_json(const struct step_diff *sd)
{
	return json_pack("{s:O, s:O}", "added", sd->added, "removed", sd->removed);
}

void receipt_diff__field(const json_t *v, const json_t **a, const json_t **b)
{
	*a = *b = NULL;
	json_unpack((json_t *)v, "{s:o, s:o}", "a", a, "b", b);
}

static int push_edit(struct receipt_diff *d, enum insn_edit_op op, size_t index,
		     const struct bpf_insn *in)
{
	struct insn_edit *e = realloc(d->edits, (d->n_edits + 1) * sizeof(*e));

	if (!e)
		return -ENOMEM;
	d->edits = e;
	e = &d->edits[d->n_edits++];
	memset(e, 0, sizeof(*e));
	e->op = op;
	e->index = index;
	if (in)
		snprintf(e->insn, sizeof(e->insn), "code=0x%02x dst=r%u src=r%u off=%d imm=%d (0x%x)",
			 in->code, in->dst_reg, in->src_reg, in->off, in->imm, (unsigned)in->imm);
	return 0;
}

/* LCS over instructions (8-byte records) into d->edits. */
static int insn_diff(struct receipt_diff *d, const void *ab, size_t alen, const void *bb, size_t blen)
{
	const struct bpf_insn *a = ab, *b = bb;
	size_t n = alen / 8, m = blen / 8, i, j;
	uint32_t *dp;
	int err = 0;

	if (n * m > INSN_DIFF_MAX_CELLS || !(dp = calloc((n + 1) * (m + 1), sizeof(*dp))))
		return push_edit(d, INSN_EDIT_TOO_LARGE, 0, NULL);
#define DP(x, y) dp[(x) * (m + 1) + (y)]
	for (i = n; i-- > 0;)
		for (j = m; j-- > 0;)
			DP(i, j) = !memcmp(&a[i], &b[j], 8) ? DP(i + 1, j + 1) + 1 :
				   (DP(i + 1, j) > DP(i, j + 1) ? DP(i + 1, j) : DP(i, j + 1));
	i = j = 0;
	while (!err && (i < n || j < m)) {
		if (i < n && j < m && !memcmp(&a[i], &b[j], 8)) {
			i++, j++;
		} else if (j < m && (i == n || DP(i, j + 1) > DP(i + 1, j))) {
			err = push_edit(d, INSN_EDIT_ADD, j, &b[j]);
			j++;
		} else {
			err = push_edit(d, INSN_EDIT_DEL, i, &a[i]);
			i++;
		}
	}
#undef DP
	free(dp);
	return err;
}

static const char *insns_artifact(const struct receipt_view *v)
{
	return v->artifacts.submitted_insns ?: v->artifacts.xlated_insns;
}

int receipt_diff__build(struct pb_store *s, const json_t *sa, const json_t *sb,
			struct receipt_diff *d)
{
	struct receipt_view va, vb;
	void *ba = NULL, *bb = NULL;
	size_t la = 0, lb = 0;
	int err = 0;

	memset(d, 0, sizeof(*d));
	receipt__decode(sa, &va, NULL);	/* compare what is there */
	receipt__decode(sb, &vb, NULL);
	d->fields = field_diff(va.generation.body, vb.generation.body, "", json_object());
	err = step_diff(va.generation.transforms, vb.generation.transforms, &d->transforms) ?:
	      step_diff(va.generation.assumptions, vb.generation.assumptions, &d->assumptions);
	d->a_native = va.native_image_digest;
	d->b_native = vb.native_image_digest;
	if (!err && insns_artifact(&va) && insns_artifact(&vb) && !pb_store__get(s, insns_artifact(&va), &ba, &la) &&
	    !pb_store__get(s, insns_artifact(&vb), &bb, &lb))
		err = insn_diff(d, ba, la, bb, lb);
	d->a_count = la / 8;
	d->b_count = lb / 8;
	free(ba);
	free(bb);
	if (!err && !d->fields)
		err = -ENOMEM;
	if (err)
		receipt_diff__clear(d);
	return err;
}

const char *insn_edit_op__name(enum insn_edit_op op)
{
	switch (op) {
	case INSN_EDIT_ADD: return "+";
	case INSN_EDIT_DEL: return "-";
	default: return "too large to diff";
	}
}

json_t *receipt_diff__edits_json(const struct receipt_diff *d)
{
	json_t *arr = json_array();
	size_t i;

	for (i = 0; arr && i < d->n_edits; i++) {
		const struct insn_edit *e = &d->edits[i];

		if (e->op == INSN_EDIT_TOO_LARGE)
			json_array_append_new(arr, json_pack("{s:s}", "op", insn_edit_op__name(e->op)));
		else
			json_array_append_new(arr, json_pack("{s:s, s:I, s:s}", "op", insn_edit_op__name(e->op),
							     e->op == INSN_EDIT_ADD ? "b_index" : "a_index",
							     (json_int_t)e->index, "insn", e->insn));
	}
	return arr;
}

void receipt_diff__clear(struct receipt_diff *d)
{
	json_decref(d->fields);
	json_decref(d->transforms.added);
	json_decref(d->transforms.removed);
	json_decref(d->assumptions.added);
	json_decref(d->assumptions.removed);
	free(d->edits);
	memset(d, 0, sizeof(*d));
}
