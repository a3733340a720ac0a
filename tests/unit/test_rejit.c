/* SPDX-License-Identifier: BSD-2-Clause */
/* test_rejit.c: the rewrite library (src/bpfrewrite/) on literal
 * instruction arrays (no kernel), its script parser, and a verifier-backed
 * test: lb_xdp specialized by every pass loads, and gives the generic
 * program's verdicts on the same frames (BPF_PROG_TEST_RUN), guard
 * failures included.
 */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/types.h>
#include "harness.h"
#include "specializer/lb_xdp.h"
#include "bpfrewrite/bpfrewrite.h"
#include "specializer/script.h"
#include "lb_xdp.skel.h"

#define I(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })
#define MOV64K(d, i) I(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define EXIT I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
#define JA(o) I(BPF_JMP | BPF_JA, 0, 0, o, 0)
#define JEQK(d, k, o) I(BPF_JMP | BPF_JEQ | BPF_K, d, 0, o, k)
#define JNEK(d, k, o) I(BPF_JMP | BPF_JNE | BPF_K, d, 0, o, k)
#define LDMAPV(d, fd, off) I(BPF_LD | BPF_IMM | BPF_DW, d, BPF_PSEUDO_MAP_VALUE, 0, fd), I(0, 0, 0, 0, off)
#define LDXW(d, s, o) I(BPF_LDX | BPF_MEM | BPF_W, d, s, o, 0)
#define LDXDW(d, s, o) I(BPF_LDX | BPF_MEM | BPF_DW, d, s, o, 0)
#define XADD(d, s, o) I(BPF_STX | BPF_ATOMIC | BPF_DW, d, s, o, BPF_ADD)
#define N(a) (sizeof(a) / sizeof((a)[0]))

static int target(const struct rw_insns *p, size_t i)
{
	return (int)i + 1 + p->v[i].off;
}

TEST(test_insert_keeps_jump_targets)
{
	struct bpf_insn prog[] = {
		JEQK(1, 0, 2),		/* 0 -> 3 */
		MOV64K(0, 1),		/* 1 */
		EXIT,			/* 2 */
		MOV64K(0, 2),		/* 3 */
		JA(-3),			/* 4 -> 2 */
	};
	struct bpf_insn ins[] = { MOV64K(5, 5), MOV64K(6, 6) };
	struct rw_insns p;

	ASSERT_OK(rw_insns__init(&p, prog, N(prog)));
	ASSERT_OK(rw_insns__insert(&p, 3, ins, 2));	/* before the jump target */
	ASSERT_EQ(p.n, 7);
	ASSERT_EQ(target(&p, 0), 5);	/* still reaches "r0 = 2" */
	ASSERT_EQ(p.v[5].imm, 2);
	ASSERT_EQ(target(&p, 6), 2);	/* the backward jump still reaches exit */
	ASSERT_OK(rw_insns__check(&p));
	rw_insns__release(&p);
}

TEST(test_delete_retargets_and_refuses_dangling)
{
	struct bpf_insn prog[] = {
		JEQK(1, 0, 3),		/* 0 -> 4 */
		MOV64K(0, 1),		/* 1 */
		MOV64K(0, 1),		/* 2 */
		EXIT,			/* 3 */
		MOV64K(0, 2),		/* 4 */
		EXIT,			/* 5 */
	};
	struct rw_insns p;
	bool del[6] = { 0, 1, 1, 0, 0, 0 };

	ASSERT_OK(rw_insns__init(&p, prog, N(prog)));
	ASSERT_OK(rw_insns__delete_mask(&p, del));
	ASSERT_EQ(p.n, 4);
	ASSERT_EQ(target(&p, 0), 2);
	ASSERT_EQ(p.v[2].imm, 2);
	/* deleting a jump target while its jump stays is refused, unchanged */
	ASSERT_ERR(rw_insns__delete(&p, 2, 1, false), -EINVAL);
	ASSERT_EQ(p.n, 4);
	ASSERT_EQ(target(&p, 0), 2);
	/* ... unless the jump may fall to what follows */
	ASSERT_OK(rw_insns__delete(&p, 2, 1, true));
	ASSERT_EQ(target(&p, 0), 2);
	ASSERT_EQ(p.v[2].code, BPF_JMP | BPF_EXIT);
	rw_insns__release(&p);
}

TEST(test_check_refuses_calls_and_bad_jumps)
{
	struct bpf_insn call[] = { I(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, 1), EXIT, EXIT };
	struct bpf_insn out[] = { JA(5), EXIT };
	struct bpf_insn mid[] = { JA(1), I(BPF_LD | BPF_IMM | BPF_DW, 1, 0, 0, 1), I(0, 0, 0, 0, 0), EXIT };
	struct rw_insns p;

	ASSERT_OK(rw_insns__init(&p, call, N(call)));
	ASSERT_ERR(rw_insns__check(&p), -EOPNOTSUPP);
	rw_insns__release(&p);
	ASSERT_OK(rw_insns__init(&p, out, N(out)));
	ASSERT_ERR(rw_insns__check(&p), -EINVAL);
	rw_insns__release(&p);
	ASSERT_OK(rw_insns__init(&p, mid, N(mid)));	/* into the 2nd half of ld_imm64 */
	ASSERT_ERR(rw_insns__check(&p), -EINVAL);
	rw_insns__release(&p);
}

TEST(test_const_inline_replaces_config_loads)
{
	struct bpf_insn prog[] = {
		LDMAPV(1, 7, 0),		/* r1 = &cfg (map fd 7) */
		LDXW(2, 1, 4),			/* r2 = cfg.u32 @4 */
		LDXDW(3, 1, 8),			/* r3 = cfg.u64 @8 (needs ld_imm64) */
		LDMAPV(4, 9, 0),		/* another map: untouched */
		LDXW(5, 4, 0),
		I(BPF_ALU64 | BPF_ADD | BPF_K, 1, 0, 0, 16),
		LDXW(6, 1, 0),			/* @16, beyond len: untouched */
		EXIT,
	};
	uint8_t val[16] = { 0 };
	uint32_t w = 0xdeadbeef;
	uint64_t q = 0x1122334455667788ull;
	struct rw_report r;
	struct rw_insns p;

	memcpy(val + 4, &w, 4);
	memcpy(val + 8, &q, 8);
	ASSERT_OK(rw_insns__init(&p, prog, N(prog)));
	ASSERT_OK(rw_pass_const_inline(&p, 7, val, sizeof(val), &r));
	ASSERT_EQ(r.n_edits, 2);
	ASSERT_EQ(p.n, N(prog) + 1);
	ASSERT_EQ(p.v[2].code, BPF_ALU | BPF_MOV | BPF_K);	/* zero-extends like the load */
	ASSERT_EQ(p.v[2].dst_reg, 2);
	ASSERT_EQ((uint32_t)p.v[2].imm, 0xdeadbeef);
	ASSERT_TRUE(rw_is_ldimm64(&p.v[3]));
	ASSERT_EQ(p.v[3].dst_reg, 3);
	ASSERT_EQ((uint32_t)p.v[3].imm, 0x55667788u);
	ASSERT_EQ((uint32_t)p.v[4].imm, 0x11223344u);
	ASSERT_EQ(p.v[7].code, BPF_LDX | BPF_MEM | BPF_W);	/* other map */
	ASSERT_EQ(p.v[9].code, BPF_LDX | BPF_MEM | BPF_W);	/* out of range */
	ASSERT_OK(rw_insns__check(&p));
	rw_insns__release(&p);
}

TEST(test_fold_dce_removes_disabled_feature)
{
	/* if (cfg.feature) { r0 = 1; r0 += 1 } ; r0 = 3; exit, with the
	 * feature load already inlined as 0 */
	struct bpf_insn prog[] = {
		I(BPF_ALU | BPF_MOV | BPF_K, 2, 0, 0, 0),	/* 0: r2 = feature (0) */
		JEQK(2, 0, 2),					/* 1: -> 4 */
		MOV64K(0, 1),					/* 2: feature code */
		I(BPF_ALU64 | BPF_ADD | BPF_K, 0, 0, 0, 1),	/* 3 */
		MOV64K(0, 3),					/* 4 */
		EXIT,
	};
	struct rw_report r;
	struct rw_insns p;
	bool reach[8];
	size_t i;

	ASSERT_OK(rw_insns__init(&p, prog, N(prog)));
	ASSERT_OK(rw_pass_fold_dce(&p, &r));
	ASSERT_EQ(r.folded, 1);
	ASSERT_EQ(p.n, 3);	/* r2 = 0; r0 = 3; exit */
	ASSERT_EQ(p.v[1].imm, 3);
	ASSERT_OK(rw_insns__reachable(&p, reach));
	for (i = 0; i < p.n; i++)
		ASSERT_TRUE(reach[i]);
	rw_insns__release(&p);
	/* an unknown value is never folded */
	prog[0] = I(BPF_LDX | BPF_MEM | BPF_W, 2, 1, 0, 0);
	ASSERT_OK(rw_insns__init(&p, prog, N(prog)));
	ASSERT_OK(rw_pass_fold_dce(&p, &r));
	ASSERT_EQ(r.folded, 0);
	ASSERT_EQ(p.n, N(prog));
	rw_insns__release(&p);
}

/* a site as clang emits it: the branch, then each side's counter */
static const struct bpf_insn site_prog[] = {
	LDXW(4, 1, 0),			/* 0: r4 = something */
	JNEK(4, 8, 6),			/* 1: -> 8 (not taken side) */
	LDMAPV(5, 3, 0),		/* 2: taken side: &prof */
	MOV64K(6, 1),			/* 4 */
	XADD(5, 6, 8),			/* 5: prof.site[0][0]++ */
	MOV64K(0, 3),			/* 6 */
	EXIT,				/* 7 */
	LDMAPV(5, 3, 16),		/* 8: &prof + 16 */
	MOV64K(6, 1),			/* 10 */
	XADD(5, 6, 0),			/* 11: prof.site[0][1]++ */
	MOV64K(0, 2),			/* 12 */
	EXIT,				/* 13 */
};

TEST(test_find_site_and_specialize)
{
	struct rw_guard g = { .ctx_slot = -8, .prof_fd = 3, .guard_fail_off = 72,
			      .fallback_failed_off = 104, .prog_array_fd = 11, .fallback_verdict = 2 };
	struct rw_site s;
	struct rw_report r;
	struct rw_insns p;
	int16_t slot;
	size_t i;
	int tail = 0, cold_counter = 0;

	ASSERT_OK(rw_insns__init(&p, site_prog, N(site_prog)));
	ASSERT_OK(rw_find_site(&p, 3, 8, 16, &s));
	ASSERT_EQ(s.jmp, 1);
	ASSERT_FALSE(s.taken_is_target);
	ASSERT_ERR(rw_find_site(&p, 4, 8, 16, &s), -ENOENT);	/* other map */
	ASSERT_OK(rw_free_stack_slot(&p, &slot));
	ASSERT_EQ(slot, -8);
	ASSERT_OK(rw_pass_spill_ctx(&p, slot, &r));
	ASSERT_OK(rw_find_site(&p, 3, 8, 16, &s));
	ASSERT_EQ(s.jmp, 2);
	/* hot: taken (the fallthrough); the cold target goes to the stub */
	ASSERT_OK(rw_pass_branch_spec(&p, &s, true, &g, &r));
	ASSERT_EQ(r.n_edits, 1);
	ASSERT_EQ(target(&p, 2), (int)r.edits[0].a);
	ASSERT_EQ(r.edits[0].b, 1);
	ASSERT_OK(rw_pass_fold_dce(&p, &r));
	ASSERT_EQ(r.removed, 6);	/* the cold side's counter and return */
	for (i = 0; i < p.n; i++) {
		if (p.v[i].code == (BPF_JMP | BPF_CALL) && p.v[i].imm == BPF_FUNC_tail_call)
			tail++;
		if (rw_is_ldimm64(&p.v[i]) && p.v[i].imm == 3 && p.v[i + 1].imm == 16)
			cold_counter++;
	}
	ASSERT_EQ(tail, 1);
	ASSERT_EQ(cold_counter, 0);
	ASSERT_EQ(p.v[0].code, BPF_STX | BPF_MEM | BPF_DW);	/* the spill stays first */
	ASSERT_OK(rw_insns__check(&p));
	/* a second guard reuses the fallback tail: 5 more insns, one tail call */
	{
		size_t before = p.n;

		g.guard_fail_off = 80;
		ASSERT_OK(rw_pass_branch_spec(&p, &s, true, &g, &r));
		ASSERT_EQ(p.n, before + 5);
		for (i = 0, tail = 0; i < p.n; i++)
			if (p.v[i].code == (BPF_JMP | BPF_CALL) && p.v[i].imm == BPF_FUNC_tail_call)
				tail++;
		ASSERT_EQ(tail, 1);
		ASSERT_EQ(p.v[p.n - 1].code, BPF_JMP | BPF_JA);
		ASSERT_EQ(p.v[target(&p, p.n - 1)].code, BPF_LDX | BPF_MEM | BPF_DW);	/* ctx reload */
		ASSERT_OK(rw_insns__check(&p));
	}
	rw_insns__release(&p);

	/* hot: not taken (the target); a `ja stub` goes after the branch */
	ASSERT_OK(rw_insns__init(&p, site_prog, N(site_prog)));
	ASSERT_OK(rw_pass_spill_ctx(&p, -8, &r));
	ASSERT_OK(rw_find_site(&p, 3, 8, 16, &s));
	ASSERT_OK(rw_pass_branch_spec(&p, &s, false, &g, &r));
	ASSERT_EQ(r.edits[0].b, 0);
	ASSERT_EQ(p.v[3].code, BPF_JMP | BPF_JA);
	ASSERT_EQ(target(&p, 3), (int)r.edits[0].a);
	ASSERT_EQ(target(&p, 2), 10);	/* the hot side, moved by one */
	ASSERT_OK(rw_pass_fold_dce(&p, &r));
	ASSERT_EQ(r.removed, 6);
	rw_insns__release(&p);
}

TEST(test_stack_slot_below_program_use)
{
	struct bpf_insn prog[] = {
		I(BPF_ST | BPF_MEM | BPF_W, 10, 0, -12, 0),		/* *(u32 *)(r10 - 12) = 0 */
		I(BPF_ALU64 | BPF_MOV | BPF_X, 2, 10, 0, 0),
		I(BPF_ALU64 | BPF_ADD | BPF_K, 2, 0, 0, -40),		/* a key at fp-40 */
		I(BPF_JMP | BPF_CALL, 0, 0, 0, 1),
		EXIT,
	};
	struct rw_insns p;
	int16_t slot;

	ASSERT_OK(rw_insns__init(&p, prog, N(prog)));
	ASSERT_OK(rw_free_stack_slot(&p, &slot));
	ASSERT_EQ(slot, -48);
	/* a frame pointer stored into memory: its uses cannot be followed */
	p.v[0] = I(BPF_STX | BPF_MEM | BPF_DW, 10, 10, -8, 0);
	ASSERT_ERR(rw_free_stack_slot(&p, &slot), -EOPNOTSUPP);
	rw_insns__release(&p);
}

TEST(test_hash_unroll_after_spill)
{
	struct bpf_insn prog[] = { MOV64K(0, 2), EXIT };
	struct rw_insns p;
	struct rw_report r;

	ASSERT_OK(rw_insns__init(&p, prog, N(prog)));
	ASSERT_OK(rw_pass_spill_ctx(&p, -8, &r));
	ASSERT_OK(rw_pass_hash_unroll(&p, 100, &r));
	ASSERT_EQ(p.n, 3 + 10);
	ASSERT_EQ(p.v[0].code, BPF_STX | BPF_MEM | BPF_DW);
	ASSERT_EQ(p.v[2].imm, 100);
	ASSERT_EQ(target(&p, 10), 3);	/* the loop's back edge */
	ASSERT_ERR(rw_pass_hash_unroll(&p, 0, &r), -EINVAL);
	rw_insns__release(&p);
}

TEST(test_script_and_config_parse)
{
	const char *ok = "# afternoon\n\nt=3 config feature_acl=0\nt=1.5 traffic shift  # comment\n"
			 "t=2 config acl_prefix=10.1.2.0\n";
	const char *bad[][2] = {
		{ "t=1 config nope=1\n", "s.txt:1: unknown configuration key 'nope'" },
		{ "t=1 config n_backends=9\n", "s.txt:1: n_backends: expected 1..8, found 9" },
		{ "\nt=-1 traffic shift\n", "s.txt:2: expected t=SECONDS" },
		{ "t=1 traffic heavy\n", "s.txt:1: expected a traffic mix" },
		{ "t=1 reboot now\n", "s.txt:1: expected 'config' or 'traffic'" },
		{ "t=1 config\n", "s.txt:1: expected 't=SECONDS" },
		{ "t=1 config a=1 b=2\n", "s.txt:1: expected 3 words" },
		{ "t=1 config vip_port=0x1ffff\n", "s.txt:1: vip_port: expected 1..65535" },
	};
	struct sp_script s;
	struct pb_errtext err = { 0 };
	uint32_t f, v;
	size_t i;

	ASSERT_OK(sp_script_parse(ok, strlen(ok), "s.txt", &s, &err));
	ASSERT_EQ(s.n, 3);
	ASSERT_EQ(s.steps[0].t_ms, 1500);
	ASSERT_EQ(s.steps[0].kind, SP_STEP_TRAFFIC);
	ASSERT_EQ(s.steps[0].mix, SP_MIX_SHIFT);
	ASSERT_EQ(s.steps[0].line, 4);
	ASSERT_EQ(s.steps[1].value, 0x0a010200);
	ASSERT_STREQ(sp_cfg_fields[s.steps[2].field].name, "feature_acl");
	sp_script_release(&s);
	for (i = 0; i < N(bad); i++) {
		err.msg[0] = 0;
		ASSERT_ERR(sp_script_parse(bad[i][0], strlen(bad[i][0]), "s.txt", &s, &err),
			   -EINVAL);
		ASSERT_STRSTR(err.msg, bad[i][1]);
		ASSERT_EQ(s.n, 0);
	}
	ASSERT_ERR(sp_script_parse("t=1 traffic\0shift\n", 19, "s.txt", &s, &err), -EINVAL);
	ASSERT_STRSTR(err.msg, "s.txt:1: expected text, found a NUL byte");
	ASSERT_OK(sp_config_parse("vip_port=0x1000", &f, &v, &err));
	ASSERT_EQ(v, 4096);
	ASSERT_ERR(sp_config_parse("vip_port", &f, &v, &err), -EINVAL);
	ASSERT_STRSTR(err.msg, "expected KEY=VALUE");
	ASSERT_ERR(sp_config_parse("feature_acl=-1", &f, &v, &err), -EINVAL);
}

/* ---- verifier-backed: lb_xdp specialized vs generic ---------------------- */

enum { F_VIP, F_BLOCKED, F_TCP, F_UDP_OTHER, F_ARP, F_SHORT, F_IHL6, F_N };

static size_t frame(uint8_t *b, int kind, uint32_t vip_port, uint32_t blocked_prefix)
{
	uint16_t et = htons(kind == F_ARP ? 0x0806 : 0x0800), port;
	uint32_t src = htonl(kind == F_BLOCKED ? blocked_prefix | 7 : 0x0a010203), dst = htonl(0x0a000002);

	memset(b, 0, 128);
	memset(b, 0xaa, 12);
	memcpy(b + 12, &et, 2);
	if (kind == F_ARP)
		return 42;
	if (kind == F_SHORT)
		return 20;
	b[14] = kind == F_IHL6 ? 0x46 : 0x45;
	b[23] = kind == F_TCP ? 6 : 17;
	memcpy(b + 26, &src, 4);
	memcpy(b + 30, &dst, 4);
	port = htons(kind == F_UDP_OTHER ? 53 : kind == F_TCP ? 80 : (uint16_t)vip_port);
	memcpy(b + 34 + (kind == F_IHL6 ? 4 : 0) + 2, &port, 2);
	return 80;
}

static int run_verdict(int fd, int kind, uint32_t port, uint32_t prefix)
{
	uint8_t buf[128];
	LIBBPF_OPTS(bpf_test_run_opts, o);

	o.data_in = buf;
	o.data_size_in = (__u32)frame(buf, kind, port, prefix);
	if (bpf_prog_test_run_opts(fd, &o))
		return -errno;
	return (int)o.retval;
}

/* every pass, as `probity rejit` applies them, on the loaded generic
 * program; hot = the direction of normal traffic at every site */
static int specialize(struct lb_xdp_bpf *sk, bool spike, struct rw_insns *p)
{
	struct bpf_program *prog = sk->progs.lb_xdp;
	struct rw_guard g = { .prof_fd = bpf_map__fd(sk->maps.bss),
			      .fallback_failed_off = offsetof(struct lb_prof, fallback_failed),
			      .prog_array_fd = bpf_map__fd(sk->maps.lb_fallback), .fallback_verdict = XDP_PASS };
	bool hot[LB_NSITES] = { true, true, true, false };
	struct rw_report r;
	struct rw_site s;
	int i, err;

	if ((err = rw_insns__init(p, bpf_program__insns(prog), bpf_program__insn_cnt(prog))) ||
	    (err = rw_pass_const_inline(p, bpf_map__fd(sk->maps.data_cfg), &sk->data_cfg->lb_cfg,
					sizeof(struct lb_cfg), &r)) ||
	    (err = rw_pass_fold_dce(p, &r)) || (err = rw_free_stack_slot(p, &g.ctx_slot)) ||
	    (err = rw_pass_spill_ctx(p, g.ctx_slot, &r)))
		return err;
	for (i = 0; i < LB_NSITES; i++) {
		g.guard_fail_off = offsetof(struct lb_prof, guard_fail) + 8 * i;
		err = rw_find_site(p, g.prof_fd, offsetof(struct lb_prof, site) + 16 * i,
				   offsetof(struct lb_prof, site) + 16 * i + 8, &s);
		if (err == -ENOENT && i == LB_SITE_ACL && !sk->data_cfg->lb_cfg.feature_acl)
			continue;	/* eliminated with its feature */
		if (err || (err = rw_pass_branch_spec(p, &s, hot[i], &g, &r)))
			return err;
	}
	if ((err = rw_pass_fold_dce(p, &r)))
		return err;
	return spike ? rw_pass_hash_unroll(p, 1000, &r) : 0;
}

static void check_same_verdicts(int feature_acl, bool spike)
{
	struct lb_xdp_bpf *sk = lb_xdp_bpf__open();
	struct rw_insns p = { 0 };
	char log[4096] = "";
	int fd = -1, gfd, k;
	__u32 key = 0;
	__u64 gf0[LB_NSITES], gf1[LB_NSITES];
	LIBBPF_OPTS(bpf_prog_load_opts, lo, .log_buf = log, .log_size = sizeof(log), .log_level = 0,
		    .expected_attach_type = BPF_XDP);

	ASSERT_NOT_NULL(sk);
	sk->data_cfg->lb_cfg.feature_acl = (__u32)feature_acl;
	if (lb_xdp_bpf__load(sk)) {
		PB_FAIL("load lb_xdp: %s", strerror(errno));
		goto out;
	}
	gfd = bpf_program__fd(sk->progs.lb_xdp);
	if (bpf_map_update_elem(bpf_map__fd(sk->maps.lb_fallback), &key, &gfd, BPF_ANY)) {
		PB_FAIL("prog array: %s", strerror(errno));
		goto out;
	}
	if (specialize(sk, spike, &p)) {
		PB_FAIL("specialize failed");
		goto out;
	}
	/* the rewrite changed something real */
	if (p.n == bpf_program__insn_cnt(sk->progs.lb_xdp)) {
		PB_FAIL("specialized program has as many insns as the generic one");
		goto out;
	}
	fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "lb_xdp_test", "GPL", p.v, p.n, &lo);
	if (fd < 0) {
		lo.log_level = 1;
		fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "lb_xdp_test", "GPL", p.v, p.n, &lo);
		PB_FAIL("verifier rejected the candidate: %s", log);
		goto out;
	}
	for (k = 0; k < F_N; k++) {
		int want = run_verdict(gfd, k, sk->data_cfg->lb_cfg.vip_port, 0x0a0b0c00);
		int got;

		memcpy(gf0, sk->bss->lb_prof.guard_fail, sizeof(gf0));
		got = run_verdict(fd, k, sk->data_cfg->lb_cfg.vip_port, 0x0a0b0c00);
		memcpy(gf1, sk->bss->lb_prof.guard_fail, sizeof(gf1));
		if (want < 0 || want != got) {
			PB_FAIL("frame %d: generic verdict %d, specialized %d", k, want, got);
			goto out;
		}
		/* the cold classes go through a guard into the generic program */
		if (k == F_TCP && gf1[LB_SITE_UDP] != gf0[LB_SITE_UDP] + 1)
			PB_FAIL("a TCP frame did not fail the udp guard");
		if (k == F_ARP && gf1[LB_SITE_IPV4] != gf0[LB_SITE_IPV4] + 1)
			PB_FAIL("an ARP frame did not fail the ipv4 guard");
		if (k == F_UDP_OTHER && gf1[LB_SITE_VIP] != gf0[LB_SITE_VIP] + 1)
			PB_FAIL("a non-VIP frame did not fail the vip guard");
		if (k == F_BLOCKED && feature_acl && gf1[LB_SITE_ACL] != gf0[LB_SITE_ACL] + 1)
			PB_FAIL("a blocked frame did not fail the acl guard");
		if (k == F_VIP && memcmp(gf0, gf1, sizeof(gf0)))
			PB_FAIL("a VIP frame failed a guard");
	}
	/* the same backend: the inlined n_backends feeds the modulo */
	for (k = 0; k < 64; k++) {
		uint8_t buf[128];
		__u64 b0[LB_MAX_BACKENDS], b1[LB_MAX_BACKENDS], b2[LB_MAX_BACKENDS];
		uint32_t src = htonl(0x0a010000 + (uint32_t)k * 7919);
		int j, wa = -1, wb = -1;
		LIBBPF_OPTS(bpf_test_run_opts, o);

		o.data_in = buf;
		o.data_size_in = (__u32)frame(buf, F_VIP, sk->data_cfg->lb_cfg.vip_port, 0);
		memcpy(buf + 26, &src, 4);
		memcpy(b0, sk->bss->lb_prof.backend_pkts, sizeof(b0));
		ASSERT_OK(bpf_prog_test_run_opts(gfd, &o));
		memcpy(b1, sk->bss->lb_prof.backend_pkts, sizeof(b1));
		ASSERT_OK(bpf_prog_test_run_opts(fd, &o));
		memcpy(b2, sk->bss->lb_prof.backend_pkts, sizeof(b2));
		for (j = 0; j < LB_MAX_BACKENDS; j++) {
			if (b1[j] != b0[j])
				wa = j;
			if (b2[j] != b1[j])
				wb = j;
		}
		if (wa < 0 || wa != wb) {
			PB_FAIL("source #%d: generic chose backend %d, specialized %d", k, wa, wb);
			goto out;
		}
	}
	if (feature_acl) {	/* the guard's fallback really decides: DROP */
		ASSERT_EQ(run_verdict(fd, F_BLOCKED, sk->data_cfg->lb_cfg.vip_port, 0x0a0b0c00), XDP_DROP);
	} else {
		ASSERT_EQ(run_verdict(fd, F_BLOCKED, sk->data_cfg->lb_cfg.vip_port, 0x0a0b0c00), XDP_TX);
	}
	ASSERT_EQ(sk->bss->lb_prof.fallback_failed, 0);
out:
	if (fd >= 0)
		close(fd);
	rw_insns__release(&p);
	lb_xdp_bpf__destroy(sk);
}

TEST(test_specialized_same_verdicts)
{
	REQUIRE_BPF();
	check_same_verdicts(1, false);
}

TEST(test_specialized_acl_disabled_same_verdicts)
{
	REQUIRE_BPF();
	check_same_verdicts(0, false);
}

TEST(test_specialized_with_planted_loop_loads)
{
	REQUIRE_BPF();
	check_same_verdicts(1, true);
}

TEST(test_empty_fallback_fails_open_and_counts)
{
	struct lb_xdp_bpf *sk;
	struct rw_insns p = { 0 };
	int fd;
	LIBBPF_OPTS(bpf_prog_load_opts, lo, .expected_attach_type = BPF_XDP);

	REQUIRE_BPF();
	sk = lb_xdp_bpf__open_and_load();
	ASSERT_NOT_NULL(sk);
	ASSERT_OK(specialize(sk, false, &p));	/* no generic program in the prog array */
	fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "lb_xdp_test", "GPL", p.v, p.n, &lo);
	rw_insns__release(&p);
	if (fd < 0) {
		lb_xdp_bpf__destroy(sk);
		ASSERT_TRUE(fd >= 0);
	}
	ASSERT_EQ(run_verdict(fd, F_TCP, sk->data_cfg->lb_cfg.vip_port, 0x0a0b0c00), XDP_PASS);
	ASSERT_EQ(sk->bss->lb_prof.fallback_failed, 1);
	close(fd);
	lb_xdp_bpf__destroy(sk);
}
