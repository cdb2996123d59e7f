#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Every source file git tracks carries its licence in an SPDX line near its top
# (LICENSE, debian/copyright): C, C++, shell, Python, Tcl, make and the eBPF
# programs. Prints the files without one; exit 1 if there are any.
cd "$(dirname "$0")/.." || exit 2
missing=$(git ls-files -- '*.c' '*.h' '*.cc' '*.hh' '*.sh' '*.py' '*.tcl' '*.mk' '*.idl' Makefile '.ci/*' 'scripts/*' |
	while IFS= read -r f; do
		[ -f "$f" ] || continue
		head -n 5 "$f" | grep -q 'SPDX-License-Identifier:' || printf '%s\n' "$f"
	done)
if [ -n "$missing" ]; then
	printf 'check-spdx: no SPDX-License-Identifier line in the first 5 lines of:\n%s\n' "$missing"
	exit 1
fi
echo "check-spdx: ok: every tracked source file names its licence"
