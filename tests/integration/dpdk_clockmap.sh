#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# tests/integration/dpdk_clockmap.sh -- probe/dpdk/clockmap.c, the counter-to-wall-clock map
# behind the TSC and NIC time stamps of `giopscope dpdk`, on simulated clocks (no DPDK needed:
# the file is pure C, compiled here with the project's warnings).
#
#   a TSC whose nominal rate is 0.19% off (what the EAL said on the test VM): after a few
#     once-a-second updates the map is within 1 us of the wall clock
#   every update is continuous: the value at the update instant is the same before and after
#     (within 1 ns), so stamps never jump
#   the map is increasing between and across updates
#   a NIC clock in its own units and epoch (a 1 GHz counter started at 12345 s) maps too
#   a wall-clock step of 1 s restarts the line (resets = 1) and then tracks the new time
#   a counter value a little before the anchor (a NIC stamp older than the last update) maps
#     to a time a little before the anchor's
#
# Prints PASS/FAIL lines and "N passed, N failed"; exit 0, 1 on a failure, 77 without a compiler.
set -u
cd "$(dirname "$0")/../.." || exit 2
CC=${CC:-cc}
command -v "$CC" >/dev/null || { echo "SKIP: no C compiler"; exit 77; }
tmp=$(mktemp -d /tmp/gs-clockmap.XXXXXX) || exit 2
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/t.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include "clockmap.h"

static int pass, fail;
static void check(const char *name, int ok, double v)
{
	printf("%s %s (%.3f)\n", ok ? "PASS" : "FAIL", name, v);
	ok ? pass++ : fail++;
}

/* a counter running at `hz` ticks per wall second, starting at `t0` ticks */
static unsigned long long ticks(double hz, double wall_s, unsigned long long t0)
{
	return t0 + (unsigned long long)(wall_s * hz);
}

int main(void)
{
	struct gs_clockmap m;
	const double hz = 2445405281.0, nominal = 2450000000.0;
	const long long base = 1796000000LL * 1000000000LL;  /* wall clock at the start, ns */
	double worst = 0, jump = 0;
	long long prev = 0;
	int increasing = 1;

	gs_clockmap_init(&m, ticks(hz, 0, 1000), base, nominal);
	for (int s = 1; s <= 10; s++) {
		/* stamps through the second before the update */
		for (int k = 0; k < 1000; k++) {
			double w = s - 1 + k / 1000.0;
			long long v = gs_clockmap_ns(&m, ticks(hz, w, 1000));
			if (v <= prev && !(s == 1 && k == 0))
				increasing = 0;
			prev = v;
			if (s >= 5) {
				double e = (double)(v - base) - w * 1e9;
				if (e < 0)
					e = -e;
				if (e > worst)
					worst = e;
			}
		}
		{
			unsigned long long t = ticks(hz, s, 1000);
			long long before = gs_clockmap_ns(&m, t), after;
			gs_clockmap_update(&m, t, base + (long long)s * 1000000000LL);
			after = gs_clockmap_ns(&m, t);
			if (llabs(after - before) > jump)
				jump = (double)llabs(after - before);
		}
	}
	check("tsc-0.19%-off-within-1us-after-4s", worst < 1000, worst);
	check("updates-continuous", jump <= 1, jump);
	check("increasing", increasing, 0);

	{
		/* a NIC clock: 1 GHz, its own epoch */
		struct gs_clockmap n;
		const double nhz = 1e9 * (1 + 20e-6);  /* 20 ppm fast */
		const unsigned long long e0 = 12345ULL * 1000000000ULL;
		double w2 = 0;
		gs_clockmap_init(&n, ticks(nhz, 0, e0), base, 1e9);
		for (int s = 1; s <= 6; s++)
			gs_clockmap_update(&n, ticks(nhz, s, e0), base + (long long)s * 1000000000LL);
		for (int k = 0; k < 1000; k++) {
			double w = 6 + k / 1000.0;
			double e = (double)(gs_clockmap_ns(&n, ticks(nhz, w, e0)) - base) - w * 1e9;
			if (e < 0)
				e = -e;
			if (e > w2)
				w2 = e;
		}
		check("nic-clock-own-epoch-within-1us", w2 < 1000, w2);
		{
			/* a stamp 1 ms before the last update */
			long long a = gs_clockmap_ns(&n, ticks(nhz, 6, e0));
			long long b = gs_clockmap_ns(&n, ticks(nhz, 5.999, e0));
			double d = (double)(a - b);
			check("before-the-anchor", d > 999000 && d < 1001000, d);
		}
	}

	{
		/* the wall clock is set 1 s forward at 3 s */
		double e;
		gs_clockmap_init(&m, ticks(hz, 0, 0), base, hz);
		gs_clockmap_update(&m, ticks(hz, 1, 0), base + 1000000000LL);
		gs_clockmap_update(&m, ticks(hz, 2, 0), base + 2000000000LL);
		gs_clockmap_update(&m, ticks(hz, 3, 0), base + 4000000000LL);
		check("step-resets", m.resets == 1, (double)m.resets);
		e = (double)(gs_clockmap_ns(&m, ticks(hz, 3.5, 0)) - (base + 4500000000LL));
		check("step-tracked", e > -1000 && e < 1000, e);
	}
	printf("%d passed, %d failed\n", pass, fail);
	return fail ? 1 : 0;
}
EOF
# shellcheck disable=SC2086  # the project's warning flags
if ! "$CC" -std=gnu11 -O2 -Wall -Wextra -Wshadow -Wpointer-arith -Wcast-qual -Werror -Iprobe/dpdk \
	-o "$tmp/t" "$tmp/t.c" probe/dpdk/clockmap.c 2>"$tmp/cc.err"; then
	echo "FAIL build: $(head -5 "$tmp/cc.err")"
	echo "0 passed, 1 failed"
	exit 1
fi
"$tmp/t"
