/* SPDX-License-Identifier: BSD-2-Clause */
/* script.h: what `probity rejit` reads from its user: configuration
 * assignments (KEY=VAL, --config and script steps) and the scenario
 * script (--script FILE), one timed step per line:
 *
 *   # comment
 *   t=3 config feature_acl=0
 *   t=5.5 traffic shift
 *
 * No BPF here: the parser is a pure function (tests/fuzz/fuzz_rejit_script.c).
 */
#ifndef PROBITY_SPECIALIZER_SCRIPT_H
#define PROBITY_SPECIALIZER_SCRIPT_H

#include <stddef.h>
#include <stdint.h>
#include "common/errtext.h"

/* the configuration fields of struct lb_cfg a user may set */
struct sp_cfg_field {
	const char *name;
	uint32_t offset;	/* in struct lb_cfg */
	uint32_t min, max;
};
extern const struct sp_cfg_field sp_cfg_fields[];
extern const size_t sp_n_cfg_fields;
const struct sp_cfg_field *sp_cfg_field_at(uint32_t offset);

enum sp_mix { SP_MIX_NORMAL = 0, SP_MIX_SHIFT = 1, SP_N_MIX };
extern const char *const sp_mix_names[SP_N_MIX];

enum sp_step_kind { SP_STEP_CONFIG = 1, SP_STEP_TRAFFIC = 2 };

struct sp_step {
	uint64_t t_ms;		/* from the start of the run */
	uint32_t kind;
	uint32_t field;		/* SP_STEP_CONFIG: index into sp_cfg_fields */
	uint32_t value;
	uint32_t mix;		/* SP_STEP_TRAFFIC */
	uint32_t line;
};

struct sp_script {
	struct sp_step *steps;	/* sorted by t_ms (stable) */
	size_t n;
};

/* KEY=VAL: 0, or -EINVAL with a message in err ("expected ..."). VAL is
 * decimal or 0x hex; acl_prefix also takes a.b.c.d. The parser's messages
 * are positioned findings for the user (FILE:LINE:, as the manifest
 * linter's), so they come back in a struct pb_errtext (common/errtext.h)
 * rather than through pr_err. err may be NULL. */
int sp_config_parse(const char *kv, uint32_t *field, uint32_t *value, struct pb_errtext *err);
/* Parse a script; name goes into messages ("FILE:LINE: expected ...",
 * err->line is LINE). buf need not be NUL-terminated. */
int sp_script_parse(const char *buf, size_t len, const char *name, struct sp_script *out,
		    struct pb_errtext *err);
void sp_script_release(struct sp_script *s);

#endif
