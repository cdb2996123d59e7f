#include "opts.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool gs_parse_u64(const char *s, uint64_t min, uint64_t max, bool size, uint64_t *out)
{
	char *end;
	unsigned long long v;
	uint64_t mult = 1;
	if (!s || !isdigit((unsigned char)*s))
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return false;
	if (size && *end) {
		switch (tolower((unsigned char)*end)) {
		case 'k': mult = 1ull << 10; break;
		case 'm': mult = 1ull << 20; break;
		case 'g': mult = 1ull << 30; break;
		default: return false;
		}
		end++;
		if (*end == 'b' || *end == 'B')
			end++;
	}
	if (*end)
		return false;
	if (v > UINT64_MAX / mult)
		return false;
	v *= mult;
	if (v < min || v > max)
		return false;
	*out = v;
	return true;
}

bool gs_parse_seconds(const char *s, int64_t max_ns, int64_t *out)
{
	char *end;
	unsigned long long whole;
	int64_t ns = 0, scale = 100000000;
	if (!s || !isdigit((unsigned char)*s))
		return false;
	errno = 0;
	whole = strtoull(s, &end, 10);
	if (errno || whole > (unsigned long long)(max_ns / 1000000000))
		return false;
	if (*end == '.') {
		end++;
		if (!isdigit((unsigned char)*end))
			return false;
		for (; isdigit((unsigned char)*end); end++) {
			ns += (*end - '0') * scale;
			scale /= 10;
		}
	}
	if (*end)
		return false;
	ns += (int64_t)whole * 1000000000;
	if (ns > max_ns)
		return false;
	*out = ns;
	return true;
}

bool gs_parse_ports(const char *s, uint8_t bitmap[8192])
{
	const char *p = s;
	memset(bitmap, 0, 8192);
	if (!s || !*s)
		return false;
	for (;;) {
		char *end;
		unsigned long a, b;
		if (!isdigit((unsigned char)*p))
			return false;
		errno = 0;
		a = strtoul(p, &end, 10);
		if (errno || a > 65535)
			return false;
		b = a;
		p = end;
		if (*p == '-') {
			p++;
			if (!isdigit((unsigned char)*p))
				return false;
			b = strtoul(p, &end, 10);
			if (errno || b > 65535 || b < a)
				return false;
			p = end;
		}
		for (unsigned long port = a; port <= b; port++)
			bitmap[port >> 3] |= (uint8_t)(1u << (port & 7));
		if (*p == '\0')
			return true;
		if (*p != ',')
			return false;
		p++;
	}
}

bool gs_same_terminal(FILE *out)
{
	struct stat a, b;
	int fd = out ? fileno(out) : -1;
	if (fd < 0 || !isatty(fd) || !isatty(STDERR_FILENO))
		return false;
	if (fstat(fd, &a) != 0 || fstat(STDERR_FILENO, &b) != 0)
		return false;
	return a.st_rdev == b.st_rdev;
}
