/* SPDX-License-Identifier: BSD-2-Clause */
/* diff.h: what two generations differ in, for `receipts diff`: the
 * fields of their generation bodies, their transforms and assumptions,
 * and their instructions (an LCS edit script over 8-byte BPF insns).
 */
#ifndef PROBITY_RECEIPTS_DIFF_H
#define PROBITY_RECEIPTS_DIFF_H

#include <stddef.h>
#include <jansson.h>

struct pb_store;

enum insn_edit_op {
	INSN_EDIT_ADD,		/* "+": b_index inserted */
	INSN_EDIT_DEL,		/* "-": a_index removed */
	INSN_EDIT_TOO_LARGE,	/* the programs are too large to diff */
};

struct insn_edit {
	enum insn_edit_op op;
	size_t index;		/* a_index (DEL) or b_index (ADD) */
	char insn[128];		/* the instruction, decoded */
};

/* Steps (whole step objects) only one side has. */
struct step_diff {
	json_t *added;		/* array: in b, not in a */
	json_t *removed;	/* array: in a, not in b */
};
/* {"added": [...], "removed": [...]} */
json_t *step_diff__to_json(const struct step_diff *sd);

struct receipt_diff {
	json_t *fields;		/* "path.to.field" -> {"a","b"} of the generation bodies */
	struct step_diff transforms, assumptions;
	size_t a_count, b_count;	/* instructions */
	struct insn_edit *edits;
	size_t n_edits;
	const char *a_native, *b_native;	/* native image digests (borrowed) */
};

/* Compare the receipts sa and sb (statements; they must outlive d). The
 * instructions compared are the submitted ones if the receipt has them,
 * else the xlated ones; none when an artifact is unreadable. */
int receipt_diff__build(struct pb_store *s, const json_t *sa, const json_t *sb,
			struct receipt_diff *d);
/* The two values of one element of d->fields (a or b may be JSON null). */
void receipt_diff__field(const json_t *v, const json_t **a, const json_t **b);
/* {"op", "a_index"|"b_index", "insn"} per edit, {"op":"too large to diff"} */
json_t *receipt_diff__edits_json(const struct receipt_diff *d);
const char *insn_edit_op__name(enum insn_edit_op op);
void receipt_diff__clear(struct receipt_diff *d);

#endif
