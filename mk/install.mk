# SPDX-License-Identifier: BSD-2-Clause
# install.mk: `make install PREFIX=/usr/local DESTDIR=...` like any Debian
# tool: the binary, man pages generated from docs/*.md with pandoc,
# bash completion generated from the binary's command tables, the
# example manifests and the agent's systemd unit. `make man` /
# `make completion` build them alone.
PREFIX     ?= /usr/local
DESTDIR    ?=
BINDIR     ?= $(PREFIX)/bin
MANDIR     ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
EXAMPLEDIR ?= $(PREFIX)/share/doc/probity/examples
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
PB_VERSION := $(shell sed -n 's/^\#define PROBITY_VERSION "\(.*\)"/\1/p' src/common/version.h)

# docs/SRC.md -> man page NAME.SECTION
MAN_PAGES := $(BUILD)/man/probity.1 $(BUILD)/man/probity-manifest.5 $(BUILD)/man/probity-agent.8
$(BUILD)/man/probity.1: docs/probity.md scripts/gen-man.sh | $(DEPS_STAMP)
	@mkdir -p $(@D)
	scripts/gen-man.sh $< probity 1 $(PB_VERSION) $@
$(BUILD)/man/probity-manifest.5: docs/manifest.md scripts/gen-man.sh | $(DEPS_STAMP)
	@mkdir -p $(@D)
	scripts/gen-man.sh $< probity-manifest 5 $(PB_VERSION) $@
$(BUILD)/man/probity-agent.8: docs/agent.md scripts/gen-man.sh | $(DEPS_STAMP)
	@mkdir -p $(@D)
	scripts/gen-man.sh $< probity-agent 8 $(PB_VERSION) $@

COMPLETION := $(BUILD)/completion/probity
$(COMPLETION): $(BIN) scripts/gen-completion.sh
	@mkdir -p $(@D)
	scripts/gen-completion.sh $(BIN) $@

EXAMPLE_MANIFESTS := $(wildcard docs/examples/*.yaml) demo/demo.manifest.yaml

# the agent's unit (docs/agent.md), ExecStart pointing at the installed binary
AGENT_UNIT := $(BUILD)/systemd/probity-agent.service
$(AGENT_UNIT): dist/systemd/probity-agent.service.in
	@mkdir -p $(@D)
	sed 's|@BINDIR@|$(BINDIR)|g' $< > $@.tmp && mv $@.tmp $@

.PHONY: man completion install uninstall
man: $(MAN_PAGES)
completion: $(COMPLETION)

install: $(BIN) $(MAN_PAGES) $(COMPLETION) $(AGENT_UNIT)
	install -D -m 0755 $(BIN) $(DESTDIR)$(BINDIR)/probity
	install -D -m 0644 $(BUILD)/man/probity.1 $(DESTDIR)$(MANDIR)/man1/probity.1
	install -D -m 0644 $(BUILD)/man/probity-manifest.5 $(DESTDIR)$(MANDIR)/man5/probity-manifest.5
	install -D -m 0644 $(BUILD)/man/probity-agent.8 $(DESTDIR)$(MANDIR)/man8/probity-agent.8
	install -D -m 0644 $(COMPLETION) $(DESTDIR)$(BASHCOMPDIR)/probity
	install -d $(DESTDIR)$(EXAMPLEDIR)
	install -m 0644 $(EXAMPLE_MANIFESTS) $(DESTDIR)$(EXAMPLEDIR)/
	install -D -m 0644 $(AGENT_UNIT) $(DESTDIR)$(SYSTEMDUNITDIR)/probity-agent.service

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/probity $(DESTDIR)$(MANDIR)/man1/probity.1 \
		$(DESTDIR)$(MANDIR)/man5/probity-manifest.5 $(DESTDIR)$(BASHCOMPDIR)/probity \
		$(DESTDIR)$(SYSTEMDUNITDIR)/probity-agent.service $(DESTDIR)$(MANDIR)/man8/probity-agent.8
	rm -rf $(DESTDIR)$(EXAMPLEDIR)
