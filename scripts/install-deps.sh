#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Install what giopscope needs to build and test, on Debian 12, idempotently.
# Only packages that are missing are installed; nothing is done when all are there.
#   scripts/install-deps.sh [build|deb|check|kernels|all]    (default: all)
# build: compiler and libpcap, enough for `make` and `make demo`.
# deb:   what `make deb` needs: debian/control's Build-Depends (eBPF and DPDK included),
#        debhelper, dpkg-dev, fakeroot and lintian.
# check: everything the tests use (ORBs, tshark, tcpdump, eBPF, DPDK, cmocka, Prometheus, the
#        deb set...). Debian's prometheus package starts its own service when installed; the
#        tests run the binary as a plain process of their own, so a service the install
#        started is stopped and disabled here.
# kernels: what `make check-kernels` needs: the check set (the guests run the host's tools
#        through their root), QEMU (qemu-system-x86, whose qemu-system-common has
#        /usr/lib/qemu/virtiofsd), busybox-static, cpio, xz-utils and zstd (the initramfs and
#        the kernels' compressed modules), and Debian 12's kernels by their metapackages:
#        linux-image-cloud-amd64 (6.1), linux-image-rt-amd64 (6.1 PREEMPT_RT),
#        linux-image-6.12-cloud-amd64 (6.12), each the archive's current version.
# all:   check and kernels.
set -eu

# libssl-dev, libcrypt-dev: --metrics-web-config's TLS and bcrypt (optional to the build, linked when found)
# zlib1g-dev, libzstd-dev: read's gzip and zstd captures (optional to the build, linked when found)
set_build="build-essential pkg-config libpcap-dev libssl-dev libcrypt-dev zlib1g-dev libzstd-dev"
set_check="$set_build libcmocka-dev clang llvm libclang-rt-14-dev lld zstd xz-utils gzip
  tshark tcpdump wireshark-common iproute2 python3 procps psmisc curl strace
  omniorb omniidl libomniorb4-dev omniorb-nameserver tcl tcl-combat
  libbpf-dev bpftool linux-libc-dev libelf-dev zlib1g-dev ethtool
  dpdk-dev libdpdk-dev dpdk valgrind hyperfine chromium prometheus
  groff-base man-db mandoc debhelper dpkg-dev fakeroot lintian openssl"
set_kernels="$set_check qemu-system-x86 busybox-static cpio xz-utils zstd
  linux-image-cloud-amd64 linux-image-rt-amd64 linux-image-6.12-cloud-amd64"
set_deb="$set_build debhelper dpkg-dev fakeroot lintian clang llvm
  libbpf-dev bpftool libelf-dev zlib1g-dev libdpdk-dev"

what=${1:-all}
case "$what" in
  build) want=$set_build ;;
  deb) want=$set_deb ;;
  check) want=$set_check ;;
  kernels|all) want=$set_kernels ;;
  *) echo "usage: $0 [build|deb|check|kernels|all]" >&2; exit 2 ;;
esac

missing=""
for p in $want; do
  st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [ "$st" = installed ] || missing="$missing $p"
done
if [ -z "$missing" ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages:$missing; run as root (or: sudo $0 $what)" >&2
  exit 2
fi
echo "install-deps: installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
# tshark asks whether non-root users may capture; answer for it.
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections 2>/dev/null || true
apt-get update -q
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing
case " $missing " in
  *" prometheus "*)
    # stop the service the package's postinst started (systemd, or its init script without
    # systemd) and keep it from starting at boot; the tests run prometheus themselves
    if command -v systemctl >/dev/null 2>&1; then
      [ -d /run/systemd/system ] && { systemctl stop prometheus.service >/dev/null 2>&1 || true; }
      systemctl disable prometheus.service >/dev/null 2>&1 || true   # works without systemd running
    fi
    if [ -x /etc/init.d/prometheus ] && [ ! -d /run/systemd/system ]; then
      /etc/init.d/prometheus stop >/dev/null 2>&1 || true
    fi
    command -v update-rc.d >/dev/null 2>&1 && { update-rc.d prometheus disable >/dev/null 2>&1 || true; } ;;
esac
