/* SPDX-License-Identifier: BSD-2-Clause */
#include "tap_live.h"
#include "err_buf.h"
#include "pcapng_write.h"

#include <errno.h>
#include <net/if.h>
#include <pcap/pcap.h>
#include <poll.h>
#include <stdarg.h>
#include <sys/ioctl.h>
#include <time.h>
#include <string.h>

#include "../decoders/link.h"
#include "../analysis/out_file.h"

/* Appends to a bounded buffer; false once it no longer fits. */
static bool append(char *buf, size_t len, size_t *n, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static bool append(char *buf, size_t len, size_t *n, const char *fmt, ...)
{
	va_list ap;
	int k;
	if (*n >= len)
		return false;
	va_start(ap, fmt);
	k = vsnprintf(buf + *n, len - *n, fmt, ap);
	va_end(ap);
	if (k < 0 || (size_t)k >= len - *n)
		return false;
	*n += (size_t)k;
	return true;
}

static bool port_set(const uint8_t *ports, unsigned p)
{
	return ports[p >> 3] & (1u << (p & 7));
}

bool gs_live_build_filter(const uint8_t *ports, const char *user, char *buf, size_t len)
{
	size_t n = 0;
	/* GIOP only travels over TCP: everything else stays in the kernel */
	if (!append(buf, len, &n, "tcp"))
		return false;
	if (ports) {
		bool first = true;
		if (!append(buf, len, &n, " and ("))
			return false;
		for (unsigned p = 0; p < 65536; p++) {
			unsigned q = p;
			if (!port_set(ports, p))
				continue;
			/* runs of ports become one portrange: short programs for wide lists */
			while (q + 1 < 65536 && port_set(ports, q + 1))
				q++;
			if (!(q == p ? append(buf, len, &n, "%sport %u", first ? "" : " or ", p) :
				       append(buf, len, &n, "%sportrange %u-%u", first ? "" : " or ", p, q)))
				return false;
			first = false;
			p = q;
		}
		if (!append(buf, len, &n, ")"))
			return false;
	}
	if (user && *user && !append(buf, len, &n, " and (%s)", user))
		return false;
	return true;
}

/* Why pcap_activate refused, in words a user can act on. */
static int activate_error(pcap_t *p, int rc, const char *iface, char *err, size_t errlen)
{
	const char *why = pcap_geterr(p);
	switch (rc) {
	case PCAP_ERROR_NO_SUCH_DEVICE:
		return gs_errf(err, errlen, "no such interface '%s' ('ip link' lists them)", iface);
	case PCAP_ERROR_PERM_DENIED:
		return gs_errf(err, errlen, "no permission to capture on %s: run as root or give giopscope "
			    "CAP_NET_RAW, e.g. setcap cap_net_raw+ep (%s)", iface, why);
	case PCAP_ERROR_PROMISC_PERM_DENIED:
		return gs_errf(err, errlen, "no permission to put %s in promiscuous mode (%s)", iface, why);
	case PCAP_ERROR_IFACE_NOT_UP:
		return gs_errf(err, errlen, "interface %s is down ('ip link set %s up')", iface, iface);
	case PCAP_ERROR_CANTSET_TSTAMP_TYPE:
		return gs_errf(err, errlen, "the time stamp type of %s cannot be set", iface);
	case PCAP_ERROR_TSTAMP_PRECISION_NOTSUP:
		return gs_errf(err, errlen, "%s cannot give nanosecond time stamps", iface);
	default:
		return gs_errf(err, errlen, "cannot capture on %s: %s", iface, why && *why ? why : pcap_statustostr(rc));
	}
}

int gs_live_save(struct gs_live *l, const char *path, char *err, size_t errlen)
{
	const char *iface = l->iface;
	if (strcmp(path, "-") == 0) {
		l->dump_fp = stdout;
	} else {
		/* 0600: whole packets, payloads included, are nobody else's business */
		int e = gs_out_create(&l->dump_out, path, 0600);
		if (e != 0) {
			char why[PATH_MAX + 64];
			return gs_errf(err, errlen, "%s", gs_out_why(why, sizeof why, path, e));
		}
		l->dump_fp = l->dump_out.f;
	}
	/* pcapng with nanosecond time stamps, by our own writer: libpcap 1.10
	 * writes classic pcap only */
	int e = gs_pcapng_begin(l->dump_fp, l->dlt, (uint32_t)l->snaplen, iface);
	if (e != 0) {
		gs_out_close(&l->dump_out, false);
		l->dump_fp = NULL;
		return gs_errf(err, errlen, "cannot write %s: %s", path, strerror(e));
	}
	l->dump = true;
	return 0;
}

int gs_live_commit(struct gs_live *l, char *err, size_t errlen)
{
	int e = gs_out_commit(&l->dump_out);
	if (e != 0) {
		char why[PATH_MAX + 64];
		return gs_errf(err, errlen, "%s", gs_out_why(why, sizeof why, l->dump_out.path, e));
	}
	return 0;
}

int gs_live_open(struct gs_live *l, const struct gs_live_opts *o, char *err, size_t errlen)
{
	char ebuf[PCAP_ERRBUF_SIZE];
	struct bpf_program prog;
	pcap_t *p;
	int rc;

	memset(l, 0, sizeof *l);
	l->fd = -1;
	l->iface = o->iface;
	l->batch_ms = o->batch_ms;
	if (!gs_live_build_filter(o->ports, o->filter, l->filter, sizeof l->filter))
		return gs_errf(err, errlen, "the capture filter is longer than %zu bytes", sizeof l->filter - 1);
	ebuf[0] = '\0';
	p = pcap_create(o->iface, ebuf);
	if (!p)
		return gs_errf(err, errlen, "cannot capture on %s: %s", o->iface, ebuf);
	l->p = p;
	pcap_set_snaplen(p, o->snaplen);
	pcap_set_promisc(p, o->promisc);
	pcap_set_buffer_size(p, o->buffer_size);
	if (o->batch_ms > 0) {
		/* TPACKET_V3: packets packed by size into blocks that reach us when
		 * full or after batch_ms; one wake-up per block, not per packet */
		pcap_set_immediate_mode(p, 0);
		pcap_set_timeout(p, o->batch_ms);
	} else {
		/* each packet as it arrives: a call is written the moment it ends */
		pcap_set_immediate_mode(p, 1);
	}
	/* nanoseconds end to end; a source that only has microseconds is still usable */
	rc = pcap_set_tstamp_precision(p, PCAP_TSTAMP_PRECISION_NANO);
	if (rc != 0 && rc != PCAP_ERROR_TSTAMP_PRECISION_NOTSUP)
		goto activate_failed;
	if (o->tstamp_type >= 0) {
		const char *name = pcap_tstamp_type_val_to_name(o->tstamp_type);
		rc = pcap_set_tstamp_type(p, o->tstamp_type);
		if (rc == PCAP_WARNING_TSTAMP_TYPE_NOTSUP || rc == PCAP_ERROR_CANTSET_TSTAMP_TYPE) {
			gs_errf(err, errlen, "%s does not offer time stamp type '%s' (giopscope live -i %s "
			     "--list-tstamp-types)", o->iface, name ? name : "?", o->iface);
			goto out;
		}
	}
	rc = pcap_activate(p);
	if (rc == PCAP_WARNING_TSTAMP_TYPE_NOTSUP) {
		/* the user asked for this type: quietly using another would mislead */
		gs_errf(err, errlen, "%s does not offer the time stamp type asked for (giopscope live -i %s "
		     "--list-tstamp-types)", o->iface, o->iface);
		goto out;
	}
	if (rc < 0)
		goto activate_failed;
	if (rc == PCAP_WARNING_PROMISC_NOTSUP)
		fprintf(stderr, "giopscope live: %s cannot be put in promiscuous mode; capturing without it\n",
			o->iface);
	l->dlt = pcap_datalink(p);
	if (!gs_link_supported(l->dlt)) {
		const char *name = pcap_datalink_val_to_name(l->dlt);
		gs_errf(err, errlen, "%s has link type %d (%s); giopscope reads Ethernet, 802.1Q, Linux "
		     "SLL/SLL2, BSD loopback and raw IP", o->iface, l->dlt, name ? name : "unknown");
		goto out;
	}
	l->nano = pcap_get_tstamp_precision(p) == PCAP_TSTAMP_PRECISION_NANO;
	l->snaplen = pcap_snapshot(p);
	if (pcap_compile(p, &prog, l->filter, 1, PCAP_NETMASK_UNKNOWN) != 0) {
		gs_errf(err, errlen, "bad capture filter '%s': %s", l->filter, pcap_geterr(p));
		goto out;
	}
	/* packets the ring took before the kernel filter was in place are
	 * filtered by libpcap in user space: none slips through */
	rc = pcap_setfilter(p, &prog);
	pcap_freecode(&prog);
	if (rc != 0) {
		gs_errf(err, errlen, "cannot install the capture filter '%s': %s", l->filter, pcap_geterr(p));
		goto out;
	}
	/* non-blocking plus poll: the loop ticks and sees a stop request even
	 * when nothing arrives, and never spins */
	if (pcap_setnonblock(p, 1, ebuf) != 0) {
		gs_errf(err, errlen, "cannot capture on %s: %s", o->iface, ebuf);
		goto out;
	}
	l->fd = pcap_get_selectable_fd(p);
	if (l->fd < 0) {
		gs_errf(err, errlen, "cannot capture on %s: no descriptor to wait on", o->iface);
		goto out;
	}
	/* -w is opened by gs_live_save, after -Z has given up root */
	return 0;

activate_failed:
	activate_error(p, rc, o->iface, err, errlen);
out:
	pcap_close(p);
	l->p = NULL;
	return 2;
}

int gs_live_wait(struct gs_live *l, int timeout_ms)
{
	struct pollfd pfd = { .fd = l->fd, .events = POLLIN };
	int n = poll(&pfd, 1, timeout_ms);
	/* POLLERR: the kernel says the interface went down (ENETDOWN) or away;
	 * libpcap takes a down interface as something that may pass, so the
	 * caller checks the interface itself */
	if (n > 0 && (pfd.revents & (POLLERR | POLLHUP | POLLNVAL)))
		l->sock_error = true;
	return n > 0;
}

/* how long a down interface is watched for its deletion: 10 x 10 ms */
#define IFACE_GONE_CHECKS 10
#define IFACE_GONE_STEP_NS 10000000L

int gs_live_check_iface(struct gs_live *l, char *err, size_t errlen)
{
	struct ifreq ifr;
	l->sock_error = false;
	if (!l->p || strcmp(l->iface, "any") == 0 || strlen(l->iface) >= sizeof ifr.ifr_name)
		return 0;
	memset(&ifr, 0, sizeof ifr);
	memcpy(ifr.ifr_name, l->iface, strlen(l->iface));
	if (ioctl(pcap_fileno(l->p), SIOCGIFFLAGS, &ifr) != 0) {
		if (errno == ENODEV || errno == ENXIO)
			return gs_errf(err, errlen, "interface %s disappeared during the capture", l->iface);
		return 0; /* cannot tell: the capture goes on, libpcap reports real failures */
	}
	/* a capture that silently sees nothing is worse than one that stops */
	if (!(ifr.ifr_flags & IFF_UP)) {
		/* deleting an interface takes it down first and unregisters it
		 * right after: a short look tells a deletion from a plain down */
		for (int i = 0; i < IFACE_GONE_CHECKS; i++) {
			struct timespec ts = { 0, IFACE_GONE_STEP_NS };
			nanosleep(&ts, NULL);
			if (if_nametoindex(l->iface) == 0)
				return gs_errf(err, errlen, "interface %s disappeared during the capture", l->iface);
		}
		return gs_errf(err, errlen, "interface %s went down during the capture", l->iface);
	}
	return 0;
}

static void on_packet(u_char *user, const struct pcap_pkthdr *h, const u_char *bytes)
{
	struct gs_live *l = (struct gs_live *)(void *)user;
	int64_t ts = (int64_t)h->ts.tv_sec * 1000000000 +
		     (int64_t)h->ts.tv_usec * (l->nano ? 1 : 1000);
	if (l->dump && gs_pcapng_packet(l->dump_fp, ts, bytes, h->caplen, h->len) != 0)
		l->dump_failed = true;
	l->packets++;
	l->last_ts = ts;
	l->fn(l->arg, ts, bytes, h->caplen, h->len);
}

/* libpcap's words for a socket error, and what became of the interface. */
static void describe_error(struct gs_live *l, char *err, size_t errlen)
{
	const char *why = pcap_geterr(l->p);
	if (l->iface && strcmp(l->iface, "any") != 0 && if_nametoindex(l->iface) == 0)
		gs_errf(err, errlen, "interface %s disappeared during the capture (%s)", l->iface, why);
	else if (strstr(why, "went down"))
		gs_errf(err, errlen, "interface %s went down during the capture (%s)", l->iface, why);
	else
		gs_errf(err, errlen, "capture on %s failed: %s", l->iface, why);
}

int gs_live_dispatch(struct gs_live *l, int max, gs_live_fn fn, void *arg, char *err, size_t errlen)
{
	int n;
	l->fn = fn;
	l->arg = arg;
	n = pcap_dispatch(l->p, max, on_packet, (u_char *)l);
	if (n == PCAP_ERROR) {
		describe_error(l, err, errlen);
		return -1;
	}
	if (n == PCAP_ERROR_BREAK)
		return -2;
	return n;
}

void gs_live_break(struct gs_live *l)
{
	pcap_breakloop(l->p);
}

void gs_live_update_drops(struct gs_live *l)
{
	struct pcap_stat st;
	if (l->p && pcap_stats(l->p, &st) == 0) {
		l->drops.kernel = st.ps_drop;
		l->drops.iface = st.ps_ifdrop;
	}
}

int gs_live_flush(struct gs_live *l, char *err, size_t errlen)
{
	if (l->dump && (fflush(l->dump_fp) != 0 || l->dump_failed))
		return gs_errf(err, errlen, "writing the saved capture failed: %s", strerror(errno));
	return 0;
}

int gs_live_close(struct gs_live *l, char *err, size_t errlen)
{
	int status = 0;
	if (l->dump) {
		status = gs_live_flush(l, err, errlen);
		if (status == 0 && ferror(l->dump_fp))
			status = gs_errf(err, errlen, "writing the saved capture failed");
		/* committed: closed where it is; not yet (a failed set-up): removed */
		gs_out_close(&l->dump_out, false);
		l->dump = false;
		l->dump_fp = NULL;
	}
	if (l->p)
		pcap_close(l->p);
	l->p = NULL;
	l->fd = -1;
	return status;
}

int gs_live_list_tstamp_types(const char *iface, FILE *out, char *err, size_t errlen)
{
	char ebuf[PCAP_ERRBUF_SIZE];
	pcap_t *p;
	int *types = NULL, n;
	/* pcap_create accepts any name; say so now rather than list nothing */
	if (strcmp(iface, "any") != 0 && if_nametoindex(iface) == 0)
		return gs_errf(err, errlen, "no such interface '%s' ('ip link' lists them)", iface);
	ebuf[0] = '\0';
	p = pcap_create(iface, ebuf);
	if (!p)
		return gs_errf(err, errlen, "cannot capture on %s: %s", iface, ebuf);
	n = pcap_list_tstamp_types(p, &types);
	if (n < 0) {
		gs_errf(err, errlen, "cannot list the time stamp types of %s: %s", iface, pcap_geterr(p));
		pcap_close(p);
		return 2;
	}
	if (n == 0) {
		fprintf(out, "%s: the time stamp type cannot be chosen; the host stamps each packet "
			"(nanoseconds)\n", iface);
	} else {
		fprintf(out, "time stamp types of %s (--tstamp-type NAME):\n", iface);
		for (int i = 0; i < n; i++) {
			const char *name = pcap_tstamp_type_val_to_name(types[i]);
			const char *desc = pcap_tstamp_type_val_to_description(types[i]);
			fprintf(out, "  %-22s %s\n", name ? name : "?", desc ? desc : "");
		}
	}
	pcap_free_tstamp_types(types);
	pcap_close(p);
	return 0;
}
