/* runtime.c: `probity rejit`'s loop (runtime.h, docs/rejit.md).
 *
 *   setup      store, netns + veth (traffic.c), generation 0 (generic
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
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "common/version.h"
#include "elf/elf_image.h"
#include "receipts/receipts_int.h"
#include "rejit/runtime_int.h"
#include "lb_xdp.skel.h"


const char *const rt_site_names[LB_NSITES] = { "ipv4", "udp", "vip", "acl" };
const char *const rt_class_names[C_ALL] = { "vip", "blocked", "tcp", "udp-other", "arp",
					    "short-ipv4", "ihl6", "truncated-udp" };

void rt_progress(struct rejit *r, const char *fmt, ...)
{
	char line[512];
	int n;
	va_list ap;

	if (!r->o.progress)
		return;
	n = snprintf(line, sizeof(line), "t=%.2fs ",
		     r->t0 ? (double)(pb_mono_ns() - r->t0) / 1e9 : 0.0);
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	r->o.progress(r->o.progress_ctx, line);
}

static uint64_t now_ms(const struct rejit *r)
{
	return r->t0 ? (pb_mono_ns() - r->t0) / NS_PER_MS : 0;
}

/* ---- configuration and profile ------------------------------------------ */

static volatile struct lb_cfg *cfg_live(struct rejit *r)
{
	return (volatile struct lb_cfg *)r->cfg_map;
}

void rt_cfg_read(struct rejit *r, struct lb_cfg *out)
{
	volatile struct lb_cfg *c = cfg_live(r);

	out->tag = c->tag;
	out->version = c->version;
	out->feature_acl = c->feature_acl;
	out->feature_stats = c->feature_stats;
	out->n_backends = c->n_backends;
	out->vip_port = c->vip_port;
	out->acl_prefix = c->acl_prefix;
	out->default_verdict = c->default_verdict;
}

uint32_t rt_cfg_get(const struct lb_cfg *c, uint32_t field)
{
	uint32_t v;

	memcpy(&v, (const uint8_t *)c + rj_cfg_fields[field].offset, 4);
	return v;
}

static void cfg_set(struct rejit *r, uint32_t field, uint32_t v)
{
	volatile uint32_t *p = (volatile uint32_t *)((volatile uint8_t *)cfg_live(r) +
						     rj_cfg_fields[field].offset);

	*p = v;
}

json_t *rt_cfg_json(const struct lb_cfg *c)
{
	json_t *j = json_object();
	size_t i;

	for (i = 0; i < rj_n_cfg_fields; i++)
		json_object_set_new(j, rj_cfg_fields[i].name, json_integer(rt_cfg_get(c, (uint32_t)i)));
	return j;
}

void rt_prof_read(struct rejit *r, struct lb_prof *out)
{
	memcpy(out, (const void *)r->prof_map, sizeof(*out));
}

uint64_t rt_guard_total(const struct lb_prof *p)
{
	uint64_t t = 0;
	int i;

	for (i = 0; i < LB_NSITES; i++)
		t += p->guard_fail[i];
	return t;
}

static void prof_delta(const struct lb_prof *a, const struct lb_prof *b, struct lb_prof *d)
{
	/* __u64, not uint64_t (unsigned long): the same type as the fields,
	 * or strict aliasing lets the compiler drop the stores */
	const __u64 *x = &a->site[0][0], *y = &b->site[0][0];
	__u64 *z = &d->site[0][0];
	size_t i, n = (sizeof(*a) - offsetof(struct lb_prof, site)) / 8;

	memset(d, 0, sizeof(*d));
	for (i = 0; i < n; i++)
		z[i] = y[i] - x[i];
}

static void prog_stats(int fd, uint64_t *cnt, uint64_t *ns)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (fd >= 0 && !bpf_prog_get_info_by_fd(fd, &info, &len)) {
		*cnt = info.run_cnt;
		*ns = info.run_time_ns;
	}
}

/* ---- generations -------------------------------------------------------- */

struct rj_gen *rt_gen_add(struct rejit *r)
{
	struct rj_gen *g;

	if (r->n_gens == r->cap_gens) {
		size_t nc = r->cap_gens ? r->cap_gens * 2 : 16;
		struct rj_gen *ng = realloc(r->gens, nc * sizeof(*ng));

		if (!ng)
			return NULL;
		/* r->active points into the array */
		if (r->active)
			r->active = ng + (r->active - r->gens);
		r->gens = ng;
		r->cap_gens = nc;
	}
	g = &r->gens[r->n_gens];
	memset(g, 0, sizeof(*g));
	g->ordinal = (int)r->n_gens;
	g->fd = -1;
	g->transforms = json_array();
	g->assumptions = json_array();
	g->retired = json_array();
	g->loaded_ms = now_ms(r);
	r->n_gens++;
	return g;
}

struct swap_ctx {
	struct rejit *r;
	int new_fd;
	struct pb_activation_opts *ao;
};

static int swap_fn(void *c)
{
	struct swap_ctx *s = c;
	struct rejit *r = s->r;

	if (r->link_fd < 0) {
		LIBBPF_OPTS(bpf_link_create_opts, lo);
		int fd = bpf_link_create(s->new_fd, r->ifindex, BPF_XDP, &lo);

		if (fd < 0)
			return -errno;
		r->link_fd = fd;
		if (s->ao)
			s->ao->link_fd = fd;
		return 0;
	}
	return bpf_link_update(r->link_fd, s->new_fd, NULL) ? -errno : 0;
}

/* Swap `to` in for the active generation; `reason` is why the active one
 * goes. Unlogged (injected) handoffs swap without any entry. */
int rt_activate(struct rejit *r, struct rj_gen *to, const char *reason)
{
	struct rj_gen *from = r->active;
	struct pb_activation_opts ao = { .sz = sizeof(ao), .link_fd = r->link_fd,
					 .hook = "xdp", .retire_reason = reason };
	struct swap_ctx sc = { .r = r, .new_fd = to->fd, .ao = &ao };
	char hook[96];
	int err;

	snprintf(hook, sizeof(hook), "xdp:%s@netns:%s", r->o.dev, r->netns);
	ao.hook = hook;
	if (to->logged) {
		ao.replaces = from && from->logged ? from->g : NULL;
		err = pb_generation__activate(to->g, &ao, swap_fn, &sc);
	} else {
		err = swap_fn(&sc);
	}
	if (err)
		return err;
	to->activations++;
	if (from)
		json_array_append_new(from->retired, json_string(reason));
	json_array_append_new(r->swaps, json_pack("{s:I, s:i, s:i, s:s, s:b}", "t_ms",
						  (json_int_t)now_ms(r), "from",
						  from ? from->ordinal : -1, "to", to->ordinal,
						  "reason", from ? reason : "attach",
						  "logged", to->logged));
	r->active = to;
	/* a new guard window */
	{
		struct lb_prof p;

		rt_prof_read(r, &p);
		r->guard_base = rt_guard_total(&p);
	}
	return 0;
}

static bool prog_gone(uint32_t id, int wait_ms)
{
	int i, fd;

	for (i = 0; i <= wait_ms; i += 5) {
		fd = bpf_prog_get_fd_by_id(id);
		if (fd < 0)
			return true;
		close(fd);
		usleep(5000);
	}
	return false;
}

/* Close a generation that is no longer attached and log its unload. */
void rt_gen_close(struct rejit *r, struct rj_gen *g)
{
	int err;

	if (g->closed || g->generic)
		return;
	prog_stats(g->fd, &g->run_cnt, &g->run_time_ns);
	close(g->fd);
	g->fd = -1;
	g->closed = true;
	if (!prog_gone(g->prog_id, 1000))
		rt_progress(r, "gen %d (prog %u) still held by the kernel after close", g->ordinal, g->prog_id);
	if (g->logged && (err = pb_generation__record_unloaded(g->g)))
		rt_progress(r, "gen %d: cannot log 'unloaded': %s", g->ordinal, strerror(-err));
}

static int deopt(struct rejit *r, const char *reason)
{
	struct rj_gen *old = r->active;
	int err;

	if (!old || old->generic)
		return 0;
	err = rt_activate(r, &r->gens[0], reason);
	if (err) {
		rt_progress(r, "deopt of gen %d failed: %s", old->ordinal, strerror(-err));
		return err;
	}
	r->deopts++;
	rt_progress(r, "deopt: gen %d -> gen 0 (%s)", old->ordinal, reason);
	rt_gen_close(r, old);
	return 0;
}

/* ---- the loop ------------------------------------------------------------ */

static void epoch_tick(struct rejit *r)
{
	struct lb_prof now, d;
	struct plan pl = { 0 };
	json_t *sites = json_object(), *gf = json_object(), *prof;
	uint64_t run_cnt = 0, run_ns = 0, wstart = r->window_start;
	struct lb_cfg cfg;
	char line[256] = "";
	int s;

	rt_prof_read(r, &now);
	prof_delta(&r->base, &now, &d);
	r->base = now;
	r->epoch++;
	r->window_start = pb_mono_ns();
	prog_stats(r->active->fd, &run_cnt, &run_ns);
	rt_cfg_read(r, &cfg);
	for (s = 0; s < LB_NSITES; s++) {
		uint64_t t = d.site[s][0], n = d.site[s][1], tot = t + n;

		pl.taken[s] = t;
		pl.not_taken[s] = n;
		json_object_set_new(sites, rt_site_names[s], json_pack("{s:I, s:I}", "taken", (json_int_t)t,
								   "not_taken", (json_int_t)n));
		json_object_set_new(gf, rt_site_names[s], json_integer((json_int_t)d.guard_fail[s]));
		snprintf(line + strlen(line), sizeof(line) - strlen(line), " %s %llu/%llu", rt_site_names[s],
			 (unsigned long long)t, (unsigned long long)tot);
		if (tot >= r->o.min_samples &&
		    (t > n ? t : n) * 1000 >= (uint64_t)r->o.bias_permille * tot) {
			pl.spec_mask |= 1u << s;
			if (t > n)
				pl.hot_mask |= 1u << s;
		}
	}
	prof = json_pack("{s:s, s:I, s:I, s:I, s:i, s:s, s:o, s:o, s:I, s:{s:I, s:I, s:I}, s:o, s:s}",
			 "schema", "probity.rejit.profile/v1", "epoch", (json_int_t)r->epoch,
			 "window_start_mono_ns", (json_int_t)wstart, "window_end_mono_ns",
			 (json_int_t)r->window_start, "active_generation",
			 r->active->ordinal, "active_generation_id",
			 r->active->logged ? pb_generation__id(r->active->g) : "unlogged",
			 "sites", sites, "guard_fail", gf, "fallback_failed",
			 (json_int_t)d.fallback_failed, "run", "prog_id", (json_int_t)r->active->prog_id,
			 "run_cnt", (json_int_t)run_cnt, "run_time_ns", (json_int_t)run_ns,
			 "config", rt_cfg_json(&cfg), "traffic_mix", rj_mix_names[atomic_load(&r->mix)]);
	json_array_append_new(r->epochs, json_pack("{s:I, s:I, s:I, s:i}", "epoch",
						   (json_int_t)r->epoch, "spec_mask",
						   (json_int_t)pl.spec_mask, "hot_mask",
						   (json_int_t)pl.hot_mask, "active", r->active->ordinal));
	rt_progress(r, "epoch %u:%s guard-fails %llu (gen %d)", r->epoch, line,
		 (unsigned long long)rt_guard_total(&d), r->active->ordinal);
	free(r->last_profile);
	r->last_profile = rt_dump_json(prof);
	r->last_profile_epoch = r->epoch;
	pl.spike = r->o.plant_spike && r->n_specialized + 1 == r->o.plant_spike;
	if (!r->active->generic && r->active->spec_mask == pl.spec_mask &&
	    r->active->hot_mask == pl.hot_mask && r->active->cfg_epoch == r->cfg_epoch)
		return;	/* the active generation still fits the profile */
	rt_specialize(r, &pl);
}

static void apply_step(struct rejit *r, const struct rj_step *st)
{
	char reason[160];

	json_array_append_new(r->steps_done, json_pack("{s:I, s:I, s:s}", "t_ms", (json_int_t)st->t_ms,
						       "line", (json_int_t)st->line, "kind",
						       st->kind == RJ_STEP_CONFIG ? "config" : "traffic"));
	if (st->kind == RJ_STEP_TRAFFIC) {
		rt_progress(r, "script line %u: traffic %s", st->line, rj_mix_names[st->mix]);
		atomic_store(&r->mix, (int)st->mix);
		return;
	}
	{
		struct lb_cfg cfg;
		uint32_t old;

		rt_cfg_read(r, &cfg);
		old = rt_cfg_get(&cfg, st->field);
		rt_progress(r, "script line %u: config %s %u -> %u", st->line, rj_cfg_fields[st->field].name,
			 old, st->value);
		if (old == st->value)
			return;
		/* the specialized code inlined the old value: leave it first */
		snprintf(reason, sizeof(reason), "deopt: config changed: %s %u -> %u",
			 rj_cfg_fields[st->field].name, old, st->value);
		deopt(r, reason);
		cfg_set(r, st->field, st->value);
		r->cfg_epoch++;
	}
}

int rejit__run(struct rejit *r, char *err, size_t errsz)
{
	uint64_t next_epoch, end;
	size_t step = 0;

	r->t0 = pb_mono_ns();
	r->window_start = r->t0;
	rt_prof_read(r, &r->base);
	r->guard_base = rt_guard_total(&r->base);
	next_epoch = r->t0 + r->o.profile_interval_ms * NS_PER_MS;
	end = r->o.duration_ms ? r->t0 + r->o.duration_ms * NS_PER_MS : UINT64_MAX;
	if (pthread_create(&r->traffic, NULL, rt_traffic_main, r)) {
		snprintf(err, errsz, "cannot start the traffic thread");
		return -EAGAIN;
	}
	r->traffic_started = true;
	rt_progress(r, "gen 0 (prog %u) attached to %s in netns %s; traffic %u pps",
		 r->gens[0].prog_id, r->o.dev, r->netns, r->o.rate_pps);
	while (!(r->o.stop && *r->o.stop)) {
		uint64_t now = pb_mono_ns();

		if (now >= end)
			break;
		if (r->o.script && step < r->o.script->n &&
		    r->t0 + r->o.script->steps[step].t_ms * NS_PER_MS <= now) {
			while (step < r->o.script->n &&
			       r->t0 + r->o.script->steps[step].t_ms * NS_PER_MS <= now)
				apply_step(r, &r->o.script->steps[step++]);
			/* the profile so far describes another traffic or
			 * configuration: a new epoch window starts here */
			rt_prof_read(r, &r->base);
			r->window_start = pb_mono_ns();
			next_epoch = r->window_start + r->o.profile_interval_ms * NS_PER_MS;
		}
		if (!r->active->generic) {	/* a writer other than us changed the map */
			struct lb_cfg live;
			uint32_t f;

			rt_cfg_read(r, &live);
			for (f = 0; f < rj_n_cfg_fields; f++) {
				char reason[160];

				if (rt_cfg_get(&live, f) == rt_cfg_get(&r->active->cfg, f))
					continue;
				snprintf(reason, sizeof(reason), "deopt: config changed: %s %u -> %u (outside writer)",
					 rj_cfg_fields[f].name, rt_cfg_get(&r->active->cfg, f), rt_cfg_get(&live, f));
				deopt(r, reason);
				r->cfg_epoch++;
				break;
			}
		}
		if (!r->active->generic) {
			struct lb_prof p;
			uint64_t gf;

			rt_prof_read(r, &p);
			gf = rt_guard_total(&p) - r->guard_base;
			if (gf > r->o.guard_threshold) {
				char reason[128];

				snprintf(reason, sizeof(reason), "deopt: guard failures %llu > threshold %llu",
					 (unsigned long long)gf, (unsigned long long)r->o.guard_threshold);
				deopt(r, reason);
			}
		}
		if (now >= next_epoch) {
			epoch_tick(r);
			next_epoch += r->o.profile_interval_ms * NS_PER_MS;
			/* a new guard window each epoch */
			if (!r->active->generic) {
				struct lb_prof p;

				rt_prof_read(r, &p);
				r->guard_base = rt_guard_total(&p);
			}
		}
		usleep(20000);
	}
	return 0;
}

/* ---- setup and teardown -------------------------------------------------- */

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

static void own_build_id(char *out, size_t sz)
{
	struct elf_image *img = elf_image__open("/proc/self/exe");

	snprintf(out, sz, "unknown");
	if (img && elf_image__build_id_hex(img, out, sz) < 0)
		snprintf(out, sz, "unknown");
	elf_image__free(img);
}

int rejit__new(const struct rejit_opts *o, struct rejit **out, char *err, size_t errsz)
{
	struct rejit *r;
	struct rj_gen *g0;
	struct pb_generation_opts go = { .sz = sizeof(go), .optimizer_name = OPTIMIZER_NAME,
					 .optimizer_version = PROBITY_VERSION };
	const void *elf;
	size_t elf_sz = 0, i;
	char hex[PB_DIGEST_HEX_LEN];
	__u32 key = 0;
	int e, fd;

	*out = NULL;
	if (!o || !o->store_dir) {
		snprintf(err, errsz, "invalid options");
		return -EINVAL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->o = *o;
	r->orig_ns_fd = -1;
	r->link_fd = -1;
	r->stats_fd = -1;
	r->pkt_fd = -1;
	r->swaps = json_array();
	r->epochs = json_array();
	r->steps_done = json_array();
	if (!r->o.dev) r->o.dev = "pbrj1";
	if (!r->o.peer) r->o.peer = "pbrj0";
	if (!r->o.rate_pps) r->o.rate_pps = 4000;
	if (!r->o.profile_interval_ms) r->o.profile_interval_ms = 1000;
	if (!r->o.bias_permille) r->o.bias_permille = 950;
	if (!r->o.guard_threshold) r->o.guard_threshold = 200;
	if (!r->o.min_samples) r->o.min_samples = 100;
	if (!r->o.spike_rounds) r->o.spike_rounds = 16384;
	*out = r;
	if ((r->o.netns && !rt_name_ok(r->o.netns)) || !rt_name_ok(r->o.dev) || !rt_name_ok(r->o.peer)) {
		snprintf(err, errsz, "netns and device names: expected 1-15 characters of "
			 "[A-Za-z0-9_.-]");
		return -EINVAL;
	}
	if ((e = pb_store__open(r->o.store_dir, NULL, &r->store))) {
		snprintf(err, errsz, "cannot open receipt store '%s': %s", r->o.store_dir, strerror(-e));
		return e;
	}
	own_build_id(r->optimizer_build_id, sizeof(r->optimizer_build_id));
	go.optimizer_build_id = r->optimizer_build_id;
	if ((e = rt_netns_setup(r, err, errsz)))
		return e;
	/* generation 0: the generic program, as built */
	r->skel = lb_xdp_bpf__open();
	if (!r->skel) {
		e = -errno;
		snprintf(err, errsz, "cannot open the lb_xdp BPF object: %s", strerror(-e));
		return e;
	}
	elf = lb_xdp_bpf__elf_bytes(&elf_sz);
	pb_sha256_hex(elf, elf_sz, hex);
	snprintf(r->source_id, sizeof(r->source_id), "sha256:%s", hex);
	go.source_build_id = r->source_id;
	for (i = 0; i < r->o.n_cfg; i++)
		memcpy((uint8_t *)&r->skel->data_cfg->lb_cfg + rj_cfg_fields[r->o.cfg_field[i]].offset,
		       &r->o.cfg_value[i], 4);
	g0 = rt_gen_add(r);
	if (!g0)
		return -ENOMEM;
	g0->generic = true;
	g0->logged = true;
	if ((e = pb_generation__begin(r->store, &go, &g0->g)) ||
	    (e = pb_generation__load(g0->g, r->skel->obj, r->skel->progs.lb_xdp))) {
		snprintf(err, errsz, "cannot load generation 0 (lb_xdp): %s", strerror(-e));
		return e;
	}
	g0->fd = bpf_program__fd(r->skel->progs.lb_xdp);
	g0->prog_id = pb_generation__prog_id(g0->g);
	g0->insns = (uint32_t)bpf_program__insn_cnt(r->skel->progs.lb_xdp);
	r->generic_n = bpf_program__insn_cnt(r->skel->progs.lb_xdp);
	r->generic_insns = malloc(r->generic_n * sizeof(struct bpf_insn));
	if (!r->generic_insns)
		return -ENOMEM;
	memcpy(r->generic_insns, bpf_program__insns(r->skel->progs.lb_xdp),
	       r->generic_n * sizeof(struct bpf_insn));
	if ((e = map_shared(r->skel->maps.data_cfg, (void **)&r->cfg_map, &r->cfg_map_sz)) ||
	    (e = map_shared(r->skel->maps.bss, (void **)&r->prof_map, &r->prof_map_sz))) {
		snprintf(err, errsz, "cannot map the configuration and profile maps: %s", strerror(-e));
		return e;
	}
	r->prof_map->tag = LB_PROF_TAG;
	r->prof_map->version = LB_VERSION;
	rt_cfg_read(r, &g0->cfg);
	fd = g0->fd;
	if (bpf_map_update_elem(bpf_map__fd(r->skel->maps.lb_fallback), &key, &fd, BPF_ANY)) {
		e = -errno;
		snprintf(err, errsz, "cannot put generation 0 into the fallback prog array: %s",
			 strerror(-e));
		return e;
	}
	r->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);	/* run_cnt/run_time_ns; optional */
	if ((e = rt_activate(r, g0, "attach"))) {
		snprintf(err, errsz, "cannot attach generation 0 to %s: %s", r->o.dev, strerror(-e));
		return e;
	}
	return 0;
}

int rejit__stop(struct rejit *r)
{
	size_t i;
	int err = 0;

	if (!r || r->stopped)
		return 0;
	r->stopped = true;
	if (r->traffic_started) {
		atomic_store(&r->traffic_stop, 1);
		pthread_join(r->traffic, NULL);
		r->traffic_started = false;
	}
	/* detach first, then log the retirement: the interval the log
	 * states ends at or after the program's last invocation */
	if (r->link_fd >= 0) {
		close(r->link_fd);
		r->link_fd = -1;
	}
	if (r->active) {
		json_array_append_new(r->active->retired, json_string("stopped"));
		if (r->active->logged)
			err = pb_generation__retire(r->active->g, "stopped");
		r->active = NULL;
	}
	for (i = 1; i < r->n_gens; i++)
		rt_gen_close(r, &r->gens[i]);
	if (r->prof_map)
		rt_prof_read(r, &r->last_prof);
	if (r->cfg_map)
		munmap(r->cfg_map, r->cfg_map_sz);
	if (r->prof_map)
		munmap(r->prof_map, r->prof_map_sz);
	r->cfg_map = NULL;
	r->prof_map = NULL;
	if (r->n_gens && r->skel) {
		struct rj_gen *g0 = &r->gens[0];

		prog_stats(g0->fd, &g0->run_cnt, &g0->run_time_ns);
		lb_xdp_bpf__destroy(r->skel);
		r->skel = NULL;
		g0->fd = -1;
		g0->closed = true;
		if (g0->prog_id && !prog_gone(g0->prog_id, 2000))
			rt_progress(r, "gen 0 (prog %u) still held by the kernel after close", g0->prog_id);
		if (g0->g && pb_generation__id(g0->g) && !err)
			err = pb_generation__record_unloaded(g0->g);
	}
	if (r->stats_fd >= 0) {
		close(r->stats_fd);
		r->stats_fd = -1;
	}
	rt_netns_teardown(r);
	return err;
}

json_t *rejit__summary(const struct rejit *r)
{
	json_t *gens = json_array(), *guards = json_object(), *gf = json_object();
	size_t i;
	int s;

	/* the counters as last read (the maps are gone after stop) */
	for (s = 0; s < LB_NSITES; s++)
		json_object_set_new(gf, rt_site_names[s], json_integer((json_int_t)r->last_prof.guard_fail[s]));
	json_object_set_new(guards, "failures", gf);
	json_object_set_new(guards, "fallback_failed", json_integer((json_int_t)r->last_prof.fallback_failed));

	for (i = 0; i < r->n_gens; i++) {
		const struct rj_gen *g = &r->gens[i];
		const char *id = g->logged ? pb_generation__id(g->g) : NULL;

		json_array_append_new(gens, json_pack(
			"{s:i, s:s, s:o, s:o, s:I, s:b, s:I, s:O, s:O, s:i, s:O, s:b, s:b, s:I, s:I, s:I, s:O}",
			"ordinal", g->ordinal, "kind", g->generic ? "generic" : "specialized",
			"generation_id", id ? json_string(id) : json_null(),
			"receipt", g->logged && pb_generation__receipt_digest(g->g)
				? json_string(pb_generation__receipt_digest(g->g)) : json_null(),
			"prog_id", (json_int_t)g->prog_id, "logged", g->logged,
			"insns", (json_int_t)g->insns,
			"transforms", g->transforms, "assumptions", g->assumptions,
			"activations", g->activations, "retired", g->retired,
			"unloaded", g->closed, "planted_spike", g->spiked,
			"loaded_t_ms", (json_int_t)g->loaded_ms,
			"run_cnt", (json_int_t)g->run_cnt, "run_time_ns", (json_int_t)g->run_time_ns,
			"equivalence", g->equivalence ? g->equivalence : json_null()));
	}
	return json_pack("{s:s, s:s, s:s, s:i, s:I, s:o, s:O, s:o, s:I, s:I, s:I, s:O, s:O, s:{s:I, s:I}}",
			 "store", r->o.store_dir, "netns", r->netns, "dev", r->o.dev,
			 "ifindex", r->ifindex, "epochs", (json_int_t)r->epoch,
			 "generations", gens, "swaps", r->swaps, "guards", guards,
			 "deopts", (json_int_t)r->deopts, "rejected_candidates", (json_int_t)r->rejected,
			 "specialized", (json_int_t)r->n_specialized,
			 "profile", r->epochs, "script_steps", r->steps_done,
			 "traffic", "sent", (json_int_t)atomic_load(&r->sent), "send_errors",
			 (json_int_t)atomic_load(&r->send_errors));
}

void rejit__free(struct rejit *r)
{
	size_t i;

	if (!r)
		return;
	rejit__stop(r);
	for (i = 0; i < r->n_gens; i++) {
		struct rj_gen *g = &r->gens[i];

		if (g->fd >= 0 && !g->generic)
			close(g->fd);
		pb_generation__free(g->g);
		json_decref(g->transforms);
		json_decref(g->assumptions);
		json_decref(g->retired);
		json_decref(g->equivalence);
	}
	free(r->gens);
	free(r->generic_insns);
	free(r->last_profile);
	json_decref(r->swaps);
	json_decref(r->epochs);
	json_decref(r->steps_done);
	pb_store__free(r->store);
	free(r);
}
