/* SPDX-License-Identifier: BSD-2-Clause */
/* observer.c: user side of the independent observer (observer_api.h).
 *
 * Two sources, both time-stamped with CLOCK_MONOTONIC:
 *  - the ring buffer of observer.bpf.c: one record per completed bpf()
 *    PROG_LOAD / LINK_CREATE / LINK_UPDATE with the caller's pid and the
 *    fds it got or passed; the fds are duplicated into this process with
 *    pidfd_getfd(2), so a new program is captured while the loader still
 *    holds it, and a link update names the link and both programs;
 *  - perf side-band records (PERF_RECORD_BPF_EVENT, PERF_RECORD_KSYMBOL)
 *    from a dummy software event per CPU: every program load and unload,
 *    including loads whose syscall record was lost or whose loader is
 *    gone (capture then goes by id, and may come too late: counted).
 * Captures become receipts with provenance "unknown": the observer saw the
 * result, not the decisions that produced it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "common/log.h"
#include "receipts/lifelog.h"
#include "receipts/receipt.h"
#include "observe/observer.h"
#include "observe/observer_api.h"
#include "observe/perf_ring.h"
#include "observer.skel.h"

#ifndef PERF_RECORD_KSYMBOL
#define PERF_RECORD_KSYMBOL 17
#define PERF_RECORD_BPF_EVENT 18
#endif

struct pb_observer {
	struct pb_store *s;
	struct observer_bpf *skel;
	struct ring_buffer *rb;
	struct perf_ring *perf;
	int epfd;
	json_t *progs;		/* "prog id" -> generation id (null: not captured) */
	json_t *links;		/* "link id" -> prog id */
	json_t *own;		/* "prog id" of the observer's own programs */
	json_t *unreg;		/* BPF ksymbol unregisters since the last unload */
	/* counters; the ring buffer's are read from the BPF side */
	struct lifelog_observer_stats st;
};

static int pidfd_getfd_of(uint32_t pid, int fd)
{
	int pidfd = syscall(SYS_pidfd_open, pid, 0), dup;

	if (pidfd < 0)
		return -errno;
	dup = syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	if (dup < 0)
		dup = -errno;
	close(pidfd);
	return dup;
}

static uint32_t prog_id_of_fd(int fd)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	return bpf_prog_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

static void key_of(uint32_t id, char *k)
{
	snprintf(k, 16, "%u", id);
}

static void append(struct pb_observer *o, uint32_t kind, json_t *e)
{
	if (lifelog__append(o->s, kind, e, NULL))
		o->st.missed.log_write_errors++;
	json_decref(e);
}

/* Capture prog fd (a dup we own) as a receipt + 'loaded' entry. */
static void capture(struct pb_observer *o, int fd, uint32_t id, const char *via, json_t *loader,
		    uint64_t seen_ns)
{
	char gen[PB_DIGEST_HEX_LEN], rec[PB_DIGEST_HEX_LEN], k[16];
	json_t *entry = NULL;
	int err;

	key_of(id, k);
	err = receipt__capture_unknown(o->s, fd, "observer", gen, rec, &entry);
	if (err) {
		o->st.missed.gone_before_capture++;
		append(o, LIFE_LOADED, json_pack("{s:I, s:s, s:s, s:O, s:I, s:s}", LK_PROG_ID, (json_int_t)id,
						 LK_CAPTURE, "failed", LK_ERROR, strerror(-err),
						 LK_LOADER, loader ?: json_null(), LK_SEEN_MONO_NS, (json_int_t)seen_ns,
						 LK_SOURCE, "observer"));
		json_object_set_new(o->progs, k, json_null());
		return;
	}
	o->st.captured++;
	if (!strcmp(via, "syscall-fd"))
		o->st.captured_by_fd++;
	else
		o->st.captured_by_id++;
	json_object_set_new(entry, LK_CAPTURED_VIA, json_string(via));
	json_object_set(entry, LK_LOADER, loader ?: json_null());
	json_object_set_new(entry, LK_SEEN_MONO_NS, json_integer((json_int_t)seen_ns));
	json_object_set_new(o->progs, k, json_string(gen));
	append(o, LIFE_LOADED, entry);
}

static bool known(struct pb_observer *o, uint32_t id)
{
	char k[16];

	key_of(id, k);
	return json_object_get(o->progs, k) || json_object_get(o->own, k);
}

static void capture_by_id(struct pb_observer *o, uint32_t id, uint64_t t)
{
	char k[16];
	int fd;

	if (known(o, id))
		return;
	o->st.loads_seen++;
	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0) {
		o->st.missed.gone_before_capture++;
		key_of(id, k);
		json_object_set_new(o->progs, k, json_null());
		append(o, LIFE_LOADED, json_pack("{s:I, s:s, s:s, s:I, s:s}", LK_PROG_ID, (json_int_t)id,
						 LK_CAPTURE, "gone", LK_ERROR, strerror(errno),
						 LK_SEEN_MONO_NS, (json_int_t)t, LK_SOURCE, "observer"));
		return;
	}
	capture(o, fd, id, "perf-bpf-event", NULL, t);
	close(fd);
}

static json_t *gen_of(struct pb_observer *o, uint32_t id)
{
	char k[16];
	json_t *g;

	key_of(id, k);
	g = json_object_get(o->progs, k);
	return json_is_string(g) ? json_incref(g) : json_null();
}

static json_t *loader_of(const struct obs_bpf_syscall *e)
{
	char comm[17];

	memcpy(comm, e->comm, 16);
	comm[16] = 0;
	return json_pack("{s:I, s:I, s:s}", LDRK_PID, (json_int_t)e->pid, LDRK_TID, (json_int_t)e->tid,
			 LDRK_COMM, comm);
}

static void on_prog_load(struct pb_observer *o, const struct obs_bpf_syscall *e)
{
	json_t *loader;
	uint32_t id;
	int fd;

	if (e->ret < 0) {
		o->st.failed_loads++;
		return;
	}
	/* the loader's own fd first: it holds the program alive; if it is
	 * already closed, the id the kernel side resolved */
	fd = pidfd_getfd_of(e->pid, (int)e->ret);
	if (fd >= 0) {
		id = prog_id_of_fd(fd);
		if (e->prog_id && id != e->prog_id) {	/* fd reused meanwhile */
			close(fd);
			fd = -1;
		}
	}
	if (fd < 0) {
		o->st.missed.fd_not_duplicated++;
		id = e->prog_id;
		if (!id || known(o, id))
			return;		/* the perf record path may still capture it */
		fd = bpf_prog_get_fd_by_id(id);
		if (fd < 0) {
			capture_by_id(o, id, e->exit_ns);	/* logs and counts it as gone */
			return;
		}
	}
	id = prog_id_of_fd(fd);
	if (id && !known(o, id)) {
		o->st.loads_seen++;
		loader = loader_of(e);
		json_object_set_new(loader, LDRK_SYSCALL_ENTER_MONO_NS, json_integer((json_int_t)e->enter_ns));
		json_object_set_new(loader, LDRK_SYSCALL_EXIT_MONO_NS, json_integer((json_int_t)e->exit_ns));
		capture(o, fd, id, "syscall-fd", loader, e->exit_ns);
		json_decref(loader);
	}
	close(fd);
}

static void on_link(struct pb_observer *o, const struct obs_bpf_syscall *e)
{
	bool create = e->cmd == OBS_CMD_LINK_CREATE;
	struct bpf_link_info info;
	__u32 len = sizeof(info);
	uint32_t new_id = e->prog_id, old_id = 0, link_id = e->link_id, link_type = e->link_type;
	json_t *entry, *prev, *new_gen;
	int64_t ifindex = -1;
	char k[16];
	int lfd, pfd;

	if (e->ret < 0 || !e->attr_ok)
		return;
	/* ids come from the kernel side; the fds (if still open) add the
	 * attach point and let a program not captured yet be captured */
	lfd = pidfd_getfd_of(e->pid, create ? (int)e->ret : (int)e->attr[0]);
	if (lfd >= 0) {
		memset(&info, 0, sizeof(info));
		if (!bpf_link_get_info_by_fd(lfd, &info, &len) && (!link_id || info.id == link_id)) {
			link_id = info.id;
			link_type = info.type;
			if (info.type == BPF_LINK_TYPE_XDP)
				ifindex = info.xdp.ifindex;
			else if (info.type == BPF_LINK_TYPE_TCX)
				ifindex = info.tcx.ifindex;
			if (!new_id)
				new_id = info.prog_id;
		}
		close(lfd);
	}
	if (!link_id) {
		o->st.missed.links_unresolved++;
		return;
	}
	if (!new_id)
		new_id = e->link_prog_id;
	if (new_id && !known(o, new_id)) {
		pfd = pidfd_getfd_of(e->pid, create ? (int)e->attr[0] : (int)e->attr[1]);
		if (pfd >= 0 && prog_id_of_fd(pfd) != new_id) {
			close(pfd);
			pfd = -1;
		}
		if (pfd < 0)
			pfd = bpf_prog_get_fd_by_id(new_id);
		if (pfd >= 0) {
			o->st.loads_seen++;
			capture(o, pfd, new_id, "syscall-fd", NULL, e->exit_ns);
			close(pfd);
		}
	}
	key_of(link_id, k);
	prev = json_object_get(o->links, k);
	old_id = prev ? (uint32_t)json_integer_value(prev) : 0;
	if (create)
		o->st.link_creates++;
	else
		o->st.link_updates++;
	new_gen = gen_of(o, new_id);
	entry = json_pack("{s:s, s:I, s:I, s:o, s:I, s:o, s:O, s:o, s:I, s:I}",
			  LK_OP, create ? "create" : "update",
			  LK_LINK_ID, (json_int_t)link_id, LK_LINK_TYPE, (json_int_t)link_type,
			  LK_OLD_PROG_ID, old_id ? json_integer(old_id) : json_null(),
			  LK_NEW_PROG_ID, (json_int_t)new_id,
			  LK_OLD_GENERATION_ID, old_id ? gen_of(o, old_id) : json_null(),
			  LK_NEW_GENERATION_ID, new_gen,
			  LK_CALLER, loader_of(e),
			  LK_SYSCALL_ENTER_MONO_NS, (json_int_t)e->enter_ns,
			  LK_SYSCALL_EXIT_MONO_NS, (json_int_t)e->exit_ns);
	if (ifindex >= 0)
		json_object_set_new(entry, LK_IFINDEX, json_integer(ifindex));
	/* filed under the installed generation, so `receipts log -g` finds it */
	if (json_is_string(new_gen))
		json_object_set(entry, LK_GENERATION_ID, new_gen);
	json_decref(new_gen);
	json_object_set_new(o->links, k, json_integer(new_id));
	append(o, LIFE_LINK_UPDATED, entry);
}

static int on_ringbuf(void *ctx, void *data, size_t size)
{
	struct pb_observer *o = ctx;
	const struct obs_bpf_syscall *e = data;

	if (size < sizeof(*e) || e->type != OBS_EV_BPF_SYSCALL || e->version != OBS_EV_VERSION)
		return 0;
	o->st.bpf_syscalls++;
	if (e->prog_id || e->link_id)
		o->st.ids_resolved_in_kernel++;
	switch (e->cmd) {
	case OBS_CMD_PROG_LOAD: on_prog_load(o, e); break;
	case OBS_CMD_LINK_CREATE:
	case OBS_CMD_LINK_UPDATE: on_link(o, e); break;
	}
	return 0;
}

static void on_unload(struct pb_observer *o, uint32_t id, uint64_t t)
{
	char k[16];

	key_of(id, k);
	if (json_object_get(o->own, k))
		return;
	o->st.unloads++;
	/* the kernel unregisters a program's JIT symbols just before its
	 * PROG_UNLOAD record: they close its address intervals */
	append(o, LIFE_UNLOADED, json_pack("{s:I, s:o, s:I, s:s, s:O}", LK_PROG_ID, (json_int_t)id,
					   LK_GENERATION_ID, gen_of(o, id), LK_PERF_MONO_NS, (json_int_t)t,
					   LK_SOURCE, "observer", LK_KSYMBOLS_UNREGISTERED, o->unreg));
	json_array_clear(o->unreg);
	/* the id -> generation mapping stays: a link-update record naming
	 * this program may still be on its way through the other source
	 * (prog ids are allocated cyclically, not reused soon) */
}

/* One side-band record; with sample_id_all + PERF_SAMPLE_TIME the last 8
 * bytes are its CLOCK_MONOTONIC time. */
static void on_perf_record(struct pb_observer *o, const struct perf_event_header *h)
{
	const uint8_t *p = (const uint8_t *)(h + 1);
	size_t body = perf_ring__sideband_body(h);
	uint64_t t = 0;

	/* sample_type TIME: the trailer is the time, right after the body */
	if (body != SIZE_MAX && h->size >= sizeof(*h) + body + 8)
		memcpy(&t, p + body, 8);
	switch (h->type) {
	case PERF_RECORD_LOST: {
		uint64_t lost;

		memcpy(&lost, p + 8, 8);
		o->st.missed.perf_records_lost += lost;
		break;
	}
	case PERF_RECORD_KSYMBOL: {
		uint64_t addr;
		uint32_t len;
		uint16_t ktype, kflags;
		char a[24], name[128];
		size_t max = h->size - sizeof(*h) - 16;

		o->st.ksymbol_records++;
		memcpy(&addr, p, 8);
		memcpy(&len, p + 8, 4);
		memcpy(&ktype, p + 12, 2);
		memcpy(&kflags, p + 14, 2);
		if (ktype != PERF_RECORD_KSYMBOL_TYPE_BPF || !(kflags & PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER))
			break;
		snprintf(name, sizeof(name), "%.*s", (int)(max < sizeof(name) ? max : sizeof(name) - 1),
			 (const char *)p + 16);
		snprintf(a, sizeof(a), "0x%llx", (unsigned long long)addr);
		if (json_array_size(o->unreg) < 256)
			json_array_append_new(o->unreg, json_pack("{s:s, s:I, s:s, s:I}", KSK_ADDR, a, KSK_LEN,
								  (json_int_t)len, KSK_NAME, name,
								  KSK_MONO_NS, (json_int_t)t));
		break;
	}
	case PERF_RECORD_BPF_EVENT: {
		uint16_t type;
		uint32_t id;

		memcpy(&type, p, 2);
		memcpy(&id, p + 4, 4);
		if (type == PERF_BPF_EVENT_PROG_LOAD)
			capture_by_id(o, id, t);
		else if (type == PERF_BPF_EVENT_PROG_UNLOAD)
			on_unload(o, id, t);
		break;
	}
	}
}

static int on_perf_ring(void *ctx, int cpu, const struct perf_event_header *h)
{
	on_perf_record(ctx, h);
	return 0;
}

static int open_perf(struct pb_observer *o, unsigned int pages)
{
	struct perf_ring_opts ro = { .pages = pages, .group_epoll_fd = o->epfd };
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.sample_type = PERF_SAMPLE_TIME;
	attr.sample_id_all = 1;
	attr.ksymbol = 1;
	attr.bpf_event = 1;
	attr.use_clockid = 1;
	attr.clockid = CLOCK_MONOTONIC;
	attr.watermark = 1;
	attr.wakeup_watermark = 1;
	return perf_ring__new(&attr, &ro, &o->perf);
}

static void note_own_progs(struct pb_observer *o)
{
	struct bpf_program *p;
	char k[16];

	bpf_object__for_each_program(p, o->skel->obj) {
		uint32_t id = prog_id_of_fd(bpf_program__fd(p));

		if (id) {
			key_of(id, k);
			json_object_set_new(o->own, k, json_true());
		}
	}
}

int pb_observer__new(const struct pb_observer_opts *opts, struct pb_observer **out)
{
	struct pb_observer *o;
	unsigned int pages = 16;
	struct epoll_event ev;
	int err;

	*out = NULL;
	if (!opts || !opts->store)
		return -EINVAL;
	if (opts->perf_pages)
		pages = opts->perf_pages;
	if (pages & (pages - 1))
		return -EINVAL;
	o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->s = opts->store;
	o->epfd = epoll_create1(EPOLL_CLOEXEC);
	o->progs = json_object();
	o->links = json_object();
	o->own = json_object();
	o->unreg = json_array();
	if (o->epfd < 0 || !o->progs || !o->links || !o->own || !o->unreg) {
		err = o->epfd < 0 ? -errno : -ENOMEM;
		goto fail;
	}
	o->skel = observer_bpf__open();
	if (!o->skel) {
		err = -errno;
		goto fail;
	}
	o->skel->rodata->self_tgid = getpid();
	err = observer_bpf__load(o->skel);
	if (err)
		goto fail;
	note_own_progs(o);
	/* side-band readers before the tracepoints: no load falls between */
	err = open_perf(o, pages);
	if (err)
		goto fail;
	o->rb = ring_buffer__new(bpf_map__fd(o->skel->maps.obs_events), on_ringbuf, o, NULL);
	if (!o->rb) {
		err = -errno;
		goto fail;
	}
	ev.events = EPOLLIN;
	ev.data.u32 = 0;
	if (epoll_ctl(o->epfd, EPOLL_CTL_ADD, ring_buffer__epoll_fd(o->rb), &ev)) {
		err = -errno;
		goto fail;
	}
	err = observer_bpf__attach(o->skel);
	if (err)
		goto fail;
	append(o, LIFE_OBSERVER, json_pack("{s:s, s:i}", LK_EVENT, "start", LK_CPUS, perf_ring__ncpu(o->perf)));
	*out = o;
	return 0;
fail:
	pb_observer__free(o);
	return err;
}

int pb_observer__poll(struct pb_observer *o, int timeout_ms)
{
	struct epoll_event evs[16];
	int n;

	n = epoll_wait(o->epfd, evs, 16, timeout_ms);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	/* syscall records first: they can capture through the caller's fd,
	 * before the perf path would have to go by id */
	ring_buffer__consume(o->rb);
	return perf_ring__drain(o->perf, on_perf_ring, o);
}

void pb_observer__stats(const struct pb_observer *o, struct lifelog_observer_stats *st)
{
	*st = o->st;
	if (o->skel && o->skel->bss) {
		st->missed.ringbuf_dropped = o->skel->bss->obs_dropped;
		st->missed.syscalls_not_followed = o->skel->bss->obs_pending_full;
	}
}

int pb_observer__finish(struct pb_observer *o)
{
	struct lifelog_observer_stats st;
	json_t *e;
	int err;

	pb_observer__poll(o, 0);
	pb_observer__stats(o, &st);
	e = json_pack("{s:s, s:o}", LK_EVENT, "stop", LK_STATS, lifelog_observer_stats__encode(&st));
	if (!e)
		return -ENOMEM;
	err = lifelog__append(o->s, LIFE_OBSERVER, e, NULL);
	json_decref(e);
	return err;
}

void pb_observer__free(struct pb_observer *o)
{

	if (!o)
		return;
	ring_buffer__free(o->rb);
	observer_bpf__destroy(o->skel);
	perf_ring__free(o->perf);
	if (o->epfd >= 0)
		close(o->epfd);
	json_decref(o->progs);
	json_decref(o->links);
	json_decref(o->own);
	json_decref(o->unreg);
	free(o);
}
