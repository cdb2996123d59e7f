/* SPDX-License-Identifier: BSD-2-Clause */
/* Ports and RX queues: which ports, how many queues, the link type and the
 * time stamp source of each, set-up and start, and the counters. */
#include <errno.h>
#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_bus.h>
#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_devargs.h>
#include <rte_errno.h>
#include <rte_kvargs.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include "../../decoders/link.h"
#include "../opts.h"
#include "dpdk.h"

#define POOL_CACHE 256

/* A receive-side-scaling key whose hash is the same for both directions of a
 * connection (0x6d5a repeated): a connection's two halves meet in one queue,
 * so they reach the engine in the order the port saw them. */
static const uint8_t symmetric_rss_key[40] = {
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
};

const char *gs_dpdk_ts_name(const struct gs_dpdk_port *p)
{
	switch (p->ts) {
	case GS_TS_PCAP:
		return p->finite ? "the capture file's (net_pcap, microseconds)" :
				   "the kernel's, through libpcap (net_pcap, microseconds)";
	case GS_TS_NIC: return "the NIC's (mbuf timestamp field, device clock mapped to CLOCK_REALTIME)";
	case GS_TS_TSC: break;
	}
	return "TSC at receive (calibrated against CLOCK_REALTIME)";
}

static int fail(const struct gs_dpdk *d, const char *what, int err)
{
	const char *why = gs_eal_log_reason(&d->eal);
	fprintf(stderr, "giopscope dpdk: %s: %s%s%s%s\n", what, strerror(err), why ? " (DPDK: " : "",
		why ? why : "", why ? ")" : "");
	return 2;
}

/* ------------------------------------------------------------------ choosing */

static int add_port(struct gs_dpdk *d, uint16_t id)
{
	struct gs_dpdk_port *p;
	for (unsigned i = 0; i < d->nports; i++)
		if (d->port[i].id == id)
			return 0;
	if (d->nports >= GS_DPDK_MAX_PORTS) {
		fprintf(stderr, "giopscope dpdk: more than %d ports\n", GS_DPDK_MAX_PORTS);
		return 2;
	}
	p = &d->port[d->nports++];
	memset(p, 0, sizeof *p);
	p->id = id;
	if (rte_eth_dev_get_name_by_port(id, p->name) != 0)
		snprintf(p->name, sizeof p->name, "port%u", id);
	return 0;
}

struct files_arg {
	struct gs_dpdk_port *p;
	int err;
};

static int on_rx_pcap(const char *key, const char *value, void *opaque)
{
	struct files_arg *a = opaque;
	(void)key;
	if (!value || a->p->nfiles >= GS_DPDK_MAX_QUEUES)
		return 0;
	if (!(a->p->files[a->p->nfiles] = strdup(value))) {
		a->err = ENOMEM;
		return -1;
	}
	a->p->nfiles++;
	return 0;
}

/* What the devargs of a net_pcap port say: the files it replays (one RX
 * queue each), whether it loops over them (infinite_rx), and a live
 * interface instead of files. */
static void pcap_devargs(struct gs_dpdk_port *p, const struct rte_eth_dev_info *info)
{
	const struct rte_devargs *da = info->device ? rte_dev_devargs(info->device) : NULL;
	struct rte_kvargs *kv;
	struct files_arg a = { p, 0 };
	const char *inf;
	if (!da || !da->args || !(kv = rte_kvargs_parse(da->args, NULL)))
		return;
	rte_kvargs_process(kv, "rx_pcap", on_rx_pcap, &a);
	inf = rte_kvargs_get(kv, "infinite_rx");
	p->infinite_rx = inf && atoi(inf) > 0;
	p->finite = p->nfiles > 0 && !p->infinite_rx && rte_kvargs_count(kv, "rx_iface") == 0 &&
		    rte_kvargs_count(kv, "rx_iface_in") == 0 && rte_kvargs_count(kv, "iface") == 0;
	rte_kvargs_free(kv);
}

/* net_pcap hands over a file's bytes whatever its link type: the file says
 * what they are (Linux cooked, raw IP, ...).  Also counts its packets. */
static int file_linktype(struct gs_dpdk_port *p, int q)
{
	char eb[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *data;
	pcap_t *pc = pcap_open_offline(p->files[q], eb);
	if (!pc) {
		fprintf(stderr, "giopscope dpdk: %s: %s\n", p->name, eb);
		return 2;
	}
	p->dlt[q] = pcap_datalink(pc);
	if (!gs_link_supported(p->dlt[q])) {
		const char *n = pcap_datalink_val_to_name(p->dlt[q]);
		fprintf(stderr, "giopscope dpdk: %s: %s: unsupported link type %d (%s)\n", p->name,
			p->files[q], p->dlt[q], n ? n : "unknown");
		pcap_close(pc);
		return 2;
	}
	if (pcap_snapshot(pc) < 65535)
		/* net_pcap hands over the captured bytes as the whole frame: the
		 * original lengths are lost, and with them what was cut */
		fprintf(stderr, "giopscope dpdk: %s: %s was captured with a snapshot length of %d bytes; "
			"net_pcap does not pass the frames' original lengths, so messages cut by it are "
			"not reported as `giopscope read` reports them\n", p->name, p->files[q], pcap_snapshot(pc));
	if (p->infinite_rx)
		while (pcap_next_ex(pc, &h, &data) == 1)
			p->file_packets++;
	pcap_close(pc);
	return 0;
}

int gs_dpdk_ports_find(struct gs_dpdk *d)
{
	uint16_t id;
	int rc;
	if (rte_eth_dev_count_avail() == 0) {
		const char *why = gs_eal_log_reason(&d->eal);
		/* asked for none: say how; asked for some: say why they failed */
		fprintf(stderr, "giopscope dpdk: no DPDK port%s%s%s%s\n",
			d->eal.user_devices ? "" : ": give one, e.g. --vdev net_pcap0,rx_pcap=FILE or -a PCI_ADDRESS",
			why ? " (" : "", why ? why : "", why ? ")" : "");
		return 2;
	}
	if (d->opt.nifaces == 0) {
		RTE_ETH_FOREACH_DEV(id)
			if ((rc = add_port(d, id)) != 0)
				return rc;
	}
	for (int i = 0; i < d->opt.nifaces; i++) {
		const char *n = d->opt.ifaces[i];
		uint64_t v;
		if (rte_eth_dev_get_port_by_name(n, &id) != 0) {
			if (!gs_parse_u64(n, 0, RTE_MAX_ETHPORTS - 1, false, &v) ||
			    !rte_eth_dev_is_valid_port((uint16_t)v)) {
				fprintf(stderr, "giopscope dpdk: no DPDK port '%s'\n", n);
				return 2;
			}
			id = (uint16_t)v;
		}
		if ((rc = add_port(d, id)) != 0)
			return rc;
	}
	for (unsigned i = 0; i < d->nports; i++) {
		struct gs_dpdk_port *p = &d->port[i];
		struct rte_eth_dev_info info;
		if ((rc = rte_eth_dev_info_get(p->id, &info)) != 0)
			return fail(d, p->name, -rc);
		snprintf(p->driver, sizeof p->driver, "%s", info.driver_name ? info.driver_name : "?");
		for (int q = 0; q < GS_DPDK_MAX_QUEUES; q++)
			p->dlt[q] = DLT_EN10MB;
		if (strcmp(p->driver, "net_pcap") == 0)
			pcap_devargs(p, &info);
		if (d->opt.rxq)
			p->nrxq = d->opt.rxq;
		else if (p->nfiles > 0)
			p->nrxq = (uint16_t)p->nfiles;  /* every file is a queue */
		else
			p->nrxq = 1;
		if (p->nrxq > info.max_rx_queues) {
			fprintf(stderr, "giopscope dpdk: %s has %u RX queue%s, not %u\n", p->name,
				info.max_rx_queues, info.max_rx_queues == 1 ? "" : "s", p->nrxq);
			return 2;
		}
		for (int q = 0; q < p->nfiles && q < p->nrxq; q++)
			if ((rc = file_linktype(p, q)) != 0)
				return rc;
		/* net_pcap fills the timestamp field from libpcap's header,
		 * except when it loops over frames it holds (infinite_rx) */
		p->ts = strcmp(p->driver, "net_pcap") == 0 && !p->infinite_rx ? GS_TS_PCAP : GS_TS_TSC;
	}
	/* one engine, one clock: a file's old time stamps and live ones cannot mix */
	for (unsigned i = 1; i < d->nports; i++)
		if (d->port[i].finite != d->port[0].finite) {
			fprintf(stderr, "giopscope dpdk: %s replays a file and %s does not: their clocks "
				"differ, capture them separately\n",
				d->port[0].finite ? d->port[0].name : d->port[i].name,
				d->port[0].finite ? d->port[i].name : d->port[0].name);
			return 2;
		}
	return 0;
}

/* ------------------------------------------------------------------ set-up */

static int configure(struct gs_dpdk *d, struct gs_dpdk_port *p)
{
	struct rte_eth_dev_info info;
	struct rte_eth_conf conf;
	uint16_t nrxd = d->opt.rxd, ntxd = 64, ntx;
	int rc;
	char what[128];

	if ((rc = rte_eth_dev_info_get(p->id, &info)) != 0)
		return fail(d, p->name, -rc);
	memset(&conf, 0, sizeof conf);
	if (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_TIMESTAMP) {
		conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_TIMESTAMP;
		p->ts = GS_TS_NIC;  /* if its clock can be read: checked at start */
	}
	if (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_SCATTER)
		conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_SCATTER;  /* frames larger than an mbuf */
	if (p->nrxq > 1 && info.flow_type_rss_offloads) {
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_hf = (RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP) & info.flow_type_rss_offloads;
		if (info.hash_key_size == sizeof symmetric_rss_key) {
			conf.rx_adv_conf.rss_conf.rss_key = (uint8_t *)(uintptr_t)symmetric_rss_key;
			conf.rx_adv_conf.rss_conf.rss_key_len = sizeof symmetric_rss_key;
		}
	}
	/* a TX queue is never used, but some drivers want one to start */
	ntx = info.max_tx_queues > 0 ? 1 : 0;
	gs_eal_log_mark(&d->eal);
	/* drivers and their libraries (libbpf, libxdp) chatter on stderr */
	gs_eal_mute(&d->eal);
	snprintf(what, sizeof what, "%s will not start: configure", p->name);
	rc = rte_eth_dev_configure(p->id, p->nrxq, ntx, &conf);
	if (rc == 0) {
		p->configured = true;
		/* within what the driver accepts */
		if (rte_eth_dev_adjust_nb_rx_tx_desc(p->id, &nrxd, &ntxd) != 0)
			nrxd = d->opt.rxd;
	}
	for (uint16_t q = 0; rc == 0 && q < p->nrxq; q++) {
		struct rte_eth_rxconf rxc = info.default_rxconf;
		rxc.offloads = conf.rxmode.offloads;
		snprintf(what, sizeof what, "%s will not start: RX queue %u", p->name, q);
		rc = rte_eth_rx_queue_setup(p->id, q, nrxd, (unsigned)rte_eth_dev_socket_id(p->id), &rxc, d->pool);
		if (rc == 0)
			d->rxq[d->nrxq++] = (struct gs_dpdk_rxq){
				.port = (uint16_t)(p - d->port), .port_id = p->id, .queue = q, .dlt = p->dlt[q],
			};
	}
	if (rc == 0 && ntx) {
		snprintf(what, sizeof what, "%s will not start: TX queue", p->name);
		rc = rte_eth_tx_queue_setup(p->id, 0, ntxd, (unsigned)rte_eth_dev_socket_id(p->id), NULL);
	}
	gs_eal_unmute(&d->eal, NULL, 0);
	return rc ? fail(d, what, -rc) : 0;
}

int gs_dpdk_ports_setup(struct gs_dpdk *d)
{
	uint64_t n = 0, queues = 0, held = 0;
	uint32_t room = d->opt.mbuf_size ? d->opt.mbuf_size : RTE_MBUF_DEFAULT_BUF_SIZE;
	int rc;

	for (unsigned i = 0; i < d->nports; i++) {
		queues += d->port[i].nrxq;
		if (d->port[i].infinite_rx)
			held += d->port[i].file_packets;  /* the PMD keeps a copy of each */
	}
	/* every descriptor filled, a burst in our hands, the per-lcore caches */
	n = d->opt.mbufs ? d->opt.mbufs : queues * (d->opt.rxd + 2 * GS_DPDK_MAX_BURST) + 4 * POOL_CACHE + 4096;
	n += held;
	if (n > UINT32_MAX - 1) {
		fprintf(stderr, "giopscope dpdk: too many mbufs needed (%llu)\n", (unsigned long long)n);
		return 2;
	}
	gs_eal_log_mark(&d->eal);
	d->pool = rte_pktmbuf_pool_create("giopscope_rx", (unsigned)n, POOL_CACHE, 0, (uint16_t)room,
					  (int)rte_socket_id());
	if (!d->pool) {
		const char *why = gs_eal_log_reason(&d->eal);
		fprintf(stderr, "giopscope dpdk: cannot allocate %llu mbufs of %u bytes: %s%s%s\n",
			(unsigned long long)n, room, rte_strerror(rte_errno),
			why ? "; " : " (more memory: -m MB, or huge pages)", why ? why : "");
		return 2;
	}
	for (unsigned i = 0; i < d->nports; i++)
		if ((rc = configure(d, &d->port[i])) != 0)
			return rc;
	return 0;
}

/* Maps a NIC's clock onto the wall clock: two readings 20 ms apart give its
 * rate; the loop refines it once a second. */
static bool calibrate_nic(struct gs_dpdk_port *p)
{
	uint64_t c0, c1;
	int64_t w0, w1;
	struct timespec ts = { 0, 20 * 1000000 };
	if (rte_eth_read_clock(p->id, &c0) != 0)
		return false;
	w0 = gs_realtime_ns();
	nanosleep(&ts, NULL);
	if (rte_eth_read_clock(p->id, &c1) != 0)
		return false;
	w1 = gs_realtime_ns();
	if (c1 <= c0 || w1 <= w0)
		return false;
	gs_clockmap_init(&p->nic, c1, w1, (double)(c1 - c0) * 1e9 / (double)(w1 - w0));
	return true;
}

/* The TSC against CLOCK_REALTIME over 20 ms: on a VM the EAL's nominal rate
 * can be off by milliseconds a second; this is within a few microseconds
 * until the loop's once-a-second updates take over. */
static void calibrate_tsc(struct gs_dpdk *d)
{
	struct timespec nap = { 0, 20 * 1000000 };
	uint64_t t0 = rte_rdtsc(), t1;
	int64_t w0 = gs_realtime_ns(), w1;
	double hz = (double)d->tsc_hz;
	nanosleep(&nap, NULL);
	t1 = rte_rdtsc();
	w1 = gs_realtime_ns();
	if (t1 > t0 && w1 > w0 + 10 * 1000000) {
		double measured = (double)(t1 - t0) * 1e9 / (double)(w1 - w0);
		/* a wild measurement (the thread was descheduled between two
		 * readings) is worse than the nominal rate */
		if (measured > hz * 0.98 && measured < hz * 1.02)
			hz = measured;
	}
	gs_clockmap_init(&d->tsc, t1, w1, hz);
}

int gs_dpdk_ports_start(struct gs_dpdk *d)
{
	int rc;
	char what[128];
	for (unsigned i = 0; i < d->nports; i++) {
		struct gs_dpdk_port *p = &d->port[i];
		snprintf(what, sizeof what, "%s will not start", p->name);
		gs_eal_log_mark(&d->eal);
		gs_eal_mute(&d->eal);
		rc = rte_eth_dev_start(p->id);
		if (rc == 0) {
			p->started = true;
			/* a mirror port carries other hosts' frames; failure is
			 * fine (virtual devices see everything anyway) */
			rte_eth_promiscuous_enable(p->id);
			rte_eth_stats_get(p->id, &p->base);
		}
		gs_eal_unmute(&d->eal, NULL, 0);
		if (rc != 0)
			return fail(d, what, -rc);
	}
	/* the time stamp field is registered by the drivers that fill it (at
	 * probe, configure or start): look for it only now */
	d->ts_offset = rte_mbuf_dynfield_lookup(RTE_MBUF_DYNFIELD_TIMESTAMP_NAME, NULL);
	rc = rte_mbuf_dynflag_lookup(RTE_MBUF_DYNFLAG_RX_TIMESTAMP_NAME, NULL);
	d->ts_flag = rc >= 0 ? 1ULL << rc : 0;
	for (unsigned i = 0; i < d->nports; i++) {
		struct gs_dpdk_port *p = &d->port[i];
		if (p->ts == GS_TS_NIC && (d->ts_offset < 0 || !d->ts_flag || !calibrate_nic(p)))
			p->ts = GS_TS_TSC;  /* stamps we could not turn into wall-clock time */
		if (p->ts == GS_TS_PCAP && (d->ts_offset < 0 || !d->ts_flag))
			p->ts = GS_TS_TSC;
	}
	d->tsc_hz = rte_get_tsc_hz();
	calibrate_tsc(d);
	return 0;
}

/* ------------------------------------------------------------------ counters */

static uint64_t less(uint64_t now, uint64_t base)
{
	return now >= base ? now - base : 0;
}

void gs_dpdk_ports_stats(struct gs_dpdk *d)
{
	struct gs_drops dr = { 0, 0, 0, "rx_nombuf" };
	for (unsigned i = 0; i < d->nports; i++) {
		struct gs_dpdk_port *p = &d->port[i];
		struct rte_eth_stats s;
		if (!p->started || rte_eth_stats_get(p->id, &s) != 0)
			continue;
		p->last.ipackets = less(s.ipackets, p->base.ipackets);
		p->last.imissed = less(s.imissed, p->base.imissed);
		p->last.ierrors = less(s.ierrors, p->base.ierrors);
		p->last.rx_nombuf = less(s.rx_nombuf, p->base.rx_nombuf);
		p->last.ibytes = less(s.ibytes, p->base.ibytes);
		/* packets the port could not hand over are lost to the decoder */
		dr.iface += p->last.imissed + p->last.ierrors;
		dr.other += p->last.rx_nombuf;
	}
	d->drops = dr;
}

void gs_dpdk_ports_close(struct gs_dpdk *d)
{
	gs_eal_mute(&d->eal);
	for (unsigned i = 0; i < d->nports; i++) {
		struct gs_dpdk_port *p = &d->port[i];
		if (p->started)
			rte_eth_dev_stop(p->id);
		if (p->configured)
			rte_eth_dev_close(p->id);
		p->started = p->configured = false;
		for (int q = 0; q < p->nfiles; q++)
			free(p->files[q]);
		p->nfiles = 0;
	}
	if (d->pool)
		rte_mempool_free(d->pool);
	d->pool = NULL;
	gs_eal_unmute(&d->eal, NULL, 0);
}
