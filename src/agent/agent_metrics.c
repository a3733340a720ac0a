// SPDX-License-Identifier: BSD-2-Clause
/* agent_metrics.c: the agent's Prometheus textfile (docs/agent.md): its
 * own probity_agent_* families, then every family of the manifests' last
 * windows merged (one HELP/TYPE, the samples of every manifest, told
 * apart by their manifest label), written atomically. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "agent/agent_int.h"
#include "common/log.h"
#include "metrics/metrics.h"

#define MAX_FAMILIES	128
#define LBL		256

static void family(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static const char *lbl(const char *s, char *buf)
{
	if (!metrics__escape_label(s, buf, LBL))
		snprintf(buf, LBL, "?");
	return buf;
}

/* a counter family with one sample per manifest: agent_counts at off */
static void per_manifest(const struct agent *a, FILE *out, const char *name, const char *help,
			 size_t off)
{
	char l[LBL];

	family(out, name, "counter", help);
	for (size_t i = 0; i < a->n_ms; i++)
		fprintf(out, "%s{manifest=\"%s\"} %llu\n", name, lbl(a->ms[i]->stem, l),
			(unsigned long long)*(const uint64_t *)((const char *)&a->ms[i]->c + off));
}

static void render_own(const struct agent *a, FILE *out)
{
	size_t i, counts[AGENT_M_FAILED + 1] = { 0 };
	char l[LBL];
	int s;

	for (i = 0; i < a->n_ms; i++)
		counts[a->ms[i]->state]++;
	family(out, "probity_agent_manifests", "gauge", "Manifest files by what the agent does with them.");
	for (s = 0; s <= AGENT_M_FAILED; s++)
		fprintf(out, "probity_agent_manifests{state=\"%s\"} %zu\n", agent_mstate_str(s), counts[s]);
	family(out, "probity_agent_targets", "gauge", "Live processes running a manifest's target.");
	for (i = 0; i < a->n_ms; i++)
		fprintf(out, "probity_agent_targets{manifest=\"%s\"} %zu\n", lbl(a->ms[i]->stem, l),
			a->ms[i]->n_pids);
	family(out, "probity_agent_windows_total", "counter",
	       "Recording windows (one trace file each) ended, by result.");
	for (i = 0; i < a->n_ms; i++) {
		const struct agent_counts *c = &a->ms[i]->c;

		lbl(a->ms[i]->stem, l);
		fprintf(out, "probity_agent_windows_total{manifest=\"%s\",result=\"ok\"} %llu\n", l,
			(unsigned long long)(c->windows >= c->windows_failed ?
					     c->windows - c->windows_failed : 0));
		fprintf(out, "probity_agent_windows_total{manifest=\"%s\",result=\"failed\"} %llu\n", l,
			(unsigned long long)c->windows_failed);
	}
	family(out, "probity_agent_lost_total", "counter",
	       "What the agent could not record, by kind (docs/agent.md).");
	for (i = 0; i < a->n_ms; i++) {
		const struct agent_counts *c = &a->ms[i]->c;

		lbl(a->ms[i]->stem, l);
		fprintf(out, "probity_agent_lost_total{manifest=\"%s\",what=\"ringbuf_drops\"} %llu\n"
			"probity_agent_lost_total{manifest=\"%s\",what=\"trace_write_errors\"} %llu\n"
			"probity_agent_lost_total{manifest=\"%s\",what=\"instances_unknown\"} %llu\n",
			l, (unsigned long long)c->ringbuf_drops, l, (unsigned long long)c->write_errors,
			l, (unsigned long long)c->unknown_instances);
	}
	per_manifest(a, out, "probity_agent_refusals_total",
		     "New builds of a manifest's binary refused (build-id mismatch).",
		     offsetof(struct agent_counts, refusals));
	per_manifest(a, out, "probity_agent_rebinds_total",
		     "New builds of a manifest's binary recorded rebound, degraded (--rebind).",
		     offsetof(struct agent_counts, rebinds));
	per_manifest(a, out, "probity_agent_forked_targets_total",
		     "Forked children of targets (same build) made targets.",
		     offsetof(struct agent_counts, forked));
	family(out, "probity_agent_process_events_lost_total", "counter",
	       "Process exec/exit events lost (ring buffer full; /proc rescanned).");
	fprintf(out, "probity_agent_process_events_lost_total %llu\n",
		(unsigned long long)a->pw_drops_seen);
	family(out, "probity_agent_processes_unreadable_total", "counter",
	       "Processes whose /proc/PID/exe could not be read (EACCES): never matched.");
	fprintf(out, "probity_agent_processes_unreadable_total %llu\n",
		(unsigned long long)a->proc_denied);
	family(out, "probity_agent_reloads_total", "counter", "Manifest directory reloads (SIGHUP).");
	fprintf(out, "probity_agent_reloads_total %llu\n", (unsigned long long)a->reloads);
	family(out, "probity_agent_state_write_errors_total", "counter",
	       "State file writes that failed.");
	fprintf(out, "probity_agent_state_write_errors_total %llu\n",
		(unsigned long long)a->state_write_errors);
}

/* The block of family name in text: from "# HELP name " to the next
 * "# HELP"; *len its length. NULL when text has none. */
static const char *find_block(const char *text, const char *name, size_t *len)
{
	size_t nl = strlen(name);
	const char *p = text, *end;

	while ((p = strstr(p, "# HELP "))) {
		if ((p == text || p[-1] == '\n') && !strncmp(p + 7, name, nl) && p[7 + nl] == ' ')
			break;
		p += 7;
	}
	if (!p)
		return NULL;
	end = strstr(p + 7, "\n# HELP ");
	*len = end ? (size_t)(end - p + 1) : strlen(p);
	return p;
}

/* The family names of text, in order, added to names[] (deduplicated). */
static void collect_families(const char *text, char names[][128], size_t *n)
{
	const char *p = text;

	while (*n < MAX_FAMILIES && (p = strstr(p, "# HELP "))) {
		size_t l = strcspn(p + 7, " \n"), i;

		p += 7;
		if (l >= 128)
			continue;
		for (i = 0; i < *n; i++)
			if (strlen(names[i]) == l && !strncmp(names[i], p, l))
				break;
		if (i == *n)
			snprintf(names[(*n)++], 128, "%.*s", (int)l, p);
	}
}

static void render_merged(const struct agent *a, FILE *out)
{
	static char names[MAX_FAMILIES][128];
	size_t n = 0, f, i, len;

	for (i = 0; i < a->n_ms; i++)
		if (a->ms[i]->metrics)
			collect_families(a->ms[i]->metrics, names, &n);
	for (f = 0; f < n; f++) {
		bool header = true;

		for (i = 0; i < a->n_ms; i++) {
			const char *b = a->ms[i]->metrics ? find_block(a->ms[i]->metrics, names[f], &len) : NULL;
			const char *s;

			if (!b)
				continue;
			s = b;
			if (!header) {	/* skip this block's HELP and TYPE lines */
				for (int k = 0; k < 2 && (s = strchr(s, '\n')); k++)
					s++;
				if (!s)
					continue;
				len -= (size_t)(s - b);
			}
			fwrite(s, 1, len, out);
			header = false;
		}
	}
}

int agent_write_metrics(struct agent *a)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out;
	int err;

	if (!a->o.metrics_dir && !a->http)
		return 0;
	out = open_memstream(&buf, &len);
	if (!out)
		return -errno;
	render_own(a, out);
	render_merged(a, out);
	if (fclose(out)) {
		free(buf);
		return -ENOMEM;
	}
	err = a->http ? metrics_server__set(a->http, buf, len) : 0;
	if (!err && a->o.metrics_dir)
		err = metrics__write_textfile(a->o.metrics_dir, AGENT_METRICS_NAME, buf, len);
	if (err && !a->metrics_write_errors++)
		pr_warn("agent: cannot publish the metrics (%s/%s, %s): %s (counted; retried)\n",
			a->o.metrics_dir ? a->o.metrics_dir : "-", AGENT_METRICS_NAME,
			a->listen_addr[0] ? a->listen_addr : "no --listen", strerror(-err));
	free(buf);
	return err;
}
