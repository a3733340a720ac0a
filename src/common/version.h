/* SPDX-License-Identifier: BSD-2-Clause */
/* version.h: probity's version and the versions of what it links. */
#ifndef PROBITY_VERSION_H
#define PROBITY_VERSION_H

#define PROBITY_VERSION "0.1.0"

const char *pb_libbpf_version(void);

#endif
