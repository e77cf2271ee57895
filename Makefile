# seqorch: coordinator (./seqorch) and agent (./seqorch-agent).
#
#   make            build both binaries
#   make deps       install the Debian packages the build and tests need
#   make deps-run   only those building and running need (DEBS_RUN)
#   make run        deps-run + build + sha3 study on this host + report
#   make test       deps + unit tests (cmocka) and integration tests (pytest)
#   make test-arm64 the same run against this host and an emulated arm64 one
#   make sanitize   unit and core integration tests under ASan and UBSan
#   make fuzz       bounded libFuzzer runs of the parsers (FUZZ_SECONDS each)
#   make bench      side-by-side kernel rates on this machine
#   make kernel-bench  build/kernel-bench: one study's kernels in one process
#   make install    PREFIX=/usr/local DESTDIR=

PREFIX ?= /usr/local
DESTDIR ?=
CC ?= cc
CXX ?= c++
PYTHON ?= /usr/bin/python3
WERROR ?= -Werror

CFLAGS ?= -O2 -g
CXXFLAGS ?= -O2 -g
WARN = -Wall -Wextra $(WERROR)
SO_CFLAGS = -std=c11 -D_GNU_SOURCE $(WARN) -Iorchestrator -Ikernels
SO_CXXFLAGS = -std=c++17 $(WARN)
SO_LIBS = -lsqlite3 -lcjson -lcrypto -lssh2 -lcurl -lpthread -lm -ldl

AGENT_CFLAGS ?= -O3
# kernels/registry.sh derives everything about studies and variants from the
# kernels/ folders: which files build on this compiler's target, each file's
# flags (a variant's `flags` stay with it) and the generated tables.
REGISTRY = SEQORCH_PREBUILT= SEQORCH_NOLIBS= sh kernels/registry.sh
# Goals that build nothing in this make: on a fresh machine they run
# before deps-run has installed a compiler, so the registry is not asked
# (it needs `cc -dumpmachine`) and its tables are not included for them.
# `run` and `test` build through a sub-make, after their deps.
NOBUILD_GOALS = clean deps deps-run deps-arm64 arm64-host run test
BUILDING := $(if $(MAKECMDGOALS),$(filter-out $(NOBUILD_GOALS),$(MAKECMDGOALS)),all)
ifneq ($(BUILDING),)
ARCH := $(shell $(REGISTRY) arch "$$($(CC) -dumpmachine)")
STUDIES := $(shell $(REGISTRY) studies)
endif
AGENT_SRCS := $(wildcard agent/*.c) $(if $(ARCH),$(shell $(REGISTRY) files $(ARCH)))
AGENT_OBJS := $(patsubst %,build/%.o,$(AGENT_SRCS)) build/agent-registry.c.o

# The coordinator builds each study's study.c and reference.c too (units,
# defaults, independent references), apart from the agent's objects.
STUDY_CSRCS := $(foreach s,$(STUDIES),kernels/$(s)/study.c kernels/$(s)/reference.c)
ORCH_CSRCS := $(wildcard orchestrator/*.c)
ORCH_OBJS := $(patsubst %,build/%.o,$(ORCH_CSRCS)) build/orchestrator/toml.cc.o \
	$(patsubst %,build/coord/%.o,$(STUDY_CSRCS)) build/studies.c.o \
	build/coord/agent/jsonl.c.o build/coord/agent/spread.c.o
LIB_OBJS := $(filter-out build/orchestrator/seqorch.c.o,$(ORCH_OBJS))

# What building and running need (`make run`: the coordinator, the agent
# built on this host, objdump from binutils for the disassembly check) and
# what only the tests, benches and other studies add (`make test`).  The
# compilers by name, not build-essential: its dpkg-dev (perl modules,
# patch, bzip2) builds Debian packages, which `make run` does not.  perl
# runs OpenSSL's perlasm on the coordinator (kernels/sha3/generate.pl),
# whose Digest::SHA is perl's, not perl-base's.
DEBS_RUN = gcc g++ libc6-dev make libssh2-1-dev libcurl4-openssl-dev \
	libsqlite3-dev libcjson-dev libssl-dev libtomlplusplus-dev \
	binutils openssl perl
DEBS_TEST = build-essential sqlite3 libcmocka-dev python3 python3-pytest \
	python3-pytest-xdist \
	openssh-server openssh-client \
	clang gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user \
	procps man-db iproute2 \
	libgcrypt20-dev nettle-dev python3-jsonschema chromium cmake g++ \
	librandomx-dev faketime hyperfine libarchive-tools
# The Mach-O checks of tests/test_27_apple.py: llvm-objdump, lld's ld64.
DEBS_APPLE = llvm lld
DEBS = $(DEBS_RUN) $(DEBS_TEST) $(DEBS_APPLE)

# The emulated arm64 host of make test-arm64 (tests/arm64/build-host.sh):
# mmdebstrap builds its rootfs, qemu-user-static runs it.  Installing
# qemu-user-static removes qemu-user-binfmt (they conflict); qemu-user,
# whose qemu-aarch64 the kernel tests run, stays.
DEBS_ARM64 = mmdebstrap qemu-user-static
ARM64_CACHE ?= /var/cache/seqorch-arm64

all: seqorch seqorch-agent build/libseqorch.a build/seqorch.1 \
	build/seqorch.bash build/seqorch.1.stamp

# The man page, the bash completion and docs/commands.md come from the
# command table in the binary (`seqorch help --table`, each command's
# help).  A relinked seqorch whose table is the same leaves the page and
# the completion as they were: the stamp records that they were checked,
# so that `make -q` holds after `make`.  Their own rules only write a
# missing one.
GEN_HELP = sh docs/gen-help.sh ./seqorch $(1) > $(2).tmp && \
	{ cmp -s $(2).tmp $(2) && rm -f $(2).tmp || mv $(2).tmp $(2); }
build/seqorch.1.stamp: seqorch docs/gen-help.sh | build/seqorch.1 \
	build/seqorch.bash
	$(call GEN_HELP,man,build/seqorch.1)
	$(call GEN_HELP,completion,build/seqorch.bash)
	@touch $@

build/seqorch.1: | seqorch
	$(call GEN_HELP,man,$@)

build/seqorch.bash: | seqorch
	$(call GEN_HELP,completion,$@)

# Rerun every kernel source generator (each names its files: --outputs).
regen:
	@for g in kernels/*/gen-*.py; do \
	  echo "$(PYTHON) $$g"; $(PYTHON) $$g || exit 1; done

# docs/usage.md's table of commands is the part between its markers.
docs: seqorch
	sh docs/gen-help.sh ./seqorch markdown > docs/commands.md
	sh docs/gen-help.sh ./seqorch usage-table > build/usage-table.md
	awk -v t=build/usage-table.md '/^<!-- end of the generated table/ { \
	    while ((getline l < t) > 0) print l; skip = 0 } !skip { print } \
	    /^<!-- generated from the command table/ { skip = 1 }' \
	    docs/usage.md > docs/usage.md.tmp && mv docs/usage.md.tmp docs/usage.md

# The coordinator without main, for tests that drive its modules directly.
build/libseqorch.a: $(LIB_OBJS)
	rm -f $@
	ar rcs $@ $^

seqorch: $(ORCH_OBJS)
	$(CXX) $(LDFLAGS) -o $@ $^ $(SO_LIBS)

seqorch-agent: $(AGENT_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ -lcrypto -ldl

# The commit `seqorch -V` names: build/commit.h is rewritten when HEAD
# is not the commit it holds (build/commit.mk records which), so `make -q`
# holds after `make`.  Outside a git checkout (a tarball) it is "unknown".
ifneq ($(BUILDING),)
COMMIT := $(if $(wildcard .git),$(shell git rev-parse --short=12 HEAD 2>/dev/null))
-include build/commit.mk
endif
build/commit.h: $(if $(filter-out $(COMMIT),$(BUILT_COMMIT))$(filter-out \
	$(BUILT_COMMIT),$(COMMIT)),FORCE)
	@mkdir -p build
	@printf '#define SEQORCH_COMMIT "%s"\n' '$(or $(COMMIT),unknown)' > $@
	@echo 'BUILT_COMMIT = $(COMMIT)' > build/commit.mk
build/orchestrator/seqorch.c.o: build/commit.h

# The generated headers need only exist first: each object's .d file names
# the ones it includes, so a kernels/ change rebuilds those objects only.
build/orchestrator/%.c.o: orchestrator/%.c | build/schema.h build/sources.h \
	build/published-data.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SO_CFLAGS) -Ibuild -MMD -MP -c -o $@ $<

build/orchestrator/toml.cc.o: orchestrator/toml.cc
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) $(SO_CXXFLAGS) -MMD -MP -c -o $@ $<

build/coord/kernels/%.c.o: kernels/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SO_CFLAGS) $(shell $(REGISTRY) cflags $<) -MMD -MP -c -o $@ $<

# The agent's line excerpts, which the coordinator shows the same way.
build/coord/agent/jsonl.c.o: agent/jsonl.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

# The agent's --max-cv test, which a resume applies to what the run stored.
build/coord/agent/spread.c.o: agent/spread.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

build/studies.c.o: build/studies.c
	$(CC) $(CFLAGS) $(SO_CFLAGS) -MMD -MP -c -o $@ $<

# The agent's and kernels' objects under $(1), built with the flags $(2):
# build/ for the harnesses (AGENT_CFLAGS), build/native/ for build/others.
# This build links libcrypto (a dependency here): the agent says which.
define agent_objects
$(1)/agent/%.c.o: agent/%.c
	@mkdir -p $$(dir $$@)
	$$(CC) $(2) -std=c11 -D_GNU_SOURCE $$(WARN) -Ikernels -Iagent \
		-DSEQORCH_LIBCRYPTO -MMD -MP -c -o $$@ $$<

$(1)/agent-registry.c.o: build/agent-registry.c
	@mkdir -p $$(dir $$@)
	$$(CC) $(2) -std=c11 -D_GNU_SOURCE $$(WARN) -Ikernels -Iagent \
		-MMD -MP -c -o $$@ $$<

$(1)/kernels/%.c.o: kernels/%.c
	@mkdir -p $$(dir $$@)
	$$(CC) $(2) -std=c11 -D_GNU_SOURCE $$(WARN) -Ikernels -Iagent \
		$$(shell $$(REGISTRY) cflags $$<) -MMD -MP -c -o $$@ $$<

$(1)/kernels/%.S.o: kernels/%.S
	@mkdir -p $$(dir $$@)
	$$(CC) $(2) $$(shell $$(REGISTRY) cflags $$<) -c -o $$@ $$<
endef
$(eval $(call agent_objects,build,$$(AGENT_CFLAGS)))
$(eval $(call agent_objects,build/native,$$(NATIVE_CFLAGS)))

# The generated tables are rewritten only when their content changes, so
# that adding or removing a folder rebuilds what depends on them and
# nothing else.  build/registry.mk is their stamp: it is remade when an
# input of registry.sh changes (its files, and the folders, whose times
# change when an entry is added or removed) or the target's ARCH does, and
# make then rereads itself, so that the objects see the tables' new times
# in the same run.  The tables' own rules only write a missing one.
REGISTRY_INPUTS = kernels/registry.sh kernels/studies.txt kernels/groups.txt kernels/ \
	$(wildcard kernels/*/ kernels/*/*/ kernels/*/targetings \
	kernels/*/artifacts kernels/*/*/arch kernels/*/*/flags kernels/*/*/libs \
	kernels/*/*/compiler)
GEN_TABLE = @mkdir -p build && $(REGISTRY) $(2) > $(1).tmp && \
	{ cmp -s $(1).tmp $(1) && rm -f $(1).tmp || mv $(1).tmp $(1); }
ifneq ($(BUILDING),)
include build/registry.mk
endif
build/registry.mk: $(REGISTRY_INPUTS) \
	$(if $(filter-out $(ARCH),$(REGISTRY_ARCH)),FORCE)
	$(call GEN_TABLE,build/agent-registry.c,agent $(ARCH))
	$(call GEN_TABLE,build/studies.c,coordinator)
	@echo 'REGISTRY_ARCH = $(ARCH)' > $@

build/agent-registry.c:
	$(call GEN_TABLE,$@,agent $(ARCH))

build/studies.c:
	$(call GEN_TABLE,$@,coordinator)

# The agent's sources are embedded in the coordinator, which uploads them to
# each host (the local one included) and builds them there with agent/build.sh.
AGENT_SHIPPED = $(sort $(wildcard agent/*.c agent/*.h agent/build.sh kernels/*.h \
	kernels/registry.sh kernels/studies.txt \
	kernels/*/*.c kernels/*/*.h kernels/*/*/*.c kernels/*/*/*.S kernels/*/*/*.h \
	kernels/*/*.cpp kernels/*/prebuild.sh kernels/*/artifacts kernels/*/targetings \
	kernels/*/generate.pl \
	kernels/*/*/flags kernels/*/*/arch kernels/*/*/libs kernels/*/*/needs))

# The folders too: a removed file changes only its folder's time.
build/sources.h: $(AGENT_SHIPPED) orchestrator/embed.pl Makefile \
	$(sort $(dir $(AGENT_SHIPPED)))
	@mkdir -p build
	@perl orchestrator/embed.pl $(AGENT_SHIPPED) > $@.tmp && mv $@.tmp $@

# schema.sql is the single source of the schema; it is embedded verbatim.
build/schema.h: schema.sql
	@mkdir -p build
	{ echo 'static const char schema_sql[] = {'; od -An -v -tx1 $< | \
	  sed 's/\([0-9a-f][0-9a-f]\)/0x\1,/g'; echo '0x00 };'; } > $@

# The seeds' published figures (reference/seeds.json, versioned) are
# embedded the same way, for --reference.
build/published-data.h: reference/seeds.json
	@mkdir -p build
	{ echo 'static const char published_json[] = {'; od -An -v -tx1 $< | \
	  sed 's/\([0-9a-f][0-9a-f]\)/0x\1,/g'; echo '0x00 };'; } > $@

-include $(shell find build -name '*.d' 2>/dev/null)

# The SSH tests log in as TEST_USER, whose login shell is /bin/sh, so no
# dotfile of the user running them (root in CI) is ever run.  Password
# "*" matches nothing without locking the account, which sshd would refuse.
TEST_USER = seqorch-test

# $(call install_debs,PACKAGES[,APT OPTIONS]): apt-get only what is missing.
# One dpkg-query asks for every package (it reads dpkg's status, takes no
# lock), so that `make test` on a machine that has them all never calls
# apt, and never waits for or fails on another apt's lock.  When a package
# is missing and cannot be installed (not root and no sudo, or apt fails)
# the message names the missing packages.
define install_debs
	@ok=$$(dpkg-query -W -f='$${Status} $${Package}\n' $(1) 2>/dev/null | \
	  sed -n 's/^install ok installed //p'); ok=" $$(echo $$ok) "; \
	missing=""; for p in $(1); do \
	  case "$$ok" in *" $$p "*) ;; *) missing="$$missing $$p";; esac; \
	done; \
	[ -z "$$missing" ] && exit 0; \
	SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	if [ -n "$$SUDO" ] && ! command -v sudo >/dev/null; then \
	  echo "missing packages:$$missing (not root and no sudo: run" \
	    "\"apt-get install$$missing\" as root)" >&2; exit 1; fi; \
	echo "installing:$$missing" >&2; \
	{ $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq \
	    -o DPkg::Lock::Timeout=600 $(2) $$missing; } || \
	{ echo "missing packages:$$missing (apt-get could not install" \
	    "them)" >&2; exit 1; }
endef

# Recommends (fakeroot, perl modules, manual pages) are not needed to build.
deps-run:
	$(call install_debs,$(DEBS_RUN),--no-install-recommends)

deps:
	$(call install_debs,$(DEBS))
	@SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	id $(TEST_USER) >/dev/null 2>&1 || { echo "adding user $(TEST_USER)" >&2; \
	  $$SUDO useradd --system --create-home --home-dir /var/lib/$(TEST_USER) \
	    --shell /bin/sh --password '*' $(TEST_USER); }

deps-arm64:
	$(call install_debs,$(DEBS_ARM64))

# A first look: 3 samples of 1M hashes per variant (a third of a second or
# more each, on the fastest variant here), which keeps a fresh clone's `make run` under 2 minutes on 2 cores
# (tests/first-hour/time-make-run.sh).  `seqorch run` alone defaults to
# the seeds' 3 x 10M protocol.
# Only ./seqorch is built: it carries the agent's sources and builds the
# agent in the host's workdir, as on any other host.
RUN_STEPS ?= 1000000
# The man page and the completion too: README points to them next.
run: deps-run
	$(MAKE) -j$$(nproc) seqorch build/seqorch.1 build/seqorch.bash \
	    build/seqorch.1.stamp
	./seqorch run --study sha3 --hosts local --steps $(RUN_STEPS)
	./seqorch report --latest

UNIT_TESTS := $(patsubst tests/unit/%.c,build/tests/%,$(wildcard tests/unit/test_*.c)) \
	build/tests/test_tomlpp

# Each unit test links the modules it tests and their real dependencies,
# nothing else, so that a new coupling fails its link.  A module is
# orchestrator/NAME.c with its parts orchestrator/NAME-*.c; toml is the C++
# front end and studies the coordinator's study tables; a part such as
# report-load may be named alone.  Couplings these lists show: db-rows.c
# checks artifact names with artifact.c's artifact_name_ok, artifact.c
# says it waits for the store's lock through progress.c, and cmd.c's
# table names every command (test_report runs `report` through it); the
# storage layer links nothing of the report (db-report.c returns rows).
UNIT_strbuf = strbuf util
UNIT_window = window progress db artifact util strbuf
UNIT_stats = stats util
UNIT_ebash = ebash stats util
UNIT_rows = db artifact progress util strbuf
UNIT_proto = proto util
UNIT_steps = deploy-steps strbuf util
UNIT_sshconfig = sshconfig util
UNIT_config = config sshconfig toml util
UNIT_core = conn local ssh db disasm proto \
	remote artifact progress trace strbuf util
UNIT_remote = remote pool strbuf util
UNIT_collector = collector strbuf util
UNIT_report = cmd report repro ebash db runner deploy window conn local ssh config \
	remote pool hostsel hosts-check \
	sshconfig toml proto disasm artifact bundle collector http fetch generate \
	export \
	compare figures reference stats study studies affinity progress \
	trace strbuf util agent-jsonl agent-spread
UNIT_compare = compare report db stats study studies figures reference \
	artifact progress strbuf util
UNIT_http = http fetch study studies strbuf util
UNIT_bundle = bundle-io strbuf util
UNIT_artifact = artifact db progress strbuf util
MOD_toml = build/orchestrator/toml.cc.o
# The storage layer reads a bundle's rows.json through rows-doc.c.
MOD_db = $(patsubst %,build/%.o,$(wildcard orchestrator/db.c \
	orchestrator/db-*.c) orchestrator/rows-doc.c orchestrator/json-stream.c)
# The agent's host-free modules, as the agent's build compiles them.
UNIT_agent = agent-opts agent-spread agent-jsonl agent-sha256 agent-emit \
	agent-macfacts agent-osslcap agent-timing
MOD_agent-timing = build/agent/timing.c.o
MOD_agent-opts = build/agent/opts.c.o
MOD_agent-macfacts = build/agent/macfacts.c.o
MOD_agent-jsonl = build/agent/jsonl.c.o
MOD_agent-sha256 = build/agent/sha256.c.o
MOD_agent-emit = build/agent/emit.c.o
MOD_agent-spread = build/agent/spread.c.o
MOD_agent-osslcap = build/agent/osslcap.c.o
MOD_studies = $(patsubst %,build/coord/%.o,$(STUDY_CSRCS)) build/studies.c.o
unit_objs = $(foreach m,$(1),$(or $(MOD_$(m)),$(patsubst %,build/%.o,\
	$(wildcard orchestrator/$(m).c orchestrator/$(m)-*.c))))
$(foreach t,$(UNIT_TESTS),$(eval $(t): $(call unit_objs,$(UNIT_$(t:build/tests/test_%=%)))))

build/tests/%: tests/unit/%.c
	$(if $(UNIT_$(*:test_%=%)),,$(error $<: no UNIT_$(*:test_%=%) list in the Makefile))
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SO_CFLAGS) -Ibuild -o $@ $< $(filter %.o,$^) \
	  -lcmocka $(SO_LIBS) -lstdc++

# toml++ itself, under UBSan whatever the build's flags: it checks that
# no input reaches undefined behaviour in the parser (see tomlpp.h).  It
# links no module of ours, so it has no UNIT_ list.
build/tests/test_tomlpp: tests/unit/test_tomlpp.cc orchestrator/tomlpp.h
	@mkdir -p $(dir $@)
	$(CXX) -O1 -g $(SO_CXXFLAGS) -fsanitize=undefined \
	  -fno-sanitize-recover=all -Iorchestrator -o $@ $< -lcmocka

unit: $(UNIT_TESTS)
	@for t in $(UNIT_TESTS); do echo "== $$t"; $$t || exit 1; done

# pytest-xdist runs the integration tests side by side (tests/conftest.py
# keeps one build and one built agent for all workers; tests/sshd.py gives
# each worker its own loopback addresses).  The sshd tests mostly wait on
# I/O, so more workers than cores pay off; PYTEST_JOBS=0 runs in-process.
PYTEST_JOBS ?= 4
PYTEST = $(PYTHON) -m pytest -q -n $(PYTEST_JOBS) --dist loadgroup

# A plain `make test` builds on every core; `make -jN test` keeps its N.
BUILD_JOBS = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(shell nproc))

# test_70_arm64.py is make test-arm64's: it needs the emulated host.
test: deps
	$(MAKE) $(BUILD_JOBS) all unit
	$(PYTEST) tests --ignore=tests/test_70_arm64.py

# The emulated arm64 host's rootfs, built once into ARM64_CACHE (5-13
# minutes, about 560 MB) and reused; .ci/run builds it beside make test.
arm64-host: deps-arm64
	sh tests/arm64/build-host.sh $(ARM64_CACHE) >/dev/null

# This machine and an emulated arm64 Linux host in one run of every study
# but randomx (tests/test_70_arm64.py; SEQORCH_ARM64_UMBRELLA=1 adds
# seed 001 with randomx, docs/hacking.md).
test-arm64: arm64-host all
	SEQORCH_ARM64_CACHE=$(ARM64_CACHE) $(PYTHON) -m pytest -q \
	  tests/test_70_arm64.py

# ASan and UBSan: the sources are copied to build-san/tree and built there
# with the flags below (the normal build is untouched), then the unit tests
# and the integration tests run against those binaries (SEQORCH_BIN_DIR).
# Any report fails the run: UBSan does not recover, LeakSanitizer is on.
# A failed allocation returns NULL as without ASan, so that xmalloc's own
# out-of-memory path (and its hook, test_strbuf) is what runs.
SAN_FLAGS = -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer
SAN_ENV = ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
SAN_TREE = build-san/tree
# The integration files run under the sanitizers in CI: the run, bad input,
# integrity and artifact paths, hostile bundles' import, the ssh transport
# and the jump-host relay (the whole suite twice would not fit CI's time;
# SAN_PYTEST=tests runs it).
SAN_PYTEST ?= tests/test_10_run.py tests/test_11_bad_input.py \
	tests/test_46_integrity.py tests/test_14_artifacts.py \
	tests/test_51_import_hostile.py tests/test_30_ssh.py \
	tests/test_33_proxyjump.py

sanitize: all
	@mkdir -p $(SAN_TREE)
	cp -a Makefile schema.sql hosts.toml orchestrator agent kernels tests reference \
	  docs $(SAN_TREE)/
	$(SAN_ENV) $(MAKE) $(BUILD_JOBS) -C $(SAN_TREE) CFLAGS="$(SAN_FLAGS)" \
	  CXXFLAGS="$(SAN_FLAGS)" AGENT_CFLAGS="$(SAN_FLAGS)" \
	  LDFLAGS="-fsanitize=address,undefined" all unit
	$(SAN_ENV) SEQORCH_BIN_DIR=$(CURDIR)/$(SAN_TREE) \
	  SEQORCH_TEST_CFLAGS="$(SAN_FLAGS)" $(PYTEST) $(SAN_PYTEST)

# libFuzzer (clang) targets, built in build-fuzz/ with ASan and UBSan: the
# agent-record parser, the hosts.toml front end, the agent's option parser,
# the agent's JSON-lines reader (and its writer, read back), rows.json
# import (a bundle's rows checked and imported) and a .tar bundle's archive
# read back.  Each runs FUZZ_SECONDS from its seed corpus in tests/fuzz/
# (new inputs go to build-fuzz/corpus-*, never into the tree).  A crash
# leaves build-fuzz/crash-* and fails the target.
FUZZ_CC = clang
FUZZ_CXX = clang++
FUZZ_FLAGS = -g -O1 -fsanitize=fuzzer-no-link,address,undefined \
	-fno-sanitize-recover=all -std=c11 -D_GNU_SOURCE $(WARN) \
	-Iorchestrator -Ikernels -Iagent
FUZZ_LINK = -fsanitize=fuzzer,address,undefined
FUZZ_SECONDS ?= 60
FUZZ_TARGETS = proto config agent_opts jsonl rows tar

build-fuzz/fuzz_proto: tests/fuzz/fuzz_proto.c orchestrator/proto.c \
	orchestrator/util.c
	@mkdir -p build-fuzz
	$(FUZZ_CC) $(FUZZ_FLAGS) $(FUZZ_LINK) -o $@ $^ -lcjson -lm

build-fuzz/toml.o: orchestrator/toml.cc
	@mkdir -p build-fuzz
	$(FUZZ_CXX) -g -O1 -fsanitize=fuzzer-no-link,address,undefined \
	  -fno-sanitize-recover=all $(SO_CXXFLAGS) -c -o $@ $<

# The hosts.toml front end is every orchestrator/config*.c, with the
# ssh_config reader and util.c beneath it.
FUZZ_CONFIG_OBJS = $(patsubst orchestrator/%.c,build-fuzz/%.o,\
	$(wildcard orchestrator/config*.c) orchestrator/sshconfig.c \
	orchestrator/util.c)

build-fuzz/%.o: orchestrator/%.c $(wildcard orchestrator/*.h)
	@mkdir -p build-fuzz
	$(FUZZ_CC) $(FUZZ_FLAGS) -c -o $@ $<

build-fuzz/fuzz_config: tests/fuzz/fuzz_config.c $(FUZZ_CONFIG_OBJS) \
	build-fuzz/toml.o
	$(FUZZ_CC) $(FUZZ_FLAGS) -c -o build-fuzz/fuzz_config.o tests/fuzz/fuzz_config.c
	$(FUZZ_CXX) $(FUZZ_LINK) -o $@ build-fuzz/fuzz_config.o \
	  $(FUZZ_CONFIG_OBJS) build-fuzz/toml.o -lcjson

# The agent's option parser is agent/opts.c, which needs nothing else.
build-fuzz/fuzz_agent_opts: tests/fuzz/fuzz_agent_opts.c agent/opts.c \
	agent/opts.h kernels/protocol.h kernels/kernel.h
	@mkdir -p build-fuzz
	$(FUZZ_CC) $(FUZZ_FLAGS) $(FUZZ_LINK) -o $@ tests/fuzz/fuzz_agent_opts.c \
	  agent/opts.c

# The agent's JSON-lines reader and writer are agent/jsonl.c alone.
build-fuzz/fuzz_jsonl: tests/fuzz/fuzz_jsonl.c agent/jsonl.c agent/jsonl.h
	@mkdir -p build-fuzz
	$(FUZZ_CC) $(FUZZ_FLAGS) $(FUZZ_LINK) -o $@ tests/fuzz/fuzz_jsonl.c \
	  agent/jsonl.c -lm

# rows.json import is the storage layer (db.c and its parts) with what it
# links, as UNIT_window lists, on a real SQLite file.
FUZZ_ROWS_OBJS = $(patsubst orchestrator/%.c,build-fuzz/%.o,\
	$(wildcard orchestrator/db.c orchestrator/db-*.c) orchestrator/artifact.c \
	orchestrator/progress.c orchestrator/rows-doc.c orchestrator/json-stream.c \
	orchestrator/strbuf.c orchestrator/util.c)
build-fuzz/db.o: orchestrator/db.c build/schema.h
	@mkdir -p build-fuzz
	$(FUZZ_CC) $(FUZZ_FLAGS) -Ibuild -c -o $@ $<

build-fuzz/fuzz_rows: tests/fuzz/fuzz_rows.c $(FUZZ_ROWS_OBJS)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(FUZZ_LINK) -o $@ $^ -lsqlite3 -lcjson \
	  -lcrypto -lpthread -lm

# A .tar bundle read back: bundle-io.c with util.c beneath it.
FUZZ_TAR_OBJS = $(patsubst orchestrator/%.c,build-fuzz/%.o,\
	orchestrator/bundle-io.c orchestrator/strbuf.c orchestrator/util.c)
build-fuzz/fuzz_tar: tests/fuzz/fuzz_tar.c $(FUZZ_TAR_OBJS)
	$(FUZZ_CC) $(FUZZ_FLAGS) $(FUZZ_LINK) -o $@ $^ -lcjson -lcrypto \
	  -lsqlite3 -lpthread -lm

# Two fuzzers at a time on two cores halve CI's wait; each target's output
# is printed whole when it ends (--output-sync).
FUZZ_JOBS ?= 2
fuzz:
	@$(MAKE) --no-print-directory -j$(FUZZ_JOBS) --output-sync=target \
	  $(addprefix fuzz-run-,$(FUZZ_TARGETS))

fuzz-run-%: build-fuzz/fuzz_%
	@echo "== fuzz_$* for $(FUZZ_SECONDS) s" >&2
	@mkdir -p build-fuzz/corpus-$*
	@quiet=; [ $* = agent_opts ] && quiet=-close_fd_mask=3; \
	cd build-fuzz && ./fuzz_$* -max_total_time=$(FUZZ_SECONDS) \
	  -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 $$quiet \
	  corpus-$* ../tests/fuzz/seeds-$*

# The kernels alone, side by side in one process (tests/kernels/bench.c):
#   build/kernel-bench -S sha3 -n 2000 -s 301 -c 1
KBENCH_OBJS := $(filter-out build/agent/agent.c.o,$(AGENT_OBJS))
build/kernel-bench: tests/kernels/bench.c $(KBENCH_OBJS)
	$(CC) $(AGENT_CFLAGS) -std=c11 -D_GNU_SOURCE $(WARN) -Ikernels -Iagent \
		-o $@ $^ -lcrypto -ldl

kernel-bench: build/kernel-bench

# The same chains through libgcrypt and nettle beside our kernels, in one
# process (tests/kernels/others.c): what a user would pick instead.  Our
# kernels there get the flags bench.py gives XKCP and the agents
# (NATIVE_CFLAGS), so that the side by side compares code, not flags: on a
# host without AVX-512 our best is a C variant, which -march=native makes
# 1.08x XKCP's best there and plain -O3 0.91x.
NATIVE_CFLAGS ?= -O3 -march=native
build/others: tests/kernels/others.c \
	$(patsubst build/%,build/native/%,$(KBENCH_OBJS))
	$(CC) $(NATIVE_CFLAGS) -std=c11 -D_GNU_SOURCE $(WARN) -Ikernels -Iagent \
		-o $@ $^ -lgcrypt -lnettle -lcrypto -ldl

# XKCP, the sha3 kernels' public peer: its fixture tarball, unpacked and
# built under build/xkcp at bench time (tests/kernels/xkcp.sh checks its
# SHA-256); its code is never part of this tree.
XKCP_TARBALL ?= $(firstword $(wildcard ../shared/fixtures/xkcp/XKCP-6ce53d0.tar.gz \
	../../shared/fixtures/xkcp/XKCP-6ce53d0.tar.gz) \
	../shared/fixtures/xkcp/XKCP-6ce53d0.tar.gz)

# RandomX's source for its part of the bench (fetch --from: no network).
RANDOMX_TARBALL ?= ../shared/fixtures/randomx/RandomX-1.1.10.tar.gz
bench: all build/others
	$(PYTHON) tests/bench.py --others build/others --xkcp $(XKCP_TARBALL)
	PYTHON=$(PYTHON) sh tests/bench_randomx.sh $(RANDOMX_TARBALL)
	$(PYTHON) tests/bench_fanout.py
	$(PYTHON) tests/bench_report.py

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/seqorch \
		$(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions
	install -m 755 seqorch seqorch-agent $(DESTDIR)$(PREFIX)/bin/
	install -m 644 schema.sql hosts.toml reference/seeds.json \
		$(DESTDIR)$(PREFIX)/share/seqorch/
	install -m 644 build/seqorch.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 build/seqorch.bash \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/seqorch

clean:
	rm -rf build build-san build-fuzz seqorch seqorch-agent

.PHONY: all deps deps-run deps-arm64 arm64-host docs regen run unit test test-arm64 sanitize fuzz bench kernel-bench \
	install clean FORCE
