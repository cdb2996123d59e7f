/* SPDX-License-Identifier: BSD-2-Clause */
#include "attach_target.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_arp.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434 /* the same number on every architecture */
#endif

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

static bool same_ns(const char *a, const char *b)
{
	struct stat sa, sb;
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_ino == sb.st_ino && sa.st_dev == sb.st_dev;
}

/* Field `want` (3.., numeric) of /proc/PID/stat. */
static bool stat_field(uint32_t pid, int want, uint64_t *out)
{
	char path[64], buf[1024], *p, *save = NULL;
	FILE *f;
	size_t k;
	snprintf(path, sizeof path, "/proc/%u/stat", pid);
	if (!(f = fopen(path, "re")))
		return false;
	k = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[k] = '\0';
	/* the name (field 2) may hold spaces and parentheses: fields 3.. follow the last ')' */
	if (!(p = strrchr(buf, ')')))
		return false;
	p = strtok_r(p + 1, " ", &save);
	for (int field = 3; p && field < want; field++)
		p = strtok_r(NULL, " ", &save);
	if (!p || !all_digits(p))
		return false;
	*out = strtoull(p, NULL, 10);
	return true;
}

bool gs_target_pid_exists(uint32_t pid)
{
	char path[64];
	struct stat st;
	snprintf(path, sizeof path, "/proc/%u", pid);
	return stat(path, &st) == 0;
}

void gs_target_pids_by_comm(const char *comm, uint32_t *pids, uint32_t *n, uint32_t max)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	if (!d)
		return;
	while ((de = readdir(d)) != NULL && *n < max) {
		char path[300], name[64];
		FILE *f;
		size_t k;
		if (!all_digits(de->d_name))
			continue;
		snprintf(path, sizeof path, "/proc/%s/comm", de->d_name);
		if (!(f = fopen(path, "re")))
			continue;
		k = fread(name, 1, sizeof name - 1, f);
		fclose(f);
		name[k] = '\0';
		if (k && name[k - 1] == '\n')
			name[k - 1] = '\0';
		snprintf(path, sizeof path, "/proc/%s/ns/net", de->d_name);
		/* a namespace of its own is another attach's business */
		if (strcmp(name, comm) == 0 && same_ns(path, "/proc/self/ns/net"))
			pids[(*n)++] = (uint32_t)strtoul(de->d_name, NULL, 10);
	}
	closedir(d);
}

/* The socket inodes among the process's open files. */
/* 0 or the errno value of /proc/PID/fd's opendir. */
static int socket_inodes(uint32_t pid, unsigned long **out, size_t *n)
{
	char path[64];
	DIR *d;
	struct dirent *de;
	size_t cap = 0;
	*out = NULL;
	*n = 0;
	snprintf(path, sizeof path, "/proc/%u/fd", pid);
	if (!(d = opendir(path)))
		return errno;
	while ((de = readdir(d)) != NULL) {
		char link[300], target[64];
		ssize_t k;
		unsigned long ino;
		if (!all_digits(de->d_name))
			continue;
		snprintf(link, sizeof link, "/proc/%u/fd/%s", pid, de->d_name);
		k = readlink(link, target, sizeof target - 1);
		if (k <= 0)
			continue;
		target[k] = '\0';
		if (sscanf(target, "socket:[%lu]", &ino) != 1)
			continue;
		if (*n == cap) {
			unsigned long *m = realloc(*out, (cap ? cap * 2 : 64) * sizeof *m);
			if (!m)
				break;
			*out = m;
			cap = cap ? cap * 2 : 64;
		}
		(*out)[(*n)++] = ino;
	}
	closedir(d);
	return 0;
}

int gs_target_listen_ports(uint32_t pid, uint8_t bitmap[8192])
{
	static const char *const tables[] = { "tcp", "tcp6" };
	unsigned long *inodes;
	size_t n_inodes;
	int found = 0, r;
	if ((r = socket_inodes(pid, &inodes, &n_inodes)) != 0)
		return -r;
	for (size_t t = 0; t < 2; t++) {
		char path[64], line[512];
		FILE *f;
		/* the process's own view: its network namespace's sockets */
		snprintf(path, sizeof path, "/proc/%u/net/%s", pid, tables[t]);
		if (!(f = fopen(path, "re")))
			continue;
		while (fgets(line, sizeof line, f)) {
			char local[64];
			unsigned st, port;
			unsigned long ino;
			char *colon;
			/* sl local rem st tx:rx tr:when retrnsmt uid timeout inode */
			if (sscanf(line, " %*s %63s %*s %x %*s %*s %*s %*s %*s %lu", local, &st, &ino) != 3 ||
			    st != 0x0A /* LISTEN */)
				continue;
			if (!(colon = strrchr(local, ':')) || sscanf(colon + 1, "%x", &port) != 1 || port > 65535)
				continue;
			for (size_t i = 0; i < n_inodes; i++)
				if (inodes[i] == ino) {
					bitmap[port >> 3] |= (uint8_t)(1u << (port & 7));
					found++;
					break;
				}
		}
		fclose(f);
	}
	free(inodes);
	return found;
}

/* PF_KTHREAD of include/linux/sched.h (/proc/PID/stat field 9, flags) */
#define GS_PF_KTHREAD 0x00200000u

int gs_target_kernel_thread(uint32_t pid)
{
	char path[64], exe[8];
	uint64_t flags;
	if (!stat_field(pid, 9, &flags))
		return -EIO; /* gone, or a stat line we cannot read */
	if (flags & GS_PF_KTHREAD)
		return 1;
	/* a running process has an executable; a kernel thread (or a zombie) has
	 * none: ENOENT (EACCES only says the link is not ours to read) */
	snprintf(path, sizeof path, "/proc/%u/exe", pid);
	if (readlink(path, exe, sizeof exe) < 0 && errno == ENOENT && gs_target_pid_exists(pid))
		return 2;
	return 0;
}

int gs_target_tcp_sockets(uint32_t pid)
{
	static const char *const tables[] = { "tcp", "tcp6" };
	unsigned long *inodes;
	size_t n_inodes;
	int found = 0, r;
	if ((r = socket_inodes(pid, &inodes, &n_inodes)) != 0)
		return -r;
	for (size_t t = 0; t < 2 && n_inodes; t++) {
		char path[64], line[512];
		FILE *f;
		snprintf(path, sizeof path, "/proc/%u/net/%s", pid, tables[t]);
		if (!(f = fopen(path, "re")))
			continue;
		while (fgets(line, sizeof line, f)) {
			unsigned long ino;
			/* sl local rem st tx:rx tr:when retrnsmt uid timeout inode */
			if (sscanf(line, " %*s %*s %*s %*x %*s %*s %*s %*s %*s %lu", &ino) != 1)
				continue;
			for (size_t i = 0; i < n_inodes; i++)
				if (inodes[i] == ino) {
					found++;
					break;
				}
		}
		fclose(f);
	}
	free(inodes);
	return found;
}


int gs_target_enter_netns(const uint32_t *pids, uint32_t n, int *home, char *err, size_t errlen)
{
	char first[64], path[64];
	int fd;
	*home = -1;
	if (n == 0)
		return 0;
	snprintf(first, sizeof first, "/proc/%u/ns/net", pids[0]);
	for (uint32_t i = 1; i < n; i++) {
		snprintf(path, sizeof path, "/proc/%u/ns/net", pids[i]);
		if (!same_ns(first, path)) {
			snprintf(err, errlen, "pids %u and %u are in different network namespaces: attach to "
				 "each namespace's processes separately", pids[0], pids[i]);
			return 2;
		}
	}
	if (same_ns(first, "/proc/self/ns/net"))
		return 0;
	*home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	fd = open(first, O_RDONLY | O_CLOEXEC);
	if (*home < 0 || fd < 0 || setns(fd, CLONE_NEWNET) != 0) {
		snprintf(err, errlen, "pid %u is in another network namespace and entering it failed: %s "
			 "(needs CAP_SYS_ADMIN; or run giopscope there: nsenter -n -t %u giopscope attach ...)",
			 pids[0], strerror(errno), pids[0]);
		if (fd >= 0)
			close(fd);
		if (*home >= 0)
			close(*home);
		*home = -1;
		return 2;
	}
	close(fd);
	return 0;
}

int gs_target_leave_netns(int *home, char *err, size_t errlen)
{
	int r = 0;
	if (*home < 0)
		return 0;
	if (setns(*home, CLONE_NEWNET) != 0) {
		snprintf(err, errlen, "cannot go back to our own network namespace: %s", strerror(errno));
		r = 2;
	}
	close(*home);
	*home = -1;
	return r;
}

/* Link-layer bytes in front of the IP header as tc sees the packet; a negative
 * errno value when the interface cannot be asked (-ENODEV: none of that name),
 * -EPROTONOSUPPORT for a link type the tap does not parse. */
static int l2_len(int sock, const char *name, bool *loopback, bool *up)
{
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", name);
	if (ioctl(sock, SIOCGIFFLAGS, &ifr) != 0)
		return -errno;
	*loopback = (ifr.ifr_flags & IFF_LOOPBACK) != 0;
	*up = (ifr.ifr_flags & IFF_UP) != 0;
	if (ioctl(sock, SIOCGIFHWADDR, &ifr) != 0)
		return -errno;
	switch (ifr.ifr_hwaddr.sa_family) {
	case ARPHRD_ETHER:
	case ARPHRD_LOOPBACK:
		return 14;
	case ARPHRD_NONE:
	case ARPHRD_TUNNEL:
	case ARPHRD_TUNNEL6:
	case ARPHRD_SIT:
	case ARPHRD_IPGRE:
	case ARPHRD_IP6GRE:
	case 519: /* ARPHRD_RAWIP */
		return 0;
	default:
		return -EPROTONOSUPPORT;
	}
}

int gs_target_ifaces(const char *const *names, uint32_t n_names, struct gs_attach_iface *out,
		     uint32_t max, char *err, size_t errlen)
{
	struct if_nameindex *all = NULL;
	int sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	uint32_t n = 0, want;
	int rc = 0;
	if (sock < 0) {
		rc = errno;
		snprintf(err, errlen, "cannot open a socket to list interfaces: %s", strerror(rc));
		return -rc;
	}
	if (!names) {
		all = if_nameindex();
		if (!all) {
			rc = errno;
			snprintf(err, errlen, "cannot list interfaces: %s", strerror(rc));
			close(sock);
			return -rc;
		}
		for (want = 0; all[want].if_index; want++)
			;
	} else {
		want = n_names;
	}
	for (uint32_t i = 0; i < want; i++) {
		const char *name = names ? names[i] : all[i].if_name;
		bool lo = false, up = false;
		int l2 = l2_len(sock, name, &lo, &up);
		if (l2 < 0 && (l2 != -EPROTONOSUPPORT || names)) {
			snprintf(err, errlen, l2 != -EPROTONOSUPPORT ? "no interface %s here" :
				 "interface %s: link type not supported", name);
			rc = -l2;
			break;
		}
		if (l2 < 0 || (!names && !up))
			continue;
		if (n == max) {
			snprintf(err, errlen, "too many interfaces (at most %u)", max);
			rc = E2BIG;
			break;
		}
		snprintf(out[n].name, sizeof out[n].name, "%s", name);
		out[n].ifindex = (int)if_nametoindex(name);
		out[n].l2_len = (uint32_t)l2;
		out[n].loopback = lo;
		n++;
	}
	if (all)
		if_freenameindex(all);
	close(sock);
	return rc ? -rc : (int)n;
}

/* ------------------------------------------------------------------ watching */

struct watch_iface {
	int ifindex;
	char name[IF_NAMESIZE];
	bool gone;
};

struct gs_target_watch {
	uint32_t n_pids, pids_left;
	uint32_t *pids;
	uint64_t *start;          /* gs_target_watch_starts */
	uint64_t tick_ns;
	struct pollfd *pfd;       /* a pidfd per pid (-1 once it exited), then the netlink socket */
	uint32_t n_pfd;
	struct watch_iface *ifaces;
	uint32_t n_ifaces, ifaces_left;
	bool named;
	int nl;                   /* rtnetlink, RTMGRP_LINK; -1: none */
	int ioc;                  /* for index lookups in the tapped namespace; -1: none */
	enum gs_watch_state state;
};

/* /proc/PID/stat field 22: when the process started, in clock ticks since
 * boot (CLOCK_BOOTTIME, seen from our time namespace). */
static bool start_ticks(uint32_t pid, uint64_t *ticks)
{
	return stat_field(pid, 22, ticks);
}

/* The boot-time offset of our time namespace (what /proc adds to the
 * kernel's start_boottime before it shows it): 0 in the initial one. */
static int64_t timens_boottime_ns(void)
{
	FILE *f = fopen("/proc/self/timens_offsets", "re");
	char line[128];
	int64_t off = 0;
	if (!f)
		return 0;
	while (fgets(line, sizeof line, f)) {
		long long sec, nsec;
		if (sscanf(line, "boottime %lld %lld", &sec, &nsec) == 2)
			off = (int64_t)sec * 1000000000LL + nsec;
	}
	fclose(f);
	return off;
}

/* The thread group (process) of a task id, 0 when unknown. */
static uint32_t tgid_of(uint32_t tid)
{
	char path[64], line[128];
	unsigned long v = 0;
	FILE *f;
	snprintf(path, sizeof path, "/proc/%u/status", tid);
	if (!(f = fopen(path, "re")))
		return 0;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "Tgid: %lu", &v) == 1)
			break;
	fclose(f);
	return (uint32_t)v;
}

/* Through a socket made in the tapped namespace: attach itself goes back to
 * its own once the taps are attached (if_indextoname would look there). */
static bool iface_exists(const struct gs_target_watch *w, int ifindex)
{
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	ifr.ifr_ifindex = ifindex;
	return ioctl(w->ioc, SIOCGIFNAME, &ifr) == 0 || errno != ENODEV;
}

int gs_target_watch_open(struct gs_target_watch **out, const uint32_t *pids, uint32_t n_pids,
			 const struct gs_attach_iface *ifaces, uint32_t n_ifaces, bool named,
			 char *err, size_t errlen)
{
	struct gs_target_watch *w = calloc(1, sizeof *w);
	struct sockaddr_nl sa;
	long hz = sysconf(_SC_CLK_TCK);
	int64_t off = timens_boottime_ns();

	*out = NULL;
	if (w)
		w->nl = w->ioc = -1;
	if (!w || !(w->pids = calloc(n_pids + 1, sizeof *w->pids)) ||
	    !(w->start = calloc(n_pids + 1, sizeof *w->start)) || !(w->pfd = calloc(n_pids + 1, sizeof *w->pfd)) ||
	    !(w->ifaces = calloc(n_ifaces + 1, sizeof *w->ifaces))) {
		snprintf(err, errlen, "out of memory");
		gs_target_watch_close(w);
		return 2;
	}
	w->tick_ns = (uint64_t)(1000000000LL / (hz > 0 ? hz : 100));
	for (uint32_t i = 0; i < n_pids; i++) {
		uint64_t ticks = 0;
		int fd = (int)syscall(SYS_pidfd_open, (pid_t)pids[i], 0u);
		struct pollfd one;
		if (fd < 0) {
			/* a thread's id: EINVAL, or ENOENT on newer kernels */
			uint32_t tgid = tgid_of(pids[i]);
			if (tgid && tgid != pids[i])
				snprintf(err, errlen, "%u is a thread of process %u: give the process id", pids[i], tgid);
			else
				snprintf(err, errlen, "no process %u (%s)", pids[i], strerror(errno));
			gs_target_watch_close(w);
			return 2;
		}
		w->pfd[w->n_pfd].fd = fd;
		w->pfd[w->n_pfd++].events = POLLIN;
		/* read after the pidfd holds the process: while it has not exited,
		 * /proc/PID is that process (checked right below) */
		if (!start_ticks(pids[i], &ticks)) {
			snprintf(err, errlen, "no process %u (/proc/%u/stat)", pids[i], pids[i]);
			gs_target_watch_close(w);
			return 2;
		}
		one.fd = fd;
		one.events = POLLIN;
		if (poll(&one, 1, 0) > 0) {
			snprintf(err, errlen, "process %u has exited", pids[i]);
			gs_target_watch_close(w);
			return 2;
		}
		w->pids[i] = pids[i];
		w->start[i] = ticks * w->tick_ns - (uint64_t)off;
	}
	w->n_pids = w->pids_left = n_pids;
	for (uint32_t i = 0; i < n_ifaces; i++) {
		w->ifaces[i].ifindex = ifaces[i].ifindex;
		snprintf(w->ifaces[i].name, sizeof w->ifaces[i].name, "%s", ifaces[i].name);
	}
	w->n_ifaces = w->ifaces_left = n_ifaces;
	w->named = named;
	/* link notifications of this (the tapped) network namespace: joining the
	 * group needs no privilege, and none is left when they come */
	w->nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
	w->ioc = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	memset(&sa, 0, sizeof sa);
	sa.nl_family = AF_NETLINK;
	sa.nl_groups = RTMGRP_LINK;
	if (w->nl < 0 || w->ioc < 0 || bind(w->nl, (struct sockaddr *)&sa, sizeof sa) != 0) {
		snprintf(err, errlen, "cannot listen for interface changes (rtnetlink): %s", strerror(errno));
		gs_target_watch_close(w);
		return 2;
	}
	w->pfd[w->n_pfd].fd = w->nl;
	w->pfd[w->n_pfd++].events = POLLIN;
	/* one that went away between listing and listening */
	for (uint32_t i = 0; i < n_ifaces; i++)
		if (!iface_exists(w, w->ifaces[i].ifindex)) {
			snprintf(err, errlen, "interface %s went away", w->ifaces[i].name);
			gs_target_watch_close(w);
			return 2;
		}
	*out = w;
	return 0;
}

const uint64_t *gs_target_watch_starts(const struct gs_target_watch *w, uint64_t *tick_ns)
{
	*tick_ns = w->tick_ns;
	return w->start;
}

static void iface_gone(struct gs_target_watch *w, struct watch_iface *f, const char *cmd)
{
	f->gone = true;
	w->ifaces_left--;
	if (w->named || !w->ifaces_left) {
		fprintf(stderr, "giopscope %s: interface %s went away (deleted, or moved to another network "
			"namespace): stopping\n", cmd, f->name);
		w->state = GS_WATCH_IFACE_GONE;
	} else {
		fprintf(stderr, "giopscope %s: interface %s went away; still tapping %u interface%s\n", cmd,
			f->name, w->ifaces_left, w->ifaces_left == 1 ? "" : "s");
	}
}

/* The link notifications waiting.  A deletion is confirmed by looking the
 * index up (a bridge also sends RTM_DELLINK when a port leaves it); when the
 * socket overflowed, every tapped interface is looked up. */
static void read_links(struct gs_target_watch *w, const char *cmd)
{
	char buf[8192] __attribute__((aligned(NLMSG_ALIGNTO)));
	bool recheck = false;
	for (;;) {
		ssize_t got = recv(w->nl, buf, sizeof buf, MSG_DONTWAIT);
		int n = (int)got;
		const struct nlmsghdr *h;
		if (got < 0) {
			if (errno == ENOBUFS) {
				recheck = true;
				continue;
			}
			break;
		}
		if (n == 0)
			break;
		for (h = (const struct nlmsghdr *)(void *)buf; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
			const struct ifinfomsg *ifi = NLMSG_DATA(h);
			if (h->nlmsg_type != RTM_DELLINK || h->nlmsg_len < NLMSG_LENGTH(sizeof *ifi))
				continue;
			for (uint32_t i = 0; i < w->n_ifaces; i++)
				if (!w->ifaces[i].gone && w->ifaces[i].ifindex == ifi->ifi_index &&
				    !iface_exists(w, ifi->ifi_index))
					iface_gone(w, &w->ifaces[i], cmd);
		}
	}
	if (recheck)
		for (uint32_t i = 0; i < w->n_ifaces; i++)
			if (!w->ifaces[i].gone && !iface_exists(w, w->ifaces[i].ifindex))
				iface_gone(w, &w->ifaces[i], cmd);
}

enum gs_watch_state gs_target_watch_check(struct gs_target_watch *w, const char *cmd)
{
	if (!w || w->state != GS_WATCH_RUNNING || poll(w->pfd, w->n_pfd, 0) <= 0)
		return w ? w->state : GS_WATCH_RUNNING;
	for (uint32_t i = 0; i < w->n_pids; i++) {
		if (w->pfd[i].fd < 0 || !(w->pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		/* the kernel side stops at once by itself (the start time no
		 * longer matches whoever gets the pid next); this is for the user */
		close(w->pfd[i].fd);
		w->pfd[i].fd = -1; /* poll() skips it from now on */
		w->pids_left--;
		if (w->pids_left)
			fprintf(stderr, "giopscope %s: pid %u exited; still following %u of %u\n", cmd,
				w->pids[i], w->pids_left, w->n_pids);
		else
			fprintf(stderr, "giopscope %s: pid %u exited: no followed process left, stopping\n", cmd,
				w->pids[i]);
	}
	if (w->n_pids && !w->pids_left)
		w->state = GS_WATCH_PIDS_GONE;
	if (w->pfd[w->n_pfd - 1].revents & (POLLIN | POLLERR))
		read_links(w, cmd);
	return w->state;
}

void gs_target_watch_close(struct gs_target_watch *w)
{
	if (!w)
		return;
	for (uint32_t i = 0; i < w->n_pfd; i++)
		if (w->pfd[i].fd >= 0 && w->pfd[i].fd != w->nl)
			close(w->pfd[i].fd);
	if (w->nl >= 0)
		close(w->nl);
	if (w->ioc >= 0)
		close(w->ioc);
	free(w->pids);
	free(w->start);
	free(w->pfd);
	free(w->ifaces);
	free(w);
}
