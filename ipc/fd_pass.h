/*
 * One message over a SOCK_SEQPACKET socket with at most one file descriptor
 * (SCM_RIGHTS): the unwinder protocol (ipc/unwinder_proto.h) and the
 * symbol-source protocol (ipc/sym_wire.h) both use it. SEQPACKET keeps message
 * boundaries, so a late or bad message never desynchronises the stream.
 */
#ifndef LOWPROF_IPC_FD_PASS_H
#define LOWPROF_IPC_FD_PASS_H

#include <stddef.h>
#include <sys/types.h>

/* Send one message with at most one fd (fd < 0: none); never raises SIGPIPE.
 * 0 or -errno (-EMSGSIZE for a short send). */
int fdpass_send(int sock, const void *buf, size_t len, int fd);

/*
 * Receive one message into buf (at most len bytes) with at most one fd,
 * close-on-exec (MSG_CMSG_CLOEXEC). Refuses (-EPROTO, the reason in err) a
 * truncated message (MSG_TRUNC), truncated control data (MSG_CTRUNC), a
 * control message that is not SCM_RIGHTS, a bad cmsg_len, or more than one fd;
 * every fd received is closed on refusal. Returns the message length (0: the
 * peer closed) or -errno (-EAGAIN on a non-blocking socket with nothing to
 * read); *fd is -1 or the fd received.
 */
ssize_t fdpass_recv(int sock, void *buf, size_t len, int *fd, char *err, size_t errlen);

#endif /* LOWPROF_IPC_FD_PASS_H */
