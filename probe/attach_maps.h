/* SPDX-License-Identifier: BSD-2-Clause */
/* The shared library a process maps, named so that this process can open it
 * whatever mount namespace or root either of them lives in: uprobes (--orb,
 * the TLS probes) attach by path, and libbpf reads the ELF at that path for
 * the symbols' offsets. */
#ifndef GS_ATTACH_MAPS_H
#define GS_ATTACH_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The first file mapped by `pid` (in /proc/PID/maps) whose name starts with
 * `lib`: `path` is /proc/PID/map_files/START-END, a link to that very file
 * that resolves from any namespace (the path in maps is the target's view: in
 * a container or a chroot it is not ours, and /proc/PID/root + it is wrong
 * as soon as the target's root is not the root of its mount namespace);
 * `shown` (may be NULL) the path as maps names it, for messages.  False when
 * no such file is mapped or a name does not fit. */
bool gs_maps_find_lib(uint32_t pid, const char *lib, char *path, size_t len, char *shown, size_t shown_len);

#endif
