/* SPDX-License-Identifier: BSD-2-Clause */
/* traffic.h: the frames `probity rejit` sends through lb_xdp (by the mix
 * the script selects) and the probe frames of the verdict check.
 */
#ifndef PROBITY_SPECIALIZER_TRAFFIC_H
#define PROBITY_SPECIALIZER_TRAFFIC_H

#include <stddef.h>
#include <stdint.h>
#include "specializer/state.h"

/* One frame of class c into buf (>= 128 bytes); its length. */
size_t sp_build_frame(uint8_t *buf, int c, const struct lb_cfg *cfg, const uint8_t *dmac,
		      const uint8_t *smac, uint32_t *rnd);
/* The traffic thread (pthread_create argument: the specializer): AF_PACKET
 * frames from the peer in batches every 5 ms until s->traffic_stop. */
void *sp_traffic_main(void *arg);

#endif
