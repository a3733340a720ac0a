/* SPDX-License-Identifier: BSD-2-Clause */
/* manifest_schema.h: a JSON Schema (draft 2020-12) of manifest v1, for
 * editors (yaml-language-server) and independent validators
 * (manifest_schema.c), and the manifest skeleton writer behind `probity
 * manifest init` (manifest_init.c).
 */
#ifndef PROBITY_MANIFEST_SCHEMA_H
#define PROBITY_MANIFEST_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <jansson.h>

/* The schema, generated from the parser's own field and enum tables.
 * NULL on allocation failure. */
json_t *manifest__schema(void);

/* Fields the parser knows that the schema has no type for (a field added
 * to the parser without a line in manifest_schema.c's spec table): their
 * "table.key" names, comma-separated, into buf. Returns how many (0 when
 * the schema covers the parser). Such fields still appear in the schema,
 * untyped. */
int manifest__schema_gaps(char *buf, size_t sz);

/* The placeholder `manifest init` leaves where a person must choose; lint
 * reports each one still present as "left to fill". */
#define MANIFEST_PLACEHOLDER "TODO"

struct manifest_init_opts {
	const char *binary;	/* the ELF file to scan */
	const char *usdt_glob;	/* USDT probes to include (PROVIDER:NAME glob) */
	const char *symbol_glob; /* functions to include (mangled or demangled glob) */
	const char *name;	/* manifest name; NULL: the binary's base name */
	const char *date;	/* provenance date YYYY-MM-DD; NULL: today (UTC) */
	size_t max_events;	/* refuse more matched sites than this (0: 500) */
};

struct manifest_init_result {
	size_t n_events;	/* events written */
	size_t n_usdt, n_symbols;
	size_t n_skipped;	/* matched functions only in the debug file */
	size_t n_placeholders;	/* TODO fields left for the user */
	char build_id[129];
};

/* Write a manifest skeleton for opts->binary to out: the target with its
 * build-id, one stub resource, one candidate event per matched site with
 * its static evidence, and `TODO` wherever a person must choose (kind,
 * resource, instance, the resource's name/class/units). With no glob,
 * every USDT probe. 0, -ENOENT when nothing matched, -E2BIG when more
 * than max_events matched, other -errno from reading the binary. */
int manifest_init__write(const struct manifest_init_opts *opts, FILE *out,
			 struct manifest_init_result *res);

#endif
