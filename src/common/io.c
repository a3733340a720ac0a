/* SPDX-License-Identifier: BSD-2-Clause */
/* io.c: small POSIX I/O helpers (see io.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include "common/io.h"

int pb_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= n;
	}
	return 0;
}

int pb_read_fd(int fd, size_t max, char **bufp, size_t *lenp)
{
	size_t cap = 16384, len = 0;
	char *buf = NULL, *nb;
	ssize_t n;
	int err = 0;

	for (;;) {
		if (!buf || len + 1 >= cap) {
			if (buf)
				cap *= 2;
			if (max && cap > max + 1)
				cap = max + 1;
			nb = realloc(buf, cap);
			if (!nb) {
				err = -ENOMEM;
				goto out;
			}
			buf = nb;
		}
		n = read(fd, buf + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (max && len >= max)
			break;
	}
	buf[len] = '\0';
	*bufp = buf;
	*lenp = len;
	buf = NULL;
out:
	free(buf);
	return err;
}

int pb_read_file(const char *path, size_t max, char **buf, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	err = pb_read_fd(fd, max, buf, len);
	close(fd);
	return err;
}
