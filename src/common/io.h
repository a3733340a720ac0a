/* SPDX-License-Identifier: BSD-2-Clause */
/* io.h: small POSIX I/O helpers shared by every file reader and writer. */
#ifndef PROBITY_IO_H
#define PROBITY_IO_H

#include <stddef.h>

/* write(2) all of buf, retrying on EINTR and short writes; 0 or -errno. */
int pb_write_all(int fd, const void *buf, size_t len);

/* Read fd to its end, or to max bytes when max > 0 (a caller that wants to
 * tell "too large" passes its limit + 1). *buf is malloc'ed and
 * NUL-terminated (not counted in *len). 0 or -errno. */
int pb_read_fd(int fd, size_t max, char **buf, size_t *len);
/* pb_read_fd on path (opened O_RDONLY | O_CLOEXEC). 0 or -errno. */
int pb_read_file(const char *path, size_t max, char **buf, size_t *len);

#endif
