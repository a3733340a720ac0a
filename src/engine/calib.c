// SPDX-License-Identifier: BSD-2-Clause
/* calib.c: the cost calibration self-test (see calib.h).
 *
 * The fixtures are tiny functions of this very binary, written in assembly
 * so their first instruction is exactly the class measured: `push %rbp`
 * (emulated), `mov %rdi,%rax` (single-stepped), `nopl 0(%rax,%rax,1)` (the
 * 5-byte nop the kernel optimizes), and a USDT note. Probes are attached
 * with pid = this process, so no other process running the same binary
 * traps. Each batch times calls_per_batch calls on the thread's CPU clock;
 * a class's per-hit cost is the batch time minus the unprobed baseline,
 * and its p50 / p90 are taken over the batches.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/sdt.h>
#include <sys/utsname.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "engine/calib.h"
#include "contract/plan.h"
#include "common/log.h"
#include "calib.skel.h"

#if defined(__x86_64__)
void pb_calib_fx_push(void);
void pb_calib_fx_sstep(void);
void pb_calib_fx_nop5(void);
__asm__(".text\n"
	".p2align 4\n.globl pb_calib_fx_push\n.type pb_calib_fx_push,@function\n"
	"pb_calib_fx_push:\n\tpush %rbp\n\tpop %rbp\n\tret\n"
	".size pb_calib_fx_push, .-pb_calib_fx_push\n"
	".p2align 4\n.globl pb_calib_fx_sstep\n.type pb_calib_fx_sstep,@function\n"
	"pb_calib_fx_sstep:\n\tmov %rdi,%rax\n\tret\n"
	".size pb_calib_fx_sstep, .-pb_calib_fx_sstep\n"
	".p2align 4\n.globl pb_calib_fx_nop5\n.type pb_calib_fx_nop5,@function\n"
	"pb_calib_fx_nop5:\n\t.byte 0x0f,0x1f,0x44,0x00,0x00\n\tret\n"
	".size pb_calib_fx_nop5, .-pb_calib_fx_nop5\n");
#define CALIB_SUPPORTED 1
#else
#define CALIB_SUPPORTED 0
#endif

__attribute__((noinline, used)) void pb_calib_fx_usdt(void)
{
	DTRACE_PROBE(probity_calib, hit);
	__asm__ volatile("" ::: "memory");
}

static const char *const class_names[PB_SITE__COUNT] = {
	"emulated", "single-step", "nop5", "return", "usdt",
};
/* the figures on a 6.18 VM; used when a class cannot be measured */
static const double default_ns[PB_SITE__COUNT] = { 7000, 20000, 1400, 3000, 7000 };

const char *pb_site_class_str(enum pb_site_class cls)
{
	return (unsigned)cls < PB_SITE__COUNT ? class_names[cls] : "?";
}

static void sync_named(struct pb_calib *c)
{
	c->entry_emulated_ns = c->p50_ns[PB_SITE_EMULATED];
	c->entry_sstep_ns = c->p50_ns[PB_SITE_SSTEP];
	c->entry_nop5_ns = c->p50_ns[PB_SITE_NOP5];
	c->ret_ns = c->p50_ns[PB_SITE_RET];
	c->usdt_ns = c->p50_ns[PB_SITE_USDT];
}

void calib__defaults(struct pb_calib *out)
{
	struct utsname u;
	int i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < PB_SITE__COUNT; i++)
		out->p50_ns[i] = out->p90_ns[i] = default_ns[i];
	if (!uname(&u))
		snprintf(out->kernel, sizeof(out->kernel), "%s", u.release);
	sync_named(out);
}

double calib__site_cost_ns(const struct pb_calib *c, enum pb_site_class cls)
{
	return (unsigned)cls < PB_SITE__COUNT ? c->p50_ns[cls] : 0;
}

double calib__site_err_ns(const struct pb_calib *c, enum pb_site_class cls)
{
	double d;

	if ((unsigned)cls >= PB_SITE__COUNT)
		return 0;
	d = c->p90_ns[cls] - c->p50_ns[cls];
	return d > 0 ? d : 0;
}

enum pb_site_class calib__plan_site_class(const struct plan_site *s)
{
	if (s->usdt)
		return PB_SITE_USDT;
	if (s->retprobe)
		return PB_SITE_RET;
	switch (s->exec) {
	case INSN_EXEC_OPTIMIZABLE:
		return PB_SITE_NOP5;
	case INSN_EXEC_EMULATED:
		return PB_SITE_EMULATED;
	default:
		return PB_SITE_SSTEP;
	}
}

double calib__desc_cost_ns(const struct pb_calib *c, const struct plan *p, size_t d,
			   uint32_t *classes)
{
	double entry = -1, cost = 0;
	uint32_t bits = 0;
	size_t i;

	for (i = 0; i < p->n_sites; i++) {
		const struct plan_site *s = &p->sites[i];
		enum pb_site_class cls;
		double v;

		if ((size_t)s->descriptor != d)
			continue;
		cls = calib__plan_site_class(s);
		bits |= 1u << cls;
		if (cls == PB_SITE_RET) {
			/* the entry trap of the function, at its first insn */
			struct plan_site e = *s;

			e.retprobe = false;
			cls = calib__plan_site_class(&e);
			bits |= 1u << cls;
		}
		if (cls == PB_SITE_USDT)
			continue;
		v = calib__site_cost_ns(c, cls);
		if (v > entry)
			entry = v;
	}
	if (entry > 0)
		cost += entry;
	if (bits & (1u << PB_SITE_RET))
		cost += calib__site_cost_ns(c, PB_SITE_RET);
	if (bits & (1u << PB_SITE_USDT))
		cost += calib__site_cost_ns(c, PB_SITE_USDT);
	if (classes)
		*classes = bits;
	return cost;
}

#if CALIB_SUPPORTED
static uint64_t thread_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* per-call ns of one batch; fn through a volatile pointer: never inlined */
static double time_batch(void (*volatile fn)(void), uint32_t n)
{
	uint64_t t0 = thread_ns();
	uint32_t i;

	for (i = 0; i < n; i++)
		fn();
	return (double)(thread_ns() - t0) / n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(double *v, uint32_t n, double q)
{
	size_t i;

	qsort(v, n, sizeof(*v), cmp_double);
	i = (size_t)(q * (n - 1) + 0.5);
	return v[i < n ? i : n - 1];
}

/* file offset of a function of this binary, from /proc/self/maps */
static int self_offset(const void *fn, char *path, size_t path_sz, uint64_t *off)
{
	uintptr_t a = (uintptr_t)fn;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");
	int err = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, foff;
		int n = 0;

		if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %n", &lo, &hi, &foff, &n) < 3 || !n)
			continue;
		if (a < lo || a >= hi)
			continue;
		line[strcspn(line, "\n")] = 0;
		snprintf(path, path_sz, "%s", line + n);
		*off = a - lo + foff;
		err = path[0] == '/' ? 0 : -ENOENT;
		break;
	}
	fclose(f);
	return err;
}

struct calib_run {
	struct calib_bpf *skel;
	struct pb_calib *c;
	uint32_t batches, per_batch;
	double base_ns;		/* unprobed call, median */
	double *v;		/* batches per-call figures */
	char path[4096];
};

static void note(struct calib_run *r, const char *cls, const char *why)
{
	size_t len = strlen(r->c->note);

	snprintf(r->c->note + len, sizeof(r->c->note) - len, "%s%s: %s", len ? "; " : "", cls,
		 why);
}

static struct bpf_link *attach_multi(struct calib_run *r, bool ret, uint64_t off,
				     uint64_t cookie)
{
	LIBBPF_OPTS(bpf_uprobe_multi_opts, mo);
	unsigned long offs[1] = { off };
	__u64 cookies[1] = { cookie };

	mo.offsets = offs;
	mo.cookies = cookies;
	mo.cnt = 1;
	mo.retprobe = ret;
	return bpf_program__attach_uprobe_multi(ret ? r->skel->progs.calib_return :
						r->skel->progs.calib_entry,
						getpid(), r->path, NULL, &mo);
}

static struct bpf_link *attach_usdt(struct calib_run *r, uint64_t cookie)
{
	LIBBPF_OPTS(bpf_usdt_opts, uo);

	uo.usdt_cookie = cookie;
	return bpf_program__attach_usdt(r->skel->progs.calib_usdt, getpid(), r->path,
					"probity_calib", "hit", &uo);
}

static uint64_t slot_hits(struct calib_run *r, uint32_t slot, bool reset)
{
	uint64_t v = 0, zero = 0;
	int fd = bpf_map__fd(r->skel->maps.hits);

	bpf_map_lookup_elem(fd, &slot, &v);
	if (reset)
		bpf_map_update_elem(fd, &slot, &zero, BPF_ANY);
	return v;
}

#define CALIB_WARMUP 64

/* Time one class: unprobed baseline, attach, warm up, batches, detach;
 * the figures are kept only when the probe fired on every call. */
static void measure(struct calib_run *r, enum pb_site_class cls, void (*fn)(void))
{
	struct bpf_link *l1 = NULL, *l2 = NULL;
	uint64_t off, hits, want;
	const char *name = class_names[cls];
	double base;
	uint32_t b, per_call = cls == PB_SITE_RET ? 2 : 1;
	int err;

	err = self_offset((const void *)fn, r->path, sizeof(r->path), &off);
	if (err) {
		note(r, name, "fixture not found in /proc/self/maps");
		return;
	}
	for (b = 0; b < r->batches; b++)
		r->v[b] = time_batch(fn, r->per_batch);
	base = pct(r->v, r->batches, 0.5);
	slot_hits(r, cls, true);
	if (cls == PB_SITE_USDT) {
		l1 = attach_usdt(r, cls);
	} else {
		l1 = attach_multi(r, false, off, cls);
		if (l1 && cls == PB_SITE_RET)
			l2 = attach_multi(r, true, off, cls);
	}
	if (!l1 || (cls == PB_SITE_RET && !l2)) {
		note(r, name, strerror(errno));
		goto out;
	}
	time_batch(fn, CALIB_WARMUP);
	for (b = 0; b < r->batches; b++)
		r->v[b] = time_batch(fn, r->per_batch) - base;
	hits = slot_hits(r, cls, true);
	want = (uint64_t)per_call * (CALIB_WARMUP + (uint64_t)r->batches * r->per_batch);
	if (hits < want) {
		note(r, name, "the probe missed calls");
		goto out;
	}
	r->c->p50_ns[cls] = pct(r->v, r->batches, 0.5);
	r->c->p90_ns[cls] = pct(r->v, r->batches, 0.9);
	if (cls == PB_SITE_RET) {	/* what the return probe adds to the entry trap */
		r->c->p50_ns[cls] -= r->c->p50_ns[PB_SITE_EMULATED];
		r->c->p90_ns[cls] -= r->c->p50_ns[PB_SITE_EMULATED];
	}
	if (r->c->p50_ns[cls] < 0)
		r->c->p50_ns[cls] = 0;
	if (r->c->p90_ns[cls] < r->c->p50_ns[cls])
		r->c->p90_ns[cls] = r->c->p50_ns[cls];
	r->c->measured[cls] = true;
out:
	bpf_link__destroy(l2);
	bpf_link__destroy(l1);
}

int calib__run(struct pb_calib *out, const struct calib_opts *opts)
{
	struct calib_run r = { .c = out };
	int err;

	calib__defaults(out);
	r.batches = opts && opts->batches ? opts->batches : 12;
	r.per_batch = opts && opts->calls_per_batch ? opts->calls_per_batch : 250;
	r.v = calloc(r.batches, sizeof(*r.v));
	r.skel = calib_bpf__open_and_load();
	if (!r.v || !r.skel) {
		err = r.v ? -errno : -ENOMEM;
		snprintf(out->note, sizeof(out->note), "calibration not loaded: %s",
			 strerror(-err));
		goto out;
	}
	measure(&r, PB_SITE_EMULATED, pb_calib_fx_push);
	measure(&r, PB_SITE_SSTEP, pb_calib_fx_sstep);
	measure(&r, PB_SITE_NOP5, pb_calib_fx_nop5);
	if (out->measured[PB_SITE_EMULATED])
		measure(&r, PB_SITE_RET, pb_calib_fx_push);
	measure(&r, PB_SITE_USDT, pb_calib_fx_usdt);
	out->calls = r.batches * r.per_batch;
	out->valid = true;
	sync_named(out);
	err = 0;
	if (out->note[0])
		pr_warn("calibration: %s (default figures kept for those)\n", out->note);
out:
	calib_bpf__destroy(r.skel);
	free(r.v);
	return err;
}
#else
int calib__run(struct pb_calib *out, const struct calib_opts *opts)
{
	calib__defaults(out);
	snprintf(out->note, sizeof(out->note), "calibration: x86-64 only");
	return -EOPNOTSUPP;
}
#endif
