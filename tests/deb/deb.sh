#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# shellcheck disable=SC2015  # A && ok || fail: ok only echoes
# tests/deb/deb.sh -- `make deb`: the Debian package built from debian/, checked.
#
#   - make deb writes $BUILD/giopscope_VERSION_ARCH.deb (VERSION from debian/changelog) and
#     nothing next to the worktree;
#   - dpkg-deb -I: package giopscope, that version, Depends lists libpcap (and libbpf / DPDK's
#     librte-* / libssl3 when the package's build found eBPF / DPDK / OpenSSL: its
#     build/deb/config.mk);
#   - dpkg-deb -c: /usr/bin/giopscope executable, the man page in /usr/share/man/man1,
#     the copyright file;
#   - dpkg-deb -x into a temporary folder: its giopscope says that version, its man page is
#     docs/giopscope.1, and on tests/data/omniorb_demo.pcap it writes what $BUILD/giopscope
#     writes (summary and per-call CSV, exit codes); dpdk and attach are built in when found;
#   - lintian on the .changes (both .deb files): no error (E:); warnings are shown.
#
# Run from `make check` (check-deb). Exit 77 when dpkg-buildpackage is missing, unless
# GIOPSCOPE_STRICT=1 (make check installs it), where that and eBPF or DPDK not built in fail.
set -u
cd "$(dirname "$0")/../.." || exit 2
# the make this runs gets only the variables given here (not those of a make that runs it)
unset MAKEFLAGS MFLAGS MAKELEVEL
STRICT=${GIOPSCOPE_STRICT:-0}
BUILD=${BUILD:-build}
GIOPSCOPE=${GIOPSCOPE:-$BUILD/giopscope}
CAP=tests/data/omniorb_demo.pcap
NOPID=4194305
fails=0
fail() { echo "deb: FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "deb: ok: $*"; }

if ! command -v dpkg-buildpackage >/dev/null 2>&1 && [ "$(id -u)" -ne 0 ]; then
	echo "deb: SKIP: no dpkg-buildpackage and not root to install it (scripts/install-deps.sh deb)"
	[ "$STRICT" = 1 ] && exit 1
	exit 77
fi
T=$(mktemp -d /tmp/gs-bld-deb.XXXXXX) || exit 2
trap 'rm -rf "$T"' EXIT
touch "$T/start"

# the reference binary (make check has built it; standalone, build it)
if [ "$GIOPSCOPE" = "$BUILD/giopscope" ]; then
	make -s --no-print-directory -j2 BUILD="$BUILD" "$BUILD/giopscope" >"$T/make.log" 2>&1 ||
		{ cat "$T/make.log"; echo "deb: FAIL: make $BUILD/giopscope"; exit 1; }
fi

echo "deb: make deb BUILD=$BUILD"
if ! make --no-print-directory BUILD="$BUILD" deb >"$T/deb.log" 2>&1; then
	tail -n 40 "$T/deb.log"
	echo "deb: FAIL: make deb (log above, last 40 lines)"
	exit 1
fi
ver=$(dpkg-parsechangelog -l debian/changelog -S Version)
arch=$(dpkg --print-architecture)
DEB=$BUILD/giopscope_${ver}_${arch}.deb
CHANGES=$BUILD/giopscope_${ver}_${arch}.changes
[ -f "$DEB" ] && [ -f "$CHANGES" ] || { echo "deb: FAIL: make deb wrote no $DEB / $CHANGES"; ls "$BUILD"; exit 1; }
ok "make deb -> $DEB"
parent=$(cd .. && pwd)
stray=$(find "$parent" -maxdepth 1 -name 'giopscope*' -newer "$T/start" | tr '\n' ' ')
[ -z "$stray" ] && ok "nothing written to $parent" || fail "make deb wrote next to the worktree: $stray"

# what the package's build found (its configuration record; dpkg-buildpackage -b keeps it)
CFG=$BUILD/deb-src/giopscope/build/deb/config.mk
dpdk_found=$(sed -n 's/^DPDK_FOUND = //p' "$CFG" 2>/dev/null)
ebpf_found=$(sed -n 's/^EBPF_FOUND = //p' "$CFG" 2>/dev/null)
openssl_found=$(sed -n 's/^OPENSSL_FOUND = //p' "$CFG" 2>/dev/null)
[ -n "$dpdk_found" ] && [ -n "$ebpf_found" ] || fail "no configuration record $CFG"

# control fields
dpkg-deb -I "$DEB" >"$T/info" || fail "dpkg-deb -I $DEB"
field() { dpkg-deb -f "$DEB" "$1"; }
[ "$(field Package)" = giopscope ] && [ "$(field Version)" = "$ver" ] ||
	fail "Package/Version: $(field Package) $(field Version) (want giopscope $ver)"
deps=$(field Depends)
echo "deb: Depends: $deps"
echo "$deps" | grep -q 'libpcap' && ok "Depends lists libpcap" || fail "Depends does not list libpcap"
echo "$deps" | grep -q 'libc6' || fail "Depends does not list libc6 (shlibs not computed?)"
check_part() { # NAME FOUND DEP-REGEX
	case $2 in
	yes*) echo "$deps" | grep -q "$3" && ok "$1 built in; Depends lists $3" ||
		fail "$1 built in but Depends lacks $3" ;;
	*) if [ "$STRICT" = 1 ]; then fail "$1 not found by the package's build (GIOPSCOPE_STRICT=1)"
	   else echo "SKIP: $1 not found by the package's build"; fi ;;
	esac
}
check_part eBPF "$ebpf_found" 'libbpf'
check_part DPDK "$dpdk_found" 'librte-eal'
check_part OpenSSL "$openssl_found" 'libssl3'

# contents
dpkg-deb -c "$DEB" >"$T/contents" || fail "dpkg-deb -c $DEB"
grep -Eq '^-rwxr-xr-x root/root +[0-9]+ .* \./usr/bin/giopscope$' "$T/contents" &&
	ok "/usr/bin/giopscope, 0755 root" || fail "no executable ./usr/bin/giopscope in: $(cat "$T/contents")"
grep -Eq ' \./usr/share/man/man1/giopscope\.1\.gz$' "$T/contents" &&
	ok "man page /usr/share/man/man1/giopscope.1.gz" || fail "no ./usr/share/man/man1/giopscope.1.gz"
grep -Eq ' \./usr/share/doc/giopscope/copyright$' "$T/contents" || fail "no copyright file"

# the packaged binary
X=$T/root
dpkg-deb -x "$DEB" "$X" || fail "dpkg-deb -x"
P=$X/usr/bin/giopscope
[ "$("$P" --version 2>&1)" = "giopscope $ver" ] && ok "giopscope --version: giopscope $ver" ||
	fail "packaged giopscope --version says '$("$P" --version 2>&1)', the package is $ver"
zcat "$X/usr/share/man/man1/giopscope.1.gz" | cmp -s - docs/giopscope.1 &&
	ok "the packaged man page is docs/giopscope.1" || fail "the packaged man page differs from docs/giopscope.1"
for args in "read $CAP" "read $CAP --pairs"; do
	# shellcheck disable=SC2086
	"$GIOPSCOPE" $args >"$T/ref.out" 2>"$T/ref.err"; rc_ref=$?
	# shellcheck disable=SC2086
	"$P" $args >"$T/pkg.out" 2>"$T/pkg.err"; rc_pkg=$?
	if [ "$rc_ref" -ne 0 ] || [ ! -s "$T/ref.out" ]; then
		fail "$GIOPSCOPE $args: exit $rc_ref, $(wc -l <"$T/ref.out") lines: $(head -n 2 "$T/ref.err")"
	elif [ "$rc_pkg" -ne "$rc_ref" ] || ! cmp -s "$T/ref.out" "$T/pkg.out"; then
		fail "packaged giopscope $args: exit $rc_pkg (reference $rc_ref), output differs:"
		diff "$T/ref.out" "$T/pkg.out" | head -n 10
	else
		ok "giopscope $args: packaged = $GIOPSCOPE ($(wc -l <"$T/pkg.out") lines)"
	fi
done
case $dpdk_found in yes*)
	"$P" dpdk --help >/dev/null 2>"$T/err" && ok "packaged dpdk --help" ||
		fail "packaged giopscope dpdk --help: $(head -n 1 "$T/err")" ;;
esac
case $ebpf_found in yes*)
	"$P" attach --pid "$NOPID" </dev/null >/dev/null 2>"$T/err"
	grep -q "no process $NOPID" "$T/err" && ok "packaged attach has eBPF" ||
		fail "packaged giopscope attach --pid $NOPID: $(head -n 1 "$T/err")" ;;
esac

# lintian: no error
if command -v lintian >/dev/null 2>&1; then
	lintian --info "$CHANGES" >"$T/lintian" 2>&1
	grep -v '^running with root privileges' "$T/lintian" | sed 's/^/deb: lintian: /'
	if grep -q '^E:' "$T/lintian"; then fail "lintian reports errors"
	else ok "lintian: no error ($(grep -c '^W:' "$T/lintian") warnings)"; fi
elif [ "$STRICT" = 1 ]; then
	fail "no lintian (GIOPSCOPE_STRICT=1)"
else
	echo "SKIP: no lintian"
fi

if [ "$fails" -ne 0 ]; then
	echo "deb: $fails failure(s)"
	exit 1
fi
echo "deb: passed"
