# SPDX-License-Identifier: BSD-2-Clause
# fuzz.mk: the long fuzz campaigns (docs/testing.md). `make fuzz` and the
# corpus replay of `make test` stay in the Makefile; these are not in CI.
#   make fuzz-coverage   clang source-based coverage of every target over
#                        its corpus -> bench/results/fuzz.json "coverage",
#                        HTML under $(BUILD)/fuzz-cov/html/
#   make fuzz-long       each target to FUZZ_LONG_RUNS executions (10 M) or
#                        FUZZ_LONG_SECONDS (3600) under nice -n 19, one at
#                        a time; FUZZ_TARGETS="fuzz_trace ..." picks some;
#                        FUZZ_LONG_PREBUILT=1 runs $(BUILD)/fuzz/NAME,
#                        FUZZ_LONG_PREBUILT=DIR a frozen copy DIR/NAME;
#                        FUZZ_LONG_FORK=N runs N workers (-fork=N);
#                        FUZZ_LONG_TOPUP=1 only what a target lacks
#                        to 10 M summed over its runs;
#                        FUZZ_LONG_UNTIL=<unix time> ends every run by then
#   make fuzz-rates      executions/s (wall and per CPU second) of each
#                        target -> bench/results/fuzz.json "rates";
#                        FUZZ_RATES_BEFORE=DIR compares with DIR/NAME;
#                        FUZZ_RATES_STEADY=K: marginal CPU of K executions
#                        past the corpus load instead ("steady_3")
LLVM_PROFDATA ?= $(firstword $(wildcard /usr/bin/llvm-profdata-14 /usr/bin/llvm-profdata))
LLVM_COV ?= $(firstword $(wildcard /usr/bin/llvm-cov-14 /usr/bin/llvm-cov))
FUZZ_LONG_RUNS ?= 10000000
FUZZ_LONG_SECONDS ?= 3600
FUZZ_TARGETS ?=
FUZZ_COV_CFLAGS = -std=gnu11 -g -O1 -D_GNU_SOURCE -fprofile-instr-generate -fcoverage-mapping \
	-Iinclude -Isrc -I$(BUILD)/skel $(PKG_CFLAGS)
FUZZ_ASAN_CFLAGS = -std=gnu11 -g -O1 -D_GNU_SOURCE -fsanitize=address,undefined \
	-fno-sanitize-recover=all -Iinclude -Isrc -I$(BUILD)/skel $(PKG_CFLAGS)
FUZZ_CAMPAIGN_ENV = CLANG="$(CLANG)" COV_CFLAGS="$(FUZZ_COV_CFLAGS)" \
	ASAN_CFLAGS="$(FUZZ_ASAN_CFLAGS)" LIB_SRCS="$(FUZZ_LIB_SRCS)" \
	REJIT_SRCS="$(REJIT_SCRIPT_SRCS)" LDLIBS="$(LDLIBS)" BUILD="$(BUILD)" \
	LLVM_PROFDATA="$(LLVM_PROFDATA)" LLVM_COV="$(LLVM_COV)" \
	FUZZ_LONG_RUNS="$(FUZZ_LONG_RUNS)" FUZZ_LONG_SECONDS="$(FUZZ_LONG_SECONDS)"

.PHONY: fuzz-coverage fuzz-long fuzz-rates
fuzz-coverage: | $(DEPS_STAMP)
	@$(FUZZ_CAMPAIGN_ENV) python3 tests/fuzz/campaign.py coverage $(FUZZ_TARGETS)

# campaign.py builds its own binaries (BUILD/fuzz-long/) from one set of
# ASan objects: the Makefile rule compiles the whole library per target
fuzz-long: | $(DEPS_STAMP)
	@$(FUZZ_CAMPAIGN_ENV) python3 tests/fuzz/campaign.py long $(FUZZ_TARGETS)

# executions per second of the Makefile's fuzz binaries (tests/fuzz/campaign.py)
fuzz-rates: $(FUZZ_BINS)
	@$(FUZZ_CAMPAIGN_ENV) python3 tests/fuzz/campaign.py rates $(FUZZ_TARGETS)
