/* SPDX-License-Identifier: BSD-2-Clause */
/* capture.c: read everything the kernel will forget about a loaded BPF
 * program (bpf_prog_info by id fails once it is unloaded), plus the
 * kernel build-id and JIT configuration the receipt's target names.
 *
 * bpf_prog_get_info_by_fd is called twice: the first call learns the
 * lengths, the second fills buffers of those sizes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include "receipts/receipts_int.h"

void capture__free(struct pb_capture *c)
{
	if (!c)
		return;
	free(c->xlated);
	free(c->jited);
	free(c->ksyms);
	free(c->func_lens);
	free(c->line_info);
	free(c->jited_line_info);
	free(c->btf);
	free(c);
}

static int capture_btf(struct pb_capture *c)
{
	struct bpf_btf_info info;
	__u32 len = sizeof(info);
	int fd, err = 0;

	fd = bpf_btf_get_fd_by_id(c->btf_id);
	if (fd < 0)
		return -errno;
	memset(&info, 0, sizeof(info));
	if (bpf_btf_get_info_by_fd(fd, &info, &len)) {
		err = -errno;
		goto out;
	}
	c->btf_len = info.btf_size;
	c->btf = calloc(1, c->btf_len ? c->btf_len : 1);
	if (!c->btf) {
		err = -ENOMEM;
		goto out;
	}
	memset(&info, 0, sizeof(info));
	info.btf = (__u64)(uintptr_t)c->btf;
	info.btf_size = c->btf_len;
	len = sizeof(info);
	if (bpf_btf_get_info_by_fd(fd, &info, &len))
		err = -errno;
out:
	close(fd);
	return err;
}

int capture__prog_fd(int fd, struct pb_capture **out)
{
	struct bpf_prog_info info;
	struct pb_capture *c;
	__u32 len = sizeof(info);
	int err;

	*out = NULL;
	memset(&info, 0, sizeof(info));
	if (bpf_prog_get_info_by_fd(fd, &info, &len))
		return -errno;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->xlated_len = info.xlated_prog_len;
	c->jited_len = info.jited_prog_len;
	c->nr_ksyms = info.nr_jited_ksyms;
	c->nr_func_lens = info.nr_jited_func_lens;
	c->nr_line_info = info.nr_line_info;
	c->line_info_rec_size = info.line_info_rec_size;
	c->nr_jited_line_info = info.nr_jited_line_info;
	c->xlated = calloc(1, c->xlated_len + 8);
	c->jited = calloc(1, c->jited_len + 8);
	c->ksyms = calloc(c->nr_ksyms + 1, sizeof(__u64));
	c->func_lens = calloc(c->nr_func_lens + 1, sizeof(__u32));
	c->line_info = calloc(c->nr_line_info + 1, c->line_info_rec_size ? c->line_info_rec_size : 16);
	c->jited_line_info = calloc(c->nr_jited_line_info + 1, sizeof(__u64));
	if (!c->xlated || !c->jited || !c->ksyms || !c->func_lens || !c->line_info ||
	    !c->jited_line_info) {
		err = -ENOMEM;
		goto fail;
	}
	memset(&info, 0, sizeof(info));
	info.xlated_prog_len = c->xlated_len;
	info.xlated_prog_insns = (__u64)(uintptr_t)c->xlated;
	info.jited_prog_len = c->jited_len;
	info.jited_prog_insns = (__u64)(uintptr_t)c->jited;
	info.nr_jited_ksyms = c->nr_ksyms;
	info.jited_ksyms = (__u64)(uintptr_t)c->ksyms;
	info.nr_jited_func_lens = c->nr_func_lens;
	info.jited_func_lens = (__u64)(uintptr_t)c->func_lens;
	info.nr_line_info = c->nr_line_info;
	info.line_info_rec_size = c->line_info_rec_size;
	info.line_info = (__u64)(uintptr_t)c->line_info;
	info.nr_jited_line_info = c->nr_jited_line_info;
	info.jited_line_info_rec_size = sizeof(__u64);
	info.jited_line_info = (__u64)(uintptr_t)c->jited_line_info;
	len = sizeof(info);
	if (bpf_prog_get_info_by_fd(fd, &info, &len)) {
		err = -errno;
		goto fail;
	}
	/* the program cannot change under an fd, but stay within buffers */
	if (info.xlated_prog_len > c->xlated_len || info.jited_prog_len > c->jited_len) {
		err = -EAGAIN;
		goto fail;
	}
	c->prog_id = info.id;
	c->prog_type = info.type;
	memcpy(c->name, info.name, sizeof(c->name));
	c->name[sizeof(c->name) - 1] = 0;
	memcpy(c->tag, info.tag, sizeof(c->tag));
	c->load_time = info.load_time;
	c->verified_insns = info.verified_insns;
	c->btf_id = info.btf_id;
	if (c->btf_id && capture_btf(c)) {
		free(c->btf);
		c->btf = NULL;
		c->btf_len = 0;
	}
	*out = c;
	return 0;
fail:
	capture__free(c);
	return err;
}

/* /sys/kernel/notes: a sequence of ELF notes; NT_GNU_BUILD_ID (3), "GNU". */
int capture__kernel_build_id(char *hex, size_t sz)
{
	uint8_t buf[4096];
	ssize_t n;
	size_t off = 0;
	int fd;

	hex[0] = 0;
	fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n < 0)
		return -errno;
	while (off + 12 <= (size_t)n) {
		uint32_t namesz, descsz, type;
		size_t name_off = off + 12, desc_off;

		memcpy(&namesz, buf + off, 4);
		memcpy(&descsz, buf + off + 4, 4);
		memcpy(&type, buf + off + 8, 4);
		desc_off = name_off + ((namesz + 3) & ~3u);
		if (desc_off + descsz > (size_t)n)
			break;
		if (type == 3 && namesz == 4 && !memcmp(buf + name_off, "GNU", 4)) {
			size_t i;

			if (sz < 2 * descsz + 1)
				return -ENOSPC;
			for (i = 0; i < descsz; i++)
				sprintf(hex + 2 * i, "%02x", buf[desc_off + i]);
			return 0;
		}
		off = desc_off + ((descsz + 3) & ~3u);
	}
	return -ENOENT;
}

static json_int_t read_sysctl(const char *path)
{
	char buf[32];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return strtoll(buf, NULL, 10);
}

static json_t *sysctl_or_null(json_int_t v)
{
	return v < 0 ? json_null() : json_integer(v);
}

/* Read once per process and cached: /proc/sys/net/core is per network
 * namespace and only the initial one has the bpf_jit_* files, so a
 * caller that later enters a netns (as tests and rejit do) keeps the
 * values read at store open. */
json_t *capture__target_env(void)
{
	static json_t *cached;
	char bid[128];
	struct utsname u;
	json_int_t enable;
	json_t *j;

	if (cached)
		return json_deep_copy(cached);

	uname(&u);
	if (capture__kernel_build_id(bid, sizeof(bid)))
		strcpy(bid, "");
	enable = read_sysctl("/proc/sys/net/core/bpf_jit_enable");
	j = json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:o, s:s}",
		      "kernel_build_id", bid,
		      "kernel_release", u.release,
		      "arch", u.machine,
		      "jit_backend", enable == 0 ? "interpreter" : u.machine,
		      "bpf_jit_enable", sysctl_or_null(enable),
		      "bpf_jit_harden", sysctl_or_null(read_sysctl("/proc/sys/net/core/bpf_jit_harden")),
		      "bpf_jit_kallsyms", sysctl_or_null(read_sysctl("/proc/sys/net/core/bpf_jit_kallsyms")),
		      "jit_normalization", normalize__jit_scheme());
	if (j && enable >= 0)
		cached = json_deep_copy(j);
	return j;
}

json_t *capture__jit_ranges(const struct pb_capture *c)
{
	json_t *arr = json_array();
	char addr[24];
	uint32_t i;

	for (i = 0; arr && i < c->nr_ksyms; i++) {
		snprintf(addr, sizeof(addr), "0x%llx", (unsigned long long)c->ksyms[i]);
		json_array_append_new(arr, json_pack("{s:s, s:I}", "addr", addr, "len",
						     (json_int_t)(i < c->nr_func_lens ? c->func_lens[i] : 0)));
	}
	return arr;
}
