#include "attach_target.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_arp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

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
		return -1;
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
	int found = 0;
	if (socket_inodes(pid, &inodes, &n_inodes) != 0)
		return -1;
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


int gs_target_enter_netns(const uint32_t *pids, uint32_t n, bool *moved, char *err, size_t errlen)
{
	char first[64], path[64];
	int fd;
	*moved = false;
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
	fd = open(first, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNET) != 0) {
		snprintf(err, errlen, "pid %u is in another network namespace and entering it failed: %s "
			 "(needs CAP_SYS_ADMIN; or run giopscope there: nsenter -n -t %u giopscope attach ...)",
			 pids[0], strerror(errno), pids[0]);
		if (fd >= 0)
			close(fd);
		return 2;
	}
	close(fd);
	*moved = true;
	return 0;
}

/* Link-layer bytes in front of the IP header as tc sees the packet. */
static int l2_len(int sock, const char *name, bool *loopback, bool *up)
{
	struct ifreq ifr;
	memset(&ifr, 0, sizeof ifr);
	snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", name);
	if (ioctl(sock, SIOCGIFFLAGS, &ifr) != 0)
		return -1;
	*loopback = (ifr.ifr_flags & IFF_LOOPBACK) != 0;
	*up = (ifr.ifr_flags & IFF_UP) != 0;
	if (ioctl(sock, SIOCGIFHWADDR, &ifr) != 0)
		return -1;
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
		return -2;
	}
}

int gs_target_ifaces(const char *const *names, uint32_t n_names, struct gs_attach_iface *out,
		     uint32_t max, char *err, size_t errlen)
{
	struct if_nameindex *all = NULL;
	int sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	uint32_t n = 0, want;
	if (sock < 0) {
		snprintf(err, errlen, "cannot open a socket to list interfaces: %s", strerror(errno));
		return -1;
	}
	if (!names) {
		all = if_nameindex();
		if (!all) {
			snprintf(err, errlen, "cannot list interfaces: %s", strerror(errno));
			close(sock);
			return -1;
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
		if (l2 == -1 || (l2 == -2 && names)) {
			snprintf(err, errlen, l2 == -1 ? "no interface %s here" : "interface %s: link type not supported",
				 name);
			n = UINT32_MAX;
			break;
		}
		if (l2 < 0 || (!names && !up))
			continue;
		if (n == max) {
			snprintf(err, errlen, "too many interfaces (at most %u)", max);
			n = UINT32_MAX;
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
	return n == UINT32_MAX ? -1 : (int)n;
}
