/* SPDX-License-Identifier: BSD-2-Clause */
/* probe.h: the marker for functions that demo.manifest.yaml names as probe sites. */
#ifndef DEMO_PROBE_H
#define DEMO_PROBE_H

/*
 * A probe site must keep one global symbol whose entry runs every time the
 * operation runs. noipa stops GCC from inlining, cloning (.constprop,
 * .isra), partial inlining (.part) and identical-code folding; used keeps
 * the symbol even if a caller disappears. Functions marked with this must
 * not be static: tests/cli/demo_runs.sh checks with nm that every symbol
 * the manifest names is a global text symbol.
 */
#ifdef __has_attribute
#if __has_attribute(noipa)
#define DEMO_HAS_NOIPA 1
#endif
#endif

#ifdef DEMO_HAS_NOIPA
#define DEMO_PROBE __attribute__((noipa, used))
#else
/* clang has no noipa; it does not clone global functions, so noinline is
 * what keeps every call going through the symbol. */
#define DEMO_PROBE __attribute__((noinline, used))
#endif

#endif /* DEMO_PROBE_H */
