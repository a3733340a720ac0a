# SPDX-License-Identifier: BSD-2-Clause
# rejit.mk: the fuzz target of `probity rejit`'s script parser. The
# generic fuzz rule links FUZZ_LIB_SRCS, which does not list
# src/specializer/ (the runtime needs the lb_xdp skeleton); the parser is
# self-contained (but for common/array.c and common/errtext.c).
REJIT_SCRIPT_SRCS = src/specializer/script.c src/common/array.c src/common/errtext.c
$(BUILD)/fuzz/fuzz_rejit_script: tests/fuzz/fuzz_rejit_script.c $(REJIT_SCRIPT_SRCS) \
		src/specializer/script.h src/specializer/lb_xdp.h src/common/errtext.h | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_CFLAGS) -o $@ $< $(REJIT_SCRIPT_SRCS)
