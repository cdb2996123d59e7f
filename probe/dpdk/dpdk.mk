# SPDX-License-Identifier: BSD-2-Clause
# probe/dpdk/dpdk.mk -- the DPDK tap (`giopscope dpdk`), built only where pkg-config finds
# libdpdk (Debian: dpdk-dev/libdpdk-dev 22.11). Included by the top Makefile before its rules.
#
# Without libdpdk (or with `make DPDK=0`) nothing is added: probe/cmd_dpdk.c then says the
# build has no DPDK and exits 2, and everything else builds and tests as before.
# DPDK's headers come in with -isystem: their own warnings must not trip our -Werror, while
# our code keeps every warning. Only our DPDK objects (and cmd_dpdk.o, the dispatcher) see
# DPDK's flags (which include -march=corei7 and -include rte_config.h).

DPDK ?= auto
ifneq ($(DPDK),0)
GS_DPDK_CFLAGS_RAW := $(shell pkg-config --cflags libdpdk 2>/dev/null)
GS_DPDK_LIBS := $(shell pkg-config --libs libdpdk 2>/dev/null)
ifneq ($(shell pkg-config --exists libdpdk 2>/dev/null && echo yes),)
GS_DPDK_SRCS := probe/dpdk/dpdk_main.c probe/dpdk/eal.c probe/dpdk/port.c probe/dpdk/rx.c \
                probe/dpdk/clockmap.c
# rte_eth_read_clock (the NIC time stamp clock) is still "experimental" in 22.11
GS_DPDK_CFLAGS := $(patsubst -I%,-isystem %,$(GS_DPDK_CFLAGS_RAW)) -DGS_HAVE_DPDK -DALLOW_EXPERIMENTAL_API
PROBE_EXTRA += $(GS_DPDK_SRCS)
LDLIBS_EXTRA += $(GS_DPDK_LIBS)
$(GS_DPDK_SRCS:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/probe/cmd_dpdk.o: CFLAGS_ALL += $(GS_DPDK_CFLAGS)
endif
endif
