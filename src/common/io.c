/* io.c: small POSIX I/O helpers (see io.h). */
#include <errno.h>
#include <unistd.h>
#include "io.h"

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
