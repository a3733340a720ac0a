/* SPDX-License-Identifier: BSD-2-Clause */
/* predictions.c: cross-layer prediction counts per effect (predictions.h). */
#include <stdio.h>
#include "analyze/predictions.h"
#include "analyze/trace_load.h"

/* the event of descriptor i predicts effect fx */
static bool predicts(const struct loaded_trace *lt, uint32_t i, int fx)
{
	uint32_t ev = lt->descs[i].event;
	const struct pb_event *e;
	size_t k;

	if (ev >= lt->manifest->n_events)
		return false;
	e = &lt->manifest->events[ev];
	for (k = 0; k < e->n_predicts; k++)
		if ((int)e->predicts[k].effect == fx)
			return true;
	return false;
}

json_t *predictions__json(const struct loaded_trace *lt, uint32_t i)
{
	json_t *o = json_object();
	uint64_t chk, fail, unj;
	int fx;

	for (fx = 0; o && fx < PB_FX__COUNT; fx++) {
		confidence__predictions(lt->conf, i, fx, &chk, &fail, &unj);
		if (!predicts(lt, i, fx) && !chk && !unj)
			continue;
		json_object_set_new(o, pb_effect_str(fx), json_pack("{s:I, s:I, s:I}",
			"checked", (json_int_t)chk, "failed", (json_int_t)fail,
			"unjudged", (json_int_t)unj));
	}
	return o;
}

void predictions__text(const struct loaded_trace *lt, uint32_t i, char *buf, size_t sz)
{
	uint64_t chk, fail, unj;
	size_t o = 0;
	int fx;

	buf[0] = '\0';
	for (fx = 0; fx < PB_FX__COUNT && o < sz; fx++) {
		confidence__predictions(lt->conf, i, fx, &chk, &fail, &unj);
		if (!predicts(lt, i, fx) && !chk && !unj)
			continue;
		o += (size_t)snprintf(buf + o, sz - o, "%s%s %llu checked, %llu failed, %llu unjudged",
				      o ? "; " : "", pb_effect_str(fx), (unsigned long long)chk,
				      (unsigned long long)fail, (unsigned long long)unj);
	}
}
