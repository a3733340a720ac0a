/* SPDX-License-Identifier: BSD-2-Clause */
/* fuzz_signing.c: libFuzzer entry point for the inputs of `receipts
 * export`/`checkpoint` and `metrics --listen` that come from the user:
 * the first byte picks the parser, the rest is its input.
 *   0: a --listen address (metrics__parse_listen)
 *   1: a PEM private key (dsse_signer__from_pem); a key that opens signs
 *      a DSSE envelope over the rest of the input
 *   2: an OpenSSH public key line (dsse__ssh_keyid)
 * Seeds: tests/fuzz/corpus/fuzz_signing/ (mk-signing-seeds.sh).
 */
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "common/log.h"
#include "metrics/metrics.h"
#include "receipts/dsse.h"

static int quiet(enum pb_log_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sockaddr_in sin;
	struct dsse_signer *sg = NULL;
	char keyid[7 + 65], err[256];
	char *text;
	json_t *env;

	pb_set_print(quiet);
	if (size < 1)
		return 0;
	text = malloc(size);
	if (!text)
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	switch (data[0] % 3) {
	case 0:
		metrics__parse_listen(text, &sin);
		break;
	case 1:
		if (dsse_signer__from_pem(text, size - 1, &sg, err, sizeof(err)) == 0) {
			env = dsse__envelope(sg, DSSE_PAYLOAD_TYPE_INTOTO, data, size);
			json_decref(env);
			(void)strlen(dsse_signer__public_key(sg));
		} else {
			(void)strlen(err);
		}
		dsse_signer__free(sg);
		break;
	case 2:
		dsse__ssh_keyid(text, keyid);
		break;
	}
	free(text);
	return 0;
}
