/* SPDX-License-Identifier: BSD-2-Clause */
/* test_self_build_id.c: elf_self_build_id (src/elf/self_build_id.c), the
 * running executable's build-id read from memory, is the build-id
 * elf_image reads from the file of this very test binary.
 */
#include <stdint.h>
#include "harness.h"
#include "elf/elf_image.h"
#include "elf/self_build_id.h"

TEST(test_self_build_id_matches_the_file)
{
	struct elf_image *img = elf_image__open("/proc/self/exe");
	uint8_t want[64], got[64];
	char want_hex[129], got_hex[129];
	int n;

	ASSERT_NOT_NULL(img);
	n = elf_image__build_id(img, want, sizeof(want));
	ASSERT_GT(n, 0);
	ASSERT_EQ(elf_self_build_id(got, sizeof(got)), n);
	ASSERT_TRUE(!memcmp(want, got, (size_t)n));
	ASSERT_EQ(elf_image__build_id_hex(img, want_hex, sizeof(want_hex)), n);
	ASSERT_EQ(elf_self_build_id_hex(got_hex, sizeof(got_hex)), n);
	ASSERT_STREQ(got_hex, want_hex);
	elf_image__free(img);
}

TEST(test_self_build_id_too_small)
{
	uint8_t id[64];
	char hex[8];
	int n = elf_self_build_id(id, sizeof(id));

	ASSERT_GT(n, 1);
	ASSERT_ERR(elf_self_build_id(id, (size_t)n - 1), -ENOSPC);
	ASSERT_ERR(elf_self_build_id_hex(hex, sizeof(hex)), -ENOSPC);
}
