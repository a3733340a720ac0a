/* SPDX-License-Identifier: BSD-2-Clause */
/* html.h: `probity report --html FILE`: one self-contained HTML page (inline
 * CSS and SVG, no script, nothing fetched from the network) with the
 * trace's facts, the ranked findings and their evidence, the log2
 * histograms, the per-resource series over the snapshots, a confidence
 * timeline per descriptor and its cross-layer predictions.
 */
#ifndef PROBITY_ANALYZE_HTML_H
#define PROBITY_ANALYZE_HTML_H

#include <stdio.h>

struct loaded_trace;

/* Write the page for a loaded trace (trace_path is shown as its name).
 * 0 or -errno (-EIO when out reports a write error). */
/* s[0..len) with < > & " escaped for HTML text and attributes (also SVG). */
void html__escape(FILE *out, const char *s, size_t len);
int report_html__write(const struct loaded_trace *lt, const char *trace_path, FILE *out);

#endif
