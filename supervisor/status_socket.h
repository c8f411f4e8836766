/*
 * The supervisor's status socket in its run directory, and the client side
 * used by `lowprof status` and `lowprof restart`. One request line per
 * connection ("status", "status-json", "restart NAME"), one reply, then close.
 */
#ifndef LOWPROF_SUPERVISOR_STATUS_SOCKET_H
#define LOWPROF_SUPERVISOR_STATUS_SOCKET_H

#include <stddef.h>
#include <sys/types.h>

#define STATUS_SOCKET_NAME "status.sock"
#define STATUS_REQUEST_MAX 64
#define STATUS_REPLY_MAX 16384

/* Default run directory: /run/lowprof for root, else $XDG_RUNTIME_DIR/lowprof or /tmp/lowprof-UID. */
void status_socket_default_dir(char *out, size_t outlen);

/*
 * Listen on DIR/status.sock (DIR created 0700). If another live instance owns
 * it, returns -EADDRINUSE; a stale socket left by a killed instance is replaced.
 */
int status_socket_listen(const char *dir, char *err, size_t errlen);

/* Read one request from an accepted connection within timeout_ms; 0 or -1. */
int status_socket_read_request(int fd, int timeout_ms, char *req, size_t reqlen,
			       uid_t *peer_uid);

/* Client: send req, read the whole reply into out (NUL-terminated). 0, or -errno with err. */
int status_socket_query(const char *dir, const char *req, char *out, size_t outlen,
			char *err, size_t errlen);

#endif
