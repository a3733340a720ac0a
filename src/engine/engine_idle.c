/* SPDX-License-Identifier: BSD-2-Clause */
/* engine_idle.c: the idle holdings behind the leak hypothesis
 * (docs/validation.md "Leak or broken model"). At each snapshot the
 * instance map is read once: per resource, the live generations not
 * touched (ACQUIRE, USE or RELEASE: pb_inst_state.touch_ts) since each of
 * the last PB_IDLE_SLOTS snapshots, and the units they hold. Read-only: the
 * probes own every entry. */
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "engine/engine_int.h"
#include "engine.skel.h"

void engine_count_idle(struct engine *e, uint64_t now)
{
	int fd = bpf_map__fd(e->skel->maps.instances);
	struct pb_inst_key cur, next;
	struct pb_inst_state st;
	bool first = true;
	size_t n = 0;
	uint32_t r, k;

	for (r = 0; r < e->n_res; r++)
		memcpy(e->res[r].idle_ts, e->idle_ring, sizeof(e->idle_ring));
	while (n++ < ENGINE_IDLE_SCAN_MAX && !bpf_map_get_next_key(fd, first ? NULL : &cur, &next)) {
		first = false;
		cur = next;
		if (cur.resource >= e->n_res || bpf_map_lookup_elem(fd, &cur, &st) ||
		    st.pending_ts || st.holders <= 0 || !st.touch_ts)
			continue;
		for (k = 0; k < PB_IDLE_SLOTS; k++) {
			if (!e->idle_ring[k] || st.touch_ts > e->idle_ring[k])
				break;	/* older snapshots only see fewer */
			e->res[cur.resource].idle_n[k]++;
			e->res[cur.resource].idle_units[k] += st.units;
		}
	}
	memmove(e->idle_ring + 1, e->idle_ring, sizeof(e->idle_ring) - sizeof(e->idle_ring[0]));
	e->idle_ring[0] = now;
}
