// SPDX-License-Identifier: BSD-2-Clause
/* agent_out.c: what the agent writes (agent_int.h, docs/agent.md): the
 * JSON state file, the Prometheus textfile (the agent's own families and,
 * per manifest, its last window as `probity metrics` renders it, with a
 * manifest="STEM" label added so several manifests share one family),
 * the digest of a finished window, trace pruning and sd_notify. */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <systemd/sd-daemon.h>
#include "agent/agent_int.h"
#include "analyze/trace_load.h"
#include "common/log.h"
#include "metrics/metrics.h"

#define LBL	256

static const char *const mstate_names[] = {
	[AGENT_M_IDLE] = "idle", [AGENT_M_RECORDING] = "recording",
	[AGENT_M_DEGRADED] = "degraded", [AGENT_M_REFUSED] = "refused",
	[AGENT_M_INVALID] = "invalid", [AGENT_M_FAILED] = "failed",
};

const char *agent_mstate_str(enum agent_mstate s)
{
	return (unsigned)s < sizeof(mstate_names) / sizeof(mstate_names[0]) ? mstate_names[s] : "?";
}

void agent_notify(struct agent *a, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	int err;

	if (!a->notify)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	err = sd_notify(0, msg);
	if (err < 0)
		pr_warn("agent: sd_notify(\"%s\"): %s\n", msg, strerror(-err));
}

/* "2/3 manifests recording (1 degraded, 1 refused), 4 targets, 12 windows
 * (1 failed); lost: 0 ringbuf drops, 0 write errors, 3 instances unknown" */
void agent_notify_status(struct agent *a)
{
	size_t i, st[AGENT_M_FAILED + 1] = { 0 }, targets = 0;
	uint64_t failed = 0, drops = 0, werr = 0, unknown = 0;
	char msg[sizeof(a->status)];

	if (!a->notify)
		return;
	for (i = 0; i < a->n_ms; i++) {
		const struct agent_manifest *am = a->ms[i];

		st[am->state]++;
		targets += am->n_pids;
		failed += am->c.windows_failed;
		drops += am->c.ringbuf_drops;
		werr += am->c.write_errors;
		unknown += am->c.unknown_instances;
	}
	snprintf(msg, sizeof(msg), "%zu/%zu manifests recording (%zu degraded, %zu refused, "
		 "%zu invalid), %zu targets, %llu windows (%llu failed); lost: %llu ringbuf "
		 "drops, %llu write errors, %llu instances unknown",
		 st[AGENT_M_RECORDING] + st[AGENT_M_DEGRADED], a->n_ms, st[AGENT_M_DEGRADED],
		 st[AGENT_M_REFUSED], st[AGENT_M_INVALID], targets, (unsigned long long)a->windows,
		 (unsigned long long)failed, (unsigned long long)drops, (unsigned long long)werr,
		 (unsigned long long)unknown);
	if (!strcmp(msg, a->status))
		return;
	snprintf(a->status, sizeof(a->status), "%s", msg);
	agent_notify(a, "STATUS=%s", msg);
}

/* Add manifest="STEM" to every sample line of text; a malloc'ed copy. */
static char *label_text(const char *text, const char *stem)
{
	char lbl[LBL], *out, *o;
	size_t extra, lines = 1;
	const char *p;

	if (!metrics__escape_label(stem, lbl, sizeof(lbl)))
		snprintf(lbl, sizeof(lbl), "?");
	for (p = text; *p; p++)
		lines += *p == '\n';
	extra = lines * (strlen(lbl) + sizeof("{manifest=\"\"},"));
	out = malloc(strlen(text) + extra + 1);
	if (!out)
		return NULL;
	for (o = out, p = text; *p;) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p + 1) : strlen(p);
		size_t name = strcspn(p, "{ \n");

		if (*p == '#' || *p == '\n' || name >= n) {
			memcpy(o, p, n);
			o += n;
		} else if (p[name] == '{') {
			o += sprintf(o, "%.*smanifest=\"%s\"%s", (int)name + 1, p, lbl,
				     p[name + 1] == '}' ? "" : ",");
			memcpy(o, p + name + 1, n - name - 1);
			o += n - name - 1;
		} else {
			o += sprintf(o, "%.*s{manifest=\"%s\"}", (int)name, p, lbl);
			memcpy(o, p + name, n - name);
			o += n - name;
		}
		p += n;
	}
	*o = 0;
	return out;
}

/* Instances live when a window ended: their fate falls in the gap. */
static uint64_t live_at_end(const struct loaded_trace *lt)
{
	const struct manifest *m = analysis__manifest(lt->analysis);
	uint64_t n = 0;

	for (size_t r = 0; r < m->n_resources; r++) {
		const struct pb_res_stats *s = analysis__res_stats(lt->analysis, (uint32_t)r);

		if (s && s->live_instances > 0)
			n += (uint64_t)s->live_instances;
	}
	return n;
}

void agent_window_digest(struct agent *a, struct agent_manifest *am)
{
	struct metrics_opts mo = { 0 };
	struct loaded_trace lt;
	char *buf = NULL, *lab;
	size_t len = 0;
	int err;

	(void)a;
	err = loaded_trace__load(&lt, am->slot.trace, NULL);
	if (err) {
		pr_warn("agent: %s: cannot read back %s: %s\n", am->stem, am->slot.trace,
			lt.error[0] ? lt.error : strerror(-err));
		goto out;
	}
	am->c.unknown_instances += live_at_end(&lt);
	mo.trace_incomplete = lt.cut_reason != NULL;
	mo.notes_dropped = lt.notes_dropped;
	if (metrics__render_buf(lt.analysis, &mo, &buf, &len))
		goto out;
	lab = label_text(buf, am->stem);
	if (lab) {
		free(am->metrics);
		am->metrics = lab;
	}
out:
	free(buf);
	loaded_trace__free(&lt);
}

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

void agent_prune_traces(struct agent *a, struct agent_manifest *am)
{
	char dir[PATH_MAX], path[PATH_MAX * 2];
	char **names = NULL;
	size_t n = 0, cap = 0, i;
	struct dirent *de;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/%s", a->o.trace_dir, am->stem);
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		char **nn;

		if (l < 7 || strcmp(de->d_name + l - 6, ".trace") || de->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			nn = realloc(names, cap * sizeof(*names));
			if (!nn)
				break;
			names = nn;
		}
		if (!(names[n] = strdup(de->d_name)))
			break;
		n++;
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_str);
	for (i = 0; i + a->o.keep < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (am->slot.running && !strcmp(path, am->slot.trace))
			continue;
		if (!unlink(path))
			am->c.traces_pruned++;
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static json_t *manifest_json(const struct agent_manifest *am)
{
	const struct agent_counts *c = &am->c;
	json_t *pids = json_array();

	for (size_t i = 0; pids && i < am->n_pids; i++)
		json_array_append_new(pids, json_integer(am->pids[i]));
	return json_pack("{s:s, s:s, s:s?, s:s, s:s?, s:s?, s:o, s:s?, s:s?, s:s?,"
			 " s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I},"
			 " s:{s:I, s:I, s:I, s:I}}",
			 "file", am->path, "stem", am->stem, "name", am->m ? am->m->name : NULL,
			 "state", agent_mstate_str(am->state), "error", am->error[0] ? am->error : NULL,
			 "binary", am->bin_path[0] ? am->bin_path : NULL, "targets", pids ? pids : json_null(),
			 "trace", am->slot.running ? am->slot.trace : NULL,
			 "last_trace", am->last_trace[0] ? am->last_trace : NULL,
			 "new_build_id", am->new_build_id[0] ? am->new_build_id : NULL,
			 "counts", "windows", (json_int_t)c->windows, "windows_failed",
			 (json_int_t)c->windows_failed, "refusals", (json_int_t)c->refusals,
			 "records", (json_int_t)c->records, "bytes", (json_int_t)c->bytes,
			 "events", (json_int_t)c->events, "traces_pruned", (json_int_t)c->traces_pruned,
			 "rebinds", (json_int_t)c->rebinds, "forked", (json_int_t)c->forked,
			 "losses", "ringbuf_drops", (json_int_t)c->ringbuf_drops, "trace_write_errors",
			 (json_int_t)c->write_errors, "instances_unknown", (json_int_t)c->unknown_instances,
			 "windows_failed", (json_int_t)c->windows_failed);
}

json_t *agent__state_json(const struct agent *a)
{
	json_t *ms = json_array(), *j;

	for (size_t i = 0; ms && i < a->n_ms; i++)
		json_array_append_new(ms, manifest_json(a->ms[i]));
	j = json_pack("{s:s, s:i, s:i, s:I, s:s, s:s, s:s?, s:{s:I, s:I, s:I, s:I, s:i, s:b, s:o},"
		      " s:I, s:I, s:{s:I, s:I, s:I, s:I}, s:o}",
		      "format", "probity-agent-state", "version", 1, "pid", (int)getpid(),
		      "started_unix_ns", (json_int_t)a->start_real_ns,
		      "manifest_dir", a->o.manifest_dir, "trace_dir", a->o.trace_dir,
		      "listen", a->listen_addr[0] ? a->listen_addr : NULL,
		      "policy", "rotate_ns", (json_int_t)a->o.rotate_ns, "duty_on_ns",
		      (json_int_t)a->o.duty_on_ns, "duty_period_ns", (json_int_t)a->o.duty_period_ns,
		      "max_trace_bytes", (json_int_t)a->o.max_trace_bytes, "keep", (int)a->o.keep,
		      "rebind", a->o.rebind,
		      "budget", a->o.budget > 0 ? json_real(a->o.budget) : json_null(),
		      "windows", (json_int_t)a->windows,
		      "reloads", (json_int_t)a->reloads, "losses", "process_events",
		      (json_int_t)a->pw_drops_seen, "processes_unreadable", (json_int_t)a->proc_denied, "state_write_errors",
		      (json_int_t)a->state_write_errors, "metrics_write_errors",
		      (json_int_t)a->metrics_write_errors, "manifests", ms ? ms : json_null());
	return j;
}

/* Replace path atomically (the textfile writer: tmp, fsync, rename). */
static int replace_file(const char *path, const char *buf, size_t len)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');

	if (!slash)
		return metrics__write_textfile(".", path, buf, len);
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	return metrics__write_textfile(dir[0] ? dir : "/", slash + 1, buf, len);
}

int agent_write_state(struct agent *a)
{
	json_t *j = agent__state_json(a);
	char *text = j ? json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;
	int err = text ? replace_file(a->o.state_file, text, strlen(text)) : -ENOMEM;

	if (err) {
		if (!a->state_write_errors++)
			pr_warn("agent: cannot write the state file %s: %s (counted; retried)\n",
				a->o.state_file, strerror(-err));
	} else {
		a->state_dirty = false;
	}
	free(text);
	json_decref(j);
	return err;
}
