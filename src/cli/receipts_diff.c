/* SPDX-License-Identifier: BSD-2-Clause */
/* receipts_diff.c (cli): `probity receipts diff GEN GEN`: what two
 * generations differ in (fields, transforms, assumptions, instructions,
 * native image). */
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "cli/receipts_int.h"
#include "receipts/diff.h"
#include "receipts/receipt.h"
#include "receipts/store.h"

static void print_step_diff(const char *label, const struct step_diff *sd)
{
	const json_t *v;
	size_t i;

	json_array_foreach(sd->removed, i, v) {
		struct receipt_step st;

		receipt_step__decode(v, &st, NULL);
		printf("  - %-10s %s: %s\n", label, st.id, st.description);
	}
	json_array_foreach(sd->added, i, v) {
		struct receipt_step st;

		receipt_step__decode(v, &st, NULL);
		printf("  + %-10s %s: %s\n", label, st.id, st.description);
	}
}

static void print_diff(const char *ga, const char *gb, const struct receipt_diff *d, bool differ)
{
	const char *k;
	json_t *v;
	size_t i;

	printf("a %s\nb %s\n", ga, gb);
	json_object_foreach(d->fields, k, v) {
		const json_t *a, *b;
		char *x, *y;

		receipt_diff__field(v, &a, &b);
		x = json_dumps(a, JSON_ENCODE_ANY | JSON_COMPACT);
		y = json_dumps(b, JSON_ENCODE_ANY | JSON_COMPACT);
		printf("  %-34s %s -> %s\n", k, x, y);
		free(x);
		free(y);
	}
	print_step_diff("transform", &d->transforms);
	print_step_diff("assumption", &d->assumptions);
	printf("  instructions: %zu -> %zu\n", d->a_count, d->b_count);
	for (i = 0; i < d->n_edits; i++) {
		const struct insn_edit *e = &d->edits[i];

		if (e->op == INSN_EDIT_TOO_LARGE)
			printf("    (%s)\n", insn_edit_op__name(e->op));
		else
			printf("    %s [%lld] %s\n", insn_edit_op__name(e->op), (long long)e->index, e->insn);
	}
	printf("  native image: %s -> %s\n", d->a_native, d->b_native);
	if (!differ)
		printf("  (same generation)\n");
}

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

int cmd_receipts_diff(int argc, char **argv)
{
	char ga[PB_DIGEST_HEX_LEN], gb[PB_DIGEST_HEX_LEN], ra[PB_DIGEST_HEX_LEN], rb[PB_DIGEST_HEX_LEN];
	struct receipt_diff d = { 0 };
	struct pb_store *s = NULL;
	json_t *sa = NULL, *sb = NULL;
	struct ropts o;
	int rc, ret = EXIT_USAGE, differ;

	rc = receipts_parse_opts(argc, argv, &o);
	if (rc < 0)
		return rc == -2 ? EXIT_OK : EXIT_USAGE;
	if (rc != argc - 2) {
		p_err("expected two generations (see '%s receipts --help')", bin_name);
		return EXIT_USAGE;
	}
	if (receipts_open_store(&o, &s))
		return EXIT_USAGE;
	if (receipts_resolve(s, argv[rc], ga, ra) || receipts_resolve(s, argv[rc + 1], gb, rb))
		goto out;
	if (store__get_json(s, ra, &sa) || store__get_json(s, rb, &sb)) {
		p_err("a receipt is missing or unreadable; run '%s receipts verify'", bin_name);
		ret = EXIT_FINDINGS;
		goto out;
	}
	if (receipt_diff__build(s, sa, sb, &d)) {
		ret = EXIT_FAILURE_RT;
		goto out;
	}
	differ = strcmp(ga, gb) != 0;
	if (json_output)
		json_print_and_free(json_pack("{s:s, s:s, s:b, s:O, s:o, s:o, s:{s:I, s:I, s:o}, s:{s:o, s:o}}",
			"a", ga, "b", gb, "differ", differ, "generation_fields", d.fields,
			"transforms", step_diff__to_json(&d.transforms),
			"assumptions", step_diff__to_json(&d.assumptions),
			"insns", "a_count", (json_int_t)d.a_count, "b_count", (json_int_t)d.b_count,
			"edits", receipt_diff__edits_json(&d),
			"native_image_digest", "a", str_or_null(d.a_native), "b", str_or_null(d.b_native)));
	else
		print_diff(ga, gb, &d, differ);
	ret = differ ? EXIT_FINDINGS : EXIT_OK;
out:
	receipt_diff__clear(&d);
	json_decref(sa);
	json_decref(sb);
	pb_store__free(s);
	return ret;
}

