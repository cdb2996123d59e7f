# SPDX-License-Identifier: BSD-2-Clause
# tests/orb/orb.mk -- the real-ORB test rig: omniORB C++ server and client for the Bench IDL.
#
# Included by the top-level Makefile (which defines BUILD ?= build); standalone:
#     make -f tests/orb/orb.mk orb-apps BUILD=build
#
# The IDL is compiled with omniidl -bcxx into $(BUILD)/orb/gen (generated code is never
# committed). Our own sources get -Wall -Wextra; the omniidl-generated stubs get warnings but
# never -Werror (omniidl output is not warning-clean with every compiler).
# Every variable is ORB_-prefixed so that nothing leaks into or out of the including Makefile.

BUILD ?= build

ORB_SRC_DIR   := tests/orb
ORB_OUT       := $(BUILD)/orb
ORB_GEN       := $(ORB_OUT)/gen
ORB_IDL       := $(ORB_SRC_DIR)/bench.idl

ORB_CXX       ?= $(CXX)
ORB_OMNIIDL   ?= omniidl
ORB_PKGCONFIG ?= pkg-config
# omniDynamic4 (it pulls in omniORB4): CORBA::Any and ORB::create_policy, for the BiDirectional
# POA policy of -bidir
ORB_PC_CFLAGS  = $(shell $(ORB_PKGCONFIG) --cflags omniDynamic4)
ORB_PC_LIBS    = $(shell $(ORB_PKGCONFIG) --libs omniDynamic4)

ORB_CXXFLAGS  ?= -O2 -g -std=c++17 -pthread
ORB_WARN      ?= -Wall -Wextra -Wshadow -Wformat=2
ORB_GEN_WARN  ?= -Wall -Wno-unused-parameter
ORB_LDFLAGS   ?= -pthread

ORB_SERVER    := $(ORB_OUT)/bench_server
ORB_CLIENT    := $(ORB_OUT)/bench_client
# the middle tier: an Echo that forwards every call to a back-end Echo (nested calls, issue 32)
ORB_RELAY     := $(ORB_OUT)/bench_relay
# the LD_PRELOAD recorder of a process's socket I/O (tests/truth/recorder.c): ground truth for
# tests/integration/attach_truth.sh
ORB_TRUTH     := $(ORB_OUT)/libgs_truth.so
ORB_CC        ?= $(CC)
ORB_TRUTH_CFLAGS ?= -std=gnu11 -O2 -g -fPIC -Wall -Wextra -Wshadow -Wpointer-arith -Wcast-qual -Werror

.PHONY: orb-apps orb-clean

orb-apps: $(ORB_SERVER) $(ORB_CLIENT) $(ORB_RELAY) $(ORB_TRUTH)

$(ORB_TRUTH): tests/truth/recorder.c
	@mkdir -p $(ORB_OUT)
	$(ORB_CC) $(ORB_TRUTH_CFLAGS) -shared -o $@ $< -ldl

# omniidl writes both files in one run (grouped target, GNU make >= 4.3)
$(ORB_GEN)/benchSK.cc $(ORB_GEN)/bench.hh &: $(ORB_IDL)
	@mkdir -p $(ORB_GEN)
	$(ORB_OMNIIDL) -bcxx -Wbh=.hh -Wbs=SK.cc -C $(ORB_GEN) $(ORB_IDL)

$(ORB_OUT)/benchSK.o: $(ORB_GEN)/benchSK.cc $(ORB_GEN)/bench.hh
	$(ORB_CXX) $(ORB_CXXFLAGS) $(ORB_GEN_WARN) $(ORB_PC_CFLAGS) -I$(ORB_GEN) -c -o $@ $<

$(ORB_OUT)/server.o: $(ORB_SRC_DIR)/server.cc $(ORB_SRC_DIR)/rig.hh $(ORB_GEN)/bench.hh
	$(ORB_CXX) $(ORB_CXXFLAGS) $(ORB_WARN) $(ORB_PC_CFLAGS) -I$(ORB_GEN) -c -o $@ $<

$(ORB_OUT)/client.o: $(ORB_SRC_DIR)/client.cc $(ORB_SRC_DIR)/rig.hh $(ORB_GEN)/bench.hh
	$(ORB_CXX) $(ORB_CXXFLAGS) $(ORB_WARN) $(ORB_PC_CFLAGS) -I$(ORB_GEN) -c -o $@ $<

$(ORB_OUT)/relay.o: $(ORB_SRC_DIR)/relay.cc $(ORB_SRC_DIR)/rig.hh $(ORB_GEN)/bench.hh
	$(ORB_CXX) $(ORB_CXXFLAGS) $(ORB_WARN) $(ORB_PC_CFLAGS) -I$(ORB_GEN) -c -o $@ $<

$(ORB_SERVER): $(ORB_OUT)/server.o $(ORB_OUT)/benchSK.o
	$(ORB_CXX) $(ORB_LDFLAGS) -o $@ $^ $(ORB_PC_LIBS)

$(ORB_CLIENT): $(ORB_OUT)/client.o $(ORB_OUT)/benchSK.o
	$(ORB_CXX) $(ORB_LDFLAGS) -o $@ $^ $(ORB_PC_LIBS)

$(ORB_RELAY): $(ORB_OUT)/relay.o $(ORB_OUT)/benchSK.o
	$(ORB_CXX) $(ORB_LDFLAGS) -o $@ $^ $(ORB_PC_LIBS)

orb-clean:
	rm -rf $(ORB_OUT)
