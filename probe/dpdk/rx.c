/* SPDX-License-Identifier: BSD-2-Clause */
/* The receive loop: one lcore polls every RX queue of every port and feeds
 * the one engine (it is single-threaded: nothing else touches it until this
 * loop has returned).  Bursts are handed back to the pool in bulk. */
#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_prefetch.h>

#include "../commands.h"
#include "dpdk.h"

/* polls of an empty queue in a row, and the quiet time after the last packet,
 * before a finite replay counts as ended: net_pcap returns nothing only at the
 * end of its file, but one empty poll is not proof */
#define END_EMPTY_POLLS 256
#define END_QUIET_MS 50

/* A (TSC, wall clock) pair read as close together as we can. */
static void tsc_wall(uint64_t *tsc, int64_t *wall)
{
	uint64_t t0 = rte_rdtsc();
	int64_t w = gs_realtime_ns();
	uint64_t t1 = rte_rdtsc();
	*tsc = t0 + (t1 - t0) / 2;
	*wall = w;
}

static int64_t tsc_ns(struct gs_dpdk *d, uint64_t tsc)
{
	int64_t ns = gs_clockmap_ns(&d->tsc, tsc);
	/* one clock for the whole capture: never backwards, even when the wall
	 * clock was stepped and the map started over */
	if (ns < d->last_tsc_ns)
		ns = d->last_tsc_ns;
	d->last_tsc_ns = ns;
	return ns;
}

static void recalibrate(struct gs_dpdk *d)
{
	uint64_t tsc;
	int64_t wall;
	tsc_wall(&tsc, &wall);
	gs_clockmap_update(&d->tsc, tsc, wall);
	for (unsigned i = 0; i < d->nports; i++) {
		struct gs_dpdk_port *p = &d->port[i];
		uint64_t c;
		if (p->ts == GS_TS_NIC && rte_eth_read_clock(p->id, &c) == 0)
			gs_clockmap_update(&p->nic, c, gs_realtime_ns());
	}
}

/* net_pcap's stamp: microseconds since the epoch, from libpcap's header. */
static inline int64_t pcap_ns(struct gs_dpdk *d, uint64_t v)
{
	int64_t us = (int64_t)v;
	d->ts_used[GS_TS_PCAP]++;
	if (unlikely(us < 0)) {
		/* libpcap reads classic pcap seconds as a signed 32-bit number:
		 * past 2038 they come out negative (as `read` knows, tap_pcap.c);
		 * net_pcap multiplied that out unsigned */
		us += (1LL << 32) * 1000000;
		if (us < 0)
			return d->last_pcap_ts;
	}
	if (unlikely(us > INT64_MAX / 1000))
		return d->last_pcap_ts;  /* nonsense: stay in the capture's time */
	if (us * 1000 > d->last_pcap_ts)
		d->last_pcap_ts = us * 1000;
	return us * 1000;
}

static inline int64_t stamp(struct gs_dpdk *d, struct gs_dpdk_port *p, const struct rte_mbuf *m,
			    int64_t *burst_ns, uint64_t tsc)
{
	if (p->ts != GS_TS_TSC && (m->ol_flags & d->ts_flag)) {
		uint64_t v = *RTE_MBUF_DYNFIELD(m, d->ts_offset, const rte_mbuf_timestamp_t *);
		if (p->ts == GS_TS_PCAP)
			return pcap_ns(d, v);
		d->ts_used[GS_TS_NIC]++;
		return gs_clockmap_ns(&p->nic, v);
	}
	if (p->ts == GS_TS_PCAP) {
		/* a frame without its stamp: keep it in the capture's time */
		d->ts_used[GS_TS_PCAP]++;
		return d->last_pcap_ts;
	}
	/* one TSC reading per burst: the frames came in together */
	if (*burst_ns < 0)
		*burst_ns = tsc_ns(d, tsc);
	d->ts_used[GS_TS_TSC]++;
	return *burst_ns;
}

/* Hands a burst to the session.  False when --count was reached: the loop
 * stops at the packet that ended the N-th call, as `live` does. */
static bool feed(struct gs_dpdk *d, struct gs_dpdk_rxq *q, struct rte_mbuf **pkts, uint16_t n, uint64_t tsc)
{
	struct gs_dpdk_port *p = &d->port[q->port];
	int64_t burst_ns = -1;
	for (uint16_t i = 0; i < n; i++) {
		const struct rte_mbuf *m = pkts[i];
		const uint8_t *data = rte_pktmbuf_mtod(m, const uint8_t *);
		uint32_t caplen = m->data_len;
		if (i + 1 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 1], const void *));
		if (m->nb_segs > 1) {
			/* the decoder reads one contiguous frame */
			caplen = m->pkt_len < GS_DPDK_SCRATCH ? m->pkt_len : GS_DPDK_SCRATCH;
			data = rte_pktmbuf_read(m, 0, caplen, d->scratch);
			d->multiseg++;
			if (!data)
				continue;
		}
		gs_session_frame(&d->session, q->dlt, stamp(d, p, m, &burst_ns, tsc), data, caplen, m->pkt_len);
		if (d->session.opt.count && d->session.calls >= d->session.opt.count)
			return false;
	}
	return true;
}

/* Every finite replay has reached the end of its files. */
static bool replay_ended(struct gs_dpdk *d, uint64_t now)
{
	uint64_t quiet = d->tsc_hz / 1000 * END_QUIET_MS;
	bool all = true;
	for (unsigned i = 0; i < d->nports; i++)
		if (!d->port[i].finite)
			return false;
	for (unsigned i = 0; i < d->nrxq; i++) {
		struct gs_dpdk_port *p = &d->port[d->rxq[i].port];
		if (d->rxq[i].empty < END_EMPTY_POLLS || now - p->last_rx_tsc < quiet)
			all = false;
	}
	for (unsigned i = 0; all && i < d->nports; i++)
		d->port[i].exhausted = true;
	return all;
}

/* What the loop does every few milliseconds: stop?, counters, the session's
 * timers and progress line, the clocks. */
static bool housekeeping(struct gs_dpdk *d, uint64_t now, uint64_t *next_cal)
{
	int64_t now_ns;
	if (__atomic_load_n(&gs_stop_requested, __ATOMIC_RELAXED)) {
		d->stopped_by_signal = true;
		d->end_reason = "interrupted";
		return false;
	}
	if (now >= *next_cal) {
		recalibrate(d);
		*next_cal = now + d->tsc_hz;
	}
	gs_dpdk_ports_stats(d);
	/* a replay's "now" is the file's, so that reply timeouts count capture time */
	now_ns = d->port[0].finite ? d->last_pcap_ts : tsc_ns(d, now);
	gs_session_tick(&d->session, now_ns, &d->drops);
	if (ferror(d->session.out)) {
		/* e.g. `| head`: nobody reads the calls any more (the session's
		 * close says so and exits 2) */
		d->end_reason = "writing the output failed";
		return false;
	}
	if (gs_session_done(&d->session)) {
		d->end_reason = d->session.opt.count && d->session.calls >= d->session.opt.count ?
				"--count reached" : d->replay_held ? "end of the capture file, then --duration reached" :
				"--duration reached";
		return false;
	}
	if (!d->replay_held && replay_ended(d, now)) {
		if (!d->session.metrics || !d->session.opt.duration_ns) {
			d->end_reason = "end of the capture file";
			return false;
		}
		/* --metrics and --duration: the replay's final figures stay on
		 * /metrics until --duration (or a signal) ends the run; every call
		 * is ended now, as at the end of `read`, so that a scrape sees them
		 * all (gs_session_close's own finish then has nothing left) */
		gs_engine_finish(d->session.e);
		d->replay_held = true;
	}
	return true;
}

int gs_dpdk_rx_loop(void *arg)
{
	struct gs_dpdk *d = arg;
	struct rte_mbuf *pkts[GS_DPDK_MAX_BURST];
	uint16_t burst = d->opt.burst;
	uint64_t hk_every = d->tsc_hz / 50;  /* 20 ms */
	uint64_t now = rte_rdtsc(), next_hk = now + hk_every, next_cal = now + d->tsc_hz;
	uint64_t prev;
	bool more;

	for (unsigned i = 0; i < d->nports; i++)
		d->port[i].last_rx_tsc = now;
	for (;;) {
		for (unsigned i = 0; i < d->nrxq; i++) {
			struct gs_dpdk_rxq *q = &d->rxq[i];
			uint16_t n = rte_eth_rx_burst(q->port_id, q->queue, pkts, burst);
			if (n == 0) {
				if (q->empty < UINT32_MAX)
					q->empty++;
				continue;
			}
			now = rte_rdtsc();
			q->empty = 0;
			d->port[q->port].last_rx_tsc = now;
			if (!d->bursts++)
				d->first_tsc = now;
			d->last_tsc = now;
			d->packets += n;
			more = feed(d, q, pkts, n, now);
			rte_pktmbuf_free_bulk(pkts, n);
			if (!more) {
				d->end_reason = "--count reached";
				return 0;
			}
		}
		prev = now;
		now = rte_rdtsc();
		/* how long the queues went unpolled at worst: the error of a TSC
		 * stamp (descheduled, or a slow write of the output) */
		if (now - prev > d->max_gap_tsc)
			d->max_gap_tsc = now - prev;
		if (now >= next_hk) {
			if (!housekeeping(d, now, &next_cal))
				break;
			next_hk = now + hk_every;
		}
	}
	return 0;
}
