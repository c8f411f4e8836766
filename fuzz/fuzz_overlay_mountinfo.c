/* /proc/PID/mountinfo lines and overlayfs mount options on arbitrary text
 * (loader/overlay_file). The kernel writes mountinfo, but an overlay's
 * mounter (any user, in a user namespace) chooses its mount point and layer
 * names, and the loader parses them for every sampled process on an overlay.
 *
 * Invariants: an accepted line yields non-NULL fields within the line, no
 * layer is empty or relative, there are at most OVERLAY_FILE_MAX_LAYERS,
 * and a layer has no more bytes than the options it came from. */
#include "loader/overlay_file.h"

#include "fuzz/fuzz_check.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void fuzz_layers(const char *opts)
{
	char **layers = NULL;
	size_t n = 0, i;

	if (overlay_file_layers(opts, &layers, &n) != 0) {
		FUZZ_CHECK(layers == NULL && n == 0);
		return;
	}
	FUZZ_CHECK(n <= OVERLAY_FILE_MAX_LAYERS);
	for (i = 0; i < n; i++) {
		FUZZ_CHECK(layers[i] != NULL && layers[i][0] == '/');
		FUZZ_CHECK(strlen(layers[i]) <= strlen(opts));
		free(layers[i]);
	}
	free(layers);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *line = malloc(size + 1), *root, *mnt, *fstype, *opts;
	dev_t dev;

	if (line == NULL)
		return 0;
	memcpy(line, data, size);
	line[size] = '\0';
	/* As the whole options string (a NUL ends it, as in a C string). */
	fuzz_layers(line);
	if (overlay_file_parse_mountinfo(line, &dev, &root, &mnt, &fstype, &opts)) {
		FUZZ_CHECK(root >= line && root <= line + size);
		FUZZ_CHECK(mnt >= line && mnt <= line + size);
		FUZZ_CHECK(fstype >= line && fstype <= line + size);
		FUZZ_CHECK(opts >= line && opts <= line + size);
		fuzz_layers(opts);
	}
	free(line);
	return 0;
}
