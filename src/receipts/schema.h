/* SPDX-License-Identifier: BSD-2-Clause */
/* schema.h: the key names of every JSON record the receipts subsystem
 * writes and reads back: receipts (in-toto statements), lifecycle log
 * entries, the observer's counters and verify's findings. Writers build
 * records with these macros; readers go through the typed decoders of
 * receipts/decode.c (declared in receipts/lifelog.h, receipts/receipt.h
 * and receipts/verify.h), the one place that unpacks them. Renaming a
 * field touches this file and decode.c. docs/receipts.md describes the
 * formats.
 */
#ifndef PROBITY_RECEIPTS_SCHEMA_H
#define PROBITY_RECEIPTS_SCHEMA_H

#define PB_RECEIPT_PREDICATE_TYPE "https://probity.dev/receipt/v1"
#define PB_INTOTO_STATEMENT_TYPE "https://in-toto.io/Statement/v1"
#define PB_RECEIPT_SCHEMA "probity.receipt/v1"

/* ---- receipt: the in-toto statement ---- */
#define RK_TYPE			"_type"
#define RK_SUBJECT		"subject"
#define RK_PREDICATE_TYPE	"predicateType"
#define RK_PREDICATE		"predicate"
/* subject[] */
#define SUBJ_NAME		"name"
#define SUBJ_DIGEST		"digest"
#define SUBJ_DIGEST_SHA256	"sha256"

/* ---- receipt predicate ---- */
#define PK_SCHEMA		"schema"
#define PK_GENERATION		"generation"
#define PK_GENERATION_ID	"generation_id"
#define PK_PARENT_GENERATION_ID	"parent_generation_id"
#define PK_SOURCE_BUILD_ID	"source_build_id"
#define PK_ORIGINAL_BPF_TAG	"original_bpf_tag"
#define PK_SPECIALIZED_BPF_TAG	"specialized_bpf_tag"
#define PK_OPTIMIZER_BUILD_ID	"optimizer_build_id"
#define PK_TRANSFORM_IDS	"transform_ids"
#define PK_ASSUMPTION_IDS	"assumption_ids"
#define PK_VERIFIER_RESULT_DIGEST "verifier_result_digest"
#define PK_KERNEL_BUILD_ID	"kernel_build_id"
#define PK_JIT_BACKEND		"jit_backend"
#define PK_NATIVE_IMAGE_DIGEST	"native_image_digest"
#define PK_LINE_MAPPING_DIGEST	"line_mapping_digest"
#define PK_SUBMITTED_INSNS_DIGEST "submitted_insns_digest"
#define PK_XLATED_INSNS_DIGEST	"xlated_insns_digest"
#define PK_VERIFIER		"verifier"
#define PK_JIT			"jit"
#define PK_ARTIFACTS		"artifacts"
#define PK_PRODUCER		"producer"

/* predicate.generation: the hashed body (its digest is the generation id) */
#define GK_PARENT_GENERATION_ID	"parent_generation_id"
#define GK_SPECIALIZED_INSNS_DIGEST "specialized_insns_digest"
#define GK_SPECIALIZED_INSNS_SOURCE "specialized_insns_source"
#define GK_OPTIMIZER		"optimizer"
#define GK_TRANSFORMS		"transforms"
#define GK_ASSUMPTIONS		"assumptions"
#define GK_PROVENANCE		"provenance"
#define GK_SOURCE_BUILD_ID	"source_build_id"
#define GK_PROGRAM		"program"
#define GK_TARGET		"target"
/* generation.optimizer */
#define OPTK_NAME		"name"
#define OPTK_VERSION		"version"
#define OPTK_BUILD_ID		"build_id"
/* generation.transforms[] and .assumptions[] */
#define STEPK_ID		"id"
#define STEPK_DESCRIPTION	"description"
#define STEPK_EVIDENCE		"evidence"
/* generation.program */
#define PROGK_NAME		"name"
#define PROGK_TYPE		"type"
/* generation.target (capture__target_env) */
#define TGTK_KERNEL_BUILD_ID	"kernel_build_id"
#define TGTK_KERNEL_RELEASE	"kernel_release"
#define TGTK_ARCH		"arch"
#define TGTK_JIT_BACKEND	"jit_backend"
#define TGTK_BPF_JIT_ENABLE	"bpf_jit_enable"
#define TGTK_BPF_JIT_HARDEN	"bpf_jit_harden"
#define TGTK_BPF_JIT_KALLSYMS	"bpf_jit_kallsyms"
#define TGTK_JIT_NORMALIZATION	"jit_normalization"
/* predicate.verifier (the first four are the verifier result digest's body) */
#define VERK_ACCEPTED		"accepted"
#define VERK_LOG_LEVEL		"log_level"
#define VERK_VERIFIED_INSNS	"verified_insns"
#define VERK_LOG_NORMALIZED_DIGEST "log_normalized_digest"
#define VERK_LOG		"log"
/* predicate.jit */
#define JITK_IMAGE		"image"
#define JITK_IMAGE_LEN		"image_len"
#define JITK_FUNC_LENS		"func_lens"
#define JITK_NORMALIZATION	"normalization"
#define JITK_MASKED_OPERANDS	"masked_operands"
/* predicate.artifacts: artifact name -> object digest */
#define ARTK_XLATED_INSNS	"xlated_insns"
#define ARTK_JIT_IMAGE		"jit_image"
#define ARTK_LINE_MAPPING	"line_mapping"
#define ARTK_SUBMITTED_INSNS	"submitted_insns"
#define ARTK_VERIFIER_LOG	"verifier_log"
#define ARTK_BTF		"btf"
/* predicate.producer */
#define PRODK_NAME		"name"
#define PRODK_VERSION		"version"

/* ---- lifecycle log entry: header (lifelog__append, every kind) ---- */
#define LK_KIND			"kind"
#define LK_SEQ			"seq"
#define LK_PREV			"prev"
#define LK_MONO_NS		"mono_ns"
#define LK_REALTIME_NS		"realtime_ns"
#define LK_PID			"pid"
/* added by lifelog__read, never stored */
#define LK_HASH			"_hash"
#define LK_OFFSET		"_offset"
#define LK_PUBLIC_HASH		"hash"		/* _hash as `receipts log -j` shows it */
/* generation-bearing kinds: loaded, activated, retired, unloaded,
 * link-updated (the installed generation) */
#define LK_GENERATION_ID	"generation_id"
#define LK_RECEIPT		"receipt"
#define LK_PROG_ID		"prog_id"
/* loaded */
#define LK_PROG_TAG		"prog_tag"
#define LK_PROG_NAME		"prog_name"
#define LK_JIT_RANGES		"jit_ranges"
#define LK_LOAD_TIME_BOOT_NS	"load_time_boot_ns"
#define LK_SOURCE		"source"
#define LK_TIMING		"timing"
#define LK_CAPTURE		"capture"	/* observer: "failed" / "gone" */
#define LK_ERROR		"error"
#define LK_LOADER		"loader"
#define LK_SEEN_MONO_NS		"seen_mono_ns"
#define LK_CAPTURED_VIA		"captured_via"
/* loaded.timing */
#define TIMK_LOAD_NS		"load_ns"
#define TIMK_CAPTURE_NS		"capture_ns"
/* activated */
#define LK_LINK			"link"
#define LK_HOOK			"hook"
#define LK_SWAP_BEGIN_MONO_NS	"swap_begin_mono_ns"
#define LK_SWAP_END_MONO_NS	"swap_end_mono_ns"
#define LK_SWAP_BEGIN_REALTIME_NS "swap_begin_realtime_ns"
#define LK_SWAP_END_REALTIME_NS	"swap_end_realtime_ns"
#define LK_REPLACES		"replaces"
#define LK_OLD_PROG_ID		"old_prog_id"	/* also link-updated */
/* retired */
#define LK_REASON		"reason"
/* unloaded (observer) */
#define LK_PERF_MONO_NS		"perf_mono_ns"
#define LK_KSYMBOLS_UNREGISTERED "ksymbols_unregistered"
/* link-updated (observer) */
#define LK_OP			"op"		/* "create" / "update" */
#define LK_LINK_ID		"link_id"
#define LK_LINK_TYPE		"link_type"
#define LK_NEW_PROG_ID		"new_prog_id"
#define LK_OLD_GENERATION_ID	"old_generation_id"
#define LK_NEW_GENERATION_ID	"new_generation_id"
#define LK_CALLER		"caller"
#define LK_SYSCALL_ENTER_MONO_NS "syscall_enter_mono_ns"
#define LK_SYSCALL_EXIT_MONO_NS	"syscall_exit_mono_ns"
#define LK_IFINDEX		"ifindex"
/* observer */
#define LK_EVENT		"event"		/* "start" / "stop" */
#define LK_CPUS			"cpus"
#define LK_STATS		"stats"
/* durable (group commit watermark) */
#define LK_THROUGH_SEQ		"through_seq"
#define LK_DURABLE_STATE	"state"		/* "open" / "sync" / "final" */
#define DURABLE_OPEN		"open"
#define DURABLE_SYNC		"sync"
#define DURABLE_FINAL		"final"

/* jit_ranges[] (capture__jit_ranges) */
#define JRK_ADDR		"addr"		/* "0x..." */
#define JRK_LEN			"len"
/* activated.link (the kernel's bpf_link_info, or {"error"}) */
#define LINKK_ID		"id"
#define LINKK_TYPE		"type"
#define LINKK_PROG_ID		"prog_id"
#define LINKK_IFINDEX		"ifindex"
#define LINKK_NETNS_INO		"netns_ino"
#define LINKK_ERROR		"error"
/* loaded.loader and link-updated.caller */
#define LDRK_PID		"pid"
#define LDRK_TID		"tid"
#define LDRK_COMM		"comm"
#define LDRK_SYSCALL_ENTER_MONO_NS "syscall_enter_mono_ns"
#define LDRK_SYSCALL_EXIT_MONO_NS "syscall_exit_mono_ns"
/* unloaded.ksymbols_unregistered[] */
#define KSK_ADDR		"addr"
#define KSK_LEN			"len"
#define KSK_NAME		"name"
#define KSK_MONO_NS		"mono_ns"

/* ---- observer counters (observer.stats, `watch -j` stats) ---- */
#define OSK_BPF_SYSCALLS	"bpf_syscalls"
#define OSK_IDS_RESOLVED	"ids_resolved_in_kernel"
#define OSK_LOADS_SEEN		"loads_seen"
#define OSK_CAPTURED		"captured"
#define OSK_CAPTURED_BY_FD	"captured_by_fd"
#define OSK_CAPTURED_BY_ID	"captured_by_id"
#define OSK_LINK_CREATES	"link_creates"
#define OSK_LINK_UPDATES	"link_updates"
#define OSK_UNLOADS		"unloads"
#define OSK_KSYMBOL_RECORDS	"ksymbol_records"
#define OSK_FAILED_LOADS	"failed_loads"
#define OSK_MISSED		"missed"
/* stats.missed */
#define OMK_GONE_BEFORE_CAPTURE	"gone_before_capture"
#define OMK_PERF_RECORDS_LOST	"perf_records_lost"
#define OMK_RINGBUF_DROPPED	"ringbuf_dropped"
#define OMK_SYSCALLS_NOT_FOLLOWED "syscalls_not_followed"
#define OMK_FD_NOT_DUPLICATED	"fd_not_duplicated"
#define OMK_LINKS_UNRESOLVED	"links_unresolved"
#define OMK_LOG_WRITE_ERRORS	"log_write_errors"

/* ---- verify findings (problems[] and notes[]) ---- */
#define VFK_WHERE		"where"
#define VFK_WHAT		"what"

#endif
