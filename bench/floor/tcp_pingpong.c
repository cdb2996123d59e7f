/* SPDX-License-Identifier: BSD-2-Clause */
/* tcp_pingpong N [CPU]: a client and a server thread, both pinned to CPU (default 0),
 * bounce 32 bytes over a TCP loopback connection N times (TCP_NODELAY: one data segment
 * received each way per round trip, the ACK carried by the answer); prints the mean
 * round trip in ns.  Every segment passes the receive path that takes the host's rx
 * time stamp while something holds rx timestamping on (here ip_local_deliver's
 * skb_clear_delivery_time: loopback TCP carries the sender's delivery time; a NIC's
 * packet is stamped in netif_receive_skb instead, the same ktime_get_real()).
 * bench/attach_rxstamp_tax.sh. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct pp {
	int n, cpu, lfd;
};

static void pin(int cpu)
{
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	sched_setaffinity(0, sizeof s, &s);
}

static void *server(void *arg)
{
	const struct pp *p = arg;
	char b[32];
	int one = 1, c;
	pin(p->cpu);
	c = accept(p->lfd, NULL, NULL);
	if (c < 0)
		return NULL;
	setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	for (int i = 0; i < p->n; i++) {
		if (recv(c, b, sizeof b, MSG_WAITALL) != (ssize_t)sizeof b || send(c, b, sizeof b, 0) != (ssize_t)sizeof b)
			break;
	}
	close(c);
	return NULL;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof sa;
	struct pp p = { .n = argc > 1 ? atoi(argv[1]) : 20000, .cpu = argc > 2 ? atoi(argv[2]) : 0 };
	struct timespec a, b;
	pthread_t t;
	char buf[32] = { 0 };
	int one = 1, c;
	if (p.n <= 0)
		return 2;
	p.lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (p.lfd < 0 || bind(p.lfd, (struct sockaddr *)&sa, sizeof sa) || getsockname(p.lfd, (struct sockaddr *)&sa, &sl) ||
	    listen(p.lfd, 1) || pthread_create(&t, NULL, server, &p))
		return 1;
	pin(p.cpu);
	c = socket(AF_INET, SOCK_STREAM, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&sa, sizeof sa))
		return 1;
	setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < p.n; i++)
		if (send(c, buf, sizeof buf, 0) != (ssize_t)sizeof buf || recv(c, buf, sizeof buf, MSG_WAITALL) != (ssize_t)sizeof buf)
			return 1;
	clock_gettime(CLOCK_MONOTONIC, &b);
	pthread_join(t, NULL);
	printf("%.1f\n", ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / p.n);
	return 0;
}
