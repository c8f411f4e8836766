/*
 * The control-socket wire: length-prefixed frames, each carrying one
 * Lowprof__Ctl__Envelope (ipc/lowprof_ctl.proto), and the validation the loader
 * applies to a SetThrottle before it touches a map or a perf event.
 *
 * Frame: 4-byte little-endian payload length, then that many bytes of packed
 * Envelope. The control socket is SOCK_SEQPACKET and wire_send writes a frame
 * in one send, so each message is one frame; the loader refuses a message
 * that is not exactly one (loader/control_server.c). The reader below still
 * takes a byte stream. A length of zero or above WIRE_MAX_FRAME is a protocol violation:
 * the reader stops for good and the peer should be cut off (the OpenSSH
 * monitor rule: the untrusted side gets no second chance to desynchronise us).
 */
#ifndef LOWPROF_IPC_WIRE_H
#define LOWPROF_IPC_WIRE_H

#include <linux/types.h> /* before bpf/lowprof.h */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf/lowprof.h"
#include "ipc/lowprof_ctl.pb-c.h"

/* Hello.version: bumped on any incompatible change to lowprof_ctl.proto. */
#define WIRE_PROTOCOL_VERSION 1u
/* Bytes of the length prefix. */
#define WIRE_HEADER_SIZE 4u
/* Largest packed Envelope accepted or sent (the prefix not included). */
#define WIRE_MAX_FRAME 4096u
/* How long wire_send waits for room on a non-blocking socket before giving up. */
#define WIRE_SEND_TIMEOUT_MS 1000

/* The bounds a SetThrottle is checked against: the loader's own settings. */
struct wire_limits {
	uint32_t max_frequency_hz; /* the user's -F: no request may exceed it */
	uint32_t max_divisor;      /* the drop backoff cap (a power of two) */
};

/*
 * Pack env as one frame into buf. Returns the frame length (prefix included),
 * -EINVAL if env has no payload (or a NULL one), -EMSGSIZE if the packed
 * Envelope exceeds WIRE_MAX_FRAME or does not fit in buflen.
 */
ssize_t wire_encode(const Lowprof__Ctl__Envelope *env, uint8_t *buf, size_t buflen);

/*
 * Write one frame completely: retries on EINTR and short writes, waits up to
 * WIRE_SEND_TIMEOUT_MS for room on a non-blocking socket, never raises
 * SIGPIPE (MSG_NOSIGNAL). Returns 0 or a negative errno; after an error part
 * of a frame may have been written, so the connection must be dropped.
 */
int wire_send(int fd, const Lowprof__Ctl__Envelope *env);

enum wire_status {
	WIRE_MESSAGE = 1, /* *out holds an envelope; free it with wire_free() */
	WIRE_AGAIN = 0,   /* no complete frame yet: wait for the fd to be readable */
	WIRE_CLOSED = 2,  /* the peer closed the connection between frames */
	/* Anything negative is an error (-errno); see wire_reader.err. */
};

/* Bytes received but not yet returned as envelopes, and a sticky error. */
struct wire_reader {
	uint8_t buf[WIRE_HEADER_SIZE + WIRE_MAX_FRAME];
	size_t len;     /* bytes held in buf */
	int error;      /* 0, or the negative errno every later call returns */
	bool eof;       /* the peer closed its end */
	char err[160];  /* why error was set */
};

void wire_reader_init(struct wire_reader *r);

/*
 * Append bytes (as received) to the reader. Returns 0, or -ENOBUFS if they do
 * not fit (a caller feeding more than one maximal frame without calling
 * wire_reader_next in between), or the sticky error.
 */
int wire_reader_feed(struct wire_reader *r, const void *data, size_t len);

/* Record that the peer closed: a partial frame held now becomes an error. */
void wire_reader_set_eof(struct wire_reader *r);

/*
 * Take the next complete envelope out of the bytes held. Returns WIRE_MESSAGE
 * (*out set), WIRE_AGAIN, WIRE_CLOSED (eof at a frame boundary), or a
 * negative errno: -EMSGSIZE (length above WIRE_MAX_FRAME), -EBADMSG (zero
 * length, unpack failure, no payload), -EPROTO (closed mid-frame). An error is
 * sticky and explained in r->err (copied to err when err is not NULL).
 */
int wire_reader_next(struct wire_reader *r, Lowprof__Ctl__Envelope **out,
		     char *err, size_t errlen);

/*
 * wire_reader_next, reading from fd (once) when no complete frame is held.
 * Works with non-blocking sockets: EAGAIN from recv gives WIRE_AGAIN. A
 * blocking socket blocks in recv until bytes or EOF arrive.
 */
int wire_recv(int fd, struct wire_reader *r, Lowprof__Ctl__Envelope **out,
	      char *err, size_t errlen);

/* Free an envelope returned by wire_reader_next / wire_recv (NULL is fine). */
void wire_free(Lowprof__Ctl__Envelope *env);

/*
 * Check every field of a requested throttle state against limits:
 * tier and unwind mode are known values (not UNSPECIFIED),
 * 1 <= frequency_hz <= limits->max_frequency_hz,
 * 1 <= max_depth <= LOWPROF_MAX_USER_DEPTH,
 * sample_divisor a power of two in [1, limits->max_divisor], paused 0 or 1,
 * offcpu_prob_ppm at most LOWPROF_OFFCPU_PPM_ONE (0: keep the one in force).
 * Returns 0, or -EINVAL with the first violation in err.
 */
int wire_validate_throttle_state(const Lowprof__Ctl__ThrottleState *st,
				 const struct wire_limits *limits, char *err, size_t errlen);

/* The same for a SetThrottle, which must carry a state. */
int wire_validate_set_throttle(const Lowprof__Ctl__SetThrottle *req,
			       const struct wire_limits *limits, char *err, size_t errlen);

/* Name of a payload case for logs and audit records ("set_throttle", ...). */
const char *wire_payload_name(Lowprof__Ctl__Envelope__PayloadCase c);

/* Unwind mode conversions; -EINVAL / UNSPECIFIED for values outside the enum. */
int wire_unwind_to_lowprof(Lowprof__Ctl__UnwindMode m);
Lowprof__Ctl__UnwindMode wire_unwind_from_lowprof(int mode);

#endif /* LOWPROF_IPC_WIRE_H */
