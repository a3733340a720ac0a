/* SPDX-License-Identifier: BSD-2-Clause */
/* fuzz_trace.c: libFuzzer entry point for the trace reader
 * (src/trace/trace.c over common/framing.c): any bytes as a trace file
 * must open or fail cleanly, and every item must iterate without reading
 * outside what the reader returned.
 * The first input byte picks how the bytes are used:
 *   'C' + file    the rest as a trace file with its framing made valid
 *                 (fuzz_frame.h: magic, header length, every chunk's
 *                 length and CRC), so mutations reach the header, plan,
 *                 snapshot, records, note and end decoders behind the CRC
 *   otherwise     the input is the file as it is (raw seeds start 'P'):
 *                 the CRC, torn-tail and bad-length paths themselves
 * Seeds: tests/fuzz/corpus/fuzz_trace (real traces written by `probity
 * record` on the demo, a cut one, a multi-process trace with its process
 * table, 'C' variants of each; see tests/fuzz/mk-frame-seeds.sh).
 * Dictionary: fuzz_trace.dict. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "analyze/script.h"
#include "trace/trace.h"
#include "fuzz_frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[64];
	static FILE *devnull;
	struct trace_reader *r;
	struct trace_item it;
	volatile uint64_t sink = 0;
	const void *m;
	size_t n, i;
	FILE *f;
	int k;

	if (!path[0]) {
		snprintf(path, sizeof(path), "%s/fuzz_trace.%d",
			 access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm", (int)getpid());
		devnull = fopen("/dev/null", "w");
	}
	f = fopen(path, "wb");
	if (!f)
		return 0;
	if (size && data[0] == 'C') {
		uint8_t *b = malloc(size);

		if (!b) {
			fclose(f);
			return 0;
		}
		memcpy(b, data + 1, size - 1);
		fuzz_frame_fixup(b, size - 1, TRACE_MAGIC);
		fwrite(b, 1, size - 1, f);
		free(b);
	} else {
		fwrite(data, 1, size, f);
	}
	fclose(f);
	r = trace_reader__open(path);
	if (!r) {
		unlink(path);
		return 0;
	}
	m = trace_reader__manifest(r, &n);
	for (i = 0; i < n; i++)
		sink += ((const uint8_t *)m)[i];
	trace_reader__descriptors(r, &n);
	trace_reader__sites(r, &n);
	for (k = 0; k < 2; k++) {
		while (trace_reader__next(r, &it) == 1) {
			if (it.type == TRACE_ITEM_RECORD) {
				for (i = 0; i < it.rec_len; i++)
					sink += ((const uint8_t *)it.rec)[i];
			} else if (it.type == TRACE_ITEM_SNAPSHOT) {
				for (i = 0; i < it.snap.n_desc; i++)
					sink += it.snap.desc[i].events;
				for (i = 0; i < it.snap.n_res; i++)
					sink += (uint64_t)it.snap.res[i].live_instances;
			} else if (it.type == TRACE_ITEM_NOTE) {
				sink += strlen(it.note);
			} else if (it.type == TRACE_ITEM_PROCS) {
				for (i = 0; i < it.n_procs; i++)
					sink += it.procs[i].pid + strlen(it.procs[i].comm);
			}
		}
		trace_reader__ended_cleanly(r);
		trace_reader__cut_reason(r);
		if (trace_reader__rewind(r))
			break;
	}
	trace_reader__free(r);
	/* probity script over the same bytes, for inputs of odd length:
	 * JSON Lines when bit 1 of the length is set, else text. The script
	 * re-opens the trace, parses its embedded manifest (libyaml: a third
	 * of an execution, perf) and reads every chunk again, so running both
	 * printers on every input was ~60 % of the target's time, spent on
	 * the consumer rather than the reader's decoders; the fuzzer reaches
	 * both printers, and the reader alone, through the length. */
	if ((size & 1) && devnull) {
		struct trace_script_opts so = { .json = (int)(size >> 1 & 1) };
		struct trace_script_stats st;
		char err[256];

		trace_script__run(path, &so, devnull, &st, err, sizeof(err));
	}
	unlink(path);
	(void)sink;
	return 0;
}
