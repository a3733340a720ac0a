// SPDX-License-Identifier: BSD-2-Clause
/* flamegraph.c: an SVG flame graph of folded stacks (see flamegraph.h).
 * The folded lines become a tree of frames (children merged by name),
 * laid out bottom-up: a frame's box starts where its previous sibling's
 * ended and is value/total of the width wide; boxes under half a pixel
 * are left out (their time stays in the parent's width).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/flamegraph.h"
#include "analyze/html.h"

#define FG_ROW		17	/* px per frame row */
#define FG_CHAR		7	/* px per label character (monospace 12px) */

struct fg_node {
	const char *name;	/* into the owning fold's copy */
	size_t len;
	uint64_t value;
	int32_t child, next;	/* first child, next sibling; -1 none */
};

struct fg_tree {
	struct fg_node *v;
	size_t n, cap;
	int depth;
};

static int32_t fg_child(struct fg_tree *t, int32_t parent, const char *name, size_t len)
{
	int32_t c;

	for (c = t->v[parent].child; c >= 0; c = t->v[c].next)
		if (t->v[c].len == len && !memcmp(t->v[c].name, name, len))
			return c;
	if (t->n == t->cap) {
		size_t cap = t->cap * 2;
		struct fg_node *v = realloc(t->v, cap * sizeof(*v));

		if (!v)
			return -1;
		t->v = v;
		t->cap = cap;
	}
	c = (int32_t)t->n++;
	t->v[c] = (struct fg_node){ .name = name, .len = len, .child = -1, .next = t->v[parent].child };
	t->v[parent].child = c;
	return c;
}

static int fg_build(struct fg_tree *t, const struct stack_folds *f)
{
	size_t i;

	t->cap = 256;
	t->v = calloc(t->cap, sizeof(*t->v));
	if (!t->v)
		return -ENOMEM;
	t->v[0] = (struct fg_node){ .name = "all", .len = 3, .child = -1, .next = -1 };
	t->n = 1;
	for (i = 0; i < f->n; i++) {
		const char *p = f->v[i].stack, *e;
		int32_t at = 0;
		int d = 0;

		t->v[0].value += f->v[i].value;
		for (; *p; p = *e ? e + 1 : e) {
			e = strchr(p, ';');
			if (!e)
				e = p + strlen(p);
			at = fg_child(t, at, p, (size_t)(e - p));
			if (at < 0)
				return -ENOMEM;
			t->v[at].value += f->v[i].value;
			d++;
		}
		if (d > t->depth)
			t->depth = d;
	}
	return 0;
}

/* A warm colour from the name, stable across runs. */
static void fg_color(const char *s, size_t len, char *buf, size_t sz)
{
	uint32_t h = 2166136261u;

	while (len--)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	snprintf(buf, sz, "rgb(%u,%u,%u)", 205 + h % 50, 80 + (h >> 8) % 150, 40 + (h >> 16) % 50);
}

static void fg_draw(const struct fg_tree *t, int32_t n, double x, double scale, int depth,
		    int height, const char *what, uint64_t total, FILE *out)
{
	const struct fg_node *v = &t->v[n];
	double w = (double)v->value * scale, cx = x;
	int y = height - (depth + 1) * FG_ROW;
	size_t chars;
	char color[32];
	int32_t c;

	if (w < 0.5)
		return;
	fg_color(v->name, v->len, color, sizeof(color));
	fputs("<g class=\"frame\"><title>", out);
	html__escape(out, v->name, v->len);
	fprintf(out, " (%s %.3f ms, %.1f%%)</title><rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" "
		"height=\"%d\" fill=\"%s\" rx=\"2\"/>", what, (double)v->value / 1e6,
		total ? 100.0 * (double)v->value / (double)total : 0, x, y, w, FG_ROW - 1, color);
	chars = (size_t)((w - 6) / FG_CHAR);
	if (chars >= 3) {
		fprintf(out, "<text x=\"%.1f\" y=\"%d\">", x + 3, y + FG_ROW - 5);
		if (v->len <= chars) {
			html__escape(out, v->name, v->len);
		} else {
			html__escape(out, v->name, chars - 2);
			fputs("..", out);
		}
		fputs("</text>", out);
	}
	fputs("</g>\n", out);
	for (c = v->child; c >= 0; c = t->v[c].next) {
		fg_draw(t, c, cx, scale, depth + 1, height, what, total, out);
		cx += (double)t->v[c].value * scale;
	}
}

int flamegraph__svg(const struct stack_folds *f, const char *what, int width, FILE *out)
{
	struct fg_tree t = { 0 };
	int height, err;

	err = fg_build(&t, f);
	if (err) {
		free(t.v);
		return err;
	}
	height = (t.depth + 1) * FG_ROW + 4;
	fprintf(out, "<svg class=\"flamegraph\" id=\"flamegraph-%s\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" role=\"img\" font-family=\"monospace\" font-size=\"12\">\n",
		what, width, height, width, height);
	if (t.v[0].value)
		fg_draw(&t, 0, 0, (double)width / (double)t.v[0].value, 0, height, what,
			t.v[0].value, out);
	fputs("</svg>\n", out);
	free(t.v);
	return ferror(out) ? -EIO : 0;
}
