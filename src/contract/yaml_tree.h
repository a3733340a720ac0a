/* SPDX-License-Identifier: BSD-2-Clause */
/* yaml_tree.h: a small positioned YAML tree built from libyaml events
 * (internal to src/contract).
 *
 * libyaml's document API loses nothing we need, but it expands aliases
 * and does not bound the work done on hostile input. Building our own tree
 * from the event stream lets the reader refuse aliases, multiple documents,
 * non-scalar keys and excessive nesting at the point they occur, with the
 * exact line:col, and keep every node's mark for later diagnostics.
 */
#ifndef PROBITY_YAML_TREE_H
#define PROBITY_YAML_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include "contract/manifest.h"

#define YT_MAX_DEPTH	32		/* a manifest nests 6 levels deep */
#define YT_MAX_NODES	1000000

enum ynode_kind {
	YNODE_SCALAR = 0,
	YNODE_SEQ,
	YNODE_MAP,
};

enum yscalar_style {
	YSTYLE_PLAIN = 0,
	YSTYLE_SINGLE,		/* 'quoted' */
	YSTYLE_DOUBLE,		/* "quoted" */
	YSTYLE_BLOCK,		/* | or > */
};

struct ynode {
	enum ynode_kind kind;
	struct pb_loc loc;	/* start mark, 1-based */
	struct pb_loc end;	/* end mark, 1-based */
	/* scalar */
	char *str;		/* NUL-terminated; may hold embedded NULs */
	size_t len;
	enum yscalar_style style;
	/* sequence: items[0..n); mapping: keys[i] -> items[i] */
	struct ynode **keys;
	struct ynode **items;
	size_t n, cap;
};

struct ytree_error {
	struct pb_loc loc;
	char msg[512];
};

/* Parse buf into a tree. Returns 0 with *root (NULL for a stream with no
 * document), -EINVAL with err filled for any YAML problem, -ENOMEM. */
int ytree__parse(const char *buf, size_t len, struct ynode **root, struct ytree_error *err);
void ynode__free(struct ynode *n);

/* Scalar helpers. */
bool ynode__is_null(const struct ynode *n);	/* plain "", "~", "null", "Null", "NULL" */
/* "a mapping", "a sequence", "'text'" (clipped), "nothing" for null. */
void ynode__describe(const struct ynode *n, char *buf, size_t sz);
const char *ynode__kind_str(const struct ynode *n);

#endif
