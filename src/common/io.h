/* io.h: small POSIX I/O helpers shared by every file writer. */
#ifndef PROBITY_IO_H
#define PROBITY_IO_H

#include <stddef.h>

/* write(2) all of buf, retrying on EINTR and short writes; 0 or -errno. */
int pb_write_all(int fd, const void *buf, size_t len);

#endif
