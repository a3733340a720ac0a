/* SPDX-License-Identifier: BSD-2-Clause */
/* capture.h: what the kernel says about a loaded BPF program
 * (bpf_prog_info: instructions, JIT image, line info, BTF) and about the
 * kernel and JIT it runs on.
 */
#ifndef PROBITY_RECEIPTS_CAPTURE_H
#define PROBITY_RECEIPTS_CAPTURE_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

struct pb_capture {
	uint32_t prog_id;
	uint32_t prog_type;
	char name[16];
	uint8_t tag[8];
	uint64_t load_time;
	uint32_t verified_insns;
	uint32_t btf_id;
	uint8_t *xlated; uint32_t xlated_len;
	uint8_t *jited; uint32_t jited_len;
	uint64_t *ksyms; uint32_t nr_ksyms;
	uint32_t *func_lens; uint32_t nr_func_lens;
	uint8_t *line_info; uint32_t nr_line_info, line_info_rec_size;
	uint64_t *jited_line_info; uint32_t nr_jited_line_info;
	uint8_t *btf; uint32_t btf_len;
};
int capture__prog_fd(int fd, struct pb_capture **out);
void capture__free(struct pb_capture *c);
/* {"kernel_build_id","kernel_release","arch","jit_backend",
 *  "bpf_jit_enable","bpf_jit_harden","bpf_jit_kallsyms"} */
json_t *capture__target_env(void);
int capture__kernel_build_id(char *hex, size_t sz);
/* "addr"/"len" array from jited_ksyms + jited_func_lens */
json_t *capture__jit_ranges(const struct pb_capture *c);

#endif
