/*
 * One message over a SOCK_SEQPACKET socket with at most one file descriptor
 * (SCM_RIGHTS): the unwinder protocol (ipc/unwinder_proto.h) and the
 * symbol-source protocol (ipc/sym_wire.h) both use it. SEQPACKET keeps message
 * boundaries, so a late or bad message never desynchronises the stream.
 *
 * The receive is strict, for every socket that reads from a less trusted peer
 * (the loader's monitor, loader/monitor.h, reads the control and symbol
 * sockets with it too): truncated data or control data, control messages of
 * a kind not asked for, bad lengths and unexpected fds are refused, and every
 * fd that came with a refused message is closed.
 */
#ifndef LOWPROF_IPC_FD_PASS_H
#define LOWPROF_IPC_FD_PASS_H

#include <stdbool.h>
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

/* What fdpass_recv_msg accepts besides the bytes (flags). */
#define FDPASS_TAKE_FD (1u << 0)   /* at most one fd (SCM_RIGHTS) */
#define FDPASS_TAKE_CRED (1u << 1) /* the sender's SCM_CREDENTIALS (SO_PASSCRED on the socket) */
#define FDPASS_DONTWAIT (1u << 2)  /* MSG_DONTWAIT */

struct fdpass_msg {
	int fd;         /* -1, or the fd received (FDPASS_TAKE_FD) */
	bool have_cred; /* SCM_CREDENTIALS naming a sender came with the message */
	pid_t pid;      /* the sender's, as the kernel says; -1 without credentials */
	uid_t uid;      /* (uid_t)-1 without credentials */
};

/*
 * fdpass_recv with a choice of what may come along (take: FDPASS_* flags).
 * Also refused: an fd without FDPASS_TAKE_FD ("a message carrying a file
 * descriptor"), SCM_CREDENTIALS without FDPASS_TAKE_CRED or of a bad length.
 * Credentials with pid 0 (queued before SO_PASSCRED: the kernel attached
 * nobody) count as none. Returns as fdpass_recv; m is filled in every case.
 */
ssize_t fdpass_recv_msg(int sock, void *buf, size_t len, unsigned take, struct fdpass_msg *m,
			char *err, size_t errlen);

#endif /* LOWPROF_IPC_FD_PASS_H */
