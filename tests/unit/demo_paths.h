/* SPDX-License-Identifier: BSD-2-Clause */
/* demo_paths.h: where the tests find what the build made (the demo, its
 * manifest, fixtures): $PROBITY_BUILD (set by tests/run.sh) or ./build. */
#ifndef PROBITY_TEST_DEMO_PATHS_H
#define PROBITY_TEST_DEMO_PATHS_H

#include <stdio.h>
#include <stdlib.h>

static const char *build_dir(void)
{
	const char *b = getenv("PROBITY_BUILD");

	return b ? b : "build";
}

static char demo_bin[4096], demo_manifest[4096];

static void paths(void)
{
	snprintf(demo_bin, sizeof(demo_bin), "%s/demo/probity-demo", build_dir());
	snprintf(demo_manifest, sizeof(demo_manifest), "%s/demo/demo.manifest.yaml", build_dir());
}

#endif
