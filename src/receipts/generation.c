/* SPDX-License-Identifier: BSD-2-Clause */
/* generation.c: one generation of a BPF program, from begin() through
 * load + capture (the immutable receipt, written by record.c) to
 * activation, retirement and unload (lifecycle log entries). See
 * include/probity/receipts.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include "receipts/receipts_int.h"

#define VERIFIER_LOG_SIZE (256 * 1024)
#define BPF_LOG_LEVEL_STATS 4

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static int dup_opt(char **dst, const char *src)
{
	if (!src)
		return 0;
	*dst = strdup(src);
	return *dst ? 0 : -ENOMEM;
}

static int copy_opts(struct gen_opts *d, const struct pb_generation_opts *o)
{
	return dup_opt(&d->parent, PB_OPTS_GET(o, pb_generation_opts, parent_generation_id, NULL)) ?:
	       dup_opt(&d->source_build_id, PB_OPTS_GET(o, pb_generation_opts, source_build_id, NULL)) ?:
	       dup_opt(&d->optimizer_name, PB_OPTS_GET(o, pb_generation_opts, optimizer_name, NULL) ?: "none") ?:
	       dup_opt(&d->optimizer_version, PB_OPTS_GET(o, pb_generation_opts, optimizer_version, NULL) ?: "") ?:
	       dup_opt(&d->optimizer_build_id, PB_OPTS_GET(o, pb_generation_opts, optimizer_build_id, NULL) ?: "") ?:
	       dup_opt(&d->provenance, PB_OPTS_GET(o, pb_generation_opts, provenance, NULL) ?: "recorded");
}

int pb_generation__begin(struct pb_store *s, const struct pb_generation_opts *o,
			 struct pb_generation **out)
{
	const char *prov = PB_OPTS_GET(o, pb_generation_opts, provenance, NULL) ?: "recorded";
	const char *parent = PB_OPTS_GET(o, pb_generation_opts, parent_generation_id, NULL);
	struct pb_generation *g;

	*out = NULL;
	if (!s || !PB_OPTS_VALID(o, pb_generation_opts))
		return -EINVAL;
	if (strcmp(prov, "recorded") && strcmp(prov, "unknown"))
		return -EINVAL;
	if (parent && !pb_is_digest_hex(parent))
		return -EINVAL;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->s = s;
	g->transforms = json_array();
	g->assumptions = json_array();
	if (copy_opts(&g->opts, o) || !g->transforms || !g->assumptions) {
		pb_generation__free(g);
		return -ENOMEM;
	}
	*out = g;
	return 0;
}

void pb_generation__free(struct pb_generation *g)
{
	if (!g)
		return;
	free(g->opts.parent);
	free(g->opts.source_build_id);
	free(g->opts.optimizer_name);
	free(g->opts.optimizer_version);
	free(g->opts.optimizer_build_id);
	free(g->opts.provenance);
	json_decref(g->transforms);
	json_decref(g->assumptions);
	json_decref(g->jit_ranges);
	free(g->log_buf);
	while (g->n_ev)
		free(g->ev[--g->n_ev].buf);
	free(g->ev);
	free(g);
}

static int add_step(struct pb_generation *g, json_t *arr, const char *id, const char *desc,
		    const void *ev, size_t ev_len)
{
	char hex[PB_DIGEST_HEX_LEN];
	json_t *v;
	size_t i;
	int err;

	if (!g || !id || !*id || g->captured)
		return -EINVAL;
	json_array_foreach(arr, i, v) {
		struct receipt_step st;

		if (!receipt_step__decode(v, &st, NULL) && !strcmp(st.id, id))
			return -EEXIST;
	}
	if (ev) {
		/* kept until load: stored in the same durable batch as the
		 * receipt that names it */
		void *copy = malloc(ev_len ? ev_len : 1), *grown;

		if (!copy || !(grown = realloc(g->ev, (g->n_ev + 1) * sizeof(*g->ev)))) {
			free(copy);
			return -ENOMEM;
		}
		g->ev = grown;
		memcpy(copy, ev, ev_len);
		if ((err = pb_sha256_hex(ev, ev_len, hex))) {
			free(copy);
			return err;
		}
		strcpy(g->ev[g->n_ev].hex, hex);
		g->ev[g->n_ev].buf = copy;
		g->ev[g->n_ev].len = ev_len;
		g->n_ev++;
	}
	return json_array_append_new(arr, json_pack("{s:s, s:s, s:o}", STEPK_ID, id, STEPK_DESCRIPTION,
						    desc ?: "", STEPK_EVIDENCE,
						    ev ? json_string(hex) : json_null()))
		       ? -ENOMEM : 0;
}

int pb_generation__add_transform(struct pb_generation *g, const char *id, const char *description,
				 const void *evidence, size_t evidence_len)
{
	return add_step(g, g ? g->transforms : NULL, id, description, evidence, evidence_len);
}

int pb_generation__add_assumption(struct pb_generation *g, const char *id, const char *description,
				  const void *evidence, size_t evidence_len)
{
	return add_step(g, g ? g->assumptions : NULL, id, description, evidence, evidence_len);
}

const char *pb_generation__id(const struct pb_generation *g)
{
	return g && g->captured ? g->gen_id : NULL;
}

const char *pb_generation__receipt_digest(const struct pb_generation *g)
{
	return g && g->captured ? g->receipt : NULL;
}

const char *pb_generation__native_digest(const struct pb_generation *g)
{
	return g && g->captured ? g->native : NULL;
}

uint32_t pb_generation__prog_id(const struct pb_generation *g)
{
	return g ? g->prog_id : 0;
}

/* The hashed body: everything that decides what this generation is. */
/* The verifier result digest: canonical {accepted, log_level,
 * verified_insns, log_normalized_digest}, the stable part of a load. */
int receipt__verifier_result_digest(bool accepted, int64_t log_level, int64_t verified_insns,
				    const char *log_normalized_digest, char hex[PB_DIGEST_HEX_LEN])
{
	json_t *vr = json_pack("{s:b, s:I, s:I, s:s}", VERK_ACCEPTED, accepted,
			       VERK_LOG_LEVEL, (json_int_t)log_level,
			       VERK_VERIFIED_INSNS, (json_int_t)verified_insns,
			       VERK_LOG_NORMALIZED_DIGEST, log_normalized_digest);
	int err;

	if (!vr)
		return -ENOMEM;
	err = canon__digest(vr, hex);
	json_decref(vr);
	return err;
}

int pb_generation__load(struct pb_generation *g, struct bpf_object *obj, struct bpf_program *prog)
{
	struct capture_in in = { .log_level = BPF_LOG_LEVEL_STATS, .source = "library" };
	uint64_t t0;
	int err;

	if (!g || !obj || !prog || g->captured)
		return -EINVAL;
	free(g->log_buf);
	g->log_buf = calloc(1, VERIFIER_LOG_SIZE);
	if (!g->log_buf)
		return -ENOMEM;
	/* BPF_LOG_STATS only: a few lines (insns processed, states, stack
	 * depth) at no measurable cost; level 1 would log every insn. */
	if ((err = bpf_program__set_log_buf(prog, g->log_buf, VERIFIER_LOG_SIZE)) ||
	    (err = bpf_program__set_log_level(prog, BPF_LOG_LEVEL_STATS)))
		return err;
	t0 = pb_mono_ns();
	err = bpf_object__load(obj);
	in.load_ns = pb_mono_ns() - t0;
	if (err)
		return err;
	in.prog_fd = bpf_program__fd(prog);
	in.submitted = bpf_program__insns(prog);
	in.submitted_len = bpf_program__insn_cnt(prog) * sizeof(struct bpf_insn);
	in.log = g->log_buf;
	return generation__capture_and_record(g, &in, NULL);
}

int pb_generation__capture_fd(struct pb_generation *g, int prog_fd, const char *verifier_log,
			      uint32_t log_level)
{
	struct capture_in in = { .prog_fd = prog_fd, .log = verifier_log, .log_level = log_level,
				 .source = "library" };

	if (!g || prog_fd < 0)
		return -EINVAL;
	return generation__capture_and_record(g, &in, NULL);
}


int pb_generation__capture_fd_opts(struct pb_generation *g, int prog_fd,
				   const struct pb_capture_opts *o)
{
	struct capture_in in = { .prog_fd = prog_fd, .source = "library" };

	if (!g || prog_fd < 0 || !PB_OPTS_VALID(o, pb_capture_opts))
		return -EINVAL;
	in.submitted = PB_OPTS_GET(o, pb_capture_opts, submitted_insns, NULL);
	in.submitted_len = PB_OPTS_GET(o, pb_capture_opts, submitted_len, 0);
	in.log = PB_OPTS_GET(o, pb_capture_opts, verifier_log, NULL);
	in.log_level = PB_OPTS_GET(o, pb_capture_opts, log_level, 0);
	in.load_ns = PB_OPTS_GET(o, pb_capture_opts, load_ns, 0);
	if (in.submitted && (!in.submitted_len || in.submitted_len % sizeof(struct bpf_insn)))
		return -EINVAL;
	return generation__capture_and_record(g, &in, NULL);
}

int receipt__capture_unknown(struct pb_store *s, int prog_fd, const char *writer,
			     char gen_id[PB_DIGEST_HEX_LEN], char receipt[PB_DIGEST_HEX_LEN],
			     json_t **loaded_entry)
{
	struct pb_generation_opts o = { .sz = sizeof(o), .optimizer_name = "unknown",
					.provenance = "unknown" };
	struct capture_in in = { .prog_fd = prog_fd, .source = writer };
	struct pb_generation *g;
	int err = pb_generation__begin(s, &o, &g);

	if (err)
		return err;
	err = generation__capture_and_record(g, &in, loaded_entry);
	if (!err) {
		strcpy(gen_id, g->gen_id);
		strcpy(receipt, g->receipt);
	}
	pb_generation__free(g);
	return err;
}

static json_t *link_identity(int link_fd)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info);
	json_t *j;

	if (link_fd <= 0)	/* 0: unset in a zeroed opts struct */
		return json_null();
	memset(&info, 0, sizeof(info));
	if (bpf_link_get_info_by_fd(link_fd, &info, &len))
		return json_pack("{s:s}", LINKK_ERROR, strerror(errno));
	j = json_pack("{s:I, s:I, s:I}", LINKK_ID, (json_int_t)info.id, LINKK_TYPE, (json_int_t)info.type,
		      LINKK_PROG_ID, (json_int_t)info.prog_id);
	if (info.type == BPF_LINK_TYPE_XDP)
		json_object_set_new(j, LINKK_IFINDEX, json_integer(info.xdp.ifindex));
	else if (info.type == BPF_LINK_TYPE_TCX)
		json_object_set_new(j, LINKK_IFINDEX, json_integer(info.tcx.ifindex));
	else if (info.type == BPF_LINK_TYPE_NETNS)
		json_object_set_new(j, LINKK_NETNS_INO, json_integer(info.netns.netns_ino));
	return j;
}


static int log_retired(struct pb_generation *g, const char *reason, uint64_t mono, uint64_t real)
{
	json_t *e = json_pack("{s:s, s:s, s:I, s:s}", LK_GENERATION_ID, g->gen_id, LK_RECEIPT,
			      g->receipt, LK_PROG_ID, (json_int_t)g->prog_id, LK_REASON, reason ?: "");
	int err;

	if (!e)
		return -ENOMEM;
	if (mono) {
		json_object_set_new(e, LK_MONO_NS, json_integer((json_int_t)mono));
		json_object_set_new(e, LK_REALTIME_NS, json_integer((json_int_t)real));
	}
	err = lifelog__append(g->s, LIFE_RETIRED, e, NULL);
	json_decref(e);
	return err;
}

int pb_generation__activate(struct pb_generation *g, const struct pb_activation_opts *o,
			    pb_swap_fn_t swap, void *ctx)
{
	struct pb_generation *old = PB_OPTS_GET(o, pb_activation_opts, replaces, NULL);
	const char *hook = PB_OPTS_GET(o, pb_activation_opts, hook, NULL);
	int link_fd;
	uint64_t m0, r0, m1, r1;
	uint32_t old_prog_id = 0;
	json_t *e;
	int err;

	if (!g || !g->captured || !swap || (old && !old->captured) ||
	    !PB_OPTS_VALID(o, pb_activation_opts))
		return -EINVAL;
	/* what the kernel says the link runs right before the swap: names
	 * the predecessor even when the swapper lost track of it (a swap
	 * whose records were lost) */
	link_fd = PB_OPTS_GET(o, pb_activation_opts, link_fd, -1);
	if (link_fd > 0) {
		struct bpf_link_info li;
		__u32 len = sizeof(li);

		memset(&li, 0, sizeof(li));
		if (!bpf_link_get_info_by_fd(link_fd, &li, &len))
			old_prog_id = li.prog_id;
	}
	r0 = pb_realtime_ns();
	m0 = pb_mono_ns();
	err = swap(ctx);
	m1 = pb_mono_ns();
	r1 = pb_realtime_ns();
	if (err)
		return err;
	link_fd = PB_OPTS_GET(o, pb_activation_opts, link_fd, -1);	/* after: a swap may create the link */
	e = json_pack("{s:s, s:s, s:I, s:o, s:o, s:O, s:I, s:I, s:I, s:I, s:o}",
		      LK_GENERATION_ID, g->gen_id, LK_RECEIPT, g->receipt,
		      LK_PROG_ID, (json_int_t)g->prog_id,
		      LK_LINK, link_identity(link_fd),
		      LK_HOOK, str_or_null(hook),
		      LK_JIT_RANGES, g->jit_ranges,
		      LK_SWAP_BEGIN_MONO_NS, (json_int_t)m0, LK_SWAP_END_MONO_NS, (json_int_t)m1,
		      LK_SWAP_BEGIN_REALTIME_NS, (json_int_t)r0, LK_SWAP_END_REALTIME_NS, (json_int_t)r1,
		      LK_REPLACES, old ? json_string(old->gen_id) : json_null());
	if (!e)
		return -ENOMEM;
	if (old_prog_id)
		json_object_set_new(e, LK_OLD_PROG_ID, json_integer(old_prog_id));
	json_object_set_new(e, LK_MONO_NS, json_integer((json_int_t)m1));
	json_object_set_new(e, LK_REALTIME_NS, json_integer((json_int_t)r1));
	err = lifelog__append(g->s, LIFE_ACTIVATED, e, NULL);
	json_decref(e);
	if (!err && old)
		err = log_retired(old, PB_OPTS_GET(o, pb_activation_opts, retire_reason, NULL) ?: "replaced", m1, r1);
	return err;
}

int pb_generation__retire(struct pb_generation *g, const char *reason)
{
	if (!g || !g->captured)
		return -EINVAL;
	return log_retired(g, reason, 0, 0);
}

int pb_generation__record_unloaded(struct pb_generation *g)
{
	json_t *e;
	int err;

	if (!g || !g->captured)
		return -EINVAL;
	e = json_pack("{s:s, s:s, s:I}", LK_GENERATION_ID, g->gen_id, LK_RECEIPT, g->receipt,
		      LK_PROG_ID, (json_int_t)g->prog_id);
	if (!e)
		return -ENOMEM;
	err = lifelog__append(g->s, LIFE_UNLOADED, e, NULL);
	json_decref(e);
	return err;
}
