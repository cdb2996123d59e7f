/* SPDX-License-Identifier: BSD-2-Clause */
/* How far a probe's BPF ring buffer has been read, for `attach --sched` and
 * `--orb` (only with eBPF: include after libbpf).
 *
 * The ring's producer position moves when a record is reserved, before it is
 * written; the reader stops at the first record reserved and not yet written,
 * so records of other CPUs written after it wait (a vCPU the hypervisor holds
 * in the middle of a probe holds them all).  The probes take their time stamp
 * after the reservation.  So when the reader has consumed up to the producer
 * position read at monotonic time T (taken before that read), every record
 * stamped at or before T has been read: T is the point up to which the
 * threads' logs are complete.  Losses (ring full) are kept as windows of time
 * from the counter's value at each read.  */
#ifndef GS_RING_MARK_H
#define GS_RING_MARK_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../analysis/thread_log.h"

struct gs_ring_mark {
	void *cons_map, *prod_map;  /* the ring's two position pages, read-only */
	size_t page;
	uint64_t lost_seen;         /* the loss counter at the last read */
	int64_t checked;            /* when it was read (CLOCK_MONOTONIC ns) */
	int64_t complete;           /* every record stamped up to here is read (0: none yet) */
	uint64_t stalls;            /* reads that found a record reserved and not yet written */
};

/* what a record lost at the edge of a read may be stamped before it */
#define GS_RING_LOSS_MARGIN_NS 1000000LL

static inline int64_t gs_ring_mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* 0, or an errno value. */
static inline int gs_ring_mark_open(struct gs_ring_mark *m, int map_fd)
{
	long pg = sysconf(_SC_PAGESIZE);
	m->page = pg > 0 ? (size_t)pg : 4096;
	m->cons_map = mmap(NULL, m->page, PROT_READ, MAP_SHARED, map_fd, 0);
	if (m->cons_map == MAP_FAILED) {
		m->cons_map = m->prod_map = NULL;
		return errno;
	}
	m->prod_map = mmap(NULL, m->page, PROT_READ, MAP_SHARED, map_fd, (off_t)m->page);
	if (m->prod_map == MAP_FAILED) {
		munmap(m->cons_map, m->page);
		m->cons_map = m->prod_map = NULL;
		return errno;
	}
	m->lost_seen = 0;
	m->checked = gs_ring_mono();
	m->complete = 0;
	m->stalls = 0;
	return 0;
}

/* A probe's reader: the ring buffer of map `map_fd` read into `fn(ctx, ...)`, its
 * positions mapped (above), and the CPUs whose counter rows to add (at most `max`).
 * 0, or 2 with a one-line reason in err naming the option (`what`). */
static inline int gs_ring_reader_open(struct ring_buffer **rb, struct gs_ring_mark *m, uint32_t *ncpus,
				      uint32_t max, int map_fd, ring_buffer_sample_fn fn, void *ctx,
				      const char *what, char *err, size_t errlen)
{
	int r;
	*rb = ring_buffer__new(map_fd, fn, ctx, NULL);
	if (!*rb) {
		snprintf(err, errlen, "%s: cannot map the ring buffer: %s", what, strerror(errno));
		return 2;
	}
	if ((r = gs_ring_mark_open(m, map_fd)) != 0) {
		snprintf(err, errlen, "%s: cannot map the ring buffer's positions: %s", what, strerror(r));
		return 2;
	}
	r = libbpf_num_possible_cpus();
	*ncpus = r > 0 && (uint32_t)r < max ? (uint32_t)r : max;
	return 0;
}

static inline void gs_ring_mark_close(struct gs_ring_mark *m)
{
	if (m->cons_map)
		munmap(m->cons_map, m->page);
	if (m->prod_map)
		munmap(m->prod_map, m->page);
	m->cons_map = m->prod_map = NULL;
}

/* Consumes `rb` to its end (a few tries while records keep coming), moves
 * `complete`, and gives `log` a loss window when the loss counter (read by
 * `lost_of(arg)`) moved. */
static inline void gs_ring_mark_drain(struct gs_ring_mark *m, struct ring_buffer *rb,
				      uint64_t (*lost_of)(const void *arg), const void *arg, struct gs_tlog *log)
{
	int64_t read_at;
	uint64_t lost;
	const uint64_t *cons = (const uint64_t *)m->cons_map, *prod = (const uint64_t *)m->prod_map;
	int64_t now = 0;
	bool done = false;
	for (int i = 0; i < 4 && !done; i++) {
		ring_buffer__consume(rb);
		now = gs_ring_mono();
		done = __atomic_load_n(prod, __ATOMIC_ACQUIRE) == __atomic_load_n(cons, __ATOMIC_ACQUIRE);
	}
	if (done && now > m->complete)
		m->complete = now;
	else if (!done)
		m->stalls++;
	read_at = gs_ring_mono();
	lost = lost_of(arg);
	if (lost != m->lost_seen) {
		/* lost after the counter's last read, before this one (a record
		 * is stamped after its reservation failed, then counted; the
		 * margin: a probe held between the two by the hypervisor) */
		gs_tlog_loss(log, m->checked - GS_RING_LOSS_MARGIN_NS, gs_ring_mono());
		m->lost_seen = lost;
	}
	m->checked = read_at;
}

#endif
