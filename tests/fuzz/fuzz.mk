# SPDX-License-Identifier: BSD-2-Clause
# tests/fuzz/fuzz.mk -- libFuzzer harnesses (clang, ASan + UBSan).
#
# Included by the top-level Makefile (which defines BUILD ?= build, DECODERS and
# ANALYSIS); standalone:   make -f Makefile fuzz-short
#
#   make fuzz-build        $(BUILD)/fuzz/fuzz_{packet,giop,engine,pcap,web} and the seed corpora
#   make fuzz              each harness for FUZZ_SECONDS (default 60) on its seeds and what
#                          it found before ($(BUILD)/fuzz/corpus/NAME); fails on a crash
#   make fuzz-short        each harness for FUZZ_SHORT_SECONDS (default 25: 125 s in all) on
#                          its seeds and what this run finds; fails on a crash
#   make fuzz-regress      each harness once over tests/fuzz/crashes/NAME/ (the saved
#                          reproducers); fails while any of them still crashes
#   make fuzz-cov          line coverage of the library reached by the corpora (llvm-cov)
#
# The library sources (DECODERS, ANALYSIS; probe/tap_pcap.c and the walker it
# maps files with, probe/pcap_walk*.c, for fuzz_pcap) are compiled
# here with the sanitizers and -fsanitize=fuzzer-no-link, never taken from libgiopscope.a.
# New crashes are written to $(BUILD)/fuzz/artifacts/NAME-crash-*; copy a reproducer to
# tests/fuzz/crashes/NAME/ to keep it as a regression input.
# Every variable is FUZZ_-prefixed so that nothing leaks into or out of the including Makefile.

BUILD ?= build

FUZZ_CC            ?= clang
FUZZ_OUT           := $(BUILD)/fuzz
FUZZ_SAN           ?= -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_CFLAGS        ?= -g -O1 -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter
FUZZ_LIBPCAP       := $(shell pkg-config --libs libpcap 2>/dev/null || echo -lpcap)
FUZZ_NAMES         := packet giop engine pcap web
FUZZ_BINS          := $(FUZZ_NAMES:%=$(FUZZ_OUT)/fuzz_%)
FUZZ_LIB_SRCS      := $(DECODERS) $(ANALYSIS)
FUZZ_LIB_OBJS      := $(FUZZ_LIB_SRCS:%.c=$(FUZZ_OUT)/obj/%.o)
FUZZ_TAP_SRCS      := probe/tap_pcap.c probe/pcap_walk.c probe/pcap_walk_file.c
FUZZ_TAP_OBJ       := $(FUZZ_TAP_SRCS:%.c=$(FUZZ_OUT)/obj/%.o)
FUZZ_SEEDS         := $(FUZZ_OUT)/seeds/.stamp
FUZZ_CAPTURES      := $(wildcard tests/data/corpus/*.pcap tests/data/*.pcap)
FUZZ_SECONDS       ?= 60
FUZZ_SHORT_SECONDS ?= 25
FUZZ_TIMEOUT       ?= 10
FUZZ_RSS_MB        ?= 2048
FUZZ_FLAGS         ?=
# longest input per harness
FUZZ_MAXLEN_packet := 4096
FUZZ_MAXLEN_giop   := 8192
FUZZ_MAXLEN_engine := 16384
FUZZ_MAXLEN_pcap   := 65536
FUZZ_MAXLEN_web    := 8192
# fuzz_web: the /metrics endpoint's readers (the web configuration, a request head)
FUZZ_WEB_SRCS      := probe/web_config.c probe/metrics_http.c
FUZZ_WEB_OBJS      := $(FUZZ_WEB_SRCS:%.c=$(FUZZ_OUT)/obj/%.o)

.PHONY: fuzz-build fuzz fuzz-short fuzz-regress fuzz-cov fuzz-clean

fuzz-build: $(FUZZ_BINS) $(FUZZ_SEEDS)

$(FUZZ_OUT)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@

$(FUZZ_OUT)/fuzz_pcap: tests/fuzz/fuzz_pcap.c $(FUZZ_LIB_OBJS) $(FUZZ_TAP_OBJ)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $< $(FUZZ_LIB_OBJS) $(FUZZ_TAP_OBJ) $(FUZZ_LIBPCAP)

$(FUZZ_OUT)/fuzz_web: tests/fuzz/fuzz_web.c $(FUZZ_WEB_OBJS)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $< $(FUZZ_WEB_OBJS)

$(FUZZ_OUT)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_LIB_OBJS)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $< $(FUZZ_LIB_OBJS)

$(FUZZ_SEEDS): tests/fuzz/make_seeds.py $(FUZZ_CAPTURES)
	python3 tests/fuzz/make_seeds.py $(FUZZ_OUT)/seeds $(FUZZ_CAPTURES)
	@touch $@

# FUZZ_RUN(seconds, corpus dir): run every harness on its seeds and the corpus dir
# (where what it finds is added), report each one's stats, fail if any crashed
define FUZZ_RUN
	@mkdir -p $(FUZZ_OUT)/artifacts; failed=""; \
	for n in $(FUZZ_NAMES); do \
		mkdir -p $(2)/$$n; \
		case $$n in packet) ml=$(FUZZ_MAXLEN_packet);; giop) ml=$(FUZZ_MAXLEN_giop);; \
		            engine) ml=$(FUZZ_MAXLEN_engine);; web) ml=$(FUZZ_MAXLEN_web);; \
		            *) ml=$(FUZZ_MAXLEN_pcap);; esac; \
		echo "== fuzz_$$n for $(1) s"; \
		if $(FUZZ_OUT)/fuzz_$$n -max_total_time=$(1) -timeout=$(FUZZ_TIMEOUT) \
			-rss_limit_mb=$(FUZZ_RSS_MB) -max_len=$$ml -print_final_stats=1 \
			-dict=$(FUZZ_OUT)/seeds/giop.dict \
			-artifact_prefix=$(FUZZ_OUT)/artifacts/$$n- $(FUZZ_FLAGS) \
			$(2)/$$n $(FUZZ_OUT)/seeds/$$n \
			>$(FUZZ_OUT)/fuzz_$$n.log 2>&1; then \
			grep -E '^(stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb)|^#[0-9]+.*DONE' \
				$(FUZZ_OUT)/fuzz_$$n.log | tr '\n' ' '; echo; \
		else \
			echo "fuzz_$$n FAILED (log: $(FUZZ_OUT)/fuzz_$$n.log):"; \
			grep -m1 -E 'ERROR:|runtime error:|invariant broken|Test unit written' -A0 $(FUZZ_OUT)/fuzz_$$n.log; \
			grep -m1 'Test unit written' $(FUZZ_OUT)/fuzz_$$n.log; \
			failed="$$failed fuzz_$$n"; \
		fi; \
	done; \
	if [ -n "$$failed" ]; then echo "crashed:$$failed"; exit 1; fi; echo "no crash"
endef

fuzz: fuzz-build
	$(call FUZZ_RUN,$(FUZZ_SECONDS),$(FUZZ_OUT)/corpus)

# a fresh corpus each time: the seeds plus what this run finds (a corpus grown by
# `make fuzz` would take much of the short budget just to load)
fuzz-short: fuzz-build
	@rm -rf $(FUZZ_OUT)/corpus-short
	$(call FUZZ_RUN,$(FUZZ_SHORT_SECONDS),$(FUZZ_OUT)/corpus-short)

fuzz-regress: $(FUZZ_BINS)
	@failed=""; for n in $(FUZZ_NAMES); do \
		[ -d tests/fuzz/crashes/fuzz_$$n ] || continue; \
		for f in tests/fuzz/crashes/fuzz_$$n/*; do \
			[ -f "$$f" ] || continue; \
			if $(FUZZ_OUT)/fuzz_$$n -timeout=$(FUZZ_TIMEOUT) "$$f" >$(FUZZ_OUT)/regress.log 2>&1; then \
				echo "PASS $$f"; \
			else \
				echo "FAIL $$f: $$(grep -m1 -E 'ERROR:|runtime error:|invariant broken' $(FUZZ_OUT)/regress.log | sed 's/^==[0-9]*== *//')"; \
				failed="$$failed $$f"; \
			fi; \
		done; \
	done; [ -z "$$failed" ]

# Line coverage of the library reached by the corpora (seeds + what fuzzing found):
# the harnesses rebuilt with clang source-based coverage (no sanitizers), each run
# once over its inputs, then llvm-cov's per-file report.
FUZZ_COV_OUT       := $(FUZZ_OUT)/cov
FUZZ_COV_FLAGS     := -fprofile-instr-generate -fcoverage-mapping
FUZZ_LLVM_PROFDATA ?= $(shell command -v llvm-profdata-14 || command -v llvm-profdata)
FUZZ_LLVM_COV      ?= $(shell command -v llvm-cov-14 || command -v llvm-cov)

fuzz-cov: $(FUZZ_SEEDS)
	@mkdir -p $(FUZZ_COV_OUT)
	@for n in $(FUZZ_NAMES); do \
		extra=""; [ $$n = pcap ] && extra="$(FUZZ_TAP_SRCS) $(FUZZ_LIBPCAP)"; \
		[ $$n = web ] && extra="$(FUZZ_WEB_SRCS)"; \
		$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_COV_FLAGS) -fsanitize=fuzzer -o $(FUZZ_COV_OUT)/fuzz_$$n \
			tests/fuzz/fuzz_$$n.c $(FUZZ_LIB_SRCS) $$extra || exit 1; \
		mkdir -p $(FUZZ_OUT)/corpus/$$n; rm -rf $(FUZZ_COV_OUT)/raw-$$n; mkdir -p $(FUZZ_COV_OUT)/raw-$$n; \
		: "batches of 32 inputs: an input that still crashes costs only its batch"; \
		find $(FUZZ_OUT)/corpus/$$n $(FUZZ_OUT)/seeds/$$n -type f | \
			LLVM_PROFILE_FILE=$(FUZZ_COV_OUT)/raw-$$n/%p.profraw xargs -n 32 \
			$(FUZZ_COV_OUT)/fuzz_$$n -timeout=$(FUZZ_TIMEOUT) >$(FUZZ_COV_OUT)/$$n.log 2>&1; \
		$(FUZZ_LLVM_PROFDATA) merge -sparse $(FUZZ_COV_OUT)/raw-$$n/*.profraw -o $(FUZZ_COV_OUT)/$$n.profdata || exit 1; \
		echo "== fuzz_$$n: line coverage of the library by its corpus"; \
		$(FUZZ_LLVM_COV) report $(FUZZ_COV_OUT)/fuzz_$$n -instr-profile=$(FUZZ_COV_OUT)/$$n.profdata \
			$(FUZZ_LIB_SRCS) $$( [ $$n = pcap ] && echo $(FUZZ_TAP_SRCS) ) $$( [ $$n = web ] && echo $(FUZZ_WEB_SRCS) ); \
	done

fuzz-clean:
	rm -rf $(FUZZ_OUT)

-include $(FUZZ_LIB_OBJS:.o=.d) $(FUZZ_TAP_OBJ:.o=.d)
