/* SPDX-License-Identifier: BSD-2-Clause */
/* generation.c: add, activate, close and deoptimize generations
 * (generation.h). The swap is one bpf_link_update on the XDP link (the
 * first activation creates the link).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "common/array.h"
#include "specializer/generation.h"
#include "specializer/profile.h"

struct sp_gen *sp_gen__new(struct specializer *s)
{
	size_t active = s->active ? (size_t)(s->active - s->gens) : 0;
	struct sp_gen *g;
	int err;

	err = PB_ARRAY_RESERVE_ONE(s->gens, s->n_gens, s->cap_gens);
	if (err) {
		errno = -err;
		return NULL;
	}
	/* s->active points into the array */
	if (s->active)
		s->active = s->gens + active;
	g = &s->gens[s->n_gens];
	memset(g, 0, sizeof(*g));
	g->ordinal = (int)s->n_gens;
	g->fd = -1;
	g->loaded_ms = sp_now_ms(s);
	s->n_gens++;
	return g;
}

struct swap_ctx {
	struct specializer *s;
	int new_fd;
	struct pb_activation_opts *ao;
};

static int swap_fn(void *c)
{
	struct swap_ctx *sc = c;
	struct specializer *s = sc->s;

	if (s->link_fd < 0) {
		LIBBPF_OPTS(bpf_link_create_opts, lo);
		int fd = bpf_link_create(sc->new_fd, s->ifindex, BPF_XDP, &lo);

		if (fd < 0)
			return -errno;
		s->link_fd = fd;
		if (sc->ao)
			sc->ao->link_fd = fd;
		return 0;
	}
	return bpf_link_update(s->link_fd, sc->new_fd, NULL) ? -errno : 0;
}

static int swaps_add(struct specializer *s, const struct sp_gen *from, const struct sp_gen *to,
		     const char *reason)
{
	struct sp_swap *w;
	int err;

	err = PB_ARRAY_RESERVE_ONE(s->swaps, s->n_swaps, s->cap_swaps);
	if (err)
		return err;
	w = &s->swaps[s->n_swaps];
	w->reason = strdup(from ? reason : "attach");
	if (!w->reason)
		return -ENOMEM;
	w->t_ms = sp_now_ms(s);
	w->from = from ? from->ordinal : -1;
	w->to = to->ordinal;
	w->logged = to->logged;
	s->n_swaps++;
	return 0;
}

int sp_gen__activate(struct specializer *s, struct sp_gen *to, const char *reason)
{
	struct sp_gen *from = s->active;
	struct pb_activation_opts ao = { .sz = sizeof(ao), .link_fd = s->link_fd,
					 .hook = "xdp", .retire_reason = reason };
	struct swap_ctx sc = { .s = s, .new_fd = to->fd, .ao = &ao };
	struct lb_prof p;
	char hook[96];
	int err;

	snprintf(hook, sizeof(hook), "xdp:%s@netns:%s", s->o.dev, s->netns);
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
	/* the swap happened: a failure to note it in the summary is not a
	 * failed swap */
	if (from)
		sp_strs_push(&from->retired, reason);
	swaps_add(s, from, to, reason);
	s->active = to;
	/* a new guard window */
	sp_prof_read(s, &p);
	s->guard_base = sp_guard_total(&p);
	return 0;
}

bool sp_prog_gone(uint32_t id, int wait_ms)
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

void sp_gen__close(struct specializer *s, struct sp_gen *g)
{
	int err;

	if (g->closed || g->generic)
		return;
	sp_prog_stats(g->fd, &g->run_cnt, &g->run_time_ns);
	close(g->fd);
	g->fd = -1;
	g->closed = true;
	if (!sp_prog_gone(g->prog_id, 1000))
		sp_progress(s, "gen %d (prog %u) still held by the kernel after close", g->ordinal,
			    g->prog_id);
	if (g->logged && (err = pb_generation__record_unloaded(g->g)))
		sp_progress(s, "gen %d: cannot log 'unloaded': %s", g->ordinal, strerror(-err));
}

void sp_gen__release(struct sp_gen *g)
{
	if (g->fd >= 0 && !g->generic)
		close(g->fd);
	g->fd = -1;
	pb_generation__free(g->g);
	g->g = NULL;
	sp_strs_release(&g->transforms);
	sp_strs_release(&g->assumptions);
	sp_strs_release(&g->retired);
	json_decref(g->equivalence);
	g->equivalence = NULL;
}

int sp_deopt(struct specializer *s, const char *reason)
{
	struct sp_gen *old = s->active;
	int err;

	if (!old || old->generic)
		return 0;
	err = sp_gen__activate(s, &s->gens[0], reason);
	if (err) {
		sp_progress(s, "deopt of gen %d failed: %s", old->ordinal, strerror(-err));
		return err;
	}
	s->deopts++;
	sp_progress(s, "deopt: gen %d -> gen 0 (%s)", old->ordinal, reason);
	sp_gen__close(s, old);
	return 0;
}
