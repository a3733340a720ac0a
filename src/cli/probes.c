/* SPDX-License-Identifier: BSD-2-Clause */
/* probes.c (cli): `probity probes BIN | --pid PID [GLOB] [--struct NAME]`:
 * list where probes can go (src/elf/probes.c) or print a struct's layout
 * from DWARF; parsing and printing only.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "elf/probes.h"

static void probes_help(FILE *out)
{
	fprintf(out,
		"Usage: %s [-j] probes BINARY [GLOB] [OPTIONS]\n"
		"       %s [-j] probes --pid PID [GLOB] [OPTIONS]\n"
		"       %s [-j] probes BINARY --struct NAME\n"
		"\n"
		"List the places of a binary a manifest can probe, like `bpftrace -l` or\n"
		"`perf probe -F`: USDT probes (PROVIDER:NAME, argument spec, semaphore) and\n"
		"function symbols (.symtab, .dynsym, and the .symtab of a separate debug\n"
		"file found by build-id or .gnu_debuglink; C++ names demangled, with the\n"
		"mangled name a manifest uses). Each site shows the first instruction a\n"
		"uprobe replaces and what the kernel does with it:\n"
		"  optimizable  a 5-byte nop: x86-64 kernels >= 6.18 turn the trap into a\n"
		"               call after the first hit (the cheapest uprobe)\n"
		"  emulated     one trap, the instruction emulated (push, branch, nop)\n"
		"  single-step  one trap, then the instruction single-stepped out of line\n"
		"  unknown      not decoded (the reason is shown)\n"
		"GLOB (fnmatch) filters on PROVIDER:NAME for USDT probes and on the mangled\n"
		"or demangled name for functions, e.g. 'postgresql:lwlock*' or 'pool_*'.\n"
		"\n"
		"Options:\n"
		"  -p, --pid PID        list the executable process PID runs\n"
		"  -s, --struct NAME    print the members of struct/union NAME (or a typedef\n"
		"                       of one) with their offsets, from DWARF\n"
		"      --usdt           USDT probes only\n"
		"      --functions      function symbols only\n"
		"  -h, --help           show this help\n"
		"\n"
		"Exit status: 0 listed, 1 nothing matched (or no such struct, or no DWARF),\n"
		"2 usage error or unreadable binary.\n",
		bin_name, bin_name, bin_name);
}

struct probes_args {
	const char *binary;
	const char *struct_name;
	struct probe_list_opts o;
};

/* -1 to go on, else an exit status */
static int parse_args(int argc, char **argv, struct probes_args *a)
{
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "struct", required_argument, NULL, 's' },
		{ "usdt", no_argument, NULL, 'U' },
		{ "functions", no_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	char *end;
	long pid;
	int opt;

	while ((opt = getopt_long(argc, argv, "p:s:h", opts, NULL)) >= 0) {
		switch (opt) {
		case 'p':
			errno = 0;
			pid = strtol(optarg, &end, 10);
			if (errno || *end || pid <= 0 || pid > 0x3fffffff) {
				p_err("--pid: expected a process id, found '%s'", optarg);
				return EXIT_USAGE;
			}
			a->o.pid = (pid_t)pid;
			break;
		case 's':
			a->struct_name = optarg;
			break;
		case 'U':
			a->o.no_funcs = true;
			break;
		case 'F':
			a->o.no_usdt = true;
			break;
		case 'h':
			probes_help(stdout);
			return EXIT_OK;
		default:
			probes_help(stderr);
			return EXIT_USAGE;
		}
	}
	if (!a->o.pid && optind < argc)
		a->binary = argv[optind++];
	if (optind < argc)
		a->o.glob = argv[optind++];
	if (optind < argc || (!a->binary && !a->o.pid)) {
		p_err(optind < argc ? "unexpected argument '%s' (see '%s probes --help')"
				    : "expected a BINARY or --pid PID%s (see '%s probes --help')",
		      optind < argc ? argv[optind] : "", bin_name);
		return EXIT_USAGE;
	}
	if (a->o.no_funcs && a->o.no_usdt) {
		p_err("--usdt and --functions exclude each other (give neither for both)");
		return EXIT_USAGE;
	}
	return -1;
}

static void print_usdt(const struct probe_site *s)
{
	char where[300];

	snprintf(where, sizeof(where), "%s:%s", s->provider, s->name);
	printf("  usdt %-44s %-11s %-18s args: %s%s", where, insn_exec_str(s->exec),
	       s->insn[0] ? s->insn : "-", s->args[0] ? s->args : "(none)",
	       s->function ? "" : "\n");
	if (s->function)
		printf("  in %s\n", s->function);
	if (s->semaphore)
		printf("       semaphore 0x%llx (libbpf raises it while attached)\n",
		       (unsigned long long)s->semaphore);
}

static void print_func(const struct probe_site *s)
{
	printf("  func %-44s %-11s %-18s %s%s%s\n", s->demangled ? s->demangled : s->name,
	       insn_exec_str(s->exec), s->insn[0] ? s->insn : "-",
	       s->global ? "global" : "local", s->table == PROBE_TABLE_DEBUG ? " (debug file)" : "",
	       s->ifunc ? " ifunc" : "");
	if (s->demangled)
		printf("       symbol %s\n", s->name);
	if (s->exec == INSN_EXEC_UNKNOWN)
		printf("       %s\n", s->note);
}

static void print_list(const struct probe_list *l)
{
	const char *dbg = l->dw ? dwarf_info__debug_file(l->dw) : NULL;
	size_t i;

	printf("binary    %s\nbuild-id  %s\n", l->path, l->build_id[0] ? l->build_id : "(none)");
	if (dbg)
		printf("debug     %s\n", dbg);
	printf("sites     %zu USDT, %zu function%s%s; first instruction: %zu optimizable, %zu emulated, %zu single-step, %zu unknown\n\n",
	       l->n_usdt, l->n_func, l->n_func == 1 ? "" : "s", l->n_debug_only ? " (some only in the debug file)" : "",
	       l->n_exec[INSN_EXEC_OPTIMIZABLE], l->n_exec[INSN_EXEC_EMULATED],
	       l->n_exec[INSN_EXEC_SINGLE_STEP], l->n_exec[INSN_EXEC_UNKNOWN]);
	printf("  KIND %-44s %-11s %-18s DETAILS\n", "SITE", "UPROBE", "FIRST-INSTRUCTION");
	for (i = 0; i < l->n; i++) {
		if (l->sites[i].kind == PROBE_USDT)
			print_usdt(&l->sites[i]);
		else
			print_func(&l->sites[i]);
	}
	if (l->n_debug_only)
		printf("\n%zu function%s only in the debug file: `plan` resolves symbols in the binary's own tables, so a manifest cannot name %s yet.\n",
		       l->n_debug_only, l->n_debug_only == 1 ? " is" : "s are",
		       l->n_debug_only == 1 ? "it" : "them");
}

static void print_struct(const struct dwarf_struct *s)
{
	size_t i;

	printf("%s %s: %llu bytes", s->kind, s->name, (unsigned long long)s->size);
	if (s->decl_file)
		printf(" (%s:%d)", s->decl_file, s->decl_line);
	printf("\n  %-8s %-6s %-28s %s\n", "OFFSET", "SIZE", "MEMBER", "TYPE");
	for (i = 0; i < s->n_members; i++) {
		const struct dwarf_member *m = &s->members[i];
		char off[40];

		if (m->bit_size)
			snprintf(off, sizeof(off), "%llu:%u", (unsigned long long)m->offset,
				 m->bit_offset);
		else
			snprintf(off, sizeof(off), "%llu", (unsigned long long)m->offset);
		printf("  %-8s %-6llu %-28s %s%s\n", off, (unsigned long long)m->size, m->name,
		       m->type, m->bit_size ? " (bit-field)" : "");
	}
}

static int show_struct(struct probe_list *l, const char *name)
{
	struct dwarf_struct *s = NULL;
	int err;

	err = probe_list__find_struct(l, name, &s);
	if (err == -ENODATA) {
		p_err("%s: no DWARF found; looked in:\n%s", l->path,
		      l->dw ? dwarf_info__searched(l->dw) : "(libdwfl could not open the file)\n");
		return EXIT_FINDINGS;
	}
	if (err == -ENOENT) {
		p_err("%s: no complete struct, union or typedef '%s' in the DWARF of %s", l->path,
		      name, l->dw && dwarf_info__debug_file(l->dw) ? dwarf_info__debug_file(l->dw)
								    : l->path);
		return EXIT_FINDINGS;
	}
	if (err) {
		p_err("%s: reading DWARF: %s", l->path, strerror(-err));
		return EXIT_FAILURE_RT;
	}
	if (json_output)
		json_print_and_free(dwarf_struct__to_json(s));
	else
		print_struct(s);
	dwarf_struct__free(s);
	return EXIT_OK;
}

int do_probes(int argc, char **argv)
{
	struct probes_args a = { 0 };
	struct probe_list *l = NULL;
	int ret, err;

	ret = parse_args(argc, argv, &a);
	if (ret >= 0)
		return ret;
	err = probe_list__load(a.binary, &a.o, &l);
	if (err) {
		if (a.o.pid)
			p_err("process %d: %s", (int)a.o.pid, strerror(-err));
		else
			p_err("%s: %s", a.binary, err == -ENOEXEC ? "not an ELF file" : strerror(-err));
		return err == -ENOMEM ? EXIT_FAILURE_RT : EXIT_USAGE;
	}
	if (a.struct_name) {
		ret = show_struct(l, a.struct_name);
		goto out;
	}
	if (json_output)
		json_print_and_free(probe_list__to_json(l));
	else
		print_list(l);
	ret = EXIT_OK;
	if (!l->n) {
		fprintf(stderr, "%s: no probe site%s%s%s\n", l->path, a.o.glob ? " matches '" : "",
			a.o.glob ? a.o.glob : "", a.o.glob ? "'" : "");
		ret = EXIT_FINDINGS;
	}
out:
	probe_list__free(l);
	return ret;
}
