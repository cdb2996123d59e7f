/* SPDX-License-Identifier: BSD-2-Clause */
/* A capture file mapped for the walker (pcap_walk.h): libpcap's opening, the
 * mapping and the pages given back behind a walk.  Apart from pcap_walk.c,
 * which needs only libc (the unit tests link it without libpcap). */
#include "pcap_walk.h"

#include <fcntl.h>
#include <pcap/pcap.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../decoders/link.h"

/* ---- a file cut short under the walk --------------------------------------
 *
 * A mapped file that is truncated while it is walked (tcpdump -W writing its
 * ring of files over the one being read, a copy being replaced) makes the
 * next touch of a page past its new end a SIGBUS, which would kill the read
 * and lose what it decoded.  The handler lays zero pages over the rest of the
 * mapping, so the access that faulted goes on, and raises a flag the walks
 * look at before they hand a record over (gs_walk_cut): the read then stops
 * with a one-line error and writes what it has.  The state is the signal
 * handler's (the only way a handler learns which mapping is ours); one file
 * is mapped at a time.  A SIGBUS elsewhere keeps its default action. */
static struct {
	_Atomic(uintptr_t) base;
	_Atomic(size_t) size;
	volatile sig_atomic_t cut;
	uintptr_t page;
	bool installed;
} guard;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	uintptr_t a = (uintptr_t)si->si_addr, base = atomic_load(&guard.base);
	size_t size = atomic_load(&guard.size);
	(void)uc;
	if (base && guard.page && a >= base && a - base < size) {
		uintptr_t from = a & ~(guard.page - 1);
		if (mmap((void *)from, base + size - from, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
			 0) != MAP_FAILED) {
			guard.cut = 1;
			return;
		}
	}
	/* not ours (or no zero pages): the default action, at the same fault */
	signal(sig, SIG_DFL);
}

static void guard_set(const struct gs_walk *w)
{
	if (!guard.installed) {
		struct sigaction sa;
		long pg = sysconf(_SC_PAGESIZE);
		guard.page = pg > 0 ? (uintptr_t)pg : 4096;
		memset(&sa, 0, sizeof sa);
		sa.sa_sigaction = on_sigbus;
		sa.sa_flags = SA_SIGINFO;
		sigemptyset(&sa.sa_mask);
		guard.installed = sigaction(SIGBUS, &sa, NULL) == 0;
	}
	guard.cut = 0;
	atomic_store(&guard.size, w->size);
	atomic_store(&guard.base, (uintptr_t)w->base);
}

bool gs_walk_cut(void)
{
	return guard.cut != 0;
}

bool gs_walk_map_fd(struct gs_walk *w, int fd, int dlt, int snap)
{
	struct stat st;
	void *m;
	if (!gs_link_supported(dlt) || snap <= 0)
		return false;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 || (uint64_t)st.st_size > SIZE_MAX)
		return false;
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED)
		return false;
	if (gs_walk_init(w, m, (size_t)st.st_size, dlt, (uint32_t)snap) != 0) {
		munmap(m, (size_t)st.st_size);
		return false;
	}
	madvise(m, (size_t)st.st_size, MADV_SEQUENTIAL);
	guard_set(w);
	return true;
}

bool gs_walk_open_file(const char *path, struct gs_walk *w)
{
	return gs_walk_open_file_fd(path, w, NULL);
}

bool gs_walk_open_file_fd(const char *path, struct gs_walk *w, int *keep)
{
	char ebuf[PCAP_ERRBUF_SIZE];
	struct stat st;
	pcap_t *p;
	int dlt, snap, fd;
	bool ok;
	if (strcmp(path, "-") == 0)
		return false;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	/* not a regular file (a fifo): libpcap is not to read any of it here */
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
		close(fd);
		return false;
	}
	p = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, ebuf);
	if (!p) {
		close(fd);
		return false;
	}
	dlt = pcap_datalink(p);
	snap = pcap_snapshot(p);
	pcap_close(p);
	ok = gs_walk_map_fd(w, fd, dlt, snap);
	if (ok && keep)
		*keep = fd;
	else
		close(fd);
	return ok;
}

void gs_walk_close(struct gs_walk *w)
{
	if (atomic_load(&guard.base) == (uintptr_t)w->base)
		atomic_store(&guard.base, (uintptr_t)0);
	munmap((void *)(uintptr_t)w->base, w->size);
	w->base = NULL;
	w->size = 0;
}

void gs_walk_drop_behind(const struct gs_walk *w, size_t off, size_t *dropped)
{
	size_t lo;
	if (off < GS_WALK_KEEP + GS_WALK_DROP)
		return;
	lo = (off - GS_WALK_KEEP) & ~(GS_WALK_DROP - 1);
	if (lo > *dropped) {
		gs_walk_give_back(w, *dropped, lo);
		*dropped = lo;
	}
}

void gs_walk_give_back(const struct gs_walk *w, size_t from, size_t to)
{
	madvise((void *)(uintptr_t)(w->base + from), to - from, MADV_DONTNEED);
}
