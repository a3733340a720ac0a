/* SPDX-License-Identifier: BSD-2-Clause */
/* framing.h: the one on-disk framing of probity's files.
 *
 * Trace files, sample files and the receipts lifecycle log all use it:
 *
 *   file header (little-endian):
 *     u8  magic[8]          per file kind, e.g. "PBTRACE\0"
 *     u32 version           format version of that file kind
 *     u32 header_len        bytes of the whole header, >= 16; a reader
 *                           accepts a longer header than it knows only
 *                           when the unknown bytes are zero
 *     u8  header_payload[header_len - 16]
 *   then chunks, each:
 *     u32 chunk_magic       "PBCK"
 *     u32 type              per file kind
 *     u32 len               payload bytes
 *     u32 crc               CRC-32 (zlib) of type, len and the payload
 *     u8  payload[len]
 *
 * A chunk is written with one write(2) of header+payload; a reader stops
 * at the first incomplete or corrupt chunk and reports where, so a file
 * cut short (SIGKILL, full disk) reads up to its last complete chunk and
 * a torn tail is never silently accepted.
 */
#ifndef PROBITY_FRAMING_H
#define PROBITY_FRAMING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define FRAME_MAGIC_LEN		8
#define FRAME_FILE_HDR_MIN	16
#define FRAME_CHUNK_HDR		16
#define FRAME_CHUNK_MAGIC	0x4b434250u	/* "PBCK" little-endian */
#define FRAME_MAX_CHUNK		(64u << 20)	/* sanity bound for readers */

struct frame_writer;
struct frame_reader;

struct frame_writer_opts {
	mode_t mode;		/* file mode for a new file (default 0600) */
	bool fsync_each;	/* fsync after every chunk (lifecycle log) */
	bool exclusive;		/* fail with -EEXIST if the file exists */
};

/* Create (truncate) path and write the file header. NULL + errno. */
struct frame_writer *frame_writer__create(const char *path, const char magic[FRAME_MAGIC_LEN],
					  uint32_t version, const void *hdr_payload,
					  size_t hdr_len, const struct frame_writer_opts *opts);
/* Open an existing framed file for appending, after checking its header
 * and every chunk. A torn or corrupt tail is not repaired: returns NULL
 * with errno EBADMSG, and *good_end (if given) gets the offset just past
 * the last good chunk so the caller can report it. */
struct frame_writer *frame_writer__open_append(const char *path,
					       const char magic[FRAME_MAGIC_LEN],
					       uint32_t *version, off_t *good_end,
					       const struct frame_writer_opts *opts);
/* Append one chunk (one write(2)). 0 or -errno. */
int frame_writer__append(struct frame_writer *w, uint32_t type, const void *buf, size_t len);
int frame_writer__sync(struct frame_writer *w);
int frame_writer__fd(const struct frame_writer *w);
uint64_t frame_writer__bytes(const struct frame_writer *w);
/* Close; returns 0 or the first error seen (-errno). Accepts NULL. */
int frame_writer__close(struct frame_writer *w);

/* Open and check the header. hdr and hdr_len point into the reader
 * (payload only, without the 16 fixed bytes). NULL + errno (EBADMSG for a
 * bad magic or header, EPROTONOSUPPORT for a version above max_version). */
struct frame_reader *frame_reader__open(const char *path, const char magic[FRAME_MAGIC_LEN],
					uint32_t max_version, uint32_t *version,
					const void **hdr, size_t *hdr_len);
/* Next chunk: 1 and buf, len (valid until the next call), 0 at a clean
 * end of file, -EBADMSG for a torn or corrupt chunk (see
 * frame_reader__error), -errno on I/O error. */
int frame_reader__next(struct frame_reader *r, uint32_t *type, const void **buf, size_t *len);
/* Offset of the next chunk (after a -EBADMSG: of the bad one). */
off_t frame_reader__offset(const struct frame_reader *r);
/* Why the last -EBADMSG happened, e.g. "chunk at offset 4096: CRC mismatch". */
const char *frame_reader__error(const struct frame_reader *r);
void frame_reader__free(struct frame_reader *r);

#endif
