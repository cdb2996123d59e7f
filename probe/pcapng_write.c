/* SPDX-License-Identifier: BSD-2-Clause */
#include "pcapng_write.h"

#include <errno.h>
#include <string.h>

/* Blocks are written in the host's byte order, which the section's byte-order
 * magic declares (pcapng readers swap as needed). */
static int put(FILE *f, const void *p, size_t n)
{
	return fwrite(p, 1, n, f) == n ? 0 : -1;
}

static int u32(FILE *f, uint32_t v) { return put(f, &v, 4); }
static int u16(FILE *f, uint16_t v) { return put(f, &v, 2); }

static int pad(FILE *f, size_t n)
{
	static const uint8_t zero[4];
	return (n & 3) ? put(f, zero, 4 - (n & 3)) : 0;
}

static size_t padded(size_t n) { return (n + 3) & ~(size_t)3; }

/* the errno value of the failed write (fwrite sets it; EIO when it did not) */
static int failed(void) { return errno ? errno : EIO; }

int gs_pcapng_begin(FILE *f, int linktype, uint32_t snaplen, const char *ifname)
{
	static const char appl[] = "giopscope";
	size_t nlen = ifname ? strlen(ifname) : 0, alen = sizeof appl - 1;
	uint32_t shb_len, idb_len;
	uint64_t section = UINT64_MAX; /* length not known */
	errno = 0;
	if (nlen > 255)
		nlen = 255;
	/* SHB: type, len, magic, version 1.0, section length, shb_userappl, end */
	shb_len = 28 + 4 + (uint32_t)padded(alen) + 4;
	if (u32(f, 0x0A0D0D0A) || u32(f, shb_len) || u32(f, 0x1A2B3C4D) || u16(f, 1) || u16(f, 0) ||
	    put(f, &section, 8) || u16(f, 4) || u16(f, (uint16_t)alen) || put(f, appl, alen) ||
	    pad(f, alen) || u32(f, 0) || u32(f, shb_len))
		return failed();
	/* IDB: type, len, link type, reserved, snaplen, if_name, if_tsresol = 9 (ns), end */
	idb_len = 20 + (nlen ? 4 + (uint32_t)padded(nlen) : 0) + 8 + 4;
	if (u32(f, 1) || u32(f, idb_len) || u16(f, (uint16_t)linktype) || u16(f, 0) || u32(f, snaplen))
		return failed();
	if (nlen && (u16(f, 2) || u16(f, (uint16_t)nlen) || put(f, ifname, nlen) || pad(f, nlen)))
		return failed();
	{
		const uint8_t tsresol[4] = { 9, 0, 0, 0 };
		if (u16(f, 9) || u16(f, 1) || put(f, tsresol, 4) || u32(f, 0) || u32(f, idb_len))
			return failed();
	}
	return 0;
}

int gs_pcapng_packet(FILE *f, int64_t ts_ns, const uint8_t *data, uint32_t caplen, uint32_t wirelen)
{
	uint64_t ts = ts_ns < 0 ? 0 : (uint64_t)ts_ns;
	uint32_t len = 32 + (uint32_t)padded(caplen);
	errno = 0;
	if (u32(f, 6) || u32(f, len) || u32(f, 0) || u32(f, (uint32_t)(ts >> 32)) || u32(f, (uint32_t)ts) ||
	    u32(f, caplen) || u32(f, wirelen) || put(f, data, caplen) || pad(f, caplen) || u32(f, len))
		return failed();
	return 0;
}
