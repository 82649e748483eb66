/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * softib run [--] PROGRAM [ARGS...]
 *
 * libibverbs only lists devices the kernel knows, so softib0 becomes
 * visible through an LD_PRELOAD interposer (docs/architecture.md section 2); this
 * command sets that up and execs the program.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/run.h"
#include "tools/softib.h"

static int file_exists(const char *path)
{
	return access(path, R_OK) == 0;
}

int softib_find_provider(char *path, size_t size)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *dir;

	if (n <= 0)
		return -1;
	exe[n] = 0;
	dir = dirname(exe);
	/* The build tree: build/softib beside build/libsoftib.so. */
	if ((size_t)snprintf(path, size, "%s/libsoftib.so", dir) < size && file_exists(path))
		return 0;
	/* Installed: PREFIX/bin/softib and PREFIX/lib/softib/libsoftib.so. */
	if ((size_t)snprintf(path, size, "%s/../lib/softib/libsoftib.so", dir) < size &&
	    file_exists(path)) {
		char real[PATH_MAX];

		if (realpath(path, real) && strlen(real) < size)
			strcpy(path, real);
		return 0;
	}
	return -1;
}

/* When this softib was built with AddressSanitizer, so was libsoftib.so
 * beside it, and ASan insists on being the first object loaded: find our
 * own runtime and preload it first. */
static int find_asan(struct dl_phdr_info *info, size_t size, void *data)
{
	char *out = data;

	(void)size;
	if (info->dlpi_name && strstr(info->dlpi_name, "/libasan.so")) {
		snprintf(out, PATH_MAX, "%s", info->dlpi_name);
		return 1;
	}
	return 0;
}

static int preload_contains(const char *list, const char *lib)
{
	size_t len = strlen(lib);

	for (const char *p = list; p && *p;) {
		const char *end = p + strcspn(p, ": ");

		if ((size_t)(end - p) == len && !strncmp(p, lib, len))
			return 1;
		p = *end ? end + 1 : end;
	}
	return 0;
}

int softib_exec_with_provider(char **argv)
{
	char lib[PATH_MAX], asan[PATH_MAX] = "";
	const char *old = getenv("LD_PRELOAD");
	char *preload;
	size_t len;

	if (softib_find_provider(lib, sizeof(lib))) {
		fprintf(stderr, "softib: cannot find libsoftib.so beside this softib executable "
				"or in ../lib/softib/\n");
		return 127;
	}
	dl_iterate_phdr(find_asan, asan);
	if (asan[0] && preload_contains(old, asan))
		asan[0] = 0;
	if (preload_contains(old, lib))
		lib[0] = 0;
	len = strlen(asan) + strlen(lib) + (old ? strlen(old) : 0) + 3;
	preload = malloc(len);
	if (!preload) {
		perror("softib");
		return 127;
	}
	snprintf(preload, len, "%s%s%s%s%s", asan, asan[0] ? ":" : "", lib,
		 lib[0] && old && *old ? ":" : "", old ? old : "");
	setenv("LD_PRELOAD", preload, 1);
	free(preload);
	/* Third-party programs (python, the ibverbs utilities) are not ours
	 * to leak-check. */
	if (asan[0] && !getenv("ASAN_OPTIONS"))
		setenv("ASAN_OPTIONS", "detect_leaks=0", 1);

	execvp(argv[0], argv);
	fprintf(stderr, "softib run: %s: %s\n", argv[0], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: softib run [--] PROGRAM [ARGS...]\n"
		     "Runs PROGRAM with softib0 visible to libibverbs (LD_PRELOAD=libsoftib.so).\n");
}

int softib_cmd_run(int argc, char **argv)
{
	int i = 1;

	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return 0;
	}
	if (i < argc && !strcmp(argv[i], "--"))
		i++;
	if (i >= argc) {
		usage(stderr);
		return SIB_EXIT_USAGE;
	}
	return softib_exec_with_provider(argv + i);
}
