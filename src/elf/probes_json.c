/* SPDX-License-Identifier: BSD-2-Clause */
/* probes_json.c: the probe listing and struct layouts as JSON (what
 * `probity -j probes` prints; shape in docs/probity.md).
 */
#include <jansson.h>

#include "elf/probes.h"

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *site_json(const struct probe_site *s)
{
	json_t *o;

	o = json_pack("{s:s, s:s, s:o, s:I, s:I, s:s, s:s, s:s}",
		      "kind", s->kind == PROBE_USDT ? "usdt" : "function",
		      "name", s->name,
		      "table", str_or_null(probe_table_str(s->table)),
		      "vaddr", (json_int_t)s->vaddr,
		      "file_offset", (json_int_t)s->file_offset,
		      "exec", insn_exec_str(s->exec),
		      "insn", s->insn,
		      "note", s->note);
	if (!o)
		return NULL;
	if (s->kind == PROBE_USDT) {
		json_object_set_new(o, "provider", json_string(s->provider));
		json_object_set_new(o, "args", json_string(s->args));
		json_object_set_new(o, "n_args", json_integer(s->n_args));
		json_object_set_new(o, "semaphore",
				    s->semaphore ? json_integer((json_int_t)s->semaphore) : json_null());
		json_object_set_new(o, "function", str_or_null(s->function));
	} else {
		json_object_set_new(o, "demangled", str_or_null(s->demangled));
		json_object_set_new(o, "version", str_or_null(s->version));
		json_object_set_new(o, "size", json_integer((json_int_t)s->size));
		json_object_set_new(o, "bind", json_string(s->global ? "global" : "local"));
		json_object_set_new(o, "ifunc", json_boolean(s->ifunc));
	}
	return o;
}

json_t *probe_list__to_json(const struct probe_list *l)
{
	json_t *doc, *usdt, *funcs, *counts;
	size_t i;

	usdt = json_array();
	funcs = json_array();
	for (i = 0; usdt && funcs && i < l->n; i++)
		json_array_append_new(l->sites[i].kind == PROBE_USDT ? usdt : funcs,
				      site_json(&l->sites[i]));
	counts = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
			   "usdt", (json_int_t)l->n_usdt, "functions", (json_int_t)l->n_func,
			   "debug_file_only", (json_int_t)l->n_debug_only,
			   "optimizable", (json_int_t)l->n_exec[INSN_EXEC_OPTIMIZABLE],
			   "emulated", (json_int_t)l->n_exec[INSN_EXEC_EMULATED],
			   "single_step", (json_int_t)l->n_exec[INSN_EXEC_SINGLE_STEP],
			   "unknown", (json_int_t)l->n_exec[INSN_EXEC_UNKNOWN]);
	doc = json_pack("{s:s, s:o, s:o, s:b, s:b, s:o, s:o, s:o}",
			"binary", l->path,
			"build_id", l->build_id[0] ? json_string(l->build_id) : json_null(),
			"debug_file", str_or_null(l->dw ? dwarf_info__debug_file(l->dw) : NULL),
			"dwarf", l->dw && dwarf_info__has_dwarf(l->dw),
			"demangler", l->demangler,
			"counts", counts ? counts : json_null(),
			"usdt", usdt ? usdt : json_null(),
			"functions", funcs ? funcs : json_null());
	return doc;
}

json_t *dwarf_struct__to_json(const struct dwarf_struct *s)
{
	json_t *members = json_array();
	size_t i;

	for (i = 0; members && i < s->n_members; i++) {
		const struct dwarf_member *m = &s->members[i];

		json_array_append_new(members,
				      json_pack("{s:s, s:s, s:I, s:I, s:I, s:I}", "name", m->name,
						"type", m->type, "offset", (json_int_t)m->offset,
						"size", (json_int_t)m->size,
						"bit_size", (json_int_t)m->bit_size,
						"bit_offset", (json_int_t)m->bit_offset));
	}
	return json_pack("{s:s, s:s, s:I, s:o, s:i, s:o}", "name", s->name, "kind", s->kind,
			 "size", (json_int_t)s->size, "decl_file", str_or_null(s->decl_file),
			 "decl_line", s->decl_line, "members", members ? members : json_null());
}
