/* SPDX-License-Identifier: BSD-2-Clause */
/* perf_ring.c: per-CPU perf_event rings (see perf_ring.h).
 *
 * Why not libbpf's perf_buffer__new_raw(): it is built to drain the
 * buffers of bpf_perf_event_output(), so it needs map_fd to be a
 * BPF_MAP_TYPE_PERF_EVENT_ARRAY (it queries the fd with
 * bpf_map_get_info_by_fd and refuses any other map type; fd -1 fails
 * there) and stores every CPU's perf fd into that map with
 * bpf_map_update_elem, failing the whole open if it cannot. Our rings
 * carry records the kernel writes itself (side-band ksymbol/bpf_event
 * records of the observer's dummy event, the sampler's cpu-clock
 * samples): no BPF program writes them, so using it would mean creating
 * an otherwise unused perf event array map per ring just to pass that
 * check. It also issues PERF_EVENT_IOC_ENABLE on each event as it opens
 * it, while the sampler opens its events disabled and enables them
 * together once every CPU is open (perf_ring__enable).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include "observe/perf_ring.h"

struct perf_cpu_ring {
	int fd;
	void *base;	/* metadata page + data pages */
};

struct perf_ring {
	struct perf_cpu_ring *cpus;
	int ncpu;
	size_t page, data_size;
	int epfd;
	uint8_t *rec;		/* one record, unwrapped */
	uint64_t lost, bad;
};

static int online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);

	return n > 0 ? (int)n : -EINVAL;
}

int perf_ring__new(const struct perf_event_attr *attr, const struct perf_ring_opts *opts,
		   struct perf_ring **out)
{
	unsigned int pages = 16;
	int group = -1, cpu, err;
	struct epoll_event ev;
	struct perf_ring *r;

	*out = NULL;
	if (opts && opts->pages)
		pages = opts->pages;
	if (opts && opts->group_epoll_fd > 0)
		group = opts->group_epoll_fd;
	if (pages & (pages - 1))
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->epfd = epoll_create1(EPOLL_CLOEXEC);
	r->ncpu = online_cpus();
	if (r->epfd < 0 || r->ncpu < 0) {
		err = r->epfd < 0 ? -errno : r->ncpu;
		goto fail;
	}
	r->page = sysconf(_SC_PAGESIZE);
	r->data_size = r->page * pages;
	r->cpus = calloc(r->ncpu, sizeof(*r->cpus));
	r->rec = malloc(r->data_size);
	if (!r->cpus || !r->rec) {
		err = -ENOMEM;
		goto fail;
	}
	for (cpu = 0; cpu < r->ncpu; cpu++)
		r->cpus[cpu].fd = -1;
	for (cpu = 0; cpu < r->ncpu; cpu++) {
		struct perf_cpu_ring *c = &r->cpus[cpu];

		c->fd = syscall(SYS_perf_event_open, attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (c->fd < 0) {
			if (errno == ENODEV || errno == EINVAL) {	/* offline CPU */
				c->fd = -1;
				continue;
			}
			err = -errno;
			goto fail;
		}
		c->base = mmap(NULL, r->page + r->data_size, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd, 0);
		if (c->base == MAP_FAILED) {
			c->base = NULL;
			err = -errno;
			goto fail;
		}
		ev.events = EPOLLIN;
		ev.data.u32 = cpu;
		if (epoll_ctl(r->epfd, EPOLL_CTL_ADD, c->fd, &ev) ||
		    (group >= 0 && epoll_ctl(group, EPOLL_CTL_ADD, c->fd, &ev))) {
			err = -errno;
			goto fail;
		}
	}
	*out = r;
	return 0;
fail:
	perf_ring__free(r);
	return err;
}

static int drain_one(struct perf_ring *r, int cpu, perf_ring_fn fn, void *ctx)
{
	struct perf_cpu_ring *c = &r->cpus[cpu];
	struct perf_event_mmap_page *m = c->base;
	uint8_t *data = (uint8_t *)c->base + r->page;
	uint64_t head = __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = m->data_tail;
	int ret = 0;

	while (tail < head) {
		struct perf_event_header h;
		size_t off = tail % r->data_size, i;
		const struct perf_event_header *rec;

		for (i = 0; i < sizeof(h); i++)
			((uint8_t *)&h)[i] = data[(off + i) % r->data_size];
		if (h.size < sizeof(h) || h.size > r->data_size || h.size > head - tail) {
			/* cannot happen with a sane kernel: do not loop on it */
			r->bad++;
			tail = head;
			break;
		}
		if (off + h.size <= r->data_size) {
			rec = (const struct perf_event_header *)(data + off);
		} else {
			for (i = 0; i < h.size; i++)
				r->rec[i] = data[(off + i) % r->data_size];
			rec = (const struct perf_event_header *)r->rec;
		}
		if (h.type == PERF_RECORD_LOST && h.size >= sizeof(h) + 16) {
			uint64_t n;

			memcpy(&n, (const uint8_t *)rec + sizeof(h) + 8, 8);
			r->lost += n;
		}
		tail += h.size;
		ret = fn(ctx, cpu, rec);
		if (ret)
			break;
	}
	__atomic_store_n(&m->data_tail, tail, __ATOMIC_RELEASE);
	return ret;
}

int perf_ring__drain(struct perf_ring *r, perf_ring_fn fn, void *ctx)
{
	int cpu, ret;

	for (cpu = 0; cpu < r->ncpu; cpu++) {
		if (!r->cpus[cpu].base)
			continue;
		ret = drain_one(r, cpu, fn, ctx);
		if (ret)
			return ret;
	}
	return 0;
}

int perf_ring__poll(struct perf_ring *r, int timeout_ms, perf_ring_fn fn, void *ctx)
{
	struct epoll_event evs[16];
	int n = epoll_wait(r->epfd, evs, 16, timeout_ms);

	if (n < 0 && errno != EINTR)
		return -errno;
	return perf_ring__drain(r, fn, ctx);
}

static int ioctl_all(struct perf_ring *r, unsigned long req)
{
	int cpu;

	for (cpu = 0; cpu < r->ncpu; cpu++)
		if (r->cpus[cpu].fd >= 0 && ioctl(r->cpus[cpu].fd, req, 0))
			return -errno;
	return 0;
}

int perf_ring__enable(struct perf_ring *r)
{
	return ioctl_all(r, PERF_EVENT_IOC_ENABLE);
}

int perf_ring__disable(struct perf_ring *r)
{
	return ioctl_all(r, PERF_EVENT_IOC_DISABLE);
}

int perf_ring__ncpu(const struct perf_ring *r)
{
	return r->ncpu;
}

int perf_ring__epoll_fd(const struct perf_ring *r)
{
	return r->epfd;
}

uint64_t perf_ring__lost(const struct perf_ring *r)
{
	return r->lost;
}

uint64_t perf_ring__bad(const struct perf_ring *r)
{
	return r->bad;
}

void perf_ring__free(struct perf_ring *r)
{
	int i;

	if (!r)
		return;
	for (i = 0; r->cpus && i < r->ncpu; i++) {
		if (r->cpus[i].base)
			munmap(r->cpus[i].base, r->page + r->data_size);
		if (r->cpus[i].fd >= 0)
			close(r->cpus[i].fd);
	}
	free(r->cpus);
	free(r->rec);
	if (r->epfd >= 0)
		close(r->epfd);
	free(r);
}

size_t perf_ring__sideband_body(const struct perf_event_header *h)
{
	const char *name = (const char *)(h + 1) + 16;
	size_t max, n;

	if (h->type != PERF_RECORD_KSYMBOL)
		return 16;	/* bpf_event: type flags id tag; lost: id lost */
	if (h->size < sizeof(*h) + 16)
		return SIZE_MAX;
	max = h->size - sizeof(*h) - 16;
	n = strnlen(name, max);
	if (n == max)
		return SIZE_MAX;
	return 16 + ((n + 1 + 7) & ~(size_t)7);	/* name_len: u64-aligned */
}
