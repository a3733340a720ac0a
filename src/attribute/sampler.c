/* SPDX-License-Identifier: BSD-2-Clause */
/* sampler.c: system-wide cpu-clock sampling into a sample file
 * (`probity sample`). One software cpu-clock event per CPU through
 * observe/perf_ring.h, CLOCK_MONOTONIC time stamps, with ksymbol and
 * bpf_event side-band records on the same rings so every JIT image
 * registered or unregistered while sampling is in the stream; programs
 * loaded before sampling began are enumerated once (the snapshot) right
 * after the events are enabled. Lost records are written where the
 * kernel reports them, with the time of the previous record on that CPU:
 * the loss lies between the two.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include "common/array.h"
#include "common/clock.h"
#include "attribute/samples.h"
#include "attribute/sampler.h"
#include "observe/perf_ring.h"
#include "receipts/capture.h"

#ifndef PERF_RECORD_KSYMBOL
#define PERF_RECORD_KSYMBOL 17
#define PERF_RECORD_BPF_EVENT 18
#endif

struct live_range {
	uint64_t addr;
	uint32_t len;
};

struct pb_sampler {
	struct perf_ring *ring;
	struct samples_writer *w;
	uint64_t *last_time;		/* per CPU: time of the last record */
	struct live_range *live;	/* BPF JIT ranges alive now */
	size_t n_live, cap_live;
	struct pb_sampler_stats st;
	int err;
	uint64_t start_mono;
};


static void live_add(struct pb_sampler *s, uint64_t addr, uint32_t len)
{
	if (PB_ARRAY_RESERVE_ONE(s->live, s->n_live, s->cap_live))
		return;	/* only the live counter suffers */
	s->live[s->n_live++] = (struct live_range){ addr, len };
}

static void live_del(struct pb_sampler *s, uint64_t addr)
{
	size_t i;

	for (i = 0; i < s->n_live; i++) {
		if (s->live[i].addr == addr) {
			s->live[i] = s->live[--s->n_live];
			return;
		}
	}
}

static bool live_has(const struct pb_sampler *s, uint64_t ip)
{
	size_t i;

	for (i = 0; i < s->n_live; i++)
		if (ip >= s->live[i].addr && ip - s->live[i].addr < s->live[i].len)
			return true;
	return false;
}


/* The sample_id trailer (TID | TIME | CPU: tid(8) time(8) cpu(8)) follows
 * the record's own body; it is not always at the end of the record: while
 * several perf sessions with side-band records run, this kernel announces
 * ksymbol and bpf_event records longer than what it writes (each session's
 * id header size added to one shared header), and the tail is stale ring
 * memory. So read it right after the body. */
static uint64_t trailer_time(const struct perf_event_header *h)
{
	uint64_t t = 0;
	size_t body = perf_ring__sideband_body(h);

	if (body != SIZE_MAX && h->size >= sizeof(*h) + body + 24)
		memcpy(&t, (const uint8_t *)(h + 1) + body + 8, 8);
	return t;
}

static int on_sample(struct pb_sampler *s, const struct perf_event_header *h, uint64_t *t)
{
	const uint8_t *p = (const uint8_t *)(h + 1);
	uint64_t ip;
	uint32_t pid, tid, scpu;
	uint16_t m = h->misc & PERF_RECORD_MISC_CPUMODE_MASK;
	uint8_t mode = m == PERF_RECORD_MISC_KERNEL ? SF_MODE_KERNEL :
		       m == PERF_RECORD_MISC_USER ? SF_MODE_USER : SF_MODE_UNKNOWN;

	if (h->size - sizeof(*h) < 32)
		return 0;
	memcpy(&ip, p, 8);
	memcpy(&pid, p + 8, 4);
	memcpy(&tid, p + 12, 4);
	memcpy(t, p + 16, 8);
	memcpy(&scpu, p + 24, 4);
	s->st.samples++;
	if (mode == SF_MODE_KERNEL)
		s->st.kernel++;
	else if (mode == SF_MODE_USER)
		s->st.user++;
	if (mode == SF_MODE_KERNEL && live_has(s, ip))
		s->st.in_bpf_jit++;
	return samples_writer__sample(s->w, scpu, *t, ip, pid, tid, mode);
}

static int on_ksymbol(struct pb_sampler *s, int cpu, const struct perf_event_header *h, uint64_t t,
		      uint64_t tmax)
{
	const uint8_t *p = (const uint8_t *)(h + 1);
	size_t body = h->size - sizeof(*h), max;
	uint64_t addr;
	uint32_t len;
	uint16_t kt, kf;
	char name[256];

	if (body < 16 + 24)
		return 0;
	memcpy(&addr, p, 8);
	memcpy(&len, p + 8, 4);
	memcpy(&kt, p + 12, 2);
	memcpy(&kf, p + 14, 2);
	max = body - 16 - 24;
	snprintf(name, sizeof(name), "%.*s", (int)(max < sizeof(name) ? max : sizeof(name) - 1),
		 (const char *)p + 16);
	s->st.ksymbols++;
	if (kt == PERF_RECORD_KSYMBOL_TYPE_BPF) {
		if (kf & PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER)
			live_del(s, addr);
		else
			live_add(s, addr, len);
	}
	return samples_writer__ksymbol(s->w, cpu, t, tmax, addr, len, kt, kf, name);
}

static int on_bpf_event(struct pb_sampler *s, int cpu, const struct perf_event_header *h, uint64_t t,
			uint64_t tmax)
{
	const uint8_t *p = (const uint8_t *)(h + 1);
	uint16_t ev;
	uint32_t id;

	if (h->size - sizeof(*h) < 16 + 24)
		return 0;
	memcpy(&ev, p, 2);
	memcpy(&id, p + 4, 4);
	s->st.bpf_events++;
	return samples_writer__bpf_event(s->w, cpu, t, tmax, ev, id, p + 8);
}

static int on_lost(struct pb_sampler *s, int cpu, const struct perf_event_header *h, uint64_t *t)
{
	const uint8_t *p = (const uint8_t *)(h + 1);
	uint64_t n;

	if (h->size - sizeof(*h) < 16)
		return 0;
	memcpy(&n, p + 8, 8);
	*t = trailer_time(h);
	if (!*t)
		*t = pb_mono_ns();
	s->st.lost += n;
	s->st.lost_records++;
	return samples_writer__lost(s->w, cpu, *t, n, s->last_time[cpu]);
}

/* One ring record into the sample file. Side-band records get their
 * time [t, tmax] here; the time of a sample or side-band record with a
 * kernel stamp becomes the CPU's last time, which bounds the next
 * unstamped or lost record. */
static int on_record(void *ctx, int cpu, const struct perf_event_header *h)
{
	struct pb_sampler *s = ctx;
	uint64_t t = 0, tmax = 0;
	int err;

	if (h->type == PERF_RECORD_KSYMBOL || h->type == PERF_RECORD_BPF_EVENT) {
		/* the kernel leaves the stamp 0 at times (another perf session
		 * with side-band records running): bound it instead */
		t = tmax = trailer_time(h);
		if (!t) {
			t = s->last_time[cpu] ?: s->start_mono;
			tmax = pb_mono_ns();
			s->st.time_estimated++;
		}
	}
	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		err = on_sample(s, h, &t);
		break;
	case PERF_RECORD_KSYMBOL:
		err = on_ksymbol(s, cpu, h, t, tmax);
		break;
	case PERF_RECORD_BPF_EVENT:
		err = on_bpf_event(s, cpu, h, t, tmax);
		break;
	case PERF_RECORD_LOST:
		err = on_lost(s, cpu, h, &t);
		break;
	default:
		return 0;
	}
	if (t > s->last_time[cpu] && (h->type == PERF_RECORD_SAMPLE || t == tmax))
		s->last_time[cpu] = t;
	if (err && !s->err)
		s->err = err;
	return 0;
}

/* Program id for the snapshot: id, tag, name, JIT ranges (added to the
 * live ranges). NULL when it is gone meanwhile (its unregistration is
 * then in the stream) or cannot be read. */
static json_t *snapshot_prog(struct pb_sampler *s, uint32_t id)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info), i, nk, nf;
	uint64_t *ksyms = NULL;
	uint32_t *lens = NULL;
	char tag[17], a[24];
	json_t *ranges, *prog = NULL;
	int fd = bpf_prog_get_fd_by_id(id);

	if (fd < 0)
		return NULL;
	memset(&info, 0, sizeof(info));
	if (bpf_prog_get_info_by_fd(fd, &info, &len))
		goto out;
	nk = info.nr_jited_ksyms;
	nf = info.nr_jited_func_lens;
	ksyms = calloc(nk + 1, sizeof(*ksyms));
	lens = calloc(nf + 1, sizeof(*lens));
	if (!ksyms || !lens)
		goto out;
	memset(&info, 0, sizeof(info));
	info.nr_jited_ksyms = nk;
	info.jited_ksyms = (uintptr_t)ksyms;
	info.nr_jited_func_lens = nf;
	info.jited_func_lens = (uintptr_t)lens;
	len = sizeof(info);
	if (bpf_prog_get_info_by_fd(fd, &info, &len))
		goto out;
	/* a program swapped in between the two calls may report more */
	nk = info.nr_jited_ksyms < nk ? info.nr_jited_ksyms : nk;
	nf = info.nr_jited_func_lens < nf ? info.nr_jited_func_lens : nf;
	for (i = 0; i < 8; i++)
		snprintf(tag + 2 * i, 3, "%02x", info.tag[i]);
	ranges = json_array();
	for (i = 0; i < nk; i++) {
		snprintf(a, sizeof(a), "0x%llx", (unsigned long long)ksyms[i]);
		json_array_append_new(ranges, json_pack("{s:s, s:I}", SFR_ADDR, a, SFR_LEN,
							(json_int_t)(i < nf ? lens[i] : 0)));
		live_add(s, ksyms[i], i < nf ? lens[i] : 0);
	}
	prog = json_pack("{s:I, s:s, s:s, s:I, s:I, s:o}", SFP_ID, (json_int_t)id, SFP_TAG, tag, SFP_NAME,
			 info.name, SFP_TYPE, (json_int_t)info.type, SFP_LOAD_TIME_BOOT_NS,
			 (json_int_t)info.load_time, SFP_JIT_RANGES, ranges);
out:
	free(ksyms);
	free(lens);
	close(fd);
	return prog;
}

/* Every BPF program alive now. */
static json_t *snapshot_progs(struct pb_sampler *s)
{
	json_t *progs = json_array(), *p;
	uint32_t id = 0;

	while (!bpf_prog_get_next_id(id, &id)) {
		p = snapshot_prog(s, id);
		if (!p)
			continue;
		json_array_append_new(progs, p);
		s->st.snapshot_progs++;
	}
	return progs;
}

static json_t *header_json(unsigned int freq, unsigned int pages, int ncpu)
{
	struct utsname u;
	char bid[64] = "";

	uname(&u);
	if (capture__kernel_build_id(bid, sizeof(bid)))
		bid[0] = 0;
	return json_pack("{s:s, s:s, s:i, s:s, s:i, s:i, s:i, s:{s:s, s:s, s:s, s:s}, s:I, s:I, s:i}",
			 SFH_FORMAT, "probity-samples", SFH_CLOCK, "CLOCK_MONOTONIC", SFH_CLOCKID, CLOCK_MONOTONIC,
			 SFH_EVENT, "cpu-clock", SFH_FREQ, (int)freq, SFH_RING_PAGES, (int)pages, SFH_NCPU, ncpu,
			 SFH_MACHINE, SFH_SYSNAME, u.sysname, SFH_RELEASE, u.release, SFH_ARCH, u.machine,
			 SFH_KERNEL_BUILD_ID, bid,
			 SFH_START_MONO_NS, (json_int_t)pb_mono_ns(),
			 SFH_START_REALTIME_NS, (json_int_t)pb_realtime_ns(),
			 SFH_PAGE_SIZE, (int)sysconf(_SC_PAGESIZE));
}

int pb_sampler__new(const struct pb_sampler_opts *opts, struct pb_sampler **out)
{
	struct perf_ring_opts ro = { 0 };
	struct perf_event_attr attr;
	unsigned int freq = 997, pages = 64;
	struct pb_sampler *s;
	json_t *hdr = NULL, *snap = NULL;
	int err;

	*out = NULL;
	if (!opts || !opts->path)
		return -EINVAL;
	if (opts->freq)
		freq = opts->freq;
	if (opts->pages)
		pages = opts->pages;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.freq = 1;
	attr.sample_freq = freq;
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
	attr.sample_id_all = 1;
	attr.ksymbol = 1;
	attr.bpf_event = 1;
	attr.use_clockid = 1;
	attr.clockid = CLOCK_MONOTONIC;
	attr.disabled = 1;
	attr.watermark = 1;
	ro.pages = pages;
	attr.wakeup_watermark = (uint32_t)(pages * sysconf(_SC_PAGESIZE) / 4);
	err = perf_ring__new(&attr, &ro, &s->ring);
	if (err)
		goto fail;
	s->last_time = calloc(perf_ring__ncpu(s->ring), sizeof(*s->last_time));
	hdr = header_json(freq, pages, perf_ring__ncpu(s->ring));
	if (!s->last_time || !hdr) {
		err = -ENOMEM;
		goto fail;
	}
	err = samples_writer__create(opts->path, hdr, &s->w);
	if (err)
		goto fail;
	s->start_mono = pb_mono_ns();
	/* enable first, then enumerate: a program loaded in between is in
	 * both, one unloaded in between is in the stream */
	err = perf_ring__enable(s->ring);
	if (err)
		goto fail;
	snap = json_pack("{s:I, s:o}", SFS_MONO_NS, (json_int_t)pb_mono_ns(), SFS_PROGS,
			 snapshot_progs(s));
	if (!snap) {
		err = -ENOMEM;
		goto fail;
	}
	err = samples_writer__snapshot(s->w, snap);
	if (err)
		goto fail;
	json_decref(hdr);
	json_decref(snap);
	*out = s;
	return 0;
fail:
	json_decref(hdr);
	json_decref(snap);
	pb_sampler__free(s);
	return err;
}

int pb_sampler__poll(struct pb_sampler *s, int timeout_ms)
{
	int err = perf_ring__poll(s->ring, timeout_ms, on_record, s);

	if (err)
		return err;
	if (s->err)
		return s->err;
	return samples_writer__flush(s->w);
}

int pb_sampler__run(struct pb_sampler *s, const struct pb_sampler_run_opts *o)
{
	uint64_t t0 = pb_mono_ns(), end = o->duration_ns ? t0 + o->duration_ns : 0;
	uint64_t next_progress = t0 + PB_NSEC_PER_SEC;
	struct pb_sampler_stats st;
	int err;

	while (!(o->should_stop && o->should_stop(o->ctx)) && (!end || pb_mono_ns() < end)) {
		err = pb_sampler__poll(s, 100);
		if (err)
			return err;
		if (o->progress && pb_mono_ns() >= next_progress) {
			pb_sampler__stats(s, &st);
			o->progress(o->ctx, pb_mono_ns() - t0, &st);
			next_progress += PB_NSEC_PER_SEC;
		}
	}
	return 0;
}

void pb_sampler__stats(const struct pb_sampler *s, struct pb_sampler_stats *st)
{
	*st = s->st;
	st->bad_records = perf_ring__bad(s->ring);
}

int pb_sampler__finish(struct pb_sampler *s, const char *stopped_by)
{
	struct pb_sampler_stats st;
	json_t *end;
	int err, err2;

	perf_ring__disable(s->ring);
	err = perf_ring__drain(s->ring, on_record, s);
	if (!err)
		err = s->err;
	pb_sampler__stats(s, &st);
	end = json_pack("{s:s, s:I, s:I, s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}}",
			SFE_STOPPED_BY, stopped_by ?: "", SFE_STOP_MONO_NS, (json_int_t)pb_mono_ns(),
			SFE_STOP_REALTIME_NS, (json_int_t)pb_realtime_ns(),
			SFE_STATS, "samples", (json_int_t)st.samples, "in_bpf_jit", (json_int_t)st.in_bpf_jit,
			"kernel", (json_int_t)st.kernel, "user", (json_int_t)st.user,
			"ksymbol_records", (json_int_t)st.ksymbols, "bpf_event_records", (json_int_t)st.bpf_events,
			"lost", (json_int_t)st.lost, "lost_records", (json_int_t)st.lost_records,
			"snapshot_progs", (json_int_t)st.snapshot_progs, "bad_records", (json_int_t)st.bad_records,
			"sideband_time_estimated", (json_int_t)st.time_estimated);
	err2 = samples_writer__close(s->w, end);
	s->w = NULL;
	json_decref(end);
	return err ?: err2;
}

void pb_sampler__free(struct pb_sampler *s)
{
	if (!s)
		return;
	if (s->w)
		samples_writer__close(s->w, NULL);
	perf_ring__free(s->ring);
	free(s->last_time);
	free(s->live);
	free(s);
}
