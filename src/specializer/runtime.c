/* SPDX-License-Identifier: BSD-2-Clause */
/* runtime.c: `probity rejit`'s loop (specializer.h, docs/rejit.md), the
 * top of src/specializer/ (state.h draws the files below it).
 *
 *   setup      store, netns + veth (netns.c), generation 0 (generic
 *              lb_xdp, loaded through pb_generation__load, put in the
 *              fallback prog array, attached with an XDP link), traffic
 *   each tick  scripted steps (config writes deoptimize first; traffic
 *              mix changes), outside config writes, guard-failure check
 *              (deopt above threshold)
 *   each epoch profile delta -> plan (sites >= bias threshold) -> if it
 *              differs from the active generation: a candidate
 *              (candidate.c) swapped in with bpf_link_update
 *   stop       detach, retire, close, log unloads, delete the netns
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "common/array.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/version.h"
#include "elf/self_build_id.h"
#include "receipts/canon.h"
#include "probity/receipts.h"
#include "specializer/candidate.h"
#include "specializer/generation.h"
#include "specializer/netns.h"
#include "specializer/profile.h"
#include "specializer/traffic.h"
#include "lb_xdp.skel.h"

/* ---- the loop ------------------------------------------------------------ */

/* The epoch's plan from its profile delta d; line gets the progress text
 * per site, sites and gf the JSON of the profile record. */
static void plan_epoch(const struct specializer *s, const struct lb_prof *d, struct spec_plan *pl,
		       char *line, size_t line_sz, json_t *sites, json_t *gf)
{
	int i;

	for (i = 0; i < LB_NSITES; i++) {
		uint64_t t = d->site[i][0], n = d->site[i][1], tot = t + n;

		pl->taken[i] = t;
		pl->not_taken[i] = n;
		json_object_set_new(sites, sp_site_names[i], json_pack("{s:I, s:I}", "taken", (json_int_t)t,
								      "not_taken", (json_int_t)n));
		json_object_set_new(gf, sp_site_names[i], json_integer((json_int_t)d->guard_fail[i]));
		snprintf(line + strlen(line), line_sz - strlen(line), " %s %llu/%llu", sp_site_names[i],
			 (unsigned long long)t, (unsigned long long)tot);
		if (tot >= s->o.min_samples &&
		    (t > n ? t : n) * 1000 >= (uint64_t)s->o.bias_permille * tot) {
			pl->spec_mask |= 1u << i;
			if (t > n)
				pl->hot_mask |= 1u << i;
		}
	}
}

/* The profile record of the epoch that just ended (an assumption's
 * evidence when a candidate rests on it). */
static char *epoch_profile(struct specializer *s, const struct lb_prof *d, uint64_t wstart,
			   json_t *sites, json_t *gf)
{
	uint64_t run_cnt = 0, run_ns = 0;
	struct lb_cfg cfg;

	sp_prog_stats(s->active->fd, &run_cnt, &run_ns);
	sp_cfg_read(s, &cfg);
	return sp_dump_json(json_pack(
		"{s:s, s:I, s:I, s:I, s:i, s:s, s:o, s:o, s:I, s:{s:I, s:I, s:I}, s:o, s:s}",
		"schema", "probity.rejit.profile/v1", "epoch", (json_int_t)s->epoch,
		"window_start_mono_ns", (json_int_t)wstart, "window_end_mono_ns",
		(json_int_t)s->window_start, "active_generation", s->active->ordinal,
		"active_generation_id", s->active->logged ? pb_generation__id(s->active->g) : "unlogged",
		"sites", sites, "guard_fail", gf, "fallback_failed", (json_int_t)d->fallback_failed,
		"run", "prog_id", (json_int_t)s->active->prog_id, "run_cnt", (json_int_t)run_cnt,
		"run_time_ns", (json_int_t)run_ns, "config", sp_cfg_json(&cfg), "traffic_mix",
		sp_mix_names[atomic_load(&s->mix)]));
}

static void epoch_tick(struct specializer *s)
{
	struct lb_prof now, d;
	struct spec_plan pl = { 0 };
	json_t *sites = json_object(), *gf = json_object();
	uint64_t wstart = s->window_start;
	char line[256] = "";

	sp_prof_read(s, &now);
	sp_prof_delta(&s->base, &now, &d);
	s->base = now;
	s->epoch++;
	s->window_start = pb_mono_ns();
	plan_epoch(s, &d, &pl, line, sizeof(line), sites, gf);
	free(s->last_profile);
	s->last_profile = epoch_profile(s, &d, wstart, sites, gf);
	s->last_profile_epoch = s->epoch;
	if (!PB_ARRAY_RESERVE_ONE(s->epochs, s->n_epochs, s->cap_epochs))
		s->epochs[s->n_epochs++] = (struct sp_epoch_plan){ .epoch = s->epoch,
			.spec_mask = pl.spec_mask, .hot_mask = pl.hot_mask, .active = s->active->ordinal };
	sp_progress(s, "epoch %u:%s guard-fails %llu (gen %d)", s->epoch, line,
		    (unsigned long long)sp_guard_total(&d), s->active->ordinal);
	pl.spike = s->o.plant_spike && s->n_specialized + 1 == s->o.plant_spike;
	if (!s->active->generic && s->active->spec_mask == pl.spec_mask &&
	    s->active->hot_mask == pl.hot_mask && s->active->cfg_epoch == s->cfg_epoch)
		return;	/* the active generation still fits the profile */
	sp_specialize(s, &pl);
}

static void apply_step(struct specializer *s, const struct sp_step *st)
{
	char reason[160];
	struct lb_cfg cfg;
	uint32_t old;

	if (!PB_ARRAY_RESERVE_ONE(s->steps_done, s->n_steps_done, s->cap_steps_done))
		s->steps_done[s->n_steps_done++] = (struct sp_step_done){ .t_ms = st->t_ms,
			.line = st->line, .kind = st->kind };
	if (st->kind == SP_STEP_TRAFFIC) {
		sp_progress(s, "script line %u: traffic %s", st->line, sp_mix_names[st->mix]);
		atomic_store(&s->mix, (int)st->mix);
		return;
	}
	sp_cfg_read(s, &cfg);
	old = sp_cfg_get(&cfg, st->field);
	sp_progress(s, "script line %u: config %s %u -> %u", st->line, sp_cfg_fields[st->field].name,
		    old, st->value);
	if (old == st->value)
		return;
	/* the specialized code inlined the old value: leave it first */
	snprintf(reason, sizeof(reason), "deopt: config changed: %s %u -> %u",
		 sp_cfg_fields[st->field].name, old, st->value);
	sp_deopt(s, reason);
	sp_cfg_set(s, st->field, st->value);
	s->cfg_epoch++;
}

/* Script steps that are due; a new epoch window when any ran (the
 * profile so far describes another traffic or configuration). */
static void run_due_steps(struct specializer *s, uint64_t now, size_t *step, uint64_t *next_epoch)
{
	const struct sp_script *sc = s->o.script;

	if (!sc || *step >= sc->n || s->t0 + sc->steps[*step].t_ms * NS_PER_MS > now)
		return;
	while (*step < sc->n && s->t0 + sc->steps[*step].t_ms * NS_PER_MS <= now)
		apply_step(s, &sc->steps[(*step)++]);
	sp_prof_read(s, &s->base);
	s->window_start = pb_mono_ns();
	*next_epoch = s->window_start + s->o.profile_interval_ms * NS_PER_MS;
}

/* A writer other than us changed the configuration map: deoptimize. */
static void check_outside_writer(struct specializer *s)
{
	struct lb_cfg live;
	char reason[160];
	uint32_t f;

	if (s->active->generic)
		return;
	sp_cfg_read(s, &live);
	for (f = 0; f < sp_n_cfg_fields; f++) {
		if (sp_cfg_get(&live, f) == sp_cfg_get(&s->active->cfg, f))
			continue;
		snprintf(reason, sizeof(reason), "deopt: config changed: %s %u -> %u (outside writer)",
			 sp_cfg_fields[f].name, sp_cfg_get(&s->active->cfg, f), sp_cfg_get(&live, f));
		sp_deopt(s, reason);
		s->cfg_epoch++;
		break;
	}
}

/* Too many guard failures in this window: deoptimize. */
static void check_guards(struct specializer *s)
{
	struct lb_prof p;
	char reason[128];
	uint64_t gf;

	if (s->active->generic)
		return;
	sp_prof_read(s, &p);
	gf = sp_guard_total(&p) - s->guard_base;
	if (gf <= s->o.guard_threshold)
		return;
	snprintf(reason, sizeof(reason), "deopt: guard failures %llu > threshold %llu",
		 (unsigned long long)gf, (unsigned long long)s->o.guard_threshold);
	sp_deopt(s, reason);
}

/* Make this turn's generations durable (group commit); a failure is
 * reported once and counted: the log's watermark stays where it was, so
 * attribution keeps the undurable tail unknown. */
static void sync_store(struct specializer *s)
{
	int e = pb_store__group_sync(s->store);

	if (e && !s->sync_errors++)
		pr_warn("receipt store sync failed: %s (entries after the last watermark are not durable)\n",
			strerror(-e));
}

int specializer__run(struct specializer *s)
{
	uint64_t next_epoch, end;
	size_t step = 0;

	s->t0 = pb_mono_ns();
	s->window_start = s->t0;
	sp_prof_read(s, &s->base);
	s->guard_base = sp_guard_total(&s->base);
	next_epoch = s->t0 + s->o.profile_interval_ms * NS_PER_MS;
	end = s->o.duration_ms ? s->t0 + s->o.duration_ms * NS_PER_MS : UINT64_MAX;
	if (pthread_create(&s->traffic, NULL, sp_traffic_main, s)) {
		pr_err("cannot start the traffic thread\n");
		return -EAGAIN;
	}
	s->traffic_started = true;
	sp_progress(s, "gen 0 (prog %u) attached to %s in netns %s; traffic %u pps",
		    s->gens[0].prog_id, s->o.dev, s->netns, s->o.rate_pps);
	while (!(s->o.stop && *s->o.stop)) {
		uint64_t now = pb_mono_ns();

		if (now >= end)
			break;
		run_due_steps(s, now, &step, &next_epoch);
		check_outside_writer(s);
		check_guards(s);
		if (now >= next_epoch) {
			epoch_tick(s);
			next_epoch += s->o.profile_interval_ms * NS_PER_MS;
			/* a new guard window each epoch */
			if (!s->active->generic) {
				struct lb_prof p;

				sp_prof_read(s, &p);
				s->guard_base = sp_guard_total(&p);
			}
		}
		sync_store(s);
		usleep(20000);
	}
	return 0;
}

/* ---- setup --------------------------------------------------------------- */

static int map_shared(const struct bpf_map *m, void **out, size_t *sz)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	size_t len = ((bpf_map__value_size(m) + 7) & ~(size_t)7) * bpf_map__max_entries(m);
	void *p;

	len = (len + pg - 1) / pg * pg;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(m), 0);
	if (p == MAP_FAILED)
		return -errno;
	*out = p;
	*sz = len;
	return 0;
}

static void set_defaults(struct specializer_opts *o)
{
	if (!o->dev) o->dev = "pbrj1";
	if (!o->peer) o->peer = "pbrj0";
	if (!o->rate_pps) o->rate_pps = 4000;
	if (!o->profile_interval_ms) o->profile_interval_ms = 1000;
	if (!o->bias_permille) o->bias_permille = 950;
	if (!o->guard_threshold) o->guard_threshold = 200;
	if (!o->min_samples) o->min_samples = 100;
	if (!o->spike_rounds) o->spike_rounds = 16384;
}

/* The skeleton opened, the initial configuration written into it, and
 * the source id (sha256 of the BPF object). */
static int open_object(struct specializer *s)
{
	char hex[PB_DIGEST_HEX_LEN];
	const void *elf;
	size_t elf_sz = 0, i;
	int e;

	s->skel = lb_xdp_bpf__open();
	if (!s->skel) {
		e = -errno;
		pr_err("cannot open the lb_xdp BPF object: %s\n", strerror(-e));
		return e;
	}
	elf = lb_xdp_bpf__elf_bytes(&elf_sz);
	if ((e = pb_sha256_hex(elf, elf_sz, hex))) {
		pr_err("cannot hash the lb_xdp BPF object: %s\n", strerror(-e));
		return e;
	}
	snprintf(s->source_id, sizeof(s->source_id), "sha256:%s", hex);
	for (i = 0; i < s->o.n_cfg; i++)
		memcpy((uint8_t *)&s->skel->data_cfg->lb_cfg + sp_cfg_fields[s->o.cfg_field[i]].offset,
		       &s->o.cfg_value[i], 4);
	return 0;
}

/* Generation 0: the generic program, as built, loaded and recorded. */
static int load_generic(struct specializer *s)
{
	struct pb_generation_opts go = { .sz = sizeof(go), .optimizer_name = OPTIMIZER_NAME,
					 .optimizer_version = PROBITY_VERSION,
					 .optimizer_build_id = s->optimizer_build_id,
					 .source_build_id = s->source_id };
	struct bpf_program *prog = s->skel->progs.lb_xdp;
	struct sp_gen *g0;
	int e;

	g0 = sp_gen__new(s);
	if (!g0)
		return -ENOMEM;
	g0->generic = true;
	g0->logged = true;
	if ((e = pb_generation__begin(s->store, &go, &g0->g)) ||
	    (e = pb_generation__load(g0->g, s->skel->obj, prog))) {
		pr_err("cannot load generation 0 (lb_xdp): %s\n", strerror(-e));
		return e;
	}
	g0->fd = bpf_program__fd(prog);
	g0->prog_id = pb_generation__prog_id(g0->g);
	g0->insns = (uint32_t)bpf_program__insn_cnt(prog);
	s->generic_n = bpf_program__insn_cnt(prog);
	s->generic_insns = malloc(s->generic_n * sizeof(struct bpf_insn));
	if (!s->generic_insns)
		return -ENOMEM;
	memcpy(s->generic_insns, bpf_program__insns(prog), s->generic_n * sizeof(struct bpf_insn));
	return 0;
}

/* Map the configuration and profile globals, put generation 0 into the
 * fallback prog array, attach it. */
static int attach_generic(struct specializer *s)
{
	struct sp_gen *g0 = &s->gens[0];
	__u32 key = 0;
	int e, fd;

	if ((e = map_shared(s->skel->maps.data_cfg, (void **)&s->cfg_map, &s->cfg_map_sz)) ||
	    (e = map_shared(s->skel->maps.bss, (void **)&s->prof_map, &s->prof_map_sz))) {
		pr_err("cannot map the configuration and profile maps: %s\n", strerror(-e));
		return e;
	}
	s->prof_map->tag = LB_PROF_TAG;
	s->prof_map->version = LB_VERSION;
	sp_cfg_read(s, &g0->cfg);
	fd = g0->fd;
	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.lb_fallback), &key, &fd, BPF_ANY)) {
		e = -errno;
		pr_err("cannot put generation 0 into the fallback prog array: %s\n", strerror(-e));
		return e;
	}
	s->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);	/* run_cnt/run_time_ns; optional */
	if ((e = sp_gen__activate(s, g0, "attach"))) {
		pr_err("cannot attach generation 0 to %s: %s\n", s->o.dev, strerror(-e));
		return e;
	}
	return 0;
}

int specializer__new(const struct specializer_opts *o, struct specializer **out)
{
	struct specializer *s;
	int e;

	*out = NULL;
	if (!o || !o->store_dir) {
		pr_err("invalid options\n");
		return -EINVAL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->o = *o;
	s->orig_ns_fd = -1;
	s->link_fd = -1;
	s->stats_fd = -1;
	s->pkt_fd = -1;
	set_defaults(&s->o);
	*out = s;
	if ((s->o.netns && !sp_name_ok(s->o.netns)) || !sp_name_ok(s->o.dev) || !sp_name_ok(s->o.peer)) {
		pr_err("netns and device names: expected 1-15 characters of [A-Za-z0-9_.-]\n");
		return -EINVAL;
	}
	if ((e = pb_store__open(s->o.store_dir, NULL, &s->store))) {
		pr_err("cannot open receipt store '%s': %s\n", s->o.store_dir, strerror(-e));
		return e;
	}
	/* group commit: one syncfs per loop turn (20 ms), not two fsyncs
	 * per generation; the log's watermarks say what is durable */
	if ((e = pb_store__group_begin(s->store))) {
		pr_err("cannot start group commit in '%s': %s\n", s->o.store_dir, strerror(-e));
		return e;
	}
	if (elf_self_build_id_hex(s->optimizer_build_id, sizeof(s->optimizer_build_id)) < 0)
		snprintf(s->optimizer_build_id, sizeof(s->optimizer_build_id), "unknown");
	if ((e = sp_netns__setup(s)) || (e = open_object(s)) || (e = load_generic(s)) ||
	    (e = attach_generic(s)))
		return e;
	return 0;
}

/* ---- stop and free ------------------------------------------------------- */

/* Generation 0 goes with the skeleton; log its unload (unless an
 * earlier entry of the stop failed). */
static int unload_generic(struct specializer *s, bool log_unload)
{
	struct sp_gen *g0 = &s->gens[0];

	sp_prog_stats(g0->fd, &g0->run_cnt, &g0->run_time_ns);
	lb_xdp_bpf__destroy(s->skel);
	s->skel = NULL;
	g0->fd = -1;
	g0->closed = true;
	if (g0->prog_id && !sp_prog_gone(g0->prog_id, 2000))
		sp_progress(s, "gen 0 (prog %u) still held by the kernel after close", g0->prog_id);
	if (log_unload && g0->g && pb_generation__id(g0->g))
		return pb_generation__record_unloaded(g0->g);
	return 0;
}

int specializer__stop(struct specializer *s)
{
	size_t i;
	int err = 0;

	if (!s || s->stopped)
		return 0;
	s->stopped = true;
	if (s->traffic_started) {
		atomic_store(&s->traffic_stop, 1);
		pthread_join(s->traffic, NULL);
		s->traffic_started = false;
	}
	/* detach first, then log the retirement: the interval the log
	 * states ends at or after the program's last invocation */
	if (s->link_fd >= 0) {
		close(s->link_fd);
		s->link_fd = -1;
	}
	if (s->active) {
		sp_strs_push(&s->active->retired, "stopped");
		if (s->active->logged)
			err = pb_generation__retire(s->active->g, "stopped");
		s->active = NULL;
	}
	for (i = 1; i < s->n_gens; i++)
		sp_gen__close(s, &s->gens[i]);
	if (s->prof_map)
		sp_prof_read(s, &s->last_prof);
	if (s->cfg_map)
		munmap(s->cfg_map, s->cfg_map_sz);
	if (s->prof_map)
		munmap(s->prof_map, s->prof_map_sz);
	s->cfg_map = NULL;
	s->prof_map = NULL;
	if (s->n_gens && s->skel) {
		int e = unload_generic(s, !err);

		if (!err)
			err = e;
	}
	if (s->stats_fd >= 0) {
		close(s->stats_fd);
		s->stats_fd = -1;
	}
	sp_netns__teardown(s);
	return err;
}

void specializer__free(struct specializer *s)
{
	size_t i;

	if (!s)
		return;
	specializer__stop(s);
	for (i = 0; i < s->n_gens; i++)
		sp_gen__release(&s->gens[i]);
	for (i = 0; i < s->n_swaps; i++)
		free(s->swaps[i].reason);
	free(s->gens);
	free(s->generic_insns);
	free(s->last_profile);
	free(s->swaps);
	free(s->epochs);
	free(s->steps_done);
	free(s->summary_gens);
	pb_store__free(s->store);
	free(s);
}
