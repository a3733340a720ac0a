/* SPDX-License-Identifier: BSD-2-Clause */
/* flamegraph.h: folded stacks (analyze/stacks.h) as one self-contained
 * SVG flame graph: root at the bottom, each frame a box as wide as the
 * time spent under it, a <title> per box (hover text, no script).
 */
#ifndef PROBITY_ANALYZE_FLAMEGRAPH_H
#define PROBITY_ANALYZE_FLAMEGRAPH_H

#include <stdio.h>
#include "analyze/stacks.h"

/* Write <svg class="flamegraph" ...> of width px for f. what names the
 * value ("wait", "hold"). 0, -ENOMEM, or -EIO on a write error. */
int flamegraph__svg(const struct stack_folds *f, const char *what, int width, FILE *out);

#endif
