/* SPDX-License-Identifier: BSD-2-Clause */
/* canon.c: the canonical JSON encoding receipts are hashed in: object
 * keys sorted, no whitespace, UTF-8 as is, integers only (a real number
 * has no single spelling, so it is refused).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/digest.h"
#include "receipts/receipts_int.h"

static int check_no_reals(const json_t *j, int depth)
{
	const char *key;
	json_t *v;
	size_t i;

	if (depth > 64)
		return -ELOOP;
	switch (json_typeof(j)) {
	case JSON_REAL:
		return -EINVAL;
	case JSON_OBJECT:
		json_object_foreach((json_t *)j, key, v)
			if (check_no_reals(v, depth + 1))
				return -EINVAL;
		return 0;
	case JSON_ARRAY:
		json_array_foreach(j, i, v)
			if (check_no_reals(v, depth + 1))
				return -EINVAL;
		return 0;
	default:
		return 0;
	}
}

int canon__encode(const json_t *j, char **out, size_t *len)
{
	char *s;
	int err;

	err = check_no_reals(j, 0);
	if (err)
		return err;
	s = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT | JSON_ENCODE_ANY);
	if (!s)
		return -ENOMEM;
	*out = s;
	if (len)
		*len = strlen(s);
	return 0;
}

int pb_sha256_hex(const void *buf, size_t len, char hex[PB_DIGEST_HEX_LEN])
{
	uint8_t md[PB_SHA256_LEN];
	int err = pb_sha256(buf, len, md);

	if (!err)
		pb_hex(md, sizeof(md), hex);
	return err;
}

int canon__digest(const json_t *j, char hex[PB_DIGEST_HEX_LEN])
{
	char *s;
	size_t len;
	int err = canon__encode(j, &s, &len);

	if (err)
		return err;
	err = pb_sha256_hex(s, len, hex);
	free(s);
	return err;
}

bool pb_is_digest_hex(const char *s)
{
	size_t i;

	if (!s || strlen(s) != 64)
		return false;
	for (i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}
