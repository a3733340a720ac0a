/* SPDX-License-Identifier: BSD-2-Clause */
/* export.c: DSSE envelopes over stored receipts (see export.h). The
 * payload is the receipt object exactly as stored, so sha256(payload) is
 * the receipt digest the log names. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "receipts/export.h"
#include "receipts/lifelog.h"
#include "receipts/receipt.h"

static bool has_gen(const json_t *gens, const char *gen)
{
	const char *g;
	size_t i;
	json_t *e;

	json_array_foreach(gens, i, e) {
		if (json_unpack(e, "{s:s}", EXK_GENERATION, &g) == 0 && !strcmp(g, gen))
			return true;
	}
	return false;
}

static int add_gen(json_t *gens, const char *gen, const char *receipt)
{
	if (has_gen(gens, gen))
		return 0;
	return json_array_append_new(gens, json_pack("{s:s, s:s}", EXK_GENERATION, gen,
						     EXK_RECEIPT, receipt)) ? -ENOMEM : 0;
}

/* Every generation with a receipt, from the log's 'loaded' entries. */
static int select_all(struct pb_store *s, json_t *gens)
{
	struct lifelog_entry le;
	json_t *entries = NULL, *e;
	json_error_t jerr;
	size_t i;
	int n, err = 0;

	n = lifelog__read(s, &entries, NULL);
	if (n < 0)
		return n;
	if (n > 0) {
		err = -EBADMSG;
		goto out;
	}
	json_array_foreach(entries, i, e) {
		if (lifelog_entry__decode(e, &le, &jerr) || le.kind != LIFE_LOADED ||
		    !le.generation_id || !le.receipt)
			continue;
		err = add_gen(gens, le.generation_id, le.receipt);
		if (err)
			break;
	}
out:
	json_decref(entries);
	return err;
}

int export__select(struct pb_store *s, const struct export_sel *sel, json_t **gens,
		   const char **bad)
{
	char g[PB_DIGEST_HEX_LEN], r[PB_DIGEST_HEX_LEN];
	size_t i;
	int err = 0;

	*bad = NULL;
	*gens = json_array();
	if (!*gens)
		return -ENOMEM;
	if (sel->all)
		err = select_all(s, *gens);
	for (i = 0; !err && i < sel->n_gens; i++) {
		err = receipts__find_generation(s, sel->gens[i], g, r);
		if (err)
			*bad = sel->gens[i];
		else
			err = add_gen(*gens, g, r);
	}
	if (err) {
		json_decref(*gens);
		*gens = NULL;
	}
	return err;
}

int export__envelopes(struct pb_store *s, const json_t *gens, struct dsse_signer *sg, FILE *out)
{
	const char *receipt;
	json_t *e, *env;
	void *buf;
	size_t i, len;
	int err = 0;

	json_array_foreach(gens, i, e) {
		if (json_unpack(e, "{s:s}", EXK_RECEIPT, &receipt))
			return -EINVAL;
		err = pb_store__get(s, receipt, &buf, &len);
		if (err)
			return err;
		env = dsse__envelope(sg, DSSE_PAYLOAD_TYPE_INTOTO, buf, len);
		free(buf);
		if (!env)
			return -errno;
		err = json_dumpf(env, out, JSON_COMPACT | JSON_SORT_KEYS) ? -EIO : 0;
		json_decref(env);
		if (!err && fputc('\n', out) == EOF)
			err = -EIO;
		if (err)
			return err;
	}
	return fflush(out) ? -errno : 0;
}
