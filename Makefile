# softib: a user-space InfiniBand HCA.  See README.md.
#
#   make deps    install the Debian packages the build, tests and benchmarks need
#   make         build libsoftib.so, the softib command, softib-sm and
#                softib-switch (installs the build's packages first when they
#                are missing)
#   make test    deps, then the layering check, unit + integration tests, then
#                again under AddressSanitizer/UBSan, then a short fuzz run, then
#                a compile against each Debian release's rdma-core
#   make test-distros  softib built and run in debootstrap chroots (trixie,
#                sid; Ubuntu 22.04's and 24.04's rdma-core and liburing built
#                from ../shared/vendor), the Debian package built, linted and
#                installed, and the README's first two commands on a fresh
#                bookworm
#   make RDMA_CORE=DIR  build against an rdma-core unpacked under DIR
#   make install  the programs, the provider and the manual pages into PREFIX
#                (/usr/local); dpkg-buildpackage -b builds the Debian package
#                (debian/)
#   make bench   throughput and latency figures (never asserted)
#   make soak    the fault-injection stress tests, longer (tests/integration/test_stress.sh)
#   make fuzz    libFuzzer on the packet decoder (FUZZ_TIME seconds)
#   make experiments  the seeds' experiments, printed beside the seeds' figures
#                and drawn (tests/experiments/)
#
# Sources are discovered by directory: adding wire/foo.c or tests/unit/test_foo.c
# needs no change here.

SHELL      := /bin/bash
CC         ?= gcc
SAN        ?=
B          ?= $(if $(filter 1,$(SAN)),build-san,build)
FUZZ_TIME  ?= 60
PREFIX     ?= /usr/local

# What the code needs is added with override, so that `make CFLAGS=-O3`
# changes the optimization and keeps -fPIC, the warnings and the standard.
override CPPFLAGS += -I. -D_GNU_SOURCE
CFLAGS     ?= -O2 -g
override CFLAGS += -std=gnu11 -Wall -Wextra -Werror -fPIC -pthread
ifeq ($(SAN),1)
override CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
override LDFLAGS += -fsanitize=address,undefined
endif

SYS_LIBS   := -lisal -luring -lnl-route-3 -lnl-3 -lpthread -ldl
override CPPFLAGS += $(shell pkg-config --cflags libnl-3.0 2>/dev/null || echo -I/usr/include/libnl3)

# The rdma-core provider ABI the build declares: tools/abi-check.sh probes
# the library and headers before anything compiles and writes $(ABI_H) and
# the version script (provider/verbs_abi.h).  RDMA_CORE=DIR: an rdma-core
# unpacked under DIR (usr/include, usr/lib/<triplet>) instead of the system's.
RDMA_CORE  ?=
ABI_DIR    := $(B)/abi
ABI_H      := $(ABI_DIR)/verbs_abi_layout.h
override CPPFLAGS += -I$(ABI_DIR)
ifneq ($(RDMA_CORE),)
RDMA_CORE_LIBDIR := $(firstword $(wildcard $(addprefix $(RDMA_CORE)/usr/,\
                    lib/$(shell $(CC) -print-multiarch 2>/dev/null) lib64 lib)))
override CPPFLAGS += -I$(RDMA_CORE)/usr/include
override LDFLAGS += -L$(RDMA_CORE_LIBDIR) -Wl,-rpath-link,$(RDMA_CORE_LIBDIR)
endif

# Layers, lowest first (docs/architecture.md section 1).
CORE_DIRS  := base wire memreg link transport mgmt hca
CORE_SRC   := $(foreach d,$(CORE_DIRS),$(wildcard $(d)/*.c))
PROV_SRC   := $(wildcard provider/*.c)
TOOLS_SRC  := $(wildcard tools/*.c)
FABRIC_SRC := $(wildcard fabric/*.c)
# fabric/ builds two programs: each main, and the rest shared.
FABRIC_MAINS := fabric/sm_main.c fabric/switch_main.c
FABRIC_LIB_SRC := $(filter-out $(FABRIC_MAINS),$(FABRIC_SRC))
UNIT_SRC   := $(wildcard tests/unit/test_*.c)
BENCH_SRC  := $(wildcard tests/bench/*.c)
EXPER_SRC  := $(wildcard tests/experiments/*.c)
EX_SRC     := $(wildcard examples/*.c)
HELP_SRC   := $(wildcard tests/helpers/*.c)

obj        = $(patsubst %.c,$(B)/obj/%.o,$(1))
CORE_LIB   := $(B)/libsoftib-core.a
PROV_LIB   := $(B)/libsoftib-provider.a
FABRIC_LIB := $(B)/libsoftib-fabric.a
SOFTIB_SO  := $(B)/libsoftib.so
SOFTIB_CMD := $(B)/softib
SM_CMD     := $(B)/softib-sm
SWITCH_CMD := $(B)/softib-switch
UNIT_BINS  := $(patsubst tests/unit/%.c,$(B)/tests/%,$(UNIT_SRC))
BENCH_BINS := $(patsubst tests/bench/%.c,$(B)/bench/%,$(BENCH_SRC))
EXPER_BINS := $(patsubst tests/experiments/%.c,$(B)/experiments/%,$(EXPER_SRC))
EX_BINS    := $(patsubst examples/%.c,$(B)/examples/%,$(EX_SRC))
HELP_BINS  := $(patsubst tests/helpers/%.c,$(B)/helpers/%,$(HELP_SRC))

TARGETS    := $(CORE_LIB) $(UNIT_BINS) $(BENCH_BINS) $(HELP_BINS)
ifneq ($(TOOLS_SRC),)
TARGETS    += $(SOFTIB_CMD)
endif
ifneq ($(PROV_SRC),)
TARGETS    += $(SOFTIB_SO)
endif
ifneq ($(FABRIC_SRC),)
TARGETS    += $(SM_CMD) $(SWITCH_CMD) $(EXPER_BINS)
endif
TARGETS    += $(EX_BINS)

# MPI programs the integration tests run (tests/mpi/), built with mpicc when
# Open MPI is there (make deps installs it); never with the sanitizers: the
# ASan build's libsoftib.so reaches them through softib run.
MPICC      ?= mpicc
MPI_SRC    := $(wildcard tests/mpi/*.c)
MPI_BINS   := $(patsubst tests/mpi/%.c,$(B)/mpi/%,$(MPI_SRC))
ifneq ($(shell command -v $(MPICC) 2>/dev/null),)
TARGETS    += $(MPI_BINS)
endif

# Keep objects of programs linked from one object (examples, tests) between runs.
.SECONDARY:

.PHONY: all programs deps deps-build test check layers soak unit integration san fuzz fuzz-short bench experiments \
        clean install abi-check test-rdma-core test-distros FORCE
all: $(TARGETS) $(if $(TOOLS_SRC),tools/softib)

# ---------------------------------------------------------------- packages
# The Debian packages `make` needs, installed before the first compile when
# missing (ibverbs-utils: ibv_devinfo, for the README's first command).
DEB_BUILD_PKGS := gcc make pkg-config binutils \
            $(if $(RDMA_CORE),,libibverbs-dev librdmacm-dev ibverbs-utils) \
            liburing-dev libnl-3-dev libnl-route-3-dev libcmocka-dev libisal-dev zlib1g-dev
# Everything the build, the tests and the benchmarks need, from Debian.
# tools/deps.sh installs them with apt-get, or names what to install.
DEB_PKGS := $(DEB_BUILD_PKGS) clang libclang-rt-dev \
            libibverbs-dev ibverbs-utils rdma-core perftest python3-pyverbs \
            liburing-dev libnl-3-dev libnl-route-3-dev libcmocka-dev libisal-dev \
            zlib1g-dev tshark librsvg2-bin iproute2 procps ucx-utils infiniband-diags opensm \
            ibsim-utils libumad2sim0 \
            rdmacm-utils qperf \
            openmpi-bin libopenmpi-dev libfabric-bin tgt \
            groff-base man-db

deps:
	@tools/deps.sh all $(DEB_PKGS)

deps-build:
	@tools/deps.sh build $(DEB_BUILD_PKGS)

# ---------------------------------------------------------------- build
$(B)/obj/%.o: %.c | $(ABI_H)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

$(CORE_LIB): $(call obj,$(CORE_SRC))
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

# Without the files that stand in for libc's file calls (provider/fs_libc.h):
# their open/read/close/... would do so in every unit test that links the
# archive.
PROV_LIBC_SRC := provider/fs_view.c provider/fs_fds.c provider/fs_dirs.c
$(PROV_LIB): $(call obj,$(filter-out $(PROV_LIBC_SRC),$(PROV_SRC)))
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

# Before anything compiles: the build's packages (not with NO_DEPS=1: a
# package build has them from Build-Depends), then the provider ABI
# (rewritten only when it changes, so this runs every time and rebuilds
# nothing needlessly).
$(ABI_H): FORCE | $(if $(NO_DEPS),,deps-build)
	@CC="$(CC)" RDMA_CORE="$(RDMA_CORE)" tools/abi-check.sh $(ABI_DIR)
$(ABI_DIR)/softib.map: $(ABI_H)
abi-check: $(ABI_H)

$(SOFTIB_SO): $(call obj,$(PROV_SRC)) $(CORE_LIB) $(ABI_DIR)/softib.map
	$(CC) -shared $(LDFLAGS) -Wl,--version-script=$(ABI_DIR)/softib.map -Wl,-z,defs \
	  -o $@ $(call obj,$(PROV_SRC)) $(CORE_LIB) -libverbs $(SYS_LIBS)

LINK_ALL = -Wl,--start-group $(CORE_LIB) $(if $(PROV_SRC),$(PROV_LIB)) -Wl,--end-group

$(SOFTIB_CMD): $(call obj,$(TOOLS_SRC)) $(CORE_LIB)
	$(CC) $(LDFLAGS) -o $@ $(call obj,$(TOOLS_SRC)) $(CORE_LIB) -libverbs $(SYS_LIBS)

$(FABRIC_LIB): $(call obj,$(FABRIC_LIB_SRC))
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(SM_CMD): $(call obj,fabric/sm_main.c) $(FABRIC_LIB) $(CORE_LIB)
	$(CC) $(LDFLAGS) -o $@ $(call obj,fabric/sm_main.c) $(FABRIC_LIB) $(CORE_LIB) $(SYS_LIBS)

$(SWITCH_CMD): $(call obj,fabric/switch_main.c) $(FABRIC_LIB) $(CORE_LIB)
	$(CC) $(LDFLAGS) -o $@ $(call obj,fabric/switch_main.c) $(FABRIC_LIB) $(CORE_LIB) $(SYS_LIBS)

$(B)/experiments/%: $(B)/obj/tests/experiments/%.o $(FABRIC_LIB) $(CORE_LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(FABRIC_LIB) $(CORE_LIB) $(SYS_LIBS)

$(B)/tests/%: $(B)/obj/tests/unit/%.o $(CORE_LIB) $(if $(PROV_SRC),$(PROV_LIB))
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(LINK_ALL) -lcmocka -libverbs $(SYS_LIBS)

$(B)/bench/%: $(B)/obj/tests/bench/%.o $(CORE_LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(LINK_ALL) -libverbs $(SYS_LIBS) -lz -lcmocka

# Programs the integration tests drive (packet generators and the like).
# Not linked with the provider: a helper that calls ibv_* would otherwise pull
# a static copy of the interposer in; they get softib0 from `softib run`.
$(B)/helpers/%: $(B)/obj/tests/helpers/%.o $(CORE_LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(CORE_LIB) -libverbs $(SYS_LIBS)

# topo_compare and topo_netfile read netfiles with fabric/topology.c.
$(B)/helpers/topo_compare $(B)/helpers/topo_netfile: $(B)/helpers/%: $(B)/obj/tests/helpers/%.o $(FABRIC_LIB) $(CORE_LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(FABRIC_LIB) $(CORE_LIB) $(SYS_LIBS)

# The multicast members and cm_port talk through librdmacm.
$(B)/helpers/mcast_members $(B)/helpers/cm_port: $(B)/helpers/%: $(B)/obj/tests/helpers/%.o $(CORE_LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(CORE_LIB) -lrdmacm -libverbs $(SYS_LIBS)

$(B)/mpi/%: tests/mpi/%.c
	@mkdir -p $(@D)
	$(MPICC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -o $@ $<

$(B)/examples/%: $(B)/obj/examples/%.o
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< -libverbs

# The command a user types lives at tools/softib; it finds libsoftib.so beside
# its real path, so the link must point into the normal build.
tools/softib: $(SOFTIB_CMD)
	@if [ "$(B)" = build ]; then ln -sfn ../build/softib tools/softib; fi

# ---------------------------------------------------------------- tests
unit: $(TARGETS)
	@tests/run-unit.sh $(B)

integration: $(TARGETS) tools/softib
	@B=$(B) tests/run-integration.sh

# Includes point down the README's layer table (tests/check-layers.sh).
layers:
	@tests/check-layers.sh

check: layers unit integration

# Longer fault-injection runs than make test (1 GiB per seed, ten seeds), then
# the long verified RC transfer (SOAK_LONG_RUNS x SOAK_LONG_SECONDS, README).
soak: $(TARGETS) tools/softib
	@export B=$$(realpath $(B)) SOFTIB_TOP=$$PWD SOFTIB_SOAK=1; export SOFTIB=$$B/softib; \
	export SOFTIB_SM=$${SOFTIB_SM:-127.0.0.1:$$((30000 + RANDOM % 20000))}; \
	bash tests/integration/test_stress.sh; rc=$$?; \
	for p in $$(pgrep -f -- "softib-sm --daemon --listen $$SOFTIB_SM\$$" 2>/dev/null); do kill $$p; done; exit $$rc

san:
	$(MAKE) SAN=1 check

# make test: what CI runs and what a new user runs.
# Each stage is timed and summed up in one line (tests/run-stages.sh).
TEST_STAGES := 'deps:deps' 'check:check' 'check ASan+UBSan:SAN=1 check' \
               'fuzz:fuzz-short' 'rdma-core:test-rdma-core'
test:
	@tests/run-stages.sh $(TEST_STAGES) && \
	echo "make test: all stages passed (run against this machine's rdma-core" \
	  "$$(dpkg-query -W -f='$${Version}' libibverbs1 2>/dev/null || echo '?')," \
	  "compiled against those listed by the rdma-core stage)"

# softib compiled against the rdma-core of Debian bookworm, trixie and sid
# (.debs cached in $${SOFTIB_CACHE:-~/.cache/softib}).
test-rdma-core:
	@tests/run-rdma-core.sh

# softib in debootstrap chroots of trixie and sid and of Ubuntu-like
# bookworms, the Debian package, and the README's first two commands on a
# fresh bookworm (root; cached in $${SOFTIB_CACHE:-~/.cache/softib}).
test-distros:
	@tests/run-distros.sh

# ---------------------------------------------------------------- fuzzing
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,build-fuzz/%,$(FUZZ_SRC))
build-fuzz/%: tests/fuzz/%.c $(wildcard wire/*.c wire/*.h)
	@mkdir -p $(@D)
	clang -std=gnu11 -g -O1 -I. -D_GNU_SOURCE -Wall -Wextra -Werror \
	  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	  -o $@ $< $(wildcard wire/*.c) -lisal

fuzz: $(FUZZ_BINS)
	@tests/run-fuzz.sh $(FUZZ_TIME) $(FUZZ_BINS)

fuzz-short:
	$(MAKE) fuzz FUZZ_TIME=$(FUZZ_TIME)

# ---------------------------------------------------------------- bench
bench: deps $(TARGETS) tools/softib
	@tests/bench/run-bench.sh $(B)

# The seeds' experiments, each printed beside what the seed reports and
# drawn (gnuplot); not part of make test.
experiments: deps $(TARGETS)
	@tests/experiments/run-experiments.sh $(B)

# ---------------------------------------------------------------- install
# What make install installs, and nothing else (the Debian package builds this).
PROGRAMS   := $(if $(TOOLS_SRC),$(SOFTIB_CMD)) $(if $(PROV_SRC),$(SOFTIB_SO)) \
              $(if $(FABRIC_SRC),$(SM_CMD) $(SWITCH_CMD))
programs: $(PROGRAMS)

install: programs
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/softib $(DESTDIR)$(PREFIX)/share/man/man1 \
	  $(DESTDIR)$(PREFIX)/share/man/man7 $(DESTDIR)$(PREFIX)/share/man/man8
	install -m 755 $(SOFTIB_CMD) $(DESTDIR)$(PREFIX)/bin/softib
	$(if $(FABRIC_SRC),install -m 755 $(SM_CMD) $(DESTDIR)$(PREFIX)/bin/softib-sm)
	$(if $(FABRIC_SRC),install -m 755 $(SWITCH_CMD) $(DESTDIR)$(PREFIX)/bin/softib-switch)
	$(if $(PROV_SRC),install -m 755 $(SOFTIB_SO) $(DESTDIR)$(PREFIX)/lib/softib/libsoftib.so)
	for s in 1 7 8; do for f in man/*.$$s; do [ -e "$$f" ] && install -m 644 $$f $(DESTDIR)$(PREFIX)/share/man/man$$s/; done; done; true

clean:
	rm -rf build build-san build-fuzz tools/softib

-include $(shell find $(B)/obj -name '*.d' 2>/dev/null)
