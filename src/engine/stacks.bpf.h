/* SPDX-License-Identifier: GPL-2.0-only */
/* stacks.bpf.h: rate-limited user stacks of WAIT ends and ACQUIREs
 * (PB_REC_STACK, `record --stacks N`). Included by engine.bpf.c after
 * invariants.bpf.h (struct ev_ctx) and before event.bpf.h.
 *
 * The stack is taken where the pt_regs are (pb_entry / pb_return /
 * pb_usdt), after process_event returned, so its frame never adds to
 * process_event's: process_event only notes (stack_note) that the event
 * wants one, in the ev_ctx fields it no longer needs (the arguments are
 * decoded by then), and stack_emit, a sibling call of process_event,
 * writes bpf_get_stack straight into a ring-buffer reservation.
 */

const volatile __u32 stack_rate = 0;	/* stacks per second, 0 = off (engine.c) */
__u64 stack_sec = 0;			/* the second stack_n counts in */
__u64 stack_n = 0;			/* stacks asked for in that second */

#define EVF_STACK	(1u << 17)	/* ev_ctx.span_flags: stack_note asked for a stack */
#define STK_INSTANCE	0		/* ev_ctx.args[] slots stack_note fills */
#define STK_GEN		1
#define STK_DUR		2
#define STK_KIND_RES	3		/* kind | resource << 8 */

/* In process_event, once the event is decoded and judged: a WAIT span's
 * end or an ACQUIRE wants a stack. */
static __always_inline void stack_note(struct ev_ctx *c, __u8 kind, __u32 res, __u64 instance,
				       __u64 gen, __u64 dur)
{
	if (!stack_rate || !(kind == EV_ACQUIRE || (kind == EV_WAIT && dur)))
		return;
	c->args[STK_INSTANCE] = instance;
	c->args[STK_GEN] = gen;
	c->args[STK_DUR] = dur;
	c->args[STK_KIND_RES] = kind | ((__u64)res << 8);
	c->span_flags |= EVF_STACK;
}

/* After process_event, in the program that has the registers. */
static __noinline int stack_emit(void *ctx, struct ev_ctx *c)
{
	struct pb_engine_stats *es;
	struct pb_rec_stack *r;
	__u64 sec, kr;
	long got;

	if (!(c->span_flags & EVF_STACK))
		return 0;
	es = estats();
	sec = c->now / 1000000000ULL;
	if (stack_sec != sec) {	/* a new second: racy reset, at worst a few extra */
		stack_sec = sec;
		stack_n = 0;
	}
	if (__sync_fetch_and_add(&stack_n, 1) >= stack_rate) {
		if (es)
			__sync_fetch_and_add(&es->stacks_rate_limited, 1);
		return 0;
	}
	r = rec_reserve(sizeof(*r));
	if (!r) {
		if (es)
			__sync_fetch_and_add(&es->stacks_lost, 1);
		return 0;
	}
	got = bpf_get_stack(ctx, r->ips, sizeof(r->ips), BPF_F_USER_STACK);
	if (got < 8) {
		if (es) {
			__sync_fetch_and_add(&es->stacks_failed, 1);
			es->records--;	/* rec_reserve counted it */
		}
		bpf_ringbuf_discard(r, BPF_RB_NO_WAKEUP);
		return 0;
	}
	kr = c->args[STK_KIND_RES];
	rec_fill_hdr(&r->hdr, PB_REC_STACK, sizeof(*r), c->now, c->pid_tgid);
	r->descriptor = c->descriptor;
	r->resource = (__u16)(kr >> 8);
	r->kind = (__u8)kr;
	r->n_frames = (__u8)(got / 8);
	r->instance = c->args[STK_INSTANCE];
	r->generation = c->args[STK_GEN];
	r->duration_ns = c->args[STK_DUR];
	if (es) {
		__sync_fetch_and_add(&es->stacks, 1);
		if (got >= (long)sizeof(r->ips))
			__sync_fetch_and_add(&es->stacks_truncated, 1);
	}
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	return 0;
}
