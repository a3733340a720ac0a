# SPDX-License-Identifier: BSD-2-Clause
# probity: top-level build.
#
#   make            build build/probity (and the demo service)
#   make demo       the main job on the built-in demo service
#   make demo-receipts  the 14:07 story: a re-specialized XDP program's
#                   unloaded spiky generation named by attribute + receipts
#   make test       unit + CLI + lint-corpus + BPF integration tests, then
#                   the unit tests again under ASan/UBSan, then fuzz replay
#   make fuzz       run each libFuzzer target for FUZZ_SECONDS (default 60)
#   make bench      benchmarks; results in bench/results/*.json
#
# Every dependency comes from scripts/install-deps.sh, which make runs when
# scripts/check-deps.sh finds something missing.

BUILD     ?= build
CC        ?= gcc
CLANG     ?= clang
BPFTOOL   ?= $(shell command -v bpftool 2>/dev/null || echo /usr/sbin/bpftool)
ARCH      := $(shell uname -m | sed 's/x86_64/x86/; s/aarch64/arm64/')

PKGS      := libbpf yaml-0.1 jansson capstone libcrypto libelf zlib libdw libmicrohttpd libarchive libsystemd
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null)

WARN      := -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow -Wformat=2
CFLAGS    ?= -O2 -g
ALL_CFLAGS = -std=gnu11 $(WARN) $(CFLAGS) $(EXTRA_CFLAGS) -D_GNU_SOURCE \
	     -Iinclude -Isrc -I$(BUILD)/skel $(PKG_CFLAGS)
LDLIBS     = $(PKG_LIBS) -lpthread $(EXTRA_LDFLAGS)

# every folder under src/ but cli/ is the library (docs/HACKING.md)
LIB_SRCS  := $(filter-out %.bpf.c src/cli/%,$(wildcard src/*/*.c))
CLI_SRCS  := $(wildcard src/cli/*.c)
BPF_SRCS  := $(wildcard src/*/*.bpf.c tests/bpf/*.bpf.c)
LIB_OBJS  := $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRCS))
CLI_OBJS  := $(patsubst %.c,$(BUILD)/obj/%.o,$(CLI_SRCS))
BPF_OBJS  := $(patsubst %.bpf.c,$(BUILD)/bpf/%.bpf.o,$(notdir $(BPF_SRCS)))
SKELS     := $(patsubst %.bpf.c,$(BUILD)/skel/%.skel.h,$(notdir $(BPF_SRCS)))
LIB       := $(BUILD)/libprobity.a
BIN       := $(BUILD)/probity

TEST_SRCS := $(wildcard tests/unit/test_*.c)
TEST_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(TEST_SRCS))
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRCS))
FUZZ_SECONDS ?= 60

DEMO_BIN  := $(BUILD)/demo/probity-demo
DEMO_MANIFEST := $(BUILD)/demo/demo.manifest.yaml
DEMO_SRCS := $(filter-out %.bpf.c,$(wildcard demo/*.c))
DEMO_HDRS := $(wildcard demo/*.h)

DEPS_STAMP := $(BUILD)/.deps-ok

# Subsystem fragments (test fixtures, ...) may add to these.
TEST_FIXTURES :=
.DEFAULT_GOAL := all	# the mk/*.mk below define targets too: plain `make` builds all
-include $(sort $(wildcard mk/*.mk))

.PHONY: all deps demo demo-receipts test test-unit test-asan fuzz fuzz-replay bench clean install-deps

all: $(BIN) $(DEMO_BIN) $(DEMO_MANIFEST)

# ---- dependencies ----------------------------------------------------------
$(DEPS_STAMP): scripts/install-deps.sh scripts/apt-sources.sh scripts/check-deps.sh
	@mkdir -p $(BUILD)
	@scripts/check-deps.sh 2>/dev/null || scripts/install-deps.sh
	@scripts/check-deps.sh
	@touch $@
deps: $(DEPS_STAMP)
install-deps:
	scripts/install-deps.sh

# ---- BPF -------------------------------------------------------------------
$(BUILD)/vmlinux.h: scripts/gen-vmlinux.sh | $(DEPS_STAMP)
	@mkdir -p $(@D)
	scripts/gen-vmlinux.sh $(BPFTOOL) $@

# clang -target bpf does not search the multiarch include dir (asm/*.h)
MULTIARCH := $(shell $(CC) -dumpmachine 2>/dev/null)
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -I$(BUILD) -Isrc -idirafter /usr/include/$(MULTIARCH) \
	      -Wall -Werror -Wno-unused-function
$(BUILD)/bpf/%.bpf.o: $(BUILD)/vmlinux.h $(wildcard src/*/*.h) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -c $(filter %/$*.bpf.c,$(BPF_SRCS)) -o $@.tmp
	$(BPFTOOL) gen object $@ $@.tmp
	@rm -f $@.tmp
$(BUILD)/skel/%.skel.h: $(BUILD)/bpf/%.bpf.o
	@mkdir -p $(@D)
	$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@.tmp && mv $@.tmp $@

# skeletons and objects are not intermediate files: keep them
.SECONDARY: $(SKELS) $(BPF_OBJS)

# every bpf object depends on its own source
define bpf_src_dep
$(BUILD)/bpf/$(notdir $(1:.bpf.c=.bpf.o)): $(1)
endef
$(foreach s,$(BPF_SRCS),$(eval $(call bpf_src_dep,$(s))))

# ---- user space ------------------------------------------------------------
$(BUILD)/obj/%.o: %.c | $(DEPS_STAMP) $(SKELS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(LIB): $(LIB_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(BIN): $(CLI_OBJS) $(LIB)
	$(CC) $(ALL_CFLAGS) -o $@ $(CLI_OBJS) $(LIB) $(LDLIBS)

# ---- demo service ----------------------------------------------------------
$(DEMO_BIN): $(DEMO_SRCS) $(DEMO_HDRS) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O2 -g -fno-omit-frame-pointer -Wall -Wextra -Werror -D_GNU_SOURCE -Wl,--build-id=sha1 \
		-o $@ $(DEMO_SRCS) -lpthread

$(DEMO_MANIFEST): demo/demo.manifest.yaml $(DEMO_BIN) scripts/fill-build-id.sh
	scripts/fill-build-id.sh demo/demo.manifest.yaml $(DEMO_BIN) $@

demo: all
	scripts/demo.sh $(BIN) $(DEMO_BIN) $(DEMO_MANIFEST)

demo-receipts: all
	scripts/demo-receipts.sh $(BIN)

# ---- tests -----------------------------------------------------------------
$(BUILD)/tests/%: tests/unit/%.c $(wildcard tests/unit/*.h) $(LIB) | $(SKELS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Itests/unit -o $@ $< $(LIB) $(LDLIBS)

test-unit: $(TEST_BINS) $(TEST_FIXTURES) $(DEMO_BIN) $(DEMO_MANIFEST)

test: all test-unit $(FUZZ_BINS)
	tests/run.sh --build $(BUILD)
	$(MAKE) --no-print-directory test-asan
	$(MAKE) --no-print-directory fuzz-replay
	@read p f s <$(BUILD)/test-summary; read ap af as <$(BUILD)-asan/test-summary; \
	echo "make test: tests $$p/$$f/$$s, ASan+UBSan unit tests $$ap/$$af/$$as (passed/failed/skipped), fuzz corpora replayed clean"; \
	echo "$$((p + ap)) passed, $$((f + af)) failed, $$((s + as)) skipped"

# Unit tests again, under AddressSanitizer + UndefinedBehaviorSanitizer.
test-asan: | $(DEPS_STAMP)
	$(MAKE) --no-print-directory BUILD=$(BUILD)-asan CFLAGS="-O1 -g -fno-omit-frame-pointer" \
		EXTRA_CFLAGS="-fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all" \
		EXTRA_LDFLAGS="-fsanitize=address,undefined,float-cast-overflow" test-unit $(BUILD)-asan/probity
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
		tests/run.sh --build $(BUILD)-asan --unit-only --tag asan

# ---- fuzzing (libFuzzer, clang) -------------------------------------------
FUZZ_CFLAGS = -std=gnu11 -g -O1 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
	      -fno-sanitize-recover=all \
	      -Iinclude -Isrc -I$(BUILD)/skel $(PKG_CFLAGS)
FUZZ_LIB_SRCS = $(filter-out %.bpf.c,$(wildcard src/common/*.c src/contract/*.c src/elf/*.c src/analyze/*.c src/trace/*.c src/receipts/*.c src/validate/*.c src/attribute/*.c src/metrics/*.c)) src/observe/perf_ring.c
# The library is compiled once for every target (libFuzzer's coverage
# without its main: fuzzer-no-link), then each target links those objects:
# compiling the whole library per target cost ~35 s a target in make test.
FUZZ_OBJ_CFLAGS = $(subst -fsanitize=fuzzer$(comma),-fsanitize=fuzzer-no-link$(comma),$(FUZZ_CFLAGS))
FUZZ_LIB_OBJS = $(patsubst %.c,$(BUILD)/fuzz-obj/%.o,$(FUZZ_LIB_SRCS))
comma := ,
$(BUILD)/fuzz-obj/%.o: %.c | $(DEPS_STAMP) $(SKELS)
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_OBJ_CFLAGS) -MMD -MP -c $< -o $@
-include $(FUZZ_LIB_OBJS:.o=.d)
.SECONDARY: $(FUZZ_LIB_OBJS)
$(BUILD)/fuzz/%: tests/fuzz/%.c $(wildcard tests/fuzz/*.h) $(FUZZ_LIB_OBJS) | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_LIB_OBJS) $(LDLIBS)

# ASan quarantine 16 MB (tests/fuzz/campaign.py FUZZ_ASAN_OPTIONS: the 256 MB
# default was most of the steady CPU of the allocation-heavy targets)
fuzz: $(FUZZ_BINS)
	@for f in $(FUZZ_BINS); do n=$$(basename $$f); \
		mkdir -p $(BUILD)/fuzz/corpus-$$n; \
		echo "fuzz: $$n for $(FUZZ_SECONDS)s"; \
		dict=tests/fuzz/$$n.dict; [ -f $$dict ] && dict="-dict=$$dict" || dict=""; \
		ASAN_OPTIONS=$${ASAN_OPTIONS:-quarantine_size_mb=16} $$f $$dict -max_total_time=$(FUZZ_SECONDS) -timeout=5 -rss_limit_mb=2048 \
			-artifact_prefix=tests/fuzz/ $(BUILD)/fuzz/corpus-$$n tests/fuzz/corpus/$$n || exit 1; \
	done

# Every seed of every corpus through its fuzz target (ASan+UBSan): the
# inputs that once crashed stay fixed.
fuzz-replay: $(FUZZ_BINS)
	@for f in $(FUZZ_BINS); do n=$$(basename $$f); \
		echo "fuzz-replay: $$n over tests/fuzz/corpus/$$n"; \
		$$f -runs=0 tests/fuzz/corpus/$$n >$(BUILD)/fuzz/$$n.replay.log 2>&1 || \
			{ tail -30 $(BUILD)/fuzz/$$n.replay.log; exit 1; }; \
		grep -E 'Done|INITED' $(BUILD)/fuzz/$$n.replay.log | tail -1; \
	done

bench: all
	@if [ -x bench/run.sh ]; then bench/run.sh; else echo "no benchmarks yet"; fi

clean:
	rm -rf $(BUILD) $(BUILD)-asan

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
