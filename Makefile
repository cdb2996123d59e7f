# SPDX-License-Identifier: BSD-2-Clause
# giopscope: CORBA GIOP/IIOP latency from the wire.   `make help` lists the targets.
BUILD ?= build
PREFIX ?= /usr/local
CC ?= cc
SAN ?=
# 1: an integration test that skips (or skips a scenario) fails; make check sets it
GIOPSCOPE_STRICT ?= 0
OPT ?= -O2 -g
WARN := -Wall -Wextra -Wshadow -Wpointer-arith -Wcast-qual -Werror
CFLAGS_ALL := -std=gnu11 $(OPT) $(WARN) $(SAN) -D_GNU_SOURCE $(CFLAGS)
LDLIBS_PCAP := $(shell pkg-config --libs libpcap 2>/dev/null || echo -lpcap)

.DEFAULT_GOAL := all
# Optional parts add to PROBE_EXTRA, LDLIBS_EXTRA and their own rules.
-include ebpf/ebpf.mk
# attach's loader parts that use libbpf but no skeleton (probing the kernel,
# tc attach, the verifier's verdicts): libbpf's headers and GS_HAVE_EBPF too
ifneq ($(GS_EBPF_SKELS),)
GS_LIBBPF_USERS := $(BUILD)/obj/probe/attach_load.o $(BUILD)/obj/probe/attach_hooks.o $(BUILD)/obj/probe/attach_tc.o
$(GS_LIBBPF_USERS): CFLAGS_ALL += -DGS_HAVE_EBPF
endif
-include probe/dpdk/dpdk.mk

# --metrics-web-config's TLS and basic auth: OpenSSL 3 and libcrypt (libxcrypt's bcrypt), where
# pkg-config finds both (Debian: libssl-dev, libcrypt-dev; scripts/install-deps.sh's build set).
# Optional: with OPENSSL=0, or without them, a web configuration asking for TLS or users is refused
# in one line, and everything else builds and runs as before.
OPENSSL ?= auto
ifneq ($(OPENSSL),0)
ifneq ($(shell pkg-config --exists openssl libcrypt 2>/dev/null && echo yes),)
GS_WEB_CFLAGS := -DGS_HAVE_OPENSSL $(shell pkg-config --cflags openssl libcrypt 2>/dev/null)
LDLIBS_WEB := $(shell pkg-config --libs openssl libcrypt 2>/dev/null)
endif
endif

# read's compressed captures: zlib (gzip) and libzstd (zstd), each where pkg-config finds it
# (Debian: zlib1g-dev, libzstd-dev; scripts/install-deps.sh's build set). Optional: without one,
# a capture compressed so is refused in one line that says how to decompress it.
GS_ZLIB := $(shell pkg-config --exists zlib 2>/dev/null && echo yes)
GS_ZSTD := $(shell pkg-config --exists libzstd 2>/dev/null && echo yes)
GS_DECOMP_CFLAGS := $(if $(GS_ZLIB),-DGS_HAVE_ZLIB) $(if $(GS_ZSTD),-DGS_HAVE_ZSTD)
LDLIBS_DECOMP := $(if $(GS_ZLIB),$(shell pkg-config --libs zlib)) $(if $(GS_ZSTD),$(shell pkg-config --libs libzstd))

# The build configuration, recorded in $(BUILD)/config.mk: the compiler, the flags and what
# was found of the optional parts (DPDK, eBPF; detected above each time make starts). It is
# written here, when make starts, only when its text changes, and every object and binary
# built with CFLAGS_ALL depends on it: installing or removing DPDK/libbpf, `make DPDK=0`,
# another CFLAGS, OPT, SAN or CC rebuilds everything that was built otherwise (make -n
# included). Nothing includes it; it is a record. Goals that build nothing leave it alone.
GS_CONFIG := $(BUILD)/config.mk
define GS_CONFIG_TEXT
# $(GS_CONFIG): what this build folder is built with (see "build configuration" in the Makefile)
CC = $(CC)
CC_VERSION = $(shell $(CC) --version 2>/dev/null | head -n 1)
OPT = $(OPT)
SAN = $(SAN)
CFLAGS = $(CFLAGS)
CFLAGS_ALL = $(CFLAGS_ALL)
LDFLAGS = $(LDFLAGS)
LIBPCAP = $(shell pkg-config --modversion libpcap 2>/dev/null) $(LDLIBS_PCAP)
LDLIBS_EXTRA = $(LDLIBS_EXTRA)
DPDK = $(DPDK)
DPDK_FOUND = $(if $(GS_DPDK_SRCS),yes $(shell pkg-config --modversion libdpdk 2>/dev/null),no)
DPDK_CFLAGS = $(GS_DPDK_CFLAGS)
OPENSSL = $(OPENSSL)
DECOMP = $(GS_DECOMP_CFLAGS) $(LDLIBS_DECOMP)
OPENSSL_FOUND = $(if $(LDLIBS_WEB),yes $(shell pkg-config --modversion openssl 2>/dev/null),no)
EBPF = $(EBPF)
EBPF_FOUND = $(if $(GS_EBPF_SKELS),yes $(GS_BPF_CLANG) $(GS_BPFTOOL) $(GS_BTF),no)
endef
GS_CONFIG_QUIET_GOALS := help clean deps deps-build deps-deb deps-kernels deb check-deb uninstall
ifneq ($(if $(MAKECMDGOALS),$(filter-out $(GS_CONFIG_QUIET_GOALS),$(MAKECMDGOALS)),all),)
GS_CONFIG_NOW := $(GS_CONFIG_TEXT)
GS_CONFIG_WAS := $(file < $(GS_CONFIG))
ifneq ($(GS_CONFIG_WAS),$(GS_CONFIG_NOW))
$(shell mkdir -p $(BUILD))
$(file > $(GS_CONFIG),$(GS_CONFIG_NOW))
$(info $(GS_CONFIG): build configuration $(if $(GS_CONFIG_WAS),changed: what depends on it is rebuilt,recorded))
endif
endif

DECODERS := decoders/link.c decoders/ip.c decoders/tcp.c decoders/packet.c \
            decoders/giop/giop.c decoders/giop/giop_names.c
ANALYSIS := analysis/intern.c analysis/hist.c analysis/fmt_num.c analysis/out_file.c analysis/endpoint.c analysis/flows.c \
            analysis/reasm.c analysis/pending.c analysis/framer.c analysis/pairing.c analysis/calls.c analysis/problems.c \
            analysis/engine.c analysis/table_mem.c analysis/engine_shard.c analysis/call_merge.c analysis/evidence.c analysis/stats.c analysis/tail.c analysis/tail_chain.c analysis/interval.c analysis/sink_pairs.c analysis/text_out.c analysis/summary.c \
            analysis/sink_trace.c analysis/report.c analysis/report_plot.c analysis/report_nest.c analysis/report_waterfall.c analysis/report_html.c analysis/report_text.c analysis/report_prom.c \
            analysis/merge_match.c analysis/thread_log.c analysis/thread_parent.c analysis/orb_profile.c analysis/nest.c analysis/host_addrs.c
# every probe/*.c; optional parts (DPDK) add theirs from their make fragment
PROBE := $(wildcard probe/*.c) $(PROBE_EXTRA)
LIB_SRCS := $(DECODERS) $(ANALYSIS)
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)
PROBE_OBJS := $(PROBE:%.c=$(BUILD)/obj/%.o)
# the parts of probe/ the unit tests exercise (they need only libc and the library)
PROBE_TESTED := probe/opts.c probe/opt_refuse.c probe/verifier_log.c probe/options.c probe/privdrop.c probe/metrics.c probe/merge_out.c probe/pcap_walk.c \
                probe/attach_times.c probe/decomp.c probe/read_inputs.c probe/session_opts.c
# the /metrics endpoint's parts (metrics.c needs them; libssl and libcrypt when found)
PROBE_TESTED += probe/metrics_listen.c probe/metrics_http.c probe/metrics_tls.c probe/metrics_auth.c probe/metrics_web.c \
                probe/web_config.c
PROBE_TESTED_OBJS := $(PROBE_TESTED:%.c=$(BUILD)/obj/%.o)
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)

.PHONY: all deps deps-build check check-unit check-golden check-integration check-asan \
        demo install uninstall clean help fuzz

all: $(BUILD)/giopscope

help:
	@echo "giopscope targets:"
	@echo "  make                 build $(BUILD)/giopscope"
	@echo "  make demo            install what is missing, build, analyse the shipped capture"
	@echo "  make check           install what is missing, build, run every test (unit, golden"
	@echo "                       captures, real ORBs in network namespaces vs tshark), then the"
	@echo "                       unit and golden tests again under ASan+UBSan, read --threads under TSan"
	@echo "  make check-unit      cmocka unit tests only"
	@echo "  make check-layers    the include graph (no import circle, no include against the data flow), an SPDX line in every source"
	@echo "                       (and the check's self-test on small trees; part of make check)"
	@echo "  make check-golden    the shipped captures against their expected calls"
	@echo "  make check-integration  omniORB/Combat in namespaces, compared with tshark (root)"
	@echo "  make check-asan      unit, golden, bad-input, read --threads and tap stop/clean-up tests"
	@echo "                       under ASan+UBSan"
	@echo "  make check-tsan      read --threads under ThreadSanitizer (clang): the ring, the merge,"
	@echo "                       threaded reads compared with one thread"
	@echo "  make check-minimal   the build without DPDK, eBPF and OpenSSL (DPDK=0 EBPF=0 OPENSSL=0): golden"
	@echo "                       captures, dpdk/attach/TLS for --metrics refusing with exit 2"
	@echo "  make check-build-config  a DPDK=0 EBPF=0 build, then a plain make in the same folder:"
	@echo "                       rebuilt with DPDK and eBPF ($(BUILD)/config.mk records the configuration)"
	@echo "  make deb             install what is missing, build the Debian package giopscope_*.deb"
	@echo "                       into $(BUILD)/ (debian/; dpkg-buildpackage -b in $(BUILD)/deb-src)"
	@echo "  make check-deb       make deb, then its contents, dependencies, binary and lintian checked"
	@echo "  make check-kernels   attach's tests inside QEMU guests booting Debian's kernels (6.1, its"
	@echo "                       PREEMPT_RT flavour, 6.12) against omniORB; installs QEMU and the kernels;"
	@echo "                       KERNELS=\"6.1 6.1-rt 6.12\" (default), KERNEL_TESTS=\"NAME...\""
	@echo "                       (tests/kernels/tests.list); logs in $(BUILD)/kernels/VERSION/; root;"
	@echo "                       never in make check (minutes per kernel: docs/testing.md)"
	@echo "  make fuzz            each libFuzzer harness for FUZZ_SECONDS (default 60)"
	@echo "  make fuzz-short      each harness briefly on its seeds (part of make check)"
	@echo "  make fuzz-regress    each saved reproducer of tests/fuzz/crashes once (part of make check)"
	@echo "  make bench           benchmarks (offline vs tshark and a bare libpcap loop, memory, and"
	@echo "                       each tap's part) into docs/benchmarks.md; long; never in make check"
	@echo "  make bench-quick     the same, small sizes, in about two minutes"
	@echo "  make bench-gen-check the benchmark capture generator checked against tshark"
	@echo "  make bench-read BENCH_OLD=PATH  read and read --pairs beside an older build, in one run"
	@echo "  make bench-workloads omniORB workloads (structs, records, Any; N deferred servers):"
	@echo "                       client latency vs giopscope's wire figures (root; part of make bench)"
	@echo "  make soak            giopscope live for SOAK_SECONDS (default 7200) on mixed omniORB load"
	@echo "                       with a restarting reply-less server: RSS flat, no call lost (root);"
	@echo "                       never in make check"
	@echo "  make install PREFIX=/usr/local   install giopscope and its man page"
	@echo "  make deps            install build and test dependencies (Debian 12, apt-get, root)"
	@echo "  make deps-kernels    those and what make check-kernels needs (QEMU, busybox, kernels)"
	@echo "  make clean"

deps:
	./scripts/install-deps.sh check

deps-build:
	./scripts/install-deps.sh build

deps-kernels:
	./scripts/install-deps.sh kernels

# attach on the kernels its users run (tests/kernels/check-kernels.sh): QEMU guests booting
# Debian's kernel packages from /boot run tests/kernels/tests.list against the build here
KERNELS ?= 6.1 6.1-rt 6.12
KERNEL_TESTS ?=
.PHONY: deps-kernels check-kernels
check-kernels: deps-kernels
	$(MAKE) all orb-apps
	BUILD=$(BUILD) KERNEL_TESTS="$(KERNEL_TESTS)" tests/kernels/check-kernels.sh $(KERNELS)

$(BUILD)/obj/%.o: %.c $(GS_CONFIG)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP -c $< -o $@

# attach --orb: the ORB profiles of probe/orb_profiles/ compiled in (data, not code)
GS_ORB_PROFILES := $(sort $(wildcard probe/orb_profiles/*.txt))
$(BUILD)/gen/orb_profiles.h: $(GS_ORB_PROFILES) scripts/orb_profiles.sh
	@mkdir -p $(dir $@)
	scripts/orb_profiles.sh $(GS_ORB_PROFILES) > $@.tmp && mv $@.tmp $@
$(BUILD)/obj/probe/attach_orb.o: $(BUILD)/gen/orb_profiles.h
$(BUILD)/obj/probe/attach_orb.o: CFLAGS_ALL += -I$(BUILD)/gen
$(BUILD)/obj/probe/metrics_tls.o $(BUILD)/obj/probe/metrics_auth.o: CFLAGS_ALL += $(GS_WEB_CFLAGS)
$(BUILD)/obj/probe/decomp.o: CFLAGS_ALL += $(GS_DECOMP_CFLAGS)

$(BUILD)/libgiopscope.a: $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/giopscope: $(PROBE_OBJS) $(BUILD)/libgiopscope.a $(GS_CONFIG)
	$(CC) $(CFLAGS_ALL) -o $@ $(PROBE_OBJS) $(BUILD)/libgiopscope.a $(LDLIBS_PCAP) $(LDLIBS_EXTRA) $(LDLIBS_WEB) $(LDLIBS_DECOMP) -pthread $(LDFLAGS)

$(BUILD)/libgiopscope-probe.a: $(PROBE_TESTED_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libgiopscope-probe.a $(BUILD)/libgiopscope.a $(wildcard tests/unit/*.h) $(GS_CONFIG)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Wno-unused-parameter -o $@ $< $(BUILD)/libgiopscope-probe.a $(BUILD)/libgiopscope.a -lcmocka $(LDLIBS_WEB) $(LDLIBS_PCAP) $(LDLIBS_DECOMP) $(LDFLAGS)
# the decompression's tests compress with the libraries it was built with
$(BUILD)/tests/test_decomp: CFLAGS_ALL += $(GS_DECOMP_CFLAGS)

check: deps
	$(MAKE) check-layers
	$(MAKE) all check-unit check-golden GIOPSCOPE_STRICT=1
	$(MAKE) check-integration GIOPSCOPE_STRICT=1
	$(MAKE) check-asan
	$(MAKE) check-tsan
	$(MAKE) fuzz-short fuzz-regress
	$(MAKE) check-minimal
	$(MAKE) check-build-config GIOPSCOPE_STRICT=1
	$(MAKE) check-deb GIOPSCOPE_STRICT=1
	@echo "make check: all passed"

# The build a machine without DPDK, eBPF or OpenSSL gets (DPDK=0 EBPF=0 OPENSSL=0): it must
# build, pass the golden captures, and have `dpdk`, `attach` and a --metrics-web-config asking
# for TLS refuse in one line with exit 2.
.PHONY: check-minimal
check-minimal:
	$(MAKE) BUILD=build/minimal DPDK=0 EBPF=0 OPENSSL=0 build/minimal/giopscope
	$(MAKE) BUILD=build/minimal DPDK=0 EBPF=0 OPENSSL=0 check-golden
	@printf 'tls_server_config:\n  cert_file: s.crt\n  key_file: s.key\n' >build/minimal/web.yml
	@for cmd in "dpdk --vdev net_null0" "attach --pid 1" \
		"live -i lo --metrics 127.0.0.1:0 --metrics-web-config build/minimal/web.yml"; do \
		build/minimal/giopscope $$cmd >/dev/null 2>build/minimal/refusal.txt; rc=$$?; \
		lines=$$(wc -l <build/minimal/refusal.txt); \
		if [ $$rc -ne 2 ] || [ $$lines -ne 1 ]; then \
			echo "check-minimal: giopscope $$cmd: exit $$rc, $$lines stderr lines (want 2 and 1):"; \
			cat build/minimal/refusal.txt; exit 1; fi; \
		echo "check-minimal: giopscope $$cmd -> exit 2: $$(cat build/minimal/refusal.txt)"; \
	done

# the build configuration tracked ($(BUILD)/config.mk): a DPDK=0 EBPF=0 build then a plain
# make into the same (temporary) folder gets DPDK and eBPF; another CFLAGS rebuilds
.PHONY: check-build-config
check-build-config:
	BUILD=$(BUILD) GIOPSCOPE_STRICT=$(GIOPSCOPE_STRICT) tests/build/config_tracking.sh

# The include graph against the data flow (tests/check_layers.py): no import circle, no include
# from a layer to one above it; first its self-test (it must fail a tree with a circle and one
# with an include against the flow); then every tracked source file's SPDX line (tests/check_spdx.sh).
.PHONY: check-layers
check-layers:
	@tests/check_layers.py --self-test >/dev/null || { tests/check_layers.py --self-test; exit 1; }
	@tests/check_layers.py --quiet
	@tests/check_spdx.sh

check-unit: $(UNIT_BINS)
	@tests/run-unit.sh $(UNIT_BINS)

check-golden: $(BUILD)/giopscope $(BUILD)/bench/giopgen
	@GIOPSCOPE=$(BUILD)/giopscope tests/golden/run.sh
	@GIOPSCOPE=$(BUILD)/giopscope GIOPGEN=$(BUILD)/bench/giopgen tests/golden/summary_vs_pairs.sh
	@GIOPSCOPE=$(BUILD)/giopscope GIOPGEN=$(BUILD)/bench/giopgen GIOPSCOPE_STRICT=$(GIOPSCOPE_STRICT) tests/golden/read_paths.sh
	@GIOPSCOPE=$(BUILD)/giopscope tests/golden/read_order_report.sh

check-integration: $(BUILD)/giopscope orb-apps $(BUILD)/bench/giopgen
	@GIOPSCOPE=$(BUILD)/giopscope BUILD=$(BUILD) GIOPSCOPE_STRICT=$(GIOPSCOPE_STRICT) tests/run-integration.sh

check-asan: orb-apps
	$(MAKE) BUILD=build/asan SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
		OPT="-O1 -g" build/asan/giopscope check-unit check-golden BUILD=build/asan
	GIOPSCOPE=build/asan/giopscope tests/bad/run.sh
	GIOPSCOPE=build/asan/giopscope BUILD=$(BUILD) READ_THREADS_QUICK=1 tests/integration/read_threads.sh
	@# the stops and clean-ups of the taps, under the sanitizers too (root; 77 = skipped)
	GIOPSCOPE=build/asan/giopscope BUILD=$(BUILD) tests/integration/attach_ebpf.sh cleanup pid_exit iface_gone; \
		rc=$$?; [ $$rc -eq 0 ] || [ $$rc -eq 77 ]
	GIOPSCOPE=build/asan/giopscope BUILD=$(BUILD) tests/integration/live_vs_tcpdump.sh stops iface_deleted; \
		rc=$$?; [ $$rc -eq 0 ] || [ $$rc -eq 77 ]

# read --threads under ThreadSanitizer (clang; the build without DPDK and eBPF; clang's own
# warnings on other files are not errors here): the ring, the merge, and threaded reads
# compared with one thread (a race report changes stderr and the exit code)
.PHONY: check-tsan
check-tsan:
	$(MAKE) BUILD=build/tsan CC=clang DPDK=0 EBPF=0 SAN="-fsanitize=thread" OPT="-O1 -g" CFLAGS="-Wno-error" \
		build/tsan/giopscope build/tsan/tests/test_shards
	TSAN_OPTIONS=halt_on_error=1 build/tsan/tests/test_shards
	TSAN_OPTIONS="halt_on_error=1 exitcode=66" GIOPSCOPE=build/tsan/giopscope BUILD=$(BUILD) READ_THREADS_QUICK=1 \
		tests/integration/read_threads.sh

# the build is a sub-make: it starts after deps-build (even with -j) and detects what is
# installed then
demo: deps-build
	$(MAKE) all
	$(BUILD)/giopscope read tests/data/omniorb_demo.pcap

install: $(BUILD)/giopscope
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0755 $(BUILD)/giopscope $(DESTDIR)$(PREFIX)/bin/giopscope
	install -m 0644 docs/giopscope.1 $(DESTDIR)$(PREFIX)/share/man/man1/giopscope.1

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/giopscope $(DESTDIR)$(PREFIX)/share/man/man1/giopscope.1

clean:
	rm -rf $(BUILD) build

# The Debian package (debian/): dpkg-buildpackage -b in a copy of the tree,
# $(BUILD)/deb-src/giopscope (so nothing is written next to the worktree); the .deb files,
# .changes and .buildinfo are then moved to $(BUILD)/. tests/deb/deb.sh checks them.
.PHONY: deb deps-deb check-deb
DEB_SRC := $(BUILD)/deb-src/giopscope
deps-deb:
	./scripts/install-deps.sh deb

deb: deps-deb
	rm -rf $(BUILD)/deb-src
	mkdir -p $(DEB_SRC)
	tar -cf - --exclude-vcs --exclude=./build --exclude=./$(BUILD) --exclude=__pycache__ . | tar -xf - -C $(DEB_SRC)
	cd $(DEB_SRC) && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL dpkg-buildpackage -us -uc -b -J2
	rm -f $(BUILD)/giopscope_*.deb $(BUILD)/giopscope-dbgsym_*.deb $(BUILD)/giopscope_*.changes $(BUILD)/giopscope_*.buildinfo
	mv $(BUILD)/deb-src/*.deb $(BUILD)/deb-src/*.changes $(BUILD)/deb-src/*.buildinfo $(BUILD)/
	@ls -1 $(BUILD)/giopscope_*.deb

check-deb:
	BUILD=$(BUILD) GIOPSCOPE_STRICT=$(GIOPSCOPE_STRICT) tests/deb/deb.sh

# Benchmarks: bench/run.sh writes docs/benchmarks.md and docs/bench-*.svg. Never part of
# `make check` (they take minutes and their figures depend on the machine).
BENCH_BIN := $(BUILD)/bench
.PHONY: bench bench-quick bench-tools bench-gen-check
bench-tools: $(BUILD)/giopscope $(BENCH_BIN)/giopgen $(BENCH_BIN)/bare_loop $(BENCH_BIN)/bare_walk

$(BENCH_BIN)/giopgen: $(wildcard bench/gen/*.c bench/gen/*.h) $(GS_CONFIG)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $(filter %.c,$^) -lm $(LDFLAGS)

$(BENCH_BIN)/bare_loop: bench/bare_loop.c $(GS_CONFIG)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LDLIBS_PCAP) $(LDFLAGS)

# the walk alone (probe/pcap_walk.c), giopscope's own floor beside bare_loop's
$(BENCH_BIN)/bare_walk: bench/bare_walk.c probe/pcap_walk.c probe/pcap_walk_file.c probe/pcap_walk.h $(BUILD)/libgiopscope.a $(GS_CONFIG)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $(filter %.c,$^) $(BUILD)/libgiopscope.a $(LDLIBS_PCAP) $(LDFLAGS)

# bench/tc_floor (issue 16): an empty tc tap on attach's hooks, for bench/attach_toggle.sh's tc_*
# arms; its skeleton is generated here as ebpf/ebpf.mk does for the taps (only with eBPF built)
ifeq ($(GS_EBPF_OK),yes)
bench-tools: $(BENCH_BIN)/tc_floor
$(BENCH_BIN)/tc_floor.bpf.o: bench/tc_floor.bpf.c bench/tc_floor.h ebpf/giop_tap.h $(GS_EBPF_OUT)/vmlinux.h
	@mkdir -p $(dir $@)
	$(GS_BPF_CLANG) $(GS_BPF_CFLAGS) -Ibench -c $< -o $@.tmp && $(GS_LLVM_STRIP) -g $@.tmp && mv $@.tmp $@

$(BENCH_BIN)/tc_floor.skel.h: $(BENCH_BIN)/tc_floor.bpf.o
	$(GS_BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

$(BENCH_BIN)/tc_floor: bench/tc_floor.c bench/tc_floor.h ebpf/giop_tap.h $(BENCH_BIN)/tc_floor.skel.h $(GS_CONFIG)
	$(CC) $(CFLAGS_ALL) -I$(BENCH_BIN) -Ibench -Iebpf -o $@ bench/tc_floor.c -lbpf -lelf -lz $(LDFLAGS)
endif

bench: bench-tools
	BUILD=$(BUILD) bench/run.sh full

bench-quick: bench-tools
	BUILD=$(BUILD) bench/run.sh quick

# read and read --pairs of this build beside an older one, in one run (bench/read_ratio.py:
# interleaved rounds, ratios to the bare libpcap loop, callgrind instructions a packet):
#   make bench-read BENCH_OLD=/path/to/old/giopscope
# on two generated captures (the echo mix, 40k calls; the default mix, 50k calls)
BENCH_OLD ?=
BENCH_ROUNDS ?= 7
.PHONY: bench-read
$(BENCH_BIN)/echo40k.pcap: $(BENCH_BIN)/giopgen
	$(BENCH_BIN)/giopgen --calls 40000 --mix echo -q -o $@
$(BENCH_BIN)/def50k.pcap: $(BENCH_BIN)/giopgen
	$(BENCH_BIN)/giopgen --calls 50000 -q -o $@
bench-read: bench-tools $(BENCH_BIN)/echo40k.pcap $(BENCH_BIN)/def50k.pcap
	@[ -x "$(BENCH_OLD)" ] || { echo "bench-read: BENCH_OLD=PATH, the giopscope to compare with"; exit 2; }
	bench/read_ratio.py --old $(BENCH_OLD) --new $(BUILD)/giopscope --bare $(BENCH_BIN)/bare_loop \
		--rounds $(BENCH_ROUNDS) --rotate --callgrind echo40k=$(BENCH_BIN)/echo40k.pcap \
		echo40k=$(BENCH_BIN)/echo40k.pcap def50k=$(BENCH_BIN)/def50k.pcap

# the generator's captures against tshark's GIOP dissector (under a minute)
bench-gen-check: bench-tools
	GIOPSCOPE=$(BUILD)/giopscope GIOPGEN=$(BENCH_BIN)/giopgen bench/gen/check.sh

# the workloads part alone (bench/workloads.sh, its section of docs/benchmarks.md; root, minutes)
.PHONY: bench-workloads
bench-workloads: $(BUILD)/giopscope workloads-apps
	BUILD=$(BUILD) GIOPSCOPE=$(BUILD)/giopscope bench/workloads.sh

# the soak (tests/soak/soak.sh): hours of live capture; on demand only, never in make check
SOAK_SECONDS ?= 7200
.PHONY: soak
soak: $(BUILD)/giopscope orb-apps
	SOAK_SECONDS=$(SOAK_SECONDS) GIOPSCOPE=$(BUILD)/giopscope BUILD=$(BUILD) tests/soak/soak.sh

include tests/orb/orb.mk
include bench/workloads/workloads.mk
include tests/fuzz/fuzz.mk
-include $(LIB_OBJS:.o=.d) $(PROBE_OBJS:.o=.d)
