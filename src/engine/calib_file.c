// SPDX-License-Identifier: BSD-2-Clause
/* calib_file.c: the calibration file (JSON, "format": "probity-calibration"),
 * so repeated recordings on one kernel can skip the self-test
 * (`record --calibration FILE`). A file from another kernel is stale. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <jansson.h>
#include "engine/calib.h"
#include "common/log.h"

#define CALIB_FORMAT "probity-calibration"

int calib__save(const struct pb_calib *c, const char *path)
{
	json_t *root, *p50 = json_array(), *p90 = json_array(), *meas = json_array();
	int i, err = -ENOMEM;

	for (i = 0; p50 && p90 && meas && i < PB_SITE__COUNT; i++) {
		json_array_append_new(p50, json_real(c->p50_ns[i]));
		json_array_append_new(p90, json_real(c->p90_ns[i]));
		json_array_append_new(meas, json_boolean(c->measured[i]));
	}
	root = json_pack("{s:s, s:i, s:s, s:I, s:o*, s:o*, s:o*}", "format", CALIB_FORMAT,
			 "version", PB_CALIB_VERSION, "kernel", c->kernel,
			 "calls", (json_int_t)c->calls, "p50_ns", p50, "p90_ns", p90,
			 "measured", meas);
	if (!root)
		return err;
	err = json_dump_file(root, path, JSON_INDENT(2)) ? -EIO : 0;
	json_decref(root);
	return err;
}

static int read_arrays(struct pb_calib *c, json_t *p50, json_t *p90, json_t *meas)
{
	int i;

	if (!json_is_array(p50) || !json_is_array(p90) || !json_is_array(meas) ||
	    json_array_size(p50) != PB_SITE__COUNT || json_array_size(p90) != PB_SITE__COUNT ||
	    json_array_size(meas) != PB_SITE__COUNT)
		return -EINVAL;
	for (i = 0; i < PB_SITE__COUNT; i++) {
		if (!json_is_number(json_array_get(p50, i)) ||
		    !json_is_number(json_array_get(p90, i)))
			return -EINVAL;
		c->p50_ns[i] = json_number_value(json_array_get(p50, i));
		c->p90_ns[i] = json_number_value(json_array_get(p90, i));
		c->measured[i] = json_is_true(json_array_get(meas, i));
	}
	return 0;
}

int calib__load(struct pb_calib *out, const char *path)
{
	json_t *root, *p50, *p90, *meas;
	json_error_t je;
	const char *fmt, *kernel;
	json_int_t calls = 0;
	struct pb_calib c;
	int version = 0, err;

	calib__defaults(&c);
	root = json_load_file(path, 0, &je);
	if (!root)
		return errno == ENOENT || strstr(je.text, "unable to open") ? -ENOENT : -EINVAL;
	err = -EINVAL;
	if (json_unpack_ex(root, &je, 0, "{s:s, s:i, s:s, s:I, s:o, s:o, s:o}", "format", &fmt,
			   "version", &version, "kernel", &kernel, "calls", &calls,
			   "p50_ns", &p50, "p90_ns", &p90, "measured", &meas)) {
		pr_warn("calibration file %s: %s\n", path, je.text);
		goto out;
	}
	if (strcmp(fmt, CALIB_FORMAT) || version != PB_CALIB_VERSION || read_arrays(&c, p50, p90, meas))
		goto out;
	err = -ESTALE;
	if (strcmp(kernel, c.kernel))
		goto out;
	c.calls = (uint32_t)calls;
	c.valid = c.cached = true;
	c.entry_emulated_ns = c.p50_ns[PB_SITE_EMULATED];
	c.entry_sstep_ns = c.p50_ns[PB_SITE_SSTEP];
	c.entry_nop5_ns = c.p50_ns[PB_SITE_NOP5];
	c.ret_ns = c.p50_ns[PB_SITE_RET];
	c.usdt_ns = c.p50_ns[PB_SITE_USDT];
	*out = c;
	err = 0;
out:
	json_decref(root);
	return err;
}

int calib__load_or_run(struct pb_calib *out, const char *path, const struct calib_opts *opts)
{
	int err;

	if (path && !calib__load(out, path))
		return 0;
	err = calib__run(out, opts);
	if (err)
		return err;
	if (path && calib__save(out, path))
		pr_warn("calibration: cannot write %s\n", path);
	return 0;
}
