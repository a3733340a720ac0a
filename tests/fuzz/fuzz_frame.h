/* SPDX-License-Identifier: BSD-2-Clause */
/* fuzz_frame.h: the checksum fix-up shared by the fuzz targets of the
 * framed formats (trace, sample file, lifecycle log; common/framing.h).
 *
 * A mutated byte inside a chunk fails that chunk's CRC and the reader
 * (correctly) stops there, so raw fuzzing never reaches the decoders
 * behind the check. fuzz_frame_fixup() makes the framing of a buffer
 * valid in place before it is handed to the real reader:
 *   - the file magic is set to the kind's magic (when given),
 *   - header_len is clamped into [16, size],
 *   - every chunk gets the "PBCK" magic, a length clamped to the bytes
 *     left in the buffer (the last chunk takes the rest), and the CRC of
 *     its type, length and payload recomputed;
 *   - a tail shorter than a chunk header stays as it is (the torn-header
 *     path is still reached).
 * The raw mode (bytes as they are) of each target keeps testing the CRC,
 * torn-tail and bad-length paths themselves. */
#ifndef PROBITY_FUZZ_FRAME_H
#define PROBITY_FUZZ_FRAME_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <zlib.h>

static inline uint32_t fuzz_frame_get32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void fuzz_frame_put32(uint8_t *p, uint32_t v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}

static inline uint32_t fuzz_frame_crc(uint32_t type, uint32_t len, const uint8_t *payload)
{
	uint8_t tl[8];
	uLong c = crc32(0L, Z_NULL, 0);

	fuzz_frame_put32(tl, type);
	fuzz_frame_put32(tl + 4, len);
	c = crc32(c, tl, 8);
	if (len)
		c = crc32(c, payload, len);
	return (uint32_t)c;
}

/* Fix magic (8 bytes, or NULL to leave it), header_len, and every chunk's
 * magic, length and CRC in b[0..n). Returns the number of chunks fixed. */
static inline size_t fuzz_frame_fixup(uint8_t *b, size_t n, const char *magic)
{
	size_t off, chunks = 0;
	uint32_t hl;

	if (n < 16)
		return 0;
	if (magic)
		memcpy(b, magic, 8);
	hl = fuzz_frame_get32(b + 12);
	if (hl < 16 || hl > n) {
		hl = hl < 16 ? 16 : (uint32_t)n;
		fuzz_frame_put32(b + 12, hl);
	}
	off = hl;
	while (n - off >= 16) {
		uint32_t len = fuzz_frame_get32(b + off + 8);

		if (len > n - off - 16) {
			len = (uint32_t)(n - off - 16);
			fuzz_frame_put32(b + off + 8, len);
		}
		fuzz_frame_put32(b + off, 0x4b434250u);	/* "PBCK" */
		fuzz_frame_put32(b + off + 12,
				 fuzz_frame_crc(fuzz_frame_get32(b + off + 4), len, b + off + 16));
		off += 16 + (size_t)len;
		chunks++;
	}
	return chunks;
}

#endif
