// SPDX-License-Identifier: BSD-2-Clause
/* agent_catalog.c: what the agent knows of the world (agent_int.h): the
 * manifests of its directory (loaded, reloaded when changed, invalid ones
 * kept with their error so the others keep working) and which processes
 * run which manifest's target, by the GNU build-id of /proc/PID/exe. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "agent/agent_int.h"
#include "common/array.h"
#include "common/diag.h"
#include "common/log.h"
#include "elf/elf_image.h"

void agent_manifest_free(struct agent_manifest *am)
{
	if (!am)
		return;
	manifest__free(am->m);
	free(am->path);
	free(am->stem);
	free(am->pids);
	free(am->slot.pids);
	free(am->metrics);
	free(am);
}

/* The first error of a manifest that does not load, as "FILE:LINE:COL: ..." */
static void first_error(const struct diags *d, char *buf, size_t sz)
{
	size_t i, n = diags__count(d);

	snprintf(buf, sz, "cannot load (no finding recorded)");
	for (i = 0; i < n; i++) {
		const struct diag *g = diags__get(d, i);

		if (g->severity == DIAG_ERROR) {
			diag__format(g, buf, sz);
			return;
		}
	}
}

static void load_one(struct agent_manifest *am, const struct stat *st)
{
	struct diags *d = diags__new();
	int err;

	manifest__free(am->m);
	am->m = NULL;
	am->dev = st->st_dev;
	am->ino = st->st_ino;
	am->size = st->st_size;
	am->mtime = st->st_mtim;
	am->error[0] = 0;
	am->n_pids = 0;
	am->bin_path[0] = 0;
	am->new_build_id[0] = 0;
	am->rebind = false;
	am->state = AGENT_M_IDLE;
	err = d ? manifest__load(am->path, &am->m, d) : -ENOMEM;
	if (err) {
		if (d)
			first_error(d, am->error, sizeof(am->error));
		else
			snprintf(am->error, sizeof(am->error), "%s: %s", am->path, strerror(-err));
		am->state = AGENT_M_INVALID;
		pr_warn("agent: manifest %s is not used: %s (the other manifests keep working)\n",
			am->path, am->error);
	} else {
		pr_info("agent: manifest %s loaded (%s)\n", am->path, am->m->name);
	}
	diags__free(d);
}

static struct agent_manifest *find_path(struct agent *a, const char *path)
{
	for (size_t i = 0; i < a->n_ms; i++)
		if (!strcmp(a->ms[i]->path, path))
			return a->ms[i];
	return NULL;
}

static bool is_manifest_name(const char *n)
{
	size_t l = strlen(n);

	if (n[0] == '.')
		return false;
	return (l > 5 && !strcmp(n + l - 5, ".yaml")) || (l > 4 && !strcmp(n + l - 4, ".yml"));
}

static struct agent_manifest *add_manifest(struct agent *a, const char *path, const char *name)
{
	struct agent_manifest *am;

	if (PB_ARRAY_RESERVE_ONE(a->ms, a->n_ms, a->ms_cap))
		return NULL;
	am = calloc(1, sizeof(*am));
	if (!am)
		return NULL;
	am->path = strdup(path);
	am->stem = strndup(name, strcspn(name, "."));
	if (!am->path || !am->stem) {
		agent_manifest_free(am);
		return NULL;
	}
	am->slot.name = am->stem;
	a->ms[a->n_ms++] = am;
	return am;
}

/* One directory entry: new, changed (reloaded) or unchanged. */
static int catalog_entry(struct agent *a, const char *name,
			 void (*stop_fn)(struct agent *, struct agent_manifest *))
{
	char path[PATH_MAX];
	struct agent_manifest *am;
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", a->o.manifest_dir, name);
	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return 0;
	am = find_path(a, path);
	if (am) {
		am->seen = true;
		if (am->dev == st.st_dev && am->ino == st.st_ino && am->size == st.st_size &&
		    am->mtime.tv_sec == st.st_mtim.tv_sec && am->mtime.tv_nsec == st.st_mtim.tv_nsec)
			return 0;
		stop_fn(a, am);
		pr_info("agent: manifest %s changed: reloading\n", path);
	} else {
		am = add_manifest(a, path, name);
		if (!am)
			return -ENOMEM;
		am->seen = true;
	}
	load_one(am, &st);
	a->state_dirty = true;
	return 0;
}

int agent_catalog_load(struct agent *a, void (*stop_fn)(struct agent *, struct agent_manifest *))
{
	struct dirent **ents = NULL;
	int n, i, err = 0;
	size_t j, k;

	n = scandir(a->o.manifest_dir, &ents, NULL, alphasort);
	if (n < 0) {
		err = -errno;
		pr_err("agent: cannot read manifest directory %s: %s\n", a->o.manifest_dir,
		       strerror(-err));
		return err;
	}
	for (j = 0; j < a->n_ms; j++)
		a->ms[j]->seen = false;
	for (i = 0; i < n; i++) {
		if (!err && is_manifest_name(ents[i]->d_name))
			err = catalog_entry(a, ents[i]->d_name, stop_fn);
		free(ents[i]);
	}
	free(ents);
	for (j = 0, k = 0; j < a->n_ms; j++) {
		if (a->ms[j]->seen || err) {
			a->ms[k++] = a->ms[j];
			continue;
		}
		pr_info("agent: manifest %s removed\n", a->ms[j]->path);
		stop_fn(a, a->ms[j]);
		agent_manifest_free(a->ms[j]);
		a->state_dirty = true;
	}
	if (!err)
		a->n_ms = k;
	return err;
}

/* The build-id of the file /proc/PID/exe names, read once per file. */
static const struct agent_bid *exe_build_id(struct agent *a, pid_t pid)
{
	char path[64];
	struct agent_bid *b;
	struct elf_image *img;
	struct stat st;
	size_t i;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if (stat(path, &st)) {
		if (errno == EACCES && !a->proc_denied++)
			pr_warn("agent: cannot read %s: %s: processes like it cannot be matched "
				"(needs CAP_SYS_PTRACE; counted in the state file)\n", path,
				strerror(EACCES));
		return NULL;
	}
	if (!S_ISREG(st.st_mode))
		return NULL;
	for (i = 0; i < AGENT_BID_CACHE; i++) {
		b = &a->bids[i];
		if (b->ino == st.st_ino && b->dev == st.st_dev &&
		    b->mtime.tv_sec == st.st_mtim.tv_sec && b->mtime.tv_nsec == st.st_mtim.tv_nsec)
			return b;
	}
	b = &a->bids[a->bid_next++ % AGENT_BID_CACHE];
	memset(b, 0, sizeof(*b));
	b->dev = st.st_dev;
	b->ino = st.st_ino;
	b->mtime = st.st_mtim;
	img = elf_image__open(path);
	if (img) {
		int n = elf_image__build_id(img, b->id, sizeof(b->id));

		b->len = n > 0 ? n : 0;
		elf_image__free(img);
	}
	return b;
}

/* readlink /proc/PID/exe; a replaced file reads "PATH (deleted)": *deleted */
static bool exe_path(pid_t pid, char *buf, size_t sz, bool *deleted)
{
	static const char del[] = " (deleted)";
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	n = readlink(link, buf, sz - 1);
	if (n <= 0)
		return false;
	buf[n] = 0;
	*deleted = (size_t)n > sizeof(del) - 1 && !strcmp(buf + n - (sizeof(del) - 1), del);
	if (*deleted)
		buf[n - (sizeof(del) - 1)] = 0;
	return true;
}

static void add_pid(struct agent *a, struct agent_manifest *am, pid_t pid)
{
	for (size_t i = 0; i < am->n_pids; i++)
		if (am->pids[i] == pid)
			return;
	if (PB_ARRAY_RESERVE_ONE(am->pids, am->n_pids, am->pids_cap)) {
		pr_warn("agent: out of memory tracking pid %d\n", (int)pid);
		return;
	}
	am->pids[am->n_pids++] = pid;
	am->new_target = true;
	a->state_dirty = true;
	pr_debug("agent: %s: target pid %d\n", am->stem, (int)pid);
}

static void hex(const uint8_t *id, int len, char *out)
{
	for (int i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", id[i]);
	out[2 * (len > 0 ? len : 0)] = 0;
}

/* Same path as a manifest's binary, another build: a package upgrade. */
static void upgraded(struct agent *a, struct agent_manifest *am, pid_t pid, const char *path,
		     const struct agent_bid *b)
{
	char nb[2 * PB_BUILD_ID_MAX + 1], ob[2 * PB_BUILD_ID_MAX + 1];
	const struct pb_target *t = &am->m->targets[am->target_idx];

	hex(b->id, b->len, nb);
	if (!nb[0])	/* a file without a build-id: "none", still a new build */
		snprintf(nb, sizeof(nb), "none");
	hex(t->build_id, (int)t->build_id_len, ob);
	if (strcmp(nb, am->new_build_id)) {
		snprintf(am->new_build_id, sizeof(am->new_build_id), "%s", nb);
		am->c.refusals += !a->o.rebind;
		am->c.rebinds += a->o.rebind;
		snprintf(am->error, sizeof(am->error),
			 "%s was replaced: build-id %s, manifest expects %s: %s", path,
			 nb, ob,
			 a->o.rebind ? "rebound by symbol name, descriptors degraded"
				     : "refused (agent --rebind records it degraded)");
		pr_warn("agent: %s: %s\n", am->stem, am->error);
		a->state_dirty = true;
	}
	if (!a->o.rebind) {
		if (!am->n_pids && !am->slot.running)
			am->state = AGENT_M_REFUSED;
		return;
	}
	if (!am->rebind || strcmp(am->bin_path, path)) {
		am->rebind = true;
		snprintf(am->bin_path, sizeof(am->bin_path), "%s", path);
		am->n_pids = 0;	/* the old build's processes are not this plan's */
	}
	add_pid(a, am, pid);
}

static bool match_target(struct agent_manifest *am, const struct agent_bid *b)
{
	for (size_t t = 0; t < am->m->n_targets; t++) {
		const struct pb_target *pt = &am->m->targets[t];

		if (pt->build_id_len && (int)pt->build_id_len == b->len &&
		    !memcmp(pt->build_id, b->id, pt->build_id_len)) {
			am->target_idx = (int)t;
			return true;
		}
	}
	return false;
}

void agent_catalog_exec(struct agent *a, pid_t pid)
{
	const struct agent_bid *b;
	char path[PATH_MAX];
	bool deleted = false, matched = false;
	size_t i;

	/* no build-id: matches no manifest, but at a manifest's binary path
	 * it is still another build */
	if (pid == getpid() || !(b = exe_build_id(a, pid)))
		return;
	if (!exe_path(pid, path, sizeof(path), &deleted))
		return;
	for (i = 0; i < a->n_ms; i++) {
		struct agent_manifest *am = a->ms[i];

		if (!am->m || !match_target(am, b))
			continue;
		matched = true;
		if (am->rebind)
			continue;	/* recording the new build: old ones end with their file */
		/* a replaced (deleted) file is probed through /proc/PID/exe */
		if (!am->n_pids || !am->bin_path[0]) {
			if (deleted)
				snprintf(am->bin_path, sizeof(am->bin_path), "/proc/%d/exe", (int)pid);
			else
				snprintf(am->bin_path, sizeof(am->bin_path), "%s", path);
		}
		add_pid(a, am, pid);
	}
	if (matched || deleted)
		return;
	for (i = 0; i < a->n_ms; i++) {
		struct agent_manifest *am = a->ms[i];
		const char *bin;

		if (!am->m)
			continue;
		bin = am->m->targets[am->target_idx].binary;
		if ((am->bin_path[0] && !strcmp(am->bin_path, path)) || (bin && !strcmp(bin, path)))
			upgraded(a, am, pid, path, b);
	}
}

/* The children of every thread of pid running the same build (forked
 * workers: no exec, so no procwatch event) become targets of am. The
 * window running follows them already (the engine's fork tracking);
 * listing them keeps them recorded in the next windows, after pid exits. */
static void scan_children(struct agent *a, struct agent_manifest *am, pid_t pid)
{
	char path[96], buf[4096], *s, *save;
	const struct agent_bid *b = exe_build_id(a, pid);
	uint8_t id[PB_BUILD_ID_MAX];
	int len, fd;
	struct dirent *de;
	ssize_t n;
	DIR *d;

	if (!b || !b->len)
		return;
	len = b->len;
	memcpy(id, b->id, (size_t)len);	/* the cache slot may be reused below */
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/children", (int)pid, de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		buf[n > 0 ? n : 0] = 0;
		for (s = strtok_r(buf, " \n", &save); s; s = strtok_r(NULL, " \n", &save)) {
			pid_t c = (pid_t)atoi(s);
			size_t k;

			b = exe_build_id(a, c);
			if (!b || b->len != len || memcmp(b->id, id, (size_t)len))
				continue;	/* exec'd another program */
			for (k = 0; k < am->n_pids && am->pids[k] != c; k++)
				;
			if (k < am->n_pids || PB_ARRAY_RESERVE_ONE(am->pids, am->n_pids, am->pids_cap))
				continue;
			am->pids[am->n_pids++] = c;
			am->c.forked++;
			a->state_dirty = true;
			pr_debug("agent: %s: pid %d forked by %d is a target\n", am->stem, (int)c, (int)pid);
		}
	}
	closedir(d);
}

void agent_catalog_children(struct agent *a, struct agent_manifest *am)
{
	for (size_t i = 0; i < am->n_pids; i++)	/* n_pids grows: grandchildren too */
		scan_children(a, am, am->pids[i]);
}

void agent_catalog_exit(struct agent *a, pid_t pid)
{
	for (size_t i = 0; i < a->n_ms; i++) {
		struct agent_manifest *am = a->ms[i];

		for (size_t j = 0; j < am->n_pids; j++) {
			if (am->pids[j] != pid)
				continue;
			am->pids[j] = am->pids[--am->n_pids];
			a->state_dirty = true;
			break;
		}
	}
}

void agent_catalog_prune_pids(struct agent_manifest *am)
{
	for (size_t j = 0; j < am->n_pids;) {
		if (kill(am->pids[j], 0) && errno == ESRCH)
			am->pids[j] = am->pids[--am->n_pids];
		else
			j++;
	}
}

void agent_catalog_scan(struct agent *a)
{
	struct dirent *de;
	DIR *d = opendir("/proc");

	if (!d) {
		pr_warn("agent: cannot read /proc: %s\n", strerror(errno));
		return;
	}
	while ((de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		agent_catalog_exec(a, (pid_t)atoi(de->d_name));
	}
	closedir(d);
	for (size_t i = 0; i < a->n_ms; i++)
		agent_catalog_prune_pids(a->ms[i]);
}
