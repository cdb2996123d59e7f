#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# shellcheck disable=SC2015  # A && ok || fail: ok only echoes
# tests/build/config_tracking.sh -- the build configuration is tracked ($BUILD/config.mk):
# what `make demo` then `make check` does to one build folder.
#
#   1. make DPDK=0 EBPF=0 into a fresh build folder: `giopscope dpdk` says "built without
#      DPDK" and `giopscope attach` "no eBPF support" (what a machine without them gets);
#   2. plain make into the same folder: everything is rebuilt with what this machine has
#      (config.mk says what was found): `dpdk --help` then works and `attach` gets past the
#      build check (to "no process N" for a pid that cannot exist);
#   3. plain make again: nothing is rebuilt, config.mk is not rewritten;
#   4. make CFLAGS=-D...: every object and the binary are rebuilt, config.mk records it.
#
# Run from `make check` (check-build-config). GIOPSCOPE_STRICT=1: DPDK and eBPF must be found
# in step 2 (make check has just installed them); otherwise a part not found is a SKIP line
# and the binary must still refuse it.
set -u
cd "$(dirname "$0")/../.." || exit 2
# the make this runs gets only the variables given here (not those of a make that runs it;
# its command-line variables are in the environment too)
unset MAKEFLAGS MFLAGS MAKELEVEL DPDK EBPF CFLAGS
STRICT=${GIOPSCOPE_STRICT:-0}
BUILD=${BUILD:-build}
mkdir -p "$BUILD" || exit 2
T=$(mktemp -d "$BUILD/cfgtrack.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
BIN=$T/giopscope
OBJ=$T/obj/decoders/link.o
# a pid above pid_max (at most 2^22): no such process can exist
NOPID=4194305
fails=0

fail() { echo "config_tracking: FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "config_tracking: ok: $*"; }
build() {
	echo "config_tracking: make -j2 BUILD=$T $*"
	if ! make -s --no-print-directory -j2 BUILD="$T" "$@" "$BIN" >"$T/make.log" 2>&1; then
		cat "$T/make.log"
		echo "config_tracking: FAIL: make $* failed"
		exit 1
	fi
	if [ ! -s "$T/config.mk" ]; then
		echo "config_tracking: FAIL: make $* wrote no $T/config.mk"
		exit 1
	fi
}
mtime() { stat -c %y "$1" 2>/dev/null || echo missing; }
cfg() { sed -n "s/^$1 = //p" "$T/config.mk"; }
# dpdk_state / ebpf_state: what the binary does, "yes" (built with it) or the refusal
dpdk_state() {
	if "$BIN" dpdk --help >/dev/null 2>"$T/err"; then echo yes; else head -n 1 "$T/err"; fi
}
ebpf_state() {
	"$BIN" attach --pid "$NOPID" </dev/null >/dev/null 2>"$T/err"
	if grep -q "no process $NOPID" "$T/err"; then echo yes; else head -n 1 "$T/err"; fi
}

# 1. the minimal build
build DPDK=0 EBPF=0
[ "$(cfg DPDK)" = 0 ] && [ "$(cfg DPDK_FOUND)" = no ] && [ "$(cfg EBPF_FOUND)" = no ] ||
	fail "DPDK=0 EBPF=0: config.mk does not say so: $(grep -E '^(DPDK|EBPF)' "$T/config.mk" | tr '\n' ' ')"
case $(dpdk_state) in
*"built without DPDK"*) ok "DPDK=0: dpdk refuses: $(dpdk_state)" ;;
*) fail "DPDK=0: dpdk does not refuse: $(dpdk_state)" ;;
esac
case $(ebpf_state) in
*"no eBPF support"*) ok "EBPF=0: attach refuses: $(ebpf_state)" ;;
*) fail "EBPF=0: attach does not refuse: $(ebpf_state)" ;;
esac
obj1=$(mtime "$OBJ")
bin1=$(mtime "$BIN")

# 2. plain make, same folder: the configuration changed, everything is rebuilt
build
obj2=$(mtime "$OBJ")
bin2=$(mtime "$BIN")
[ "$obj2" != "$obj1" ] && [ "$bin2" != "$bin1" ] ||
	fail "plain make after DPDK=0 EBPF=0: $OBJ or the binary not rebuilt"
for part in DPDK EBPF; do
	found=$(cfg ${part}_FOUND)
	if [ "$part" = DPDK ]; then state=$(dpdk_state); else state=$(ebpf_state); fi
	case $found in
	yes*)
		if [ "$state" = yes ]; then ok "plain make: $part found ($found) and built in"
		else fail "plain make: $part found ($found) but the binary says: $state"; fi ;;
	*)
		if [ "$state" = yes ]; then fail "plain make: config.mk says $part not found, the binary has it"
		elif [ "$STRICT" = 1 ]; then fail "plain make: $part not found (GIOPSCOPE_STRICT=1: make check installs it)"
		else echo "SKIP: $part not found on this machine (scripts/install-deps.sh check); the binary refuses it: $state"; fi ;;
	esac
done

# 3. plain make again: nothing to do, config.mk not rewritten
cfg2=$(mtime "$T/config.mk")
build
[ "$(mtime "$OBJ")" = "$obj2" ] && [ "$(mtime "$BIN")" = "$bin2" ] && [ "$(mtime "$T/config.mk")" = "$cfg2" ] &&
	ok "same configuration: nothing rebuilt, config.mk untouched" ||
	fail "same configuration: something was rebuilt or config.mk rewritten"

# 4. another CFLAGS: rebuilt
build CFLAGS=-DGS_CONFIG_TRACKING_TEST
[ "$(mtime "$OBJ")" != "$obj2" ] && [ "$(mtime "$BIN")" != "$bin2" ] &&
	ok "CFLAGS changed: objects and binary rebuilt" ||
	fail "CFLAGS changed: $OBJ or the binary not rebuilt"
grep -q '^CFLAGS_ALL = .*-DGS_CONFIG_TRACKING_TEST' "$T/config.mk" ||
	fail "CFLAGS changed: config.mk does not record it"
"$BIN" read tests/data/omniorb_demo.pcap >/dev/null ||
	fail "the rebuilt binary does not read tests/data/omniorb_demo.pcap"

if [ "$fails" -ne 0 ]; then
	echo "config_tracking: $fails failure(s)"
	exit 1
fi
echo "config_tracking: passed"
