/* overlay_file: the layers that may hold the real file of an overlay path (see the header). */
#define _GNU_SOURCE
#include "loader/overlay_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

/* Undo the kernel's octal escapes (\040 for a space, \134 for a backslash) in place. */
static void overlay_file_unescape(char *s)
{
	char *w = s;

	while (*s != '\0') {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*w++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 4;
		} else {
			*w++ = *s++;
		}
	}
	*w = '\0';
}

/* The next space-separated field of *p (NULL at the end). */
static char *overlay_file_field(char **p)
{
	char *f = *p, *e;

	if (f == NULL || *f == '\0')
		return NULL;
	e = strchr(f, ' ');
	if (e != NULL) {
		*e = '\0';
		*p = e + 1;
	} else {
		*p = f + strlen(f);
	}
	return f;
}

bool overlay_file_parse_mountinfo(char *line, dev_t *dev, char **root, char **mnt, char **fstype,
				  char **opts)
{
	char *p = line, *f;
	unsigned maj, min;
	int i;

	line[strcspn(line, "\n")] = '\0';
	/* mount id, parent id, major:minor, root, mount point, mount options */
	for (i = 0; i < 6; i++) {
		f = overlay_file_field(&p);
		if (f == NULL)
			return false;
		if (i == 2) {
			if (sscanf(f, "%u:%u", &maj, &min) != 2)
				return false;
			*dev = makedev(maj, min);
		} else if (i == 3) {
			*root = f;
		} else if (i == 4) {
			*mnt = f;
		}
	}
	/* optional fields up to "-" */
	while ((f = overlay_file_field(&p)) != NULL && strcmp(f, "-") != 0)
		;
	if (f == NULL || (*fstype = overlay_file_field(&p)) == NULL ||
	    overlay_file_field(&p) == NULL || (*opts = overlay_file_field(&p)) == NULL)
		return false;
	overlay_file_unescape(*root);
	overlay_file_unescape(*mnt);
	overlay_file_unescape(*fstype);
	return true;
}

static int overlay_file_push(char ***layers, size_t *n, const char *dir, size_t len)
{
	char **grown;

	/* Relative to the mounter's working directory then, which is unknown. */
	if (len == 0 || dir[0] != '/' || *n >= OVERLAY_FILE_MAX_LAYERS)
		return 0;
	grown = realloc(*layers, (*n + 1) * sizeof(**layers));
	if (grown == NULL)
		return -ENOMEM;
	*layers = grown;
	grown[*n] = strndup(dir, len);
	if (grown[*n] == NULL)
		return -ENOMEM;
	(*n)++;
	return 0;
}

/*
 * A lowerdir value, unescaped: layers separated by ':' ("::" before the
 * data-only ones), a backslash making the next character literal (overlayfs'
 * own escape for a ':' in a name).
 */
static int overlay_file_split_lower(const char *v, char ***layers, size_t *n)
{
	char *buf = malloc(strlen(v) + 1);
	size_t len = 0;
	int rc = 0;

	if (buf == NULL)
		return -ENOMEM;
	for (;; v++) {
		if (*v == '\\' && v[1] != '\0') {
			buf[len++] = *++v;
		} else if (*v == ':' || *v == '\0') {
			rc = overlay_file_push(layers, n, buf, len);
			len = 0;
			if (rc != 0 || *v == '\0')
				break;
		} else {
			buf[len++] = *v;
		}
	}
	free(buf);
	return rc;
}

/* One option's value if it is named key ("upperdir="), unescaped, else NULL. */
static char *overlay_file_value(const char *opt, const char *key)
{
	char *v;

	if (strncmp(opt, key, strlen(key)) != 0)
		return NULL;
	v = strdup(opt + strlen(key));
	if (v != NULL)
		overlay_file_unescape(v);
	return v;
}

int overlay_file_layers(const char *opts, char ***layers, size_t *n)
{
	char *copy = strdup(opts), *save = NULL, *o, *v;
	int rc = 0, pass;

	*layers = NULL;
	*n = 0;
	if (copy == NULL)
		return -ENOMEM;
	/* The upper layer first (a file copied up shadows its lower versions),
	 * then the lower ones in order. A ',' inside a value is escaped (\054). */
	for (pass = 0; pass < 2 && rc == 0; pass++) {
		memcpy(copy, opts, strlen(opts) + 1);
		for (o = strtok_r(copy, ",", &save); o != NULL && rc == 0;
		     o = strtok_r(NULL, ",", &save)) {
			if (pass == 0 && (v = overlay_file_value(o, "upperdir=")) != NULL)
				rc = overlay_file_push(layers, n, v, strlen(v));
			else if (pass == 1 && (v = overlay_file_value(o, "lowerdir=")) != NULL)
				rc = overlay_file_split_lower(v, layers, n);
			else if (pass == 1 && ((v = overlay_file_value(o, "lowerdir+=")) != NULL ||
					       (v = overlay_file_value(o, "datadir+=")) != NULL))
				rc = overlay_file_push(layers, n, v, strlen(v));
			else
				continue;
			free(v);
		}
	}
	free(copy);
	if (rc != 0) {
		while (*n > 0)
			free((*layers)[--*n]);
		free(*layers);
		*layers = NULL;
	}
	return rc;
}

/* Does mount point mnt hold path? The length of path's part below it, or -1. */
static long overlay_file_below(const char *mnt, const char *path)
{
	size_t l = strlen(mnt);

	if (strcmp(mnt, "/") == 0)
		return (long)strlen(path);
	if (strncmp(mnt, path, l) != 0 || (path[l] != '/' && path[l] != '\0'))
		return -1;
	return (long)strlen(path + l);
}

int overlay_file_find(const char *proc_root, pid_t pid, const char *path, dev_t dev,
		      struct overlay_file *of)
{
	char name[128], *line = NULL, *opts_best = NULL, *rel_best = NULL;
	size_t cap = 0, best_below = 0;
	bool best_dev = false, best_overlay = false;
	int rc = -ENOENT;
	FILE *f;

	memset(of, 0, sizeof(*of));
	if (path[0] != '/')
		return -ENOENT;
	snprintf(name, sizeof(name), "%s/%d/mountinfo", proc_root, (int)pid);
	f = fopen(name, "re");
	if (f == NULL)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		char *root, *mnt, *fstype, *opts, *rel = NULL, *o;
		bool same_dev;
		dev_t d;
		long below;

		/* Every mount counts for depth: a file on a bind mount inside a
		 * container's overlay root is not the overlay's. */
		if (!overlay_file_parse_mountinfo(line, &d, &root, &mnt, &fstype, &opts))
			continue;
		below = overlay_file_below(mnt, path);
		if (below < 0)
			continue;
		/* The deepest mount holding the path is the one it lies on; on one
		 * mount point the device (maps shows the overlay's since Linux 6.8)
		 * settles it, else the later line (mounted over the earlier). */
		same_dev = d == dev;
		if (opts_best != NULL && ((size_t)below > best_below ||
					  ((size_t)below == best_below && best_dev && !same_dev)))
			continue;
		/* The mount's root within the overlay (a bind of a subdirectory),
		 * then the part of path below the mount point. */
		o = strdup(opts);
		if (o == NULL || asprintf(&rel, "%s%s", strcmp(root, "/") == 0 ? "" : root,
					  path + strlen(path) - below) < 0) {
			free(o);
			rc = -ENOMEM;
			break;
		}
		free(opts_best);
		free(rel_best);
		opts_best = o;
		rel_best = rel;
		best_below = (size_t)below;
		best_dev = same_dev;
		best_overlay = strcmp(fstype, "overlay") == 0;
	}
	free(line);
	fclose(f);
	if (opts_best != NULL && best_overlay && rc != -ENOMEM) {
		const char *r = rel_best;

		while (*r == '/')
			r++;
		of->rel = strdup(r);
		rc = of->rel == NULL ? -ENOMEM
				     : overlay_file_layers(opts_best, &of->layers, &of->nlayers);
		if (rc == 0 && (of->nlayers == 0 || of->rel[0] == '\0'))
			rc = -ENOENT;
	}
	free(opts_best);
	free(rel_best);
	if (rc != 0)
		overlay_file_free(of);
	return rc;
}

void overlay_file_free(struct overlay_file *of)
{
	while (of->nlayers > 0)
		free(of->layers[--of->nlayers]);
	free(of->layers);
	free(of->rel);
	memset(of, 0, sizeof(of[0]));
}
