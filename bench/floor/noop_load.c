/* SPDX-License-Identifier: BSD-2-Clause */
/* noop_load OBJ PREFIX: load OBJ's programs whose section starts with PREFIX
 * ("tracepoint/" or "raw_tp/"), attach them, print "attached", hold them until
 * SIGINT/SIGTERM (the links go with the process). bench/syscall_floor.sh. */
#include <bpf/libbpf.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop;
static void on_sig(int s) { (void)s; stop = 1; }

int main(int argc, char **argv)
{
	struct bpf_object *o;
	struct bpf_program *p;
	if (argc != 3) {
		fputs("usage: noop_load OBJ SECTION-PREFIX\n", stderr);
		return 2;
	}
	o = bpf_object__open_file(argv[1], NULL);
	if (!o) {
		perror("noop_load: open");
		return 1;
	}
	bpf_object__for_each_program(p, o)
		bpf_program__set_autoload(p, strncmp(bpf_program__section_name(p), argv[2], strlen(argv[2])) == 0);
	if (bpf_object__load(o)) {
		perror("noop_load: load");
		return 1;
	}
	bpf_object__for_each_program(p, o) {
		if (bpf_program__autoload(p) && !bpf_program__attach(p)) {
			perror("noop_load: attach");
			return 1;
		}
	}
	signal(SIGINT, on_sig);
	signal(SIGTERM, on_sig);
	printf("attached\n");
	fflush(stdout);
	while (!stop)
		pause();
	bpf_object__close(o);
	return 0;
}
