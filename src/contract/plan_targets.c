/* SPDX-License-Identifier: BSD-2-Clause */
/* plan_targets.c: the first stage of plan__build (plan.h): each target
 * of the manifest resolved to a file on this machine, opened, and its
 * build-id checked against the manifest's.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "contract/plan_int.h"
#include "elf/proc_maps.h"
#include "common/digest.h"
#include "common/log.h"

static const char *const lib_dirs[] = {
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
	"/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
	"/lib64", "/usr/lib64", "/lib", "/usr/lib", "/usr/local/lib", NULL,
};

static bool is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static char *manifest_dir(const struct manifest *m)
{
	char *copy, *dir;

	if (!m->path)
		return strdup(".");
	copy = strdup(m->path);
	if (!copy)
		return NULL;
	dir = strdup(dirname(copy));
	free(copy);
	return dir;
}

/* Find the file for a target's `binary` field when no pid/override applies:
 * absolute paths as they are; paths with a '/' relative to the manifest's
 * directory; bare names in the manifest's directory, then in the standard
 * library directories (sonames). */
static char *resolve_binary_path(const struct manifest *m, const char *binary)
{
	char buf[PATH_MAX], *dir, *res = NULL;
	int i;

	if (binary[0] == '/')
		return is_file(binary) ? realpath(binary, NULL) : NULL;
	dir = manifest_dir(m);
	if (!dir)
		return NULL;
	snprintf(buf, sizeof(buf), "%s/%s", dir, binary);
	free(dir);
	if (is_file(buf))
		return realpath(buf, NULL);
	if (strchr(binary, '/'))
		return NULL;
	for (i = 0; lib_dirs[i] && !res; i++) {
		snprintf(buf, sizeof(buf), "%s/%s", lib_dirs[i], binary);
		if (is_file(buf))
			res = realpath(buf, NULL);
	}
	return res;
}

/* --binary overrides: "ID=PATH" names a target; a bare "PATH" applies to
 * the only target, or to the target whose binary has the same basename. */
static const char *binary_override(const struct plan_ctx *c, int ti)
{
	const struct pb_target *t = &c->m->targets[ti];
	const char *bare = NULL;
	size_t i, idlen = strlen(t->id);

	for (i = 0; i < c->opts->n_binaries; i++) {
		const char *b = c->opts->binaries[i];
		const char *eq = strchr(b, '=');

		if (eq && (size_t)(eq - b) == idlen && !strncmp(b, t->id, idlen))
			return eq + 1;
		if (!eq) {
			char *a = strdup(b), *x = strdup(t->binary);

			if (a && x && (c->m->n_targets == 1 ||
				       !strcmp(basename(a), basename(x))))
				bare = b;
			free(a);
			free(x);
		}
	}
	return bare;
}

static bool build_id_matches(struct elf_image *img, const struct pb_target *t,
			     char *found_hex, size_t sz)
{
	uint8_t id[ELF_BUILD_ID_MAX];
	int n = elf_image__build_id(img, id, sizeof(id));

	found_hex[0] = '\0';
	if (n <= 0)
		return false;
	elf_image__build_id_hex(img, found_hex, sz);
	return (size_t)n == t->build_id_len && !memcmp(id, t->build_id, n);
}

/* In a process: the mapped file with the expected build-id wins; else the
 * mapping whose basename equals the target's (soname or file name). */
static char *resolve_in_process(struct plan_ctx *c, const struct pb_target *t,
				char **display)
{
	char *want = strdup(t->binary), *base;
	int i, by_name = -1;

	if (!want)
		return NULL;
	base = basename(want);
	for (i = 0; i < c->n_maps; i++) {
		struct elf_image *img = elf_image__open(c->maps[i].path);
		char hex[2 * ELF_BUILD_ID_MAX + 1];
		bool match;
		char *mb;

		if (!img)
			continue;
		match = build_id_matches(img, t, hex, sizeof(hex));
		elf_image__free(img);
		if (match) {
			free(want);
			*display = strdup(c->maps[i].map_path);
			return strdup(c->maps[i].path);
		}
		mb = strrchr(c->maps[i].map_path, '/');
		mb = mb ? mb + 1 : c->maps[i].map_path;
		if (by_name < 0 && !strcmp(mb, base))
			by_name = i;
	}
	free(want);
	if (by_name < 0)
		return NULL;
	*display = strdup(c->maps[by_name].map_path);
	return strdup(c->maps[by_name].path);
}

struct elf_image *plan_ctx__old_build(struct plan_ctx *c, int ti)
{
	const struct pb_target *t = &c->m->targets[ti];
	char hex[2 * PB_BUILD_ID_MAX + 1];
	struct elf_image *img = NULL;
	char *path;

	if (c->old_tried[ti])
		return c->old_images[ti];
	c->old_tried[ti] = true;
	path = resolve_binary_path(c->m, t->binary);
	if (path)
		img = elf_image__open(path);
	free(path);
	if (img && !build_id_matches(img, t, hex, sizeof(hex))) {
		elf_image__free(img);
		img = NULL;
	}
	c->old_images[ti] = img;
	return img;
}

/* The per-target arrays of the plan and of c; -ENOMEM */
static int alloc_per_target(struct plan_ctx *c)
{
	size_t n = c->m->n_targets;

	c->p->targets = calloc(n, sizeof(*c->p->targets));
	c->images = calloc(n, sizeof(*c->images));
	c->n_dynsym = calloc(n, sizeof(*c->n_dynsym));
	c->old_images = calloc(n, sizeof(*c->old_images));
	c->old_tried = calloc(n, sizeof(*c->old_tried));
	return c->p->targets && c->images && c->n_dynsym && c->old_images && c->old_tried ? 0 : -ENOMEM;
}

int plan_ctx__resolve_targets(struct plan_ctx *c)
{
	const struct manifest *m = c->m;
	struct plan *p = c->p;
	size_t i;
	int err;

	if (c->opts->pid > 0) {
		err = proc_mappings__read(c->opts->pid, &c->maps);
		if (err < 0) {
			plan_ctx__note(c, DIAG_ERROR, (struct pb_loc){ 0, 0 }, NULL,
			     "cannot read the mappings of process %d: %s",
			     (int)c->opts->pid, strerror(-err));
			return err;
		}
		c->n_maps = err;
	}
	if (alloc_per_target(c))
		return -ENOMEM;
	p->n_targets = m->n_targets;

	for (i = 0; i < m->n_targets; i++) {
		const struct pb_target *t = &m->targets[i];
		struct plan_target *pt = &p->targets[i];
		const char *ovr = binary_override(c, i);
		struct elf_image *img;
		char *display = NULL;

		pt->manifest_idx = i;
		pb_hex(t->build_id, t->build_id_len, pt->build_id_expected);
		if (ovr) {
			pt->path = is_file(ovr) ? realpath(ovr, NULL) : NULL;
			display = strdup(ovr);
		} else if (c->opts->pid > 0) {
			pt->path = resolve_in_process(c, t, &display);
		} else {
			pt->path = resolve_binary_path(m, t->binary);
			display = pt->path ? strdup(pt->path) : NULL;
		}
		pt->display_path = display ? display : strdup(t->binary);
		if (!pt->path) {
			if (c->opts->pid > 0)
				plan_ctx__note(c, DIAG_ERROR, t->loc, "binary",
				     "target '%s': no file mapped by process %d has build-id %s or is named '%s'",
				     t->id, (int)c->opts->pid, pt->build_id_expected, t->binary);
			else
				plan_ctx__note(c, DIAG_ERROR, t->loc, "binary",
				     "target '%s': cannot find '%s'%s", t->id,
				     ovr ? ovr : t->binary,
				     ovr ? "" : " (relative paths are resolved from the manifest's directory; use --binary PATH)");
			continue;
		}
		img = elf_image__open(pt->path);
		if (!img) {
			plan_ctx__note(c, DIAG_ERROR, t->loc, "binary", "target '%s': cannot read %s as ELF: %s",
			     t->id, pt->path, strerror(errno));
			continue;
		}
		pt->resolved = true;
		pt->build_id_match = build_id_matches(img, t, pt->build_id_found,
						      sizeof(pt->build_id_found));
		if (!pt->build_id_match) {
			if (!c->opts->rebind) {
				plan_ctx__note(c, DIAG_ERROR, t->loc, "build_id",
				     "target '%s': build-id mismatch: the manifest is for %s, %s has %s; refusing to attach (use --rebind to re-resolve by symbol name; descriptors then become 'degraded')",
				     t->id, pt->build_id_expected, pt->display_path,
				     pt->build_id_found[0] ? pt->build_id_found : "no build-id");
				elf_image__free(img);
				continue;
			}
			pt->rebound = true;
			plan_ctx__note(c, DIAG_WARNING, t->loc, "build_id",
			     "target '%s': build-id mismatch (manifest %s, %s has %s); re-bound by symbol name under --rebind: its descriptors are 'degraded'",
			     t->id, pt->build_id_expected, pt->display_path,
			     pt->build_id_found[0] ? pt->build_id_found : "none");
		}
		c->images[i] = img;
	}
	return 0;
}
