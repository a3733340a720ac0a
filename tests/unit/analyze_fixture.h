/* SPDX-License-Identifier: BSD-2-Clause */
/* analyze_fixture.h: the two-resource manifest (a page pool and a
 * connection pool, WAIT/ACQUIRE/USE/RELEASE each) that the analysis unit
 * tests (test_analyze.c, test_probefx.c) build their synthetic evidence
 * on, and its descriptor indices. */
#ifndef PROBITY_TEST_ANALYZE_FIXTURE_H
#define PROBITY_TEST_ANALYZE_FIXTURE_H

static const char *const manifest_yaml =
	"manifest: 1\n"
	"name: t\n"
	"targets:\n"
	"  - binary: /usr/bin/x\n"
	"    build_id: 0123456789abcdef\n"
	"resources:\n"
	"  - { name: t.pool, class: pool, units: pages, capacity: 16 }\n"
	"  - { name: t.conn, class: connection, units: conns, capacity: 8 }\n"
	"events:\n"
	"  - { id: p_wait, resource: t.pool, kind: WAIT, site: { symbol: pw, at: span }, instance: arg0, confidence: validated }\n"
	"  - { id: p_get, resource: t.pool, kind: ACQUIRE, site: { symbol: pg }, instance: arg0, confidence: validated }\n"
	"  - { id: p_use, resource: t.pool, kind: USE, site: { symbol: pu }, instance: arg0, confidence: validated }\n"
	"  - { id: p_put, resource: t.pool, kind: RELEASE, site: { symbol: pp }, instance: arg0, confidence: validated }\n"
	"  - { id: c_wait, resource: t.conn, kind: WAIT, site: { symbol: cw, at: span }, instance: arg0, confidence: validated }\n"
	"  - { id: c_acq, resource: t.conn, kind: ACQUIRE, site: { symbol: ca }, instance: arg0, confidence: validated }\n"
	"  - { id: c_use, resource: t.conn, kind: USE, site: { symbol: cu }, instance: arg0, confidence: validated }\n"
	"  - { id: c_rel, resource: t.conn, kind: RELEASE, site: { symbol: cr }, instance: arg0, confidence: validated }\n";

enum { P_WAIT, P_GET, P_USE, P_PUT, C_WAIT, C_ACQ, C_USE, C_REL, N_DESC };

#endif
