# SPDX-License-Identifier: BSD-2-Clause
# ebpf/ebpf.mk -- the eBPF taps of `giopscope attach`. Included by the top Makefile before
# its rules.
#
#   $(BUILD)/ebpf/vmlinux.h          bpftool btf dump of the running kernel's BTF (CO-RE:
#                                    the object then loads on other kernels with BTF too)
#   $(BUILD)/ebpf/NAME.bpf.o         clang -target bpf of ebpf/NAME.bpf.c
#   $(BUILD)/ebpf/NAME.skel.h        bpftool gen skeleton (never committed)
#
# Built where clang, bpftool, libbpf's headers and /sys/kernel/btf/vmlinux are all there;
# otherwise (or with `make EBPF=0`) nothing is added: probe/attach_bpf.c then compiles to a
# stub, `giopscope attach` says the build has no eBPF and exits 2, and everything else
# builds and tests as before.  scripts/install-deps.sh installs the tools.

EBPF ?= auto
ifneq ($(EBPF),0)
GS_BPFTOOL ?= $(firstword $(shell command -v bpftool 2>/dev/null) $(wildcard /usr/sbin/bpftool /sbin/bpftool))
GS_BPF_CLANG ?= clang
GS_LLVM_STRIP ?= $(firstword $(shell command -v llvm-strip 2>/dev/null) true)
GS_BTF ?= /sys/kernel/btf/vmlinux
GS_EBPF_OK := $(shell test -r $(GS_BTF) && test -n "$(GS_BPFTOOL)" && \
                command -v $(GS_BPF_CLANG) >/dev/null 2>&1 && \
                test -r /usr/include/bpf/libbpf.h && echo yes)
ifeq ($(GS_EBPF_OK),yes)
GS_EBPF_OUT := $(BUILD)/ebpf
GS_EBPF_PROGS := giop_tap tls sched orb_upcall
GS_EBPF_SKELS := $(GS_EBPF_PROGS:%=$(GS_EBPF_OUT)/%.skel.h)
# our BPF code gets the project's warnings too; -Wno-unused-function: the shared
# inline helpers are not all used by every program
GS_BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_x86 -Wall -Wextra -Wshadow \
                 -Wpointer-arith -Werror -Wno-unused-function -I$(GS_EBPF_OUT) -Iebpf
# The user-space side of the taps: only these objects see the skeletons.
GS_EBPF_USERS := $(BUILD)/obj/probe/attach_bpf.o $(BUILD)/obj/probe/attach_tls.o $(BUILD)/obj/probe/attach_sched.o \
                 $(BUILD)/obj/probe/attach_orb.o

$(GS_EBPF_OUT)/vmlinux.h: $(GS_BTF)
	@mkdir -p $(dir $@)
	$(GS_BPFTOOL) btf dump file $(GS_BTF) format c > $@.tmp && mv $@.tmp $@

# DWARF is stripped (the BTF stays): the skeleton embeds the object
$(GS_EBPF_OUT)/%.bpf.o: ebpf/%.bpf.c ebpf/%.h $(wildcard ebpf/*.bpf.h) $(GS_EBPF_OUT)/vmlinux.h
	$(GS_BPF_CLANG) $(GS_BPF_CFLAGS) -c $< -o $@.tmp && $(GS_LLVM_STRIP) -g $@.tmp && mv $@.tmp $@
.PRECIOUS: $(GS_EBPF_OUT)/%.bpf.o

$(GS_EBPF_OUT)/%.skel.h: $(GS_EBPF_OUT)/%.bpf.o
	$(GS_BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

$(GS_EBPF_USERS): CFLAGS_ALL += -I$(GS_EBPF_OUT) -DGS_HAVE_EBPF
$(GS_EBPF_USERS): $(GS_EBPF_SKELS)
LDLIBS_EXTRA += -lbpf -lelf -lz

.PHONY: ebpf
ebpf: $(GS_EBPF_SKELS)
endif
endif
