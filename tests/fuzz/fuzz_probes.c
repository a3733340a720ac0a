/* SPDX-License-Identifier: BSD-2-Clause */
/* fuzz_probes.c: libFuzzer entry point for `probity probes` and `manifest
 * init` (src/elf/probes.c, src/elf/dwarf.c, src/contract/manifest_init.c):
 * the binary listed is untrusted input, and the debug information is read
 * by libdw. Each input is written to a scratch file (libdwfl opens files by
 * path), then listed, printed as JSON and searched for a struct (even
 * lengths), or turned into a manifest skeleton (odd lengths). Seeds: tests/fuzz/corpus/fuzz_probes/ (the probes
 * fixture with and without its DWARF, small ELF files of other machines).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "contract/manifest_schema.h"
#include "elf/probes.h"
#include "fuzz_tmp.h"

static int quiet(enum pb_log_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct manifest_init_opts o = { .usdt_glob = "*", .symbol_glob = "*", .date = "2026-01-01" };
	struct manifest_init_result r;
	struct probe_list *l = NULL;
	struct dwarf_struct *s = NULL;
	char dir[128], path[160];
	json_t *j;
	FILE *out;
	int fd;

	pb_set_print(quiet);
	snprintf(dir, sizeof(dir), "%s/pb-fuzz-probes.XXXXXX", base);
	if (!mkdtemp(dir))
		return 0;
	snprintf(path, sizeof(path), "%s/bin", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size) {
		if (fd >= 0)
			close(fd);
		goto out;
	}
	close(fd);
	/* Even lengths: the listing (`probity probes`) and the DWARF struct
	 * lookup; odd lengths: `manifest init`, which loads the binary twice
	 * more (USDT notes, then functions). All three loads on every input
	 * spent most of an execution in libelf/libdw set-up and tear-down
	 * (perf: munmap TLB shoot-downs ~20 %); the fuzzer reaches both
	 * through the length, and the seeds come in both parities. */
	if (size & 1)
		goto init;
	if (!probe_list__load(path, NULL, &l)) {
		j = probe_list__to_json(l);
		json_decref(j);
		if (!probe_list__find_struct(l, "pb_layout_t", &s)) {
			j = dwarf_struct__to_json(s);
			json_decref(j);
		}
		dwarf_struct__free(s);
		probe_list__free(l);
	}
	goto out;
init:
	o.binary = path;
	out = fopen("/dev/null", "w");
	if (out) {
		manifest_init__write(&o, out, &r);
		fclose(out);
	}
out:
	fuzz_tmp_remove(dir);
	return 0;
}
