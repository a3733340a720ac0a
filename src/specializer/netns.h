/* SPDX-License-Identifier: BSD-2-Clause */
/* netns.h: the network namespace and veth pair `probity rejit` runs in. */
#ifndef PROBITY_SPECIALIZER_NETNS_H
#define PROBITY_SPECIALIZER_NETNS_H

#include <stdbool.h>
#include "specializer/state.h"

/* netns and device names: 1-15 of [A-Za-z0-9_.-], not starting with - or . */
bool sp_name_ok(const char *s);
/* Create (or take) s->o.netns, enter it, find both devices, open the
 * packet socket. 0 or -errno (message through pr_err). */
int sp_netns__setup(struct specializer *s);
/* Leave the namespace, delete it if created. Idempotent. */
void sp_netns__teardown(struct specializer *s);

#endif
