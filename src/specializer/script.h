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
#ifndef PROBITY_REJIT_SCRIPT_H
#define PROBITY_REJIT_SCRIPT_H

#include <stddef.h>
#include <stdint.h>

/* the configuration fields of struct lb_cfg a user may set */
struct rj_cfg_field {
	const char *name;
	uint32_t offset;	/* in struct lb_cfg */
	uint32_t min, max;
};
extern const struct rj_cfg_field rj_cfg_fields[];
extern const size_t rj_n_cfg_fields;
const struct rj_cfg_field *rj_cfg_field_at(uint32_t offset);

enum rj_mix { RJ_MIX_NORMAL = 0, RJ_MIX_SHIFT = 1, RJ_N_MIX };
extern const char *const rj_mix_names[RJ_N_MIX];

enum rj_step_kind { RJ_STEP_CONFIG = 1, RJ_STEP_TRAFFIC = 2 };

struct rj_step {
	uint64_t t_ms;		/* from the start of the run */
	uint32_t kind;
	uint32_t field;		/* RJ_STEP_CONFIG: index into rj_cfg_fields */
	uint32_t value;
	uint32_t mix;		/* RJ_STEP_TRAFFIC */
	uint32_t line;
};

struct rj_script {
	struct rj_step *steps;	/* sorted by t_ms (stable) */
	size_t n;
};

/* KEY=VAL: 0, or -EINVAL with a message in err ("expected ..."). VAL is
 * decimal or 0x hex; acl_prefix also takes a.b.c.d. */
int rj_config_parse(const char *kv, uint32_t *field, uint32_t *value, char *err, size_t errsz);
/* Parse a script; name goes into messages ("FILE:LINE: expected ...").
 * buf need not be NUL-terminated. */
int rj_script_parse(const char *buf, size_t len, const char *name, struct rj_script *out,
		    char *err, size_t errsz);
void rj_script_release(struct rj_script *s);

#endif
