/* A capture file mapped for the walker (pcap_walk.h): libpcap's opening, the
 * mapping and the pages given back behind a walk.  Apart from pcap_walk.c,
 * which needs only libc (the unit tests link it without libpcap). */
#include "pcap_walk.h"

#include <fcntl.h>
#include <pcap/pcap.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../decoders/link.h"

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
	return true;
}

bool gs_walk_open_file(const char *path, struct gs_walk *w)
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
	close(fd);
	return ok;
}

void gs_walk_close(struct gs_walk *w)
{
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
		madvise((void *)(uintptr_t)(w->base + *dropped), lo - *dropped, MADV_DONTNEED);
		*dropped = lo;
	}
}
