# SPDX-License-Identifier: BSD-2-Clause
# bench/workloads/workloads.mk -- the omniORB programs of bench/workloads.sh (the seeds'
# workloads: structs of primitives, aligned and unaligned records, an Any; N deferred servers).
#
# Included by the top-level Makefile (which defines BUILD ?= build); standalone:
#     make -f bench/workloads/workloads.mk workloads-apps BUILD=build
#
# The IDL is compiled with omniidl -bcxx into $(BUILD)/bench/workloads/gen (generated code is
# never committed). Our own sources get -Wall -Wextra; the omniidl-generated stubs get warnings
# but never -Werror (omniidl output is not warning-clean with every compiler).
# Every variable is WL_-prefixed so that nothing leaks into or out of the including Makefile.

BUILD ?= build

WL_SRC_DIR   := bench/workloads
WL_OUT       := $(BUILD)/bench/workloads
WL_GEN       := $(WL_OUT)/gen
WL_IDL       := $(WL_SRC_DIR)/work.idl
# the helpers every omniORB program of the project shares (clocks, numbers, IOR files, signals)
WL_RIG       := tests/orb/rig.hh

WL_CXX       ?= $(CXX)
WL_OMNIIDL   ?= omniidl
WL_PKGCONFIG ?= pkg-config
# omniDynamic4 (it pulls in omniORB4): CORBA::Any, and the DII (Request, deferred sends)
WL_PC_CFLAGS  = $(shell $(WL_PKGCONFIG) --cflags omniDynamic4)
WL_PC_LIBS    = $(shell $(WL_PKGCONFIG) --libs omniDynamic4)

WL_CXXFLAGS  ?= -O2 -g -std=c++17 -pthread
WL_WARN      ?= -Wall -Wextra -Wshadow -Wformat=2
WL_GEN_WARN  ?= -Wall -Wno-unused-parameter
WL_LDFLAGS   ?= -pthread

WL_SERVER    := $(WL_OUT)/work_server
WL_CLIENT    := $(WL_OUT)/work_client

.PHONY: workloads-apps workloads-clean

workloads-apps: $(WL_SERVER) $(WL_CLIENT)

# omniidl writes the three files in one run (grouped target, GNU make >= 4.3); -Wba: the
# TypeCodes and Any operators of our types, in workDynSK.cc (the Any workload carries Doubles)
WL_GEN_SRCS  := $(WL_GEN)/workSK.cc $(WL_GEN)/workDynSK.cc
WL_GEN_OBJS  := $(WL_OUT)/workSK.o $(WL_OUT)/workDynSK.o
$(WL_GEN_SRCS) $(WL_GEN)/work.hh &: $(WL_IDL) $(WL_SRC_DIR)/workloads.mk
	@mkdir -p $(WL_GEN)
	$(WL_OMNIIDL) -bcxx -Wba -Wbh=.hh -Wbs=SK.cc -Wbd=DynSK.cc -C $(WL_GEN) $(WL_IDL)

$(WL_OUT)/%.o: $(WL_GEN)/%.cc $(WL_GEN)/work.hh
	$(WL_CXX) $(WL_CXXFLAGS) $(WL_GEN_WARN) $(WL_PC_CFLAGS) -I$(WL_GEN) -c -o $@ $<

$(WL_OUT)/work_server.o: $(WL_SRC_DIR)/work_server.cc $(WL_RIG) $(WL_GEN)/work.hh
	$(WL_CXX) $(WL_CXXFLAGS) $(WL_WARN) $(WL_PC_CFLAGS) -I$(WL_GEN) -I$(dir $(WL_RIG)) -c -o $@ $<

$(WL_OUT)/work_client.o: $(WL_SRC_DIR)/work_client.cc $(WL_RIG) $(WL_GEN)/work.hh
	$(WL_CXX) $(WL_CXXFLAGS) $(WL_WARN) $(WL_PC_CFLAGS) -I$(WL_GEN) -I$(dir $(WL_RIG)) -c -o $@ $<

$(WL_SERVER): $(WL_OUT)/work_server.o $(WL_GEN_OBJS)
	$(WL_CXX) $(WL_LDFLAGS) -o $@ $^ $(WL_PC_LIBS)

$(WL_CLIENT): $(WL_OUT)/work_client.o $(WL_GEN_OBJS)
	$(WL_CXX) $(WL_LDFLAGS) -o $@ $^ $(WL_PC_LIBS)

workloads-clean:
	rm -rf $(WL_OUT)
