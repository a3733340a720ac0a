/* record.c (cli): `probity record -m MANIFEST (--pid PID | -- CMD ARGS...)
 * [-o FILE] [-d SECONDS] [--events] [--binary PATH]`: attach the engine per
 * the manifest's plan and write a trace file (docs/record.md,
 * docs/trace-format.md). Flow: parse -> plan -> spawn (held) -> engine ->
 * trace header -> release target -> poll/snapshot loop -> end -> summary.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "common/clock.h"
#include "common/io.h"
#include "cli/args.h"
#include "cli/cli.h"
#include "common/digest.h"
#include "contract/manifest.h"
#include "contract/plan.h"
#include "engine/engine.h"
#include "trace/trace.h"
#include "validate/confidence.h"

#define MAX_BINARIES		16
#define DEFAULT_OUTPUT		"probity.trace"
#define DEFAULT_INTERVAL_MS	250
#define POLL_MS			50
#define EXIT_STALE		4	/* recorded; some descriptor went stale */

struct record_args {
	const char *manifest;
	const char *output;
	const char *binaries[MAX_BINARIES];
	size_t n_binaries;
	pid_t pid;
	uint64_t duration_ns;		/* 0 = until stopped */
	bool events;
	size_t ringbuf_bytes;		/* 0 = engine default */
	int interval_ms;
	char **cmd;			/* after "--"; NULL with --pid */
	const char *envelope;		/* --envelope FILE: warnings only */
};

struct recorder {
	struct record_args a;
	struct manifest *m;
	struct plan *p;
	struct diags *diags;
	struct engine *e;
	struct trace_writer *w;
	struct confidence *conf;	/* runtime validation (docs/validation.md) */
	struct record_envelope *env;	/* --envelope (record_envelope.c), or NULL */
	int live_fd;			/* holds the trace's live lock (trace_live__hold) */
	pid_t child;			/* spawned target, 0 if none */
	int go_fd;			/* write end of the child's start pipe */
	int child_status;
	bool child_reaped;
	uint64_t start_ns, last_snap_ns;
	uint64_t snapshots;
	uint64_t write_errors;
	uint64_t records_written, bytes_written;	/* at close */
	struct engine_snapshot snap;
	/* status line */
	uint64_t prev_events, prev_ns;
	bool tty;
};

static void record_help(FILE *out)
{
	fprintf(out,
		"Usage: %s [-j] record -m MANIFEST (--pid PID | -- CMD [ARGS]...) [-o FILE]\n"
		"              [-d SECONDS] [--events] [--binary PATH]... [--envelope FILE]\n"
		"\n"
		"Attach the resource-event engine to a process as the manifest's attach plan\n"
		"says (refusing exactly as 'plan' does) and write a trace file for 'report'.\n"
		"By default events are aggregated in the kernel and the trace holds periodic\n"
		"snapshots; --events also streams every event and OS effect to the file.\n"
		"\n"
		"Options:\n"
		"  -m, --manifest FILE  the resource manifest (required)\n"
		"  -p, --pid PID        record the running process PID\n"
		"  -o, --output FILE    trace file to write (default %s, mode 0600)\n"
		"  -d, --duration SECS  stop after SECS seconds (fractional; default: until\n"
		"                       Ctrl-C / SIGTERM or the target exits)\n"
		"      --events         also record every event in the trace (ring buffer)\n"
		"  -b, --binary PATH    probe this file instead of the manifest's target\n"
		"                       binary (ID=PATH in a multi-target manifest)\n"
		"      --ringbuf-kib N  ring-buffer size in KiB for --events (default 8192)\n"
		"      --interval MS    snapshot interval, 100..1000 ms (default %d)\n"
		"      --envelope FILE  check the run against a distribution envelope from\n"
		"                       'probity train'; leaving it is a warning only\n"
		"  -h, --help           show this help\n"
		"\n"
		"With '-- CMD', CMD is started held until every probe is attached (no early\n"
		"event is missed); it must be (or exec) the manifest's target binary. When\n"
		"the recording stops before CMD exits, CMD gets SIGTERM.\n"
		"\n"
		"Every snapshot also judges each descriptor's runtime invariants (double\n"
		"ACQUIRE, RELEASE/USE of an instance not active, overlapping generations);\n"
		"confidence changes go to the trace ('probity health', docs/validation.md).\n"
		"\n"
		"Exit status: 0 recorded; 1 plan refused (see 'plan'); 2 usage error or\n"
		"unreadable manifest; 3 runtime failure (BPF load/attach, I/O); 4 recorded,\n"
		"but some descriptor went stale (the model no longer holds).\n",
		bin_name, DEFAULT_OUTPUT, DEFAULT_INTERVAL_MS);
}


static int parse_args(int argc, char **argv, struct record_args *a)
{
	enum { OPT_EVENTS = 256, OPT_RINGBUF, OPT_INTERVAL, OPT_ENVELOPE };
	static const struct option opts[] = {
		{ "manifest", required_argument, NULL, 'm' },
		{ "pid", required_argument, NULL, 'p' },
		{ "output", required_argument, NULL, 'o' },
		{ "duration", required_argument, NULL, 'd' },
		{ "events", no_argument, NULL, OPT_EVENTS },
		{ "binary", required_argument, NULL, 'b' },
		{ "ringbuf-kib", required_argument, NULL, OPT_RINGBUF },
		{ "interval", required_argument, NULL, OPT_INTERVAL },
		{ "envelope", required_argument, NULL, OPT_ENVELOPE },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	char *end;
	long v;
	int opt;

	memset(a, 0, sizeof(*a));
	a->output = DEFAULT_OUTPUT;
	a->interval_ms = DEFAULT_INTERVAL_MS;
	while ((opt = getopt_long(argc, argv, "+m:p:o:d:b:h", opts, NULL)) >= 0) {
		switch (opt) {
		case 'm': a->manifest = optarg; break;
		case 'o': a->output = optarg; break;
		case 'p':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || v <= 0 || v > 0x3fffffff) {
				p_err("--pid: expected a process id, found '%s'", optarg);
				return -EINVAL;
			}
			a->pid = (pid_t)v;
			break;
		case 'd':
			if (cli_parse_duration("--duration", optarg, false, 1e7, &a->duration_ns))
				return -EINVAL;
			break;
		case 'b':
			if (a->n_binaries == MAX_BINARIES) {
				p_err("at most %d --binary options", MAX_BINARIES);
				return -EINVAL;
			}
			a->binaries[a->n_binaries++] = optarg;
			break;
		case OPT_EVENTS: a->events = true; break;
		case OPT_RINGBUF:
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || v < 4 || v > (1 << 21)) {
				p_err("--ringbuf-kib: expected 4..2097152, found '%s'", optarg);
				return -EINVAL;
			}
			a->ringbuf_bytes = (size_t)v << 10;
			break;
		case OPT_INTERVAL:
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || v < 100 || v > 1000) {
				p_err("--interval: expected 100..1000 (ms), found '%s'", optarg);
				return -EINVAL;
			}
			a->interval_ms = (int)v;
			break;
		case OPT_ENVELOPE: a->envelope = optarg; break;
		case 'h': record_help(stdout); return 1;
		default: record_help(stderr); return -EINVAL;
		}
	}
	if (!a->manifest) {
		p_err("-m MANIFEST is required (see '%s record --help')", bin_name);
		return -EINVAL;
	}
	if (optind < argc)
		a->cmd = &argv[optind];
	if (!a->pid == !a->cmd) {
		p_err("give exactly one of --pid PID or -- CMD (see '%s record --help')", bin_name);
		return -EINVAL;
	}
	if (a->pid && a->n_binaries) {
		p_err("--pid and --binary are mutually exclusive");
		return -EINVAL;
	}
	return 0;
}

/* Load the manifest and build the plan exactly as `probity plan` does;
 * returns an exit code (EXIT_OK to go on). */
static int build_plan(struct recorder *r)
{
	struct plan_opts po = { .binaries = r->a.binaries,
				.n_binaries = r->a.n_binaries, .pid = r->a.pid };
	int err;

	r->diags = diags__new();
	if (!r->diags)
		return EXIT_FAILURE_RT;
	err = manifest__load(r->a.manifest, &r->m, r->diags);
	if (err) {
		if (json_output)
			json_print_and_free(json_pack("{s:s, s:o}", "error",
				err == -EINVAL ? "invalid manifest" : "unreadable manifest",
				"findings", diags__to_json(r->diags)));
		else
			diags__print(r->diags, stderr);
		return EXIT_USAGE;
	}
	err = plan__build(r->m, &po, &r->p, r->diags);
	if (!r->p) {
		if (json_output)
			json_print_and_free(json_pack("{s:s, s:o}", "error", strerror(-err),
						      "findings", diags__to_json(r->diags)));
		else {
			diags__print(r->diags, stderr);
			p_err("no plan: %s", strerror(-err));
		}
		return err == -ENOMEM ? EXIT_FAILURE_RT : EXIT_FINDINGS;
	}
	if (r->p->n_refused) {
		if (json_output)
			json_print_and_free(json_pack("{s:s, s:o, s:o}", "error", "plan refused",
				"findings", diags__to_json(r->p->notes), "plan", plan__to_json(r->p)));
		else {
			diags__print(r->p->notes, stderr);
			p_err("%zu descriptor(s) refused; not recording (see '%s plan')",
			      r->p->n_refused, bin_name);
		}
		return EXIT_FINDINGS;
	}
	return EXIT_OK;
}

/* Fork CMD held on a pipe: it execs only when start_child() writes. The
 * pid stays the same across exec, so the pid-filtered links see it. */
static int spawn_child(struct recorder *r)
{
	int go[2];
	pid_t pid;

	if (pipe2(go, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(go[0]);
		close(go[1]);
		return -errno;
	}
	if (pid == 0) {
		char c;

		close(go[1]);
		cli_stop_restore();
		if (read(go[0], &c, 1) != 1)
			_exit(126);	/* recorder gave up before attaching */
		execvp(r->a.cmd[0], r->a.cmd);
		fprintf(stderr, "%s: record: cannot run '%s': %s\n", bin_name, r->a.cmd[0],
			strerror(errno));
		_exit(127);
	}
	close(go[0]);
	r->child = pid;
	r->go_fd = go[1];
	return 0;
}

static int start_child(struct recorder *r)
{
	int err = 0;

	if (!r->child)
		return 0;
	if (write(r->go_fd, "g", 1) != 1)
		err = -errno;
	close(r->go_fd);
	r->go_fd = -1;
	return err;
}

static int hex_to_bytes(const char *hex, uint8_t *out, size_t max)
{
	size_t n = 0;
	unsigned int b;

	while (hex[0] && hex[1] && n < max && sscanf(hex, "%2x", &b) == 1) {
		out[n++] = (uint8_t)b;
		hex += 2;
	}
	return (int)n;
}

static int open_trace(struct recorder *r)
{
	struct trace_header h = {};
	char *mbuf = NULL;
	size_t mlen = 0, i;
	int err;

	memcpy(h.manifest_sha256, r->m->digest, sizeof(h.manifest_sha256));
	h.clock_id = CLOCK_MONOTONIC;
	h.pid = (uint32_t)(r->child ? r->child : r->a.pid);
	h.start_mono_ns = pb_mono_ns();
	h.start_real_ns = pb_realtime_ns();
	h.flags = (r->a.events ? TRACE_F_EVENTS : 0) | (r->child ? TRACE_F_SPAWNED : 0);
	h.events_version = PB_EVENTS_VERSION;
	for (i = 0; i < r->p->n_targets && i < TRACE_MAX_TARGETS; i++) {
		const struct plan_target *t = &r->p->targets[i];

		h.build_ids[i].len = (uint32_t)hex_to_bytes(t->build_id_found, h.build_ids[i].id,
							      sizeof(h.build_ids[i].id));
	}
	h.n_targets = (uint32_t)i;
	r->start_ns = h.start_mono_ns;
	err = pb_read_file(r->m->path, 0, &mbuf, &mlen);
	if (err) {
		p_err("cannot re-read manifest %s: %s", r->m->path, strerror(-err));
		return err;
	}
	unlink(r->a.output);	/* a fresh file, created 0600 */
	r->w = trace_writer__create(r->a.output, &h);
	if (!r->w) {
		err = -errno;
		p_err("cannot create trace file %s: %s", r->a.output, strerror(errno));
		free(mbuf);
		return err;
	}
	r->live_fd = trace_live__hold(r->a.output);	/* 'health' sees it in progress */
	if (r->live_fd < 0)
		p_warn("cannot lock %s for live readers: %s", r->a.output, strerror(-r->live_fd));
	err = trace_writer__manifest(r->w, mbuf, mlen);
	free(mbuf);
	if (!err)
		err = trace_writer__plan(r->w, r->p);
	for (i = 0; !err && i < engine__n_notes(r->e); i++)
		err = trace_writer__note(r->w, engine__note(r->e, i));
	if (err)
		p_err("cannot write trace file %s: %s", r->a.output, strerror(-err));
	return err;
}

static int write_record(const void *rec, size_t len, void *ctx)
{
	struct recorder *r = ctx;
	const struct pb_rec_hdr *h = rec;

	if (len >= sizeof(*h) && h->type == PB_REC_VIOLATION)
		confidence__sample(r->conf, rec, len);
	record_envelope__record(r->env, rec, len);
	if (trace_writer__record(r->w, rec, len))
		r->write_errors++;
	return 0;
}

static int start_confidence(struct recorder *r)
{
	struct confidence_opts co = { 0 };
	enum pb_confidence *init = calloc(r->p->n_descriptors + 1, sizeof(*init));
	size_t i;

	if (!init)
		return -ENOMEM;
	for (i = 0; i < r->p->n_descriptors; i++)
		init[i] = r->p->descriptors[i].confidence;
	if (!r->child)	/* instances may predate the attach (report uses the same) */
		co.grace_ns = CONFIDENCE_ATTACH_GRACE_NS;
	r->conf = confidence__new(r->p->n_descriptors, init, &co);
	free(init);
	return r->conf ? 0 : -errno;
}

/* Judge the snapshot's windows; each confidence change becomes a note
 * "confidence: ID FROM -> TO: REASON" in the trace and a warning. */
static void judge_snapshot(struct recorder *r)
{
	const struct confidence_change *ch;
	size_t n, before, i;
	char note[512];

	confidence__changes(r->conf, &before);
	if (confidence__snapshot(r->conf, r->snap.ts_ns, r->snap.desc, r->snap.n_desc) <= 0)
		return;
	ch = confidence__changes(r->conf, &n);
	for (i = before; i < n; i++) {
		const char *id = r->m->events[r->p->descriptors[ch[i].descriptor].event].id;

		snprintf(note, sizeof(note), "confidence: %s %s -> %s: %s", id,
			 pb_confidence_str(ch[i].from), pb_confidence_str(ch[i].to), ch[i].reason);
		if (trace_writer__note(r->w, note))
			r->write_errors++;
		if (r->tty)
			fprintf(stderr, "\r\033[K");
		p_warn("%s", note);
	}
}

static int take_snapshot(struct recorder *r)
{
	struct trace_snapshot s;
	int err = engine__snapshot(r->e, &r->snap);

	if (err)
		return err;
	s.ts_ns = r->snap.ts_ns;
	s.n_desc = r->snap.n_desc;
	s.n_res = r->snap.n_res;
	s.desc = r->snap.desc;
	s.res = r->snap.res;
	s.engine = r->snap.engine;
	err = trace_writer__snapshot(r->w, &s);
	if (err)
		r->write_errors++;
	judge_snapshot(r);
	record_envelope__snapshot(r->env, r->snap.ts_ns, r->snap.desc, r->snap.n_desc, r->w, r->tty);
	r->snapshots++;
	r->last_snap_ns = r->snap.ts_ns;
	return 0;
}

static uint64_t total_events(const struct engine_snapshot *s)
{
	uint64_t n = 0;
	uint32_t i;

	for (i = 0; i < s->n_desc; i++)
		n += s->desc[i].events;
	return n;
}

/* the resource whose WAIT spans took the most time, or -1 */
static int top_wait_resource(const struct recorder *r, uint64_t *ns)
{
	uint64_t best = 0, per[PB_MAX_RESOURCES] = { 0 };
	int top = -1;
	uint32_t i;

	for (i = 0; i < r->snap.n_desc; i++) {
		const struct pb_event *ev = &r->m->events[r->p->descriptors[i].event];

		if (ev->kind == PB_EV_WAIT && ev->resource_idx >= 0 &&
		    ev->resource_idx < PB_MAX_RESOURCES)
			per[ev->resource_idx] += r->snap.desc[i].total_ns;
	}
	for (i = 0; i < r->snap.n_res && i < PB_MAX_RESOURCES; i++)
		if (per[i] > best) {
			best = per[i];
			top = (int)i;
		}
	*ns = best;
	return top;
}

static void print_status(struct recorder *r)
{
	uint64_t ev = total_events(&r->snap), wait_ns = 0;
	double dt = (double)(r->snap.ts_ns - r->prev_ns) / 1e9;
	int top;

	if (!r->tty || dt <= 0)
		return;
	top = top_wait_resource(r, &wait_ns);
	fprintf(stderr, "\r\033[Krecording %.1fs: %.0f events/s, %llu records, %llu drops%s%s%s",
		(double)(r->snap.ts_ns - r->start_ns) / 1e9, (double)(ev - r->prev_events) / dt,
		(unsigned long long)trace_writer__records(r->w),
		(unsigned long long)r->snap.engine.ringbuf_drops,
		top >= 0 ? ", top wait: " : "", top >= 0 ? r->m->resources[top].name : "",
		top >= 0 ? "" : "");
	if (top >= 0)
		fprintf(stderr, " (%.1f ms)", (double)wait_ns / 1e6);
	r->prev_events = ev;
	r->prev_ns = r->snap.ts_ns;
}

static bool target_gone(struct recorder *r)
{
	if (r->child) {
		pid_t w = waitpid(r->child, &r->child_status, WNOHANG);

		if (w == r->child) {
			r->child_reaped = true;
			return true;
		}
		return false;
	}
	return kill(r->a.pid, 0) && errno == ESRCH;
}

/* poll, snapshot, status until a stop condition; returns the reason */
static enum trace_stop_reason record_loop(struct recorder *r)
{
	uint64_t deadline = r->a.duration_ns ? r->start_ns + r->a.duration_ns : UINT64_MAX;
	uint64_t interval = (uint64_t)r->a.interval_ms * 1000000ull;
	struct timespec nap = { 0, POLL_MS * 1000000L };

	r->prev_ns = r->start_ns;
	for (;;) {
		uint64_t now;

		/* without --events only violation samples come */
		if (engine__poll(r->e, POLL_MS, write_record, r) < 0)
			nanosleep(&nap, NULL);
		now = pb_mono_ns();
		if (now - r->last_snap_ns >= interval) {
			if (take_snapshot(r))
				return TRACE_STOP_ERROR;
			print_status(r);
		}
		if (cli_stop_signal)
			return TRACE_STOP_SIGNAL;
		if (now >= deadline)
			return TRACE_STOP_DURATION;
		if (target_gone(r))
			return TRACE_STOP_TARGET_EXIT;
	}
}

static const char *stop_str(enum trace_stop_reason why)
{
	switch (why) {
	case TRACE_STOP_SIGNAL: return "signal";
	case TRACE_STOP_DURATION: return "duration";
	case TRACE_STOP_TARGET_EXIT: return "target exited";
	default: return "error";
	}
}

/* last drain, final snapshot, lost-evidence notes, end chunk */
static int finish_trace(struct recorder *r, enum trace_stop_reason why)
{
	struct trace_end e = {};
	char note[256];
	int err;

	while (engine__poll(r->e, 0, write_record, r) > 0)
		;
	err = take_snapshot(r);
	if (err)
		return err;
	if (r->snap.engine.ringbuf_drops) {
		snprintf(note, sizeof(note), "lost evidence: %llu records dropped (ring buffer full)",
			 (unsigned long long)r->snap.engine.ringbuf_drops);
		trace_writer__note(r->w, note);
	}
	if (r->snap.engine.instance_map_full || r->snap.engine.thread_map_full ||
	    r->snap.engine.span_overflow || r->snap.engine.stash_missing) {
		snprintf(note, sizeof(note),
			 "lost evidence: instance map full %llu, thread map full %llu, "
			 "span overflow %llu, return without entry %llu",
			 (unsigned long long)r->snap.engine.instance_map_full,
			 (unsigned long long)r->snap.engine.thread_map_full,
			 (unsigned long long)r->snap.engine.span_overflow,
			 (unsigned long long)r->snap.engine.stash_missing);
		trace_writer__note(r->w, note);
	}
	record_envelope__finish(r->env, r->w);
	e.end_mono_ns = r->snap.ts_ns;
	e.records = trace_writer__records(r->w);
	e.ringbuf_drops = r->snap.engine.ringbuf_drops;
	e.snapshots = r->snapshots;
	e.stop_reason = why;
	e.target_status = r->child_reaped ? r->child_status : -1;
	err = trace_writer__end(r->w, &e);
	return err;
}

static void stop_child(struct recorder *r)
{
	int i;

	if (!r->child || r->child_reaped)
		return;
	if (r->go_fd >= 0) {	/* never started: closing the pipe ends it */
		close(r->go_fd);
		r->go_fd = -1;
	} else {
		kill(r->child, SIGTERM);
	}
	for (i = 0; i < 50; i++) {
		if (waitpid(r->child, &r->child_status, WNOHANG) == r->child) {
			r->child_reaped = true;
			return;
		}
		usleep(100 * 1000);
	}
	kill(r->child, SIGKILL);
	waitpid(r->child, &r->child_status, 0);
	r->child_reaped = true;
}

/* descriptors whose confidence changed: {id: {state, reason}} */
static json_t *confidence_json(const struct recorder *r)
{
	json_t *o = json_object();
	uint32_t i;

	for (i = 0; o && i < r->p->n_descriptors; i++) {
		enum pb_confidence st = confidence__state(r->conf, i);

		if (st == confidence__initial(r->conf, i))
			continue;
		json_object_set_new(o, r->m->events[r->p->descriptors[i].event].id,
			json_pack("{s:s, s:s?}", "state", pb_confidence_str(st),
				  "reason", confidence__reason(r->conf, i)));
	}
	return o;
}

static void print_confidence(const struct recorder *r)
{
	uint32_t i;

	for (i = 0; i < r->p->n_descriptors; i++) {
		enum pb_confidence st = confidence__state(r->conf, i);

		if (st == confidence__initial(r->conf, i))
			continue;
		printf("confidence: %s is %s (%s)\n",
		       r->m->events[r->p->descriptors[i].event].id, pb_confidence_str(st),
		       confidence__reason(r->conf, i) ? confidence__reason(r->conf, i) : "");
	}
	if (confidence__any_stale(r->conf))
		p_warn("the manifest's model no longer holds for a stale descriptor; "
		       "findings resting on it read 'model stale' (see '%s health')", bin_name);
}

static void print_summary(struct recorder *r, enum trace_stop_reason why)
{
	uint64_t ev = total_events(&r->snap), wait_ns = 0;
	double dur = (double)(r->snap.ts_ns - r->start_ns) / 1e9;
	const struct pb_engine_stats *es = &r->snap.engine;
	int top = top_wait_resource(r, &wait_ns);

	if (r->tty)
		fprintf(stderr, "\r\033[K");
	if (json_output) {
		json_t *o = json_pack(
			"{s:s, s:i, s:f, s:I, s:I, s:I, s:I, s:s, s:s?, s:I, s:o}",
			"file", r->a.output, "pid", (int)(r->child ? r->child : r->a.pid),
			"duration_s", dur, "events", (json_int_t)ev,
			"records", (json_int_t)r->records_written,
			"drops", (json_int_t)es->ringbuf_drops,
			"snapshots", (json_int_t)r->snapshots, "stopped_by", stop_str(why),
			"top_wait_resource", top >= 0 ? r->m->resources[top].name : NULL,
			"bytes", (json_int_t)r->bytes_written,
			"lost", json_pack("{s:I, s:I, s:I, s:I, s:I}",
				"instance_map_full", (json_int_t)es->instance_map_full,
				"thread_map_full", (json_int_t)es->thread_map_full,
				"span_overflow", (json_int_t)es->span_overflow,
				"return_without_entry", (json_int_t)es->stash_missing,
				"write_errors", (json_int_t)r->write_errors));

		if (o)
			json_object_set_new(o, "confidence", confidence_json(r));
		if (o && r->env)
			json_object_set_new(o, "envelope", record_envelope__json(r->env));
		json_print_and_free(o);
		return;
	}
	printf("recorded %llu events in %.2f s from pid %d (stopped by %s): %llu records, "
	       "%llu snapshots, %llu drops -> %s\n",
	       (unsigned long long)ev, dur, (int)(r->child ? r->child : r->a.pid), stop_str(why),
	       (unsigned long long)r->records_written, (unsigned long long)r->snapshots,
	       (unsigned long long)es->ringbuf_drops, r->a.output);
	if (top >= 0)
		printf("top wait: %s (%.1f ms in WAIT spans)\n", r->m->resources[top].name,
		       (double)wait_ns / 1e6);
	if (es->ringbuf_drops)
		p_warn("%llu records were dropped (ring buffer full): the trace's event stream "
		       "is incomplete; the aggregate counters are complete (try --ringbuf-kib)",
		       (unsigned long long)es->ringbuf_drops);
	if (es->instance_map_full || es->thread_map_full || es->span_overflow ||
	    es->stash_missing)
		p_warn("lost evidence: instance map full %llu, thread map full %llu, span "
		       "overflow %llu, return without entry %llu",
		       (unsigned long long)es->instance_map_full,
		       (unsigned long long)es->thread_map_full,
		       (unsigned long long)es->span_overflow,
		       (unsigned long long)es->stash_missing);
	if (r->write_errors)
		p_warn("%llu trace writes failed", (unsigned long long)r->write_errors);
	print_confidence(r);
	record_envelope__print(r->env);
}

static void recorder_cleanup(struct recorder *r)
{
	engine__free(r->e);
	confidence__free(r->conf);
	record_envelope__free(r->env);
	stop_child(r);
	trace_writer__close(r->w);
	if (r->live_fd >= 0)
		close(r->live_fd);
	plan__free(r->p);
	manifest__free(r->m);
	diags__free(r->diags);
}

int do_record(int argc, char **argv)
{
	struct engine_opts eo = { 0 };
	struct recorder r = { .go_fd = -1, .live_fd = -1 };
	enum trace_stop_reason why;
	int err, ret;

	err = parse_args(argc, argv, &r.a);
	if (err)
		return err > 0 ? EXIT_OK : EXIT_USAGE;
	ret = build_plan(&r);
	if (ret != EXIT_OK)
		goto out;
	if (r.a.envelope) {	/* bound to this manifest and build: refused before attaching */
		ret = record_envelope__open(&r.env, r.a.envelope, r.p);
		if (ret != EXIT_OK)
			goto out;
	}
	ret = EXIT_FAILURE_RT;
	if (r.a.cmd) {
		err = spawn_child(&r);
		if (err) {
			p_err("cannot start '%s': %s", r.a.cmd[0], strerror(-err));
			goto out;
		}
	}
	eo.pid = r.child ? r.child : r.a.pid;
	eo.events = r.a.events;
	eo.ringbuf_bytes = r.a.ringbuf_bytes;
	r.e = engine__new(r.p, &eo);
	if (!r.e) {
		p_err("cannot load or attach the BPF engine: %s%s", strerror(errno),
		      errno == EPERM ? " (run as root)" : "");
		goto out;
	}
	if (open_trace(&r))
		goto out;
	if (start_confidence(&r)) {
		p_err("cannot start the confidence controller: %s", strerror(errno));
		goto out;
	}
	cli_stop_install();
	r.tty = isatty(STDERR_FILENO);
	r.last_snap_ns = r.start_ns;
	if (start_child(&r)) {
		p_err("cannot start the target");
		goto out;
	}
	why = record_loop(&r);
	if (finish_trace(&r, why)) {
		p_err("cannot finish trace file %s", r.a.output);
		goto out;
	}
	r.records_written = trace_writer__records(r.w);
	r.bytes_written = trace_writer__bytes(r.w);
	err = trace_writer__close(r.w);
	r.w = NULL;
	if (err) {
		p_err("cannot write trace file %s: %s", r.a.output, strerror(-err));
		goto out;
	}
	/* the target shares stdout: its own output comes first, whatever
	 * the length of the summary (stdio would flush a long one in parts) */
	stop_child(&r);
	print_summary(&r, why);
	ret = why == TRACE_STOP_ERROR ? EXIT_FAILURE_RT :
	      confidence__any_stale(r.conf) ? EXIT_STALE : EXIT_OK;
out:
	cli_stop_restore();
	recorder_cleanup(&r);
	return ret;
}
