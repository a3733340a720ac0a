/* SPDX-License-Identifier: BSD-2-Clause */
/* faultinj.c: an LD_PRELOAD shim that fails (or kills the process at) the
 * Nth write-side call on a chosen file, for the fault-injection tests
 * (tests/cli/fault_*.sh, docs/testing.md). Configured by environment:
 *
 *   FAULT_OPS     comma-separated calls to count: write, pwrite, writev,
 *                 fsync, fdatasync, rename (rename/renameat/renameat2);
 *                 default "write,pwrite,writev"
 *   FAULT_PATH    only calls on a file whose path contains this string
 *                 (for fd calls: /proc/self/fd/N; for rename: either
 *                 name); required, so stdout/stderr are never touched
 *   FAULT_NTH     the first counted call that fails (1-based; default 1)
 *   FAULT_COUNT   how many calls fail from there (default 0 = every one
 *                 after: a disk that stays full)
 *   FAULT_ERRNO   ENOSPC (default), EIO, EDQUOT or EFBIG
 *   FAULT_PARTIAL 1: a failing write first writes half its bytes and
 *                 returns that short count (the next call fails), as a
 *                 filling disk does
 *   FAULT_KILL    1: SIGKILL the process at the Nth call instead of
 *                 failing it (a crash at that exact point)
 *   FAULT_LOG     a file to append "op path nth errno" lines to, one per
 *                 injected fault (so a test can check a fault happened)
 *   FAULT_LOG_ALL 1: log every counted call too (errno 0), so a test can
 *                 count the calls of a clean run and aim at one
 *
 * Only calls made through the PLT are seen (the library's own write(2)
 * calls, not stdio's internal ones); that is every write probity makes
 * to traces, sample files, receipts and the lifecycle log. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

enum { OP_WRITE = 1, OP_PWRITE = 2, OP_WRITEV = 4, OP_FSYNC = 8, OP_FDATASYNC = 16, OP_RENAME = 32 };

static atomic_long calls;
static int ops = -1;

static int parse_ops(void)
{
	static const struct { const char *name; int op; } names[] = {
		{ "write", OP_WRITE }, { "pwrite", OP_PWRITE }, { "writev", OP_WRITEV },
		{ "fsync", OP_FSYNC }, { "fdatasync", OP_FDATASYNC }, { "rename", OP_RENAME },
	};
	const char *s = getenv("FAULT_OPS");
	char buf[256], *tok, *save = NULL;
	int m = 0;
	size_t i;

	if (!s || !*s)
		return OP_WRITE | OP_PWRITE | OP_WRITEV;
	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (!strcmp(tok, names[i].name))
				m |= names[i].op;
	return m;
}

static long env_long(const char *k, long d)
{
	const char *s = getenv(k);

	return s && *s ? strtol(s, NULL, 10) : d;
}

static int env_errno(void)
{
	const char *s = getenv("FAULT_ERRNO");

	if (!s || !strcmp(s, "ENOSPC"))
		return ENOSPC;
	if (!strcmp(s, "EIO"))
		return EIO;
	if (!strcmp(s, "EDQUOT"))
		return EDQUOT;
	if (!strcmp(s, "EFBIG"))
		return EFBIG;
	return ENOSPC;
}

static void log_fault(const char *op, const char *path, long n, int e)
{
	const char *lf = getenv("FAULT_LOG");
	char line[512];
	int fd, len;

	if (!lf)
		return;
	fd = (int)syscall(SYS_openat, AT_FDCWD, lf, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	len = snprintf(line, sizeof(line), "%s %s %ld %d\n", op, path, n, e);
	if (len > 0)
		(void)!syscall(SYS_write, fd, line, (size_t)len < sizeof(line) ? (size_t)len : sizeof(line) - 1);
	syscall(SYS_close, fd);
}

/* 0: pass the call on; else the errno to fail it with (after a kill
 * request the process is gone). *partial: fail after a short write. */
static int decide(int op, const char *opname, const char *path, int *partial)
{
	const char *want = getenv("FAULT_PATH");
	long n, nth, count;
	int e;

	if (ops < 0)
		ops = parse_ops();
	if (!(ops & op) || !want || !*want || !path || !strstr(path, want))
		return 0;
	n = atomic_fetch_add(&calls, 1) + 1;
	nth = env_long("FAULT_NTH", 1);
	count = env_long("FAULT_COUNT", 0);
	if (n < nth || (count > 0 && n >= nth + count)) {
		if (env_long("FAULT_LOG_ALL", 0))
			log_fault(opname, path, n, 0);
		return 0;
	}
	e = env_errno();
	if (env_long("FAULT_KILL", 0)) {
		log_fault(opname, path, n, 0);
		kill(getpid(), SIGKILL);
	}
	*partial = n == nth && env_long("FAULT_PARTIAL", 0);
	log_fault(opname, path, n, e);
	return e;
}

static const char *fd_path(int fd, char *buf, size_t len)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, len - 1);
	if (n < 0)
		return NULL;
	buf[n] = 0;
	return buf;
}

#define REAL(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

ssize_t write(int fd, const void *buf, size_t len)
{
	char p[4096];
	int partial = 0, e = decide(OP_WRITE, "write", fd_path(fd, p, sizeof(p)), &partial);

	if (!e)
		return REAL(write)(fd, buf, len);
	if (partial && len > 1)
		return REAL(write)(fd, buf, len / 2);
	errno = e;
	return -1;
}

ssize_t pwrite(int fd, const void *buf, size_t len, off_t off)
{
	char p[4096];
	int partial = 0, e = decide(OP_PWRITE, "pwrite", fd_path(fd, p, sizeof(p)), &partial);

	if (!e)
		return REAL(pwrite)(fd, buf, len, off);
	if (partial && len > 1)
		return REAL(pwrite)(fd, buf, len / 2, off);
	errno = e;
	return -1;
}

ssize_t pwrite64(int fd, const void *buf, size_t len, off_t off)
{
	return pwrite(fd, buf, len, off);
}

ssize_t writev(int fd, const struct iovec *iov, int n)
{
	char p[4096];
	int partial = 0, e = decide(OP_WRITEV, "writev", fd_path(fd, p, sizeof(p)), &partial);

	if (!e)
		return REAL(writev)(fd, iov, n);
	errno = e;
	return -1;
}

int fsync(int fd)
{
	char p[4096];
	int partial = 0, e = decide(OP_FSYNC, "fsync", fd_path(fd, p, sizeof(p)), &partial);

	if (!e)
		return REAL(fsync)(fd);
	errno = e;
	return -1;
}

int fdatasync(int fd)
{
	char p[4096];
	int partial = 0, e = decide(OP_FDATASYNC, "fdatasync", fd_path(fd, p, sizeof(p)), &partial);

	if (!e)
		return REAL(fdatasync)(fd);
	errno = e;
	return -1;
}

/* one count per rename, whichever of its names matches */
static int rename_fault(const char *a, const char *b)
{
	const char *want = getenv("FAULT_PATH");
	int partial = 0;

	return decide(OP_RENAME, "rename", want && a && strstr(a, want) ? a : b, &partial);
}

int rename(const char *a, const char *b)
{
	int e = rename_fault(a, b);

	if (!e)
		return REAL(rename)(a, b);
	errno = e;
	return -1;
}

int renameat(int da, const char *a, int db, const char *b)
{
	int e = rename_fault(a, b);

	if (!e)
		return REAL(renameat)(da, a, db, b);
	errno = e;
	return -1;
}

int renameat2(int da, const char *a, int db, const char *b, unsigned int flags)
{
	int e = rename_fault(a, b);

	if (!e)
		return REAL(renameat2)(da, a, db, b, flags);
	errno = e;
	return -1;
}
