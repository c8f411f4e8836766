/*
 * A process whose code runs in a shared library that is deleted while it
 * maps it (a library replaced by a package upgrade under a running daemon):
 * dl_host LIB MS loads LIB, removes it from its path, then spins MS ms in
 * it. Its maps name "LIB (deleted)"; only /proc/PID/map_files reaches the
 * file. Built -O2 -fomit-frame-pointer like the library.
 *   main -> dl_entry -> dl_level2 -> dl_leaf
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

volatile unsigned long dl_sink;

int main(int argc, char **argv)
{
	unsigned long (*entry)(unsigned long, unsigned);
	void *h;

	if (argc < 3) {
		fprintf(stderr, "usage: dl_host LIB MS\n");
		return 2;
	}
	h = dlopen(argv[1], RTLD_NOW);
	if (h == NULL) {
		fprintf(stderr, "dl_host: %s\n", dlerror());
		return 1;
	}
	/* Deleted before its code is ever sampled: no path names it any more. */
	if (unlink(argv[1]) != 0) {
		perror("dl_host: unlink");
		return 1;
	}
	*(void **)&entry = dlsym(h, "dl_entry");
	if (entry == NULL)
		return 1;
	dl_sink = entry((unsigned long)argc, (unsigned)atoi(argv[2]));
	/* Not a tail call: main stays on the stack below dl_entry. */
	dl_sink += (unsigned long)argc;
	return 0;
}
