/* SPDX-License-Identifier: BSD-2-Clause */
/* calib.h: what one probe hit costs on this kernel, per site class.
 *
 * The cost of tracing a user function is the uprobe trap itself (a few
 * microseconds), not the BPF program. calib__run() measures it with a short
 * self-test (~0.3 s): count-only programs (calib.bpf.c) are attached to
 * fixture functions inside this very process, one per site class, and N
 * calls are timed with and without the probe on the calling thread's CPU
 * clock (so a busy machine's preemption does not count). The figures feed
 * the recorder's overhead estimate (TRACE_CHUNK_COST), the probe-effect
 * correction of span durations (analyze/probefx.c), `plan --estimate`, and
 * the budget governor. docs/record.md "Cost model" explains them.
 */
#ifndef PROBITY_CALIB_H
#define PROBITY_CALIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct plan;
struct plan_site;

/* Site classes, in the order of the figures in struct pb_calib. */
enum pb_site_class {
	PB_SITE_EMULATED = 0,	/* entry on an instruction the kernel emulates
				 * (push, branch, 1-byte nop): one trap */
	PB_SITE_SSTEP,		/* entry single-stepped out of line: a trap + a step */
	PB_SITE_NOP5,		/* entry on a 5-byte nop the kernel optimizes into
				 * a call after the first hit */
	PB_SITE_RET,		/* a return probe: what it adds on top of the
				 * entry trap of its function */
	PB_SITE_USDT,		/* a USDT probe (a 1-byte nop + argument specs) */
	PB_SITE__COUNT,
};

#define PB_CALIB_VERSION	1

struct pb_calib {
	/* p50 per class, named for readers (= p50_ns[PB_SITE_*]) */
	double entry_emulated_ns, entry_sstep_ns, entry_nop5_ns, ret_ns, usdt_ns;
	/* the spread over batches: a per-hit cost's p50 and p90 per class */
	double p50_ns[PB_SITE__COUNT];
	double p90_ns[PB_SITE__COUNT];
	bool measured[PB_SITE__COUNT];	/* false: the figure is the default */
	uint32_t calls;			/* calls timed per class */
	bool valid;			/* from calib__run or a calibration file */
	bool cached;			/* read from a calibration file */
	char kernel[65];		/* uname -r it was measured on */
	char note[160];			/* why a class fell back to the default */
};

struct calib_opts {
	uint32_t batches;		/* 0 = 12 */
	uint32_t calls_per_batch;	/* 0 = 250 */
};

/* Measure every class on this kernel. 0, or -errno when the BPF object
 * cannot be loaded (then *out holds the defaults, valid = false). A class
 * whose probe cannot be attached keeps its default (measured false, note). */
int calib__run(struct pb_calib *out, const struct calib_opts *opts);

/* Figures for a kernel that was not measured: the numbers on a
 * 6.18 VM (emulated 7 us, single-step 20 us, nop5 1.4 us, return 3 us,
 * USDT 7 us). valid = false. */
void calib__defaults(struct pb_calib *out);

/* A calibration file (JSON, "format": "probity-calibration"): load it when
 * it exists and was measured on this kernel (0; -ENOENT / -ESTALE / -EINVAL
 * otherwise), or measure and save it. calib__load_or_run returns 0 when
 * *out is valid, whichever way. */
int calib__load(struct pb_calib *out, const char *path);
int calib__save(const struct pb_calib *c, const char *path);
int calib__load_or_run(struct pb_calib *out, const char *path, const struct calib_opts *opts);

/* Per-hit cost of one site class (p50), and its probe-effect error
 * (p90 - p50, never negative). */
double calib__site_cost_ns(const struct pb_calib *c, enum pb_site_class cls);
double calib__site_err_ns(const struct pb_calib *c, enum pb_site_class cls);

const char *pb_site_class_str(enum pb_site_class cls);

/* The class of a plan site: USDT, return, or its entry instruction's
 * (plan_site.exec; an undecoded one counts as single-stepped, the dearer). */
enum pb_site_class calib__plan_site_class(const struct plan_site *s);

/* What one event of descriptor d costs: the dearest entry trap among its
 * sites (a return probe needs the entry trap too) + a return probe if it
 * has one + USDT. The probes that fire per event, in *classes (a bit per
 * enum pb_site_class) when not NULL. */
double calib__desc_cost_ns(const struct pb_calib *c, const struct plan *p, size_t d,
			   uint32_t *classes);

#endif
