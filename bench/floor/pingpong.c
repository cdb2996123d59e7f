/* SPDX-License-Identifier: BSD-2-Clause */
/* pingpong N: two processes pinned to CPUs 0 and 1 bounce 32 bytes over a Unix
 * stream socket N times (send + recv on each side: four send/recv syscalls and two
 * wake-ups per round trip, the shape of an ORB echo without the ORB); prints the
 * mean round trip in ns, then the mean cost of a getppid() (a syscall no probe
 * watches) in ns, over M calls (default N).  bench/syscall_floor.sh,
 * bench/attach_host_tax.sh. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void pin(int cpu)
{
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	sched_setaffinity(0, sizeof s, &s);
}

int main(int argc, char **argv)
{
	char *end = NULL, *end2 = NULL, b[32] = { 0 };
	long n = argc > 1 ? strtol(argv[1], &end, 10) : 0;
	long m = argc > 2 ? strtol(argv[2], &end2, 10) : n;
	int sv[2];
	pid_t kid;
	long long t0, t1, t2;
	if (argc < 2 || argc > 3 || *end || n < 1 || n > 100000000 || (end2 && *end2) || m < 1 || m > 1000000000) {
		fputs("usage: pingpong N [M] (N round trips 1..100000000, M getppid 1..1000000000, default N)\n", stderr);
		return 2;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return 1;
	kid = fork();
	if (kid < 0)
		return 1;
	if (kid == 0) {
		pin(0);
		for (long i = 0; i < n; i++)
			if (recv(sv[1], b, sizeof b, MSG_WAITALL) <= 0 || send(sv[1], b, sizeof b, 0) <= 0)
				_exit(1);
		_exit(0);
	}
	pin(1);
	t0 = now_ns();
	for (long i = 0; i < n; i++)
		if (send(sv[0], b, sizeof b, 0) <= 0 || recv(sv[0], b, sizeof b, MSG_WAITALL) <= 0)
			return 1;
	t1 = now_ns();
	for (long i = 0; i < m; i++)
		syscall(SYS_getppid);
	t2 = now_ns();
	waitpid(kid, NULL, 0);
	printf("%.0f %.1f\n", (double)(t1 - t0) / (double)n, (double)(t2 - t1) / (double)m);
	return 0;
}
