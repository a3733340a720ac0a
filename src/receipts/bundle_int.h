/* SPDX-License-Identifier: BSD-2-Clause */
/* bundle_int.h: the VERIFY.md template of bundle.c (bundle_verify.c). */
#ifndef PROBITY_RECEIPTS_BUNDLE_INT_H
#define PROBITY_RECEIPTS_BUNDLE_INT_H

#include "receipts/dsse.h"

/* Tokens replaced in bundle_verify_md: %TOOL%, %KEYFILE%, %SIGCHECK%. */
extern const char bundle_verify_md[];
extern const char bundle_sigcheck_ed25519[];
extern const char bundle_sigcheck_ecdsa[];
extern const char bundle_sigcheck_ssh[];

#endif
