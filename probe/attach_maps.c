/* SPDX-License-Identifier: BSD-2-Clause */
#include "attach_maps.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

bool gs_maps_find_lib(uint32_t pid, const char *lib, char *path, size_t len, char *shown, size_t shown_len)
{
	char maps[64], line[4352];
	FILE *f;
	bool found = false;
	snprintf(maps, sizeof maps, "/proc/%u/maps", pid);
	f = fopen(maps, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof line, f)) {
		char *file = strchr(line, '/'), *base;
		uint64_t start, end;
		if (!file)
			continue;
		file[strcspn(file, "\n")] = '\0';
		base = strrchr(file, '/') + 1;
		if (strncmp(base, lib, strlen(lib)) != 0 || sscanf(line, "%" SCNx64 "-%" SCNx64, &start, &end) != 2)
			continue;
		/* map_files names its entries "%lx-%lx" (no padding), not as maps
		 * prints the range; opening one needs CAP_SYS_ADMIN, which attach
		 * holds until everything is attached */
		found = (size_t)snprintf(path, len, "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, pid, start, end) < len;
		if (found && shown)
			found = (size_t)snprintf(shown, shown_len, "%s", file) < shown_len;
	}
	fclose(f);
	return found;
}
