#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The man page (docs/giopscope.1) against the binary and the usual layout:
#  - groff (-ww) and mandoc -Tlint (warnings and worse) find nothing to say; lexgrog reads
#    its NAME line (what mandb/apropos index);
#  - one SYNOPSIS naming every command `giopscope help` lists, each also with its own
#    subsection under COMMANDS;
#  - sections in the usual order (NAME, SYNOPSIS, DESCRIPTION, COMMANDS, OPTIONS, OUTPUT,
#    EXIT STATUS, ENVIRONMENT, FILES, EXAMPLES, SEE ALSO; the optional ones may be absent),
#    SEE ALSO last;
# every document the commands' --help texts name (docs/*.md, *.md) is in the project, and
# every option they name is in the man page.
# Exit 0 pass, 1 fail.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
GS=${GIOPSCOPE:-$BUILD/giopscope}
MAN=${GIOPSCOPE_MAN:-docs/giopscope.1}
WORK=$(mktemp -d /tmp/gs-man.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "PASS $1"; }
ko() { fail=$((fail + 1)); echo "FAIL $1: $2"; }

# -- the tools' own checks
if groff -man -Tutf8 -ww -z "$MAN" >"$WORK/groff" 2>&1 && [ ! -s "$WORK/groff" ]; then ok "groff -ww"; else
	ko "groff -ww" "$(head -3 "$WORK/groff")"; fi
if ! command -v mandoc >/dev/null; then
	echo "SKIP mandoc -Tlint: mandoc not installed (scripts/install-deps.sh check)"
elif mandoc -Tlint -W warning "$MAN" >"$WORK/mandoc" 2>&1; then ok "mandoc -Tlint -W warning"; else
	ko "mandoc -Tlint -W warning" "$(head -5 "$WORK/mandoc")"; fi
if lexgrog "$MAN" 2>&1 | grep -q 'giopscope - '; then ok "lexgrog NAME"; else
	ko "lexgrog NAME" "$(lexgrog "$MAN" 2>&1)"; fi

# -- sections: .SH lines, in order
mapfile -t sections < <(sed -n 's/^\.SH  *//p' "$MAN" | tr -d '"')
order=(NAME SYNOPSIS DESCRIPTION COMMANDS OPTIONS OUTPUT "EXIT STATUS" ENVIRONMENT FILES EXAMPLES "SEE ALSO")
required=(NAME SYNOPSIS DESCRIPTION COMMANDS OPTIONS "EXIT STATUS" EXAMPLES "SEE ALSO")
last=-1 bad=""
for s in "${sections[@]}"; do
	idx=-1
	for i in "${!order[@]}"; do [ "${order[$i]}" = "$s" ] && idx=$i; done
	if [ "$idx" -lt 0 ]; then bad="$bad; unexpected section '$s'"
	elif [ "$idx" -le "$last" ]; then bad="$bad; '$s' out of order"
	else last=$idx; fi
done
for r in "${required[@]}"; do
	printf '%s\n' "${sections[@]}" | grep -qx "$r" || bad="$bad; no '$r'"
done
[ "${sections[${#sections[@]}-1]}" = "SEE ALSO" ] || bad="$bad; last section is '${sections[${#sections[@]}-1]}', not SEE ALSO"
if [ -z "$bad" ]; then ok "sections in order, SEE ALSO last (${#sections[@]} sections)"; else ko "sections" "${bad#; }"; fi

# -- the commands of `giopscope help`: in the one SYNOPSIS and with a subsection each
"$GS" help >"$WORK/help" 2>&1
mapfile -t cmds < <(sed -n 's/^  \([a-z][a-z]*\) .*/\1/p' "$WORK/help")
if [ "${#cmds[@]}" -lt 5 ]; then ko "giopscope help" "only ${#cmds[@]} commands parsed from it"; fi
MANWIDTH=200 man -l "$MAN" 2>/dev/null | col -b >"$WORK/man.txt"
awk '/^SYNOPSIS/ { on = 1; next } /^[A-Z]/ { on = 0 } on' "$WORK/man.txt" >"$WORK/synopsis"
for c in "${cmds[@]}"; do
	if grep -Eq "^ +giopscope $c( |$)" "$WORK/synopsis"; then ok "SYNOPSIS has 'giopscope $c'"; else
		ko "SYNOPSIS" "no 'giopscope $c' line"; fi
	case $c in help | version) sub='help, version' ;; *) sub=$c ;; esac
	if grep -Eq "^\.SS \"?$sub\"?$" "$MAN"; then ok "COMMANDS has a '$sub' subsection"; else
		ko "COMMANDS" "no .SS $sub"; fi
done
n_syn=$(grep -c '^\.SH SYNOPSIS' "$MAN")
[ "$n_syn" -eq 1 ] && ok "one SYNOPSIS" || ko "SYNOPSIS" "$n_syn of them"

# -- documents named by --help exist
missing=""
for c in read live attach dpdk merge; do
	"$GS" "$c" --help 2>&1 | grep -o '[A-Za-z0-9_./-]*\.md' | sort -u | while read -r d; do
		[ -f "$d" ] || [ -f "docs/$d" ] || echo "$c --help: $d"
	done
done >"$WORK/missing"
if [ -s "$WORK/missing" ]; then ko "--help documents" "$(tr '\n' ';' <"$WORK/missing")"; else
	ok "every document named by --help is in the project"; fi
# -- every option a command's --help names is in the man page (the help is built from
# probe/options.c's table; the page is written by hand)
for c in read live attach dpdk merge; do
	"$GS" "$c" --help 2>&1 | grep -o -- '--[a-z][a-z-]*' | sort -u | while read -r o; do
		grep -qF -- "$o" "$WORK/man.txt" || echo "$c --help: $o"
	done
done >"$WORK/undocumented"
if [ -s "$WORK/undocumented" ]; then ko "options in the man page" "$(tr '\n' ';' <"$WORK/undocumented")"; else
	ok "every option of every command's --help is in the man page"; fi
if grep -rn 'pairs-csv' probe docs tests/orb README.md >"$WORK/pcsv"; then
	ko "pairs-csv" "still named: $(head -3 "$WORK/pcsv" | tr '\n' ';')"; else ok "no 'pairs-csv' reference left"; fi

echo "manpage: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
