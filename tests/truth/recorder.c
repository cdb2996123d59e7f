/* SPDX-License-Identifier: BSD-2-Clause */
/* tests/truth/recorder.c -- libgs_truth.so, an LD_PRELOAD recorder of an unmodified process's
 * socket I/O: the ground truth that tests/integration/attach_truth.sh sets giopscope attach's
 * syscall instants against. giopscope plays no part in it.
 *
 *     GS_TRUTH_FILE=/tmp/x/server.%p.truth LD_PRELOAD=build/orb/libgs_truth.so bench_server ...
 *
 * Every send, sendto, sendmsg, write, writev and recv, recvfrom, recvmsg, read, readv on a
 * connected TCP socket (fstat S_ISSOCK, SO_TYPE SOCK_STREAM, an AF_INET/AF_INET6 peer; decided
 * once per descriptor and cached until close()) becomes one 64-byte record: CLOCK_REALTIME
 * read just before the call and just after it returned, the thread id, the descriptor, the
 * connection's number, what the call returned (bytes, or -errno) and, when the data starts
 * with "GIOP", its first 24 bytes (the 12-byte GIOP header and, in GIOP 1.2, the request id).
 * A send's head is copied before the clock is read, a recv's after: neither is inside the
 * window. The first use of a socket writes a connection record (its local and peer address).
 *
 * Cheap and lock-free: the file (GS_TRUTH_FILE, "%p" replaced by the pid) is mapped shared;
 * a record's slot is taken with one atomic add on the counter in the file's header, then
 * filled; no syscall per record and no flush needed (the page cache holds the data even if
 * the process is killed). Capacity GS_TRUTH_RECORDS (default 1048576 records, 64 MiB of
 * sparse file); records beyond it are counted in the header as dropped (the reader fails).
 *
 * File: a 64-byte header {char magic[8] "GSTRUTH1"; u32 record_size 64; u32 pid; u64 next
 * (slots taken); u64 capacity; u64 dropped; 24 bytes zero} and the records (little-endian):
 *
 *   u8 type (1 conn, 2 send, 3 recv, 4 clock), u8 fn (GS_FN_*), u8 nhead, u8 flags (bit 0:
 *   MSG_PEEK), i32 tid, u32 conn, i32 fd, then
 *   type 2/3: i64 t_before_ns, i64 t_after_ns, i64 ret, u8 head[24]
 *   type 4:   i64 monotonic_before, i64 monotonic_after, i64 realtime read between them (the
 *             tightest of 8 tries; one at start, one at exit: how CLOCK_REALTIME - CLOCK_MONOTONIC
 *             moved while the process ran, which bounds converting eBPF's monotonic stamps)
 *   type 1:   u16 family, u16 local_port, u8 local_addr[16], u16 peer_port, u8 peer_addr[16],
 *             u8 zero[2], i64 t_ns  (addresses in network order, ports in host order)
 *
 * tests/truth/truth.py reads it. A test tool, not part of giopscope: its state is the one
 * process-wide context below (a preloaded library has no main to own it).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define GS_TRUTH_HEAD 24
#define GS_TRUTH_FDS 65536
#define GS_TRUTH_DEFAULT_RECORDS (1u << 20)

enum { GS_REC_CONN = 1, GS_REC_SEND = 2, GS_REC_RECV = 3, GS_REC_CLOCK = 4 };
enum { GS_FN_SEND = 1, GS_FN_SENDTO, GS_FN_SENDMSG, GS_FN_WRITE, GS_FN_WRITEV,
       GS_FN_RECV, GS_FN_RECVFROM, GS_FN_RECVMSG, GS_FN_READ, GS_FN_READV };
/* per descriptor: not looked at yet, a connected TCP socket, anything else */
enum { FD_UNKNOWN = 0, FD_TCP = 1, FD_OTHER = 2 };

struct truth_hdr {
	char magic[8];
	uint32_t record_size;
	uint32_t pid;
	_Atomic uint64_t next;
	uint64_t capacity;
	_Atomic uint64_t dropped;
	uint8_t zero[24];
};

struct truth_rec {
	_Atomic uint8_t type;
	uint8_t fn;
	uint8_t nhead;
	uint8_t flags;
	int32_t tid;
	uint32_t conn;
	int32_t fd;
	union {
		struct {
			int64_t t_before;
			int64_t t_after;
			int64_t ret;
			uint8_t head[GS_TRUTH_HEAD];
		} io;
		struct {
			uint16_t family;
			uint16_t lport;
			uint8_t laddr[16];
			uint16_t pport;
			uint8_t paddr[16];
			uint8_t zero[2];
			int64_t t_ns;
		} conn;
	} u;
};

_Static_assert(sizeof(struct truth_hdr) == 64, "header is 64 bytes");
_Static_assert(sizeof(struct truth_rec) == 64, "record is 64 bytes");

struct truth_fd {
	_Atomic uint32_t state; /* FD_* */
	_Atomic uint32_t conn;
};

struct truth_ctx {
	ssize_t (*send)(int, const void *, size_t, int);
	ssize_t (*sendto)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
	ssize_t (*sendmsg)(int, const struct msghdr *, int);
	ssize_t (*write)(int, const void *, size_t);
	ssize_t (*writev)(int, const struct iovec *, int);
	ssize_t (*recv)(int, void *, size_t, int);
	ssize_t (*recvfrom)(int, void *, size_t, int, struct sockaddr *, socklen_t *);
	ssize_t (*recvmsg)(int, struct msghdr *, int);
	ssize_t (*read)(int, void *, size_t);
	ssize_t (*readv)(int, const struct iovec *, int);
	int (*close)(int);
	struct truth_hdr *hdr; /* NULL: not recording */
	struct truth_rec *recs;
	_Atomic uint32_t conns;
	struct truth_fd fds[GS_TRUTH_FDS];
};

static struct truth_ctx g_truth;
static __thread int32_t t_tid;

static void resolve(struct truth_ctx *c)
{
	c->send = dlsym(RTLD_NEXT, "send");
	c->sendto = dlsym(RTLD_NEXT, "sendto");
	c->sendmsg = dlsym(RTLD_NEXT, "sendmsg");
	c->write = dlsym(RTLD_NEXT, "write");
	c->writev = dlsym(RTLD_NEXT, "writev");
	c->recv = dlsym(RTLD_NEXT, "recv");
	c->recvfrom = dlsym(RTLD_NEXT, "recvfrom");
	c->recvmsg = dlsym(RTLD_NEXT, "recvmsg");
	c->read = dlsym(RTLD_NEXT, "read");
	c->readv = dlsym(RTLD_NEXT, "readv");
	c->close = dlsym(RTLD_NEXT, "close");
}

/* a call that comes before the constructor ran (another library's constructor) */
#define NEED(c, fn)                    \
	do {                               \
		if (!(c)->fn)                  \
			resolve(c);                \
	} while (0)

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int32_t tid(void)
{
	if (!t_tid)
		t_tid = (int32_t)syscall(SYS_gettid);
	return t_tid;
}

static void fail_line(const char *what, const char *path)
{
	char line[512];
	int n = snprintf(line, sizeof line, "libgs_truth: %s %s: %s (not recording)\n", what, path,
			 strerror(errno));
	if (n > 0)
		(void)!syscall(SYS_write, 2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

static void put_clock(struct truth_ctx *c);

__attribute__((constructor)) static void truth_init(void)
{
	struct truth_ctx *c = &g_truth;
	const char *tmpl = getenv("GS_TRUTH_FILE"), *cap_s = getenv("GS_TRUTH_RECORDS");
	char path[4096];
	size_t o = 0;
	uint64_t cap = GS_TRUTH_DEFAULT_RECORDS;
	resolve(c);
	if (!tmpl || !*tmpl)
		return;
	if (cap_s && *cap_s) {
		char *end;
		errno = 0;
		unsigned long long v = strtoull(cap_s, &end, 10);
		if (errno || *end || v < 1024 || v > (1ull << 26)) {
			errno = EINVAL;
			fail_line("bad GS_TRUTH_RECORDS (1024..67108864)", cap_s);
			return;
		}
		cap = v;
	}
	/* the template with %p replaced by the pid */
	for (const char *p = tmpl; *p && o + 24 < sizeof path; p++) {
		if (p[0] == '%' && p[1] == 'p') {
			o += (size_t)snprintf(path + o, sizeof path - o, "%ld", (long)getpid());
			p++;
		} else {
			path[o++] = *p;
		}
	}
	path[o] = 0;
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fail_line("cannot create", path);
		return;
	}
	size_t size = sizeof(struct truth_hdr) + cap * sizeof(struct truth_rec);
	if (ftruncate(fd, (off_t)size) != 0) {
		fail_line("cannot size", path);
		c->close(fd);
		return;
	}
	void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	c->close(fd);
	if (m == MAP_FAILED) {
		fail_line("cannot map", path);
		return;
	}
	struct truth_hdr *h = m;
	memcpy(h->magic, "GSTRUTH1", 8);
	h->record_size = sizeof(struct truth_rec);
	h->pid = (uint32_t)getpid();
	h->capacity = cap;
	c->recs = (struct truth_rec *)(h + 1);
	c->hdr = h;
	put_clock(c);
}

/* a free slot, or NULL (counted as dropped) */
static struct truth_rec *slot(struct truth_ctx *c)
{
	uint64_t i = atomic_fetch_add_explicit(&c->hdr->next, 1, memory_order_relaxed);
	if (i >= c->hdr->capacity) {
		atomic_fetch_add_explicit(&c->hdr->dropped, 1, memory_order_relaxed);
		return NULL;
	}
	return &c->recs[i];
}

static int64_t ns_of(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

/* a (monotonic, realtime, monotonic) sample, the tightest of 8 */
static void put_clock(struct truth_ctx *c)
{
	int64_t best_a = 0, best_b = INT64_MAX, best_w = 0;
	for (int i = 0; i < 8; i++) {
		struct timespec a, w, b;
		clock_gettime(CLOCK_MONOTONIC, &a);
		clock_gettime(CLOCK_REALTIME, &w);
		clock_gettime(CLOCK_MONOTONIC, &b);
		if (ns_of(&b) - ns_of(&a) < best_b - best_a) {
			best_a = ns_of(&a);
			best_b = ns_of(&b);
			best_w = ns_of(&w);
		}
	}
	struct truth_rec *r = slot(c);
	if (!r)
		return;
	r->fn = 0;
	r->nhead = 0;
	r->flags = 0;
	r->tid = tid();
	r->conn = 0;
	r->fd = -1;
	memset(&r->u, 0, sizeof r->u);
	r->u.io.t_before = best_a;
	r->u.io.t_after = best_b;
	r->u.io.ret = best_w;
	atomic_store_explicit(&r->type, GS_REC_CLOCK, memory_order_release);
}

/* the second clock sample; the mapping stays (threads may still run): nothing to flush */
__attribute__((destructor)) static void truth_fini(void)
{
	if (g_truth.hdr)
		put_clock(&g_truth);
}

static void put_addr(const struct sockaddr_storage *ss, uint16_t *port, uint8_t addr[16])
{
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;
		*port = ntohs(s4->sin_port);
		memcpy(addr, &s4->sin_addr, 4);
	} else {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;
		*port = ntohs(s6->sin6_port);
		memcpy(addr, &s6->sin6_addr, 16);
	}
}

/* The connection number of fd when it is a connected TCP socket, else 0. Decided once per
 * descriptor (close() forgets it); errno is left as it was. */
static uint32_t sock_of(struct truth_ctx *c, int fd)
{
	if (!c->hdr || fd < 0 || fd >= GS_TRUTH_FDS)
		return 0;
	struct truth_fd *e = &c->fds[fd];
	uint32_t st = atomic_load_explicit(&e->state, memory_order_acquire);
	if (st == FD_TCP)
		return atomic_load_explicit(&e->conn, memory_order_relaxed);
	if (st == FD_OTHER)
		return 0;
	int saved = errno;
	struct stat sb;
	struct sockaddr_storage l, p;
	socklen_t ll = sizeof l, pl = sizeof p, tl;
	int type = 0;
	uint32_t conn = 0;
	tl = sizeof type;
	if (fstat(fd, &sb) != 0) {
		errno = saved;
		return 0; /* not open: the call itself fails, ask again next time */
	}
	if (!S_ISSOCK(sb.st_mode) || getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) != 0 ||
	    type != SOCK_STREAM || getsockname(fd, (struct sockaddr *)&l, &ll) != 0 ||
	    (l.ss_family != AF_INET && l.ss_family != AF_INET6)) {
		atomic_store_explicit(&e->state, FD_OTHER, memory_order_release);
		errno = saved;
		return 0;
	}
	if (getpeername(fd, (struct sockaddr *)&p, &pl) != 0) {
		errno = saved;
		return 0; /* not connected yet: decided on a later call */
	}
	conn = atomic_fetch_add_explicit(&c->conns, 1, memory_order_relaxed) + 1;
	struct truth_rec *r = slot(c);
	if (r) {
		r->fn = 0;
		r->nhead = 0;
		r->flags = 0;
		r->tid = tid();
		r->conn = conn;
		r->fd = fd;
		memset(&r->u, 0, sizeof r->u);
		r->u.conn.family = l.ss_family == AF_INET ? 4 : 6;
		put_addr(&l, &r->u.conn.lport, r->u.conn.laddr);
		put_addr(&p, &r->u.conn.pport, r->u.conn.paddr);
		r->u.conn.t_ns = now_ns();
		atomic_store_explicit(&r->type, GS_REC_CONN, memory_order_release);
	}
	atomic_store_explicit(&e->conn, conn, memory_order_relaxed);
	atomic_store_explicit(&e->state, FD_TCP, memory_order_release);
	errno = saved;
	return conn;
}

/* the first bytes of an iovec array, when they start with "GIOP" */
static uint8_t head_iov(uint8_t out[GS_TRUTH_HEAD], const struct iovec *iov, int n, size_t limit)
{
	size_t got = 0;
	for (int i = 0; i < n && got < GS_TRUTH_HEAD && got < limit; i++) {
		size_t k = iov[i].iov_len;
		if (k > GS_TRUTH_HEAD - got)
			k = GS_TRUTH_HEAD - got;
		if (k > limit - got)
			k = limit - got;
		if (k && iov[i].iov_base)
			memcpy(out + got, iov[i].iov_base, k);
		got += k;
	}
	if (got < 4 || memcmp(out, "GIOP", 4) != 0)
		return 0;
	return (uint8_t)got;
}

static uint8_t head_buf(uint8_t out[GS_TRUTH_HEAD], const void *buf, size_t len)
{
	struct iovec v = { (void *)(uintptr_t)buf, len };
	return head_iov(out, &v, 1, len);
}

static void put_io(struct truth_ctx *c, int type, int fn, int fd, uint32_t conn, int64_t t0,
		   int64_t t1, ssize_t ret, int err, const uint8_t *head, uint8_t nhead, int flags)
{
	struct truth_rec *r = slot(c);
	if (!r)
		return;
	r->fn = (uint8_t)fn;
	r->nhead = nhead;
	r->flags = (flags & MSG_PEEK) ? 1 : 0;
	r->tid = tid();
	r->conn = conn;
	r->fd = fd;
	r->u.io.t_before = t0;
	r->u.io.t_after = t1;
	r->u.io.ret = ret < 0 ? -(int64_t)err : (int64_t)ret;
	memcpy(r->u.io.head, head, GS_TRUTH_HEAD);
	atomic_store_explicit(&r->type, (uint8_t)type, memory_order_release);
}

/* ---- sends: the head before the clock, the clock around the call ---- */

#define SEND_BODY(FN, CALL, HEADEXPR, FLAGS)                                              \
	struct truth_ctx *c = &g_truth;                                                       \
	uint32_t conn = sock_of(c, fd);                                                       \
	if (!conn)                                                                            \
		return CALL;                                                                      \
	uint8_t h[GS_TRUTH_HEAD] = { 0 };                                                     \
	uint8_t nh = HEADEXPR;                                                                \
	int64_t t0 = now_ns();                                                                \
	ssize_t rv = CALL;                                                                    \
	int64_t t1 = now_ns();                                                                \
	int err = errno;                                                                      \
	put_io(c, GS_REC_SEND, FN, fd, conn, t0, t1, rv, err, h, nh, FLAGS);                  \
	errno = err;                                                                          \
	return rv

ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	NEED(&g_truth, send);
	SEND_BODY(GS_FN_SEND, g_truth.send(fd, buf, len, flags), head_buf(h, buf, len), flags);
}

ssize_t sendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr *to,
	       socklen_t tl)
{
	NEED(&g_truth, sendto);
	SEND_BODY(GS_FN_SENDTO, g_truth.sendto(fd, buf, len, flags, to, tl), head_buf(h, buf, len),
		  flags);
}

ssize_t sendmsg(int fd, const struct msghdr *m, int flags)
{
	NEED(&g_truth, sendmsg);
	SEND_BODY(GS_FN_SENDMSG, g_truth.sendmsg(fd, m, flags),
		  head_iov(h, m->msg_iov, (int)m->msg_iovlen, SIZE_MAX), flags);
}

ssize_t write(int fd, const void *buf, size_t len)
{
	NEED(&g_truth, write);
	SEND_BODY(GS_FN_WRITE, g_truth.write(fd, buf, len), head_buf(h, buf, len), 0);
}

ssize_t writev(int fd, const struct iovec *iov, int n)
{
	NEED(&g_truth, writev);
	SEND_BODY(GS_FN_WRITEV, g_truth.writev(fd, iov, n), head_iov(h, iov, n, SIZE_MAX), 0);
}

/* ---- recvs: the clock around the call, the head of what it returned after ---- */

#define RECV_BODY(FN, CALL, HEADEXPR, FLAGS)                                              \
	struct truth_ctx *c = &g_truth;                                                       \
	uint32_t conn = sock_of(c, fd);                                                       \
	if (!conn)                                                                            \
		return CALL;                                                                      \
	int64_t t0 = now_ns();                                                                \
	ssize_t rv = CALL;                                                                    \
	int64_t t1 = now_ns();                                                                \
	int err = errno;                                                                      \
	uint8_t h[GS_TRUTH_HEAD] = { 0 };                                                     \
	uint8_t nh = rv > 0 ? HEADEXPR : 0;                                                   \
	put_io(c, GS_REC_RECV, FN, fd, conn, t0, t1, rv, err, h, nh, FLAGS);                  \
	errno = err;                                                                          \
	return rv

ssize_t recv(int fd, void *buf, size_t len, int flags)
{
	NEED(&g_truth, recv);
	RECV_BODY(GS_FN_RECV, g_truth.recv(fd, buf, len, flags), head_buf(h, buf, (size_t)rv), flags);
}

ssize_t recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *from, socklen_t *fl)
{
	NEED(&g_truth, recvfrom);
	RECV_BODY(GS_FN_RECVFROM, g_truth.recvfrom(fd, buf, len, flags, from, fl),
		  head_buf(h, buf, (size_t)rv), flags);
}

ssize_t recvmsg(int fd, struct msghdr *m, int flags)
{
	NEED(&g_truth, recvmsg);
	RECV_BODY(GS_FN_RECVMSG, g_truth.recvmsg(fd, m, flags),
		  head_iov(h, m->msg_iov, (int)m->msg_iovlen, (size_t)rv), flags);
}

ssize_t read(int fd, void *buf, size_t len)
{
	NEED(&g_truth, read);
	RECV_BODY(GS_FN_READ, g_truth.read(fd, buf, len), head_buf(h, buf, (size_t)rv), 0);
}

ssize_t readv(int fd, const struct iovec *iov, int n)
{
	NEED(&g_truth, readv);
	RECV_BODY(GS_FN_READV, g_truth.readv(fd, iov, n), head_iov(h, iov, n, (size_t)rv), 0);
}

/* a closed descriptor's number may come back as anything: forget what it was */
int close(int fd)
{
	struct truth_ctx *c = &g_truth;
	NEED(c, close);
	if (fd >= 0 && fd < GS_TRUTH_FDS)
		atomic_store_explicit(&c->fds[fd].state, FD_UNKNOWN, memory_order_release);
	return c->close(fd);
}
