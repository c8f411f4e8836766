#include "ipc/wire.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "bpf/offcpu.h"

static void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* The payload pointer of whichever oneof member is set, NULL if none. */
static const void *payload_ptr(const Lowprof__Ctl__Envelope *env)
{
	switch (env->payload_case) {
	case LOWPROF__CTL__ENVELOPE__PAYLOAD_HELLO:
		return env->hello;
	case LOWPROF__CTL__ENVELOPE__PAYLOAD_STATS_REQUEST:
		return env->stats_request;
	case LOWPROF__CTL__ENVELOPE__PAYLOAD_STATS:
		return env->stats;
	case LOWPROF__CTL__ENVELOPE__PAYLOAD_SET_THROTTLE:
		return env->set_throttle;
	case LOWPROF__CTL__ENVELOPE__PAYLOAD_GET_STATE:
		return env->get_state;
	case LOWPROF__CTL__ENVELOPE__PAYLOAD_STATE:
		return env->state;
	case LOWPROF__CTL__ENVELOPE__PAYLOAD_REPLY:
		return env->reply;
	default:
		return NULL;
	}
}

const char *wire_payload_name(Lowprof__Ctl__Envelope__PayloadCase c)
{
	switch (c) {
	case LOWPROF__CTL__ENVELOPE__PAYLOAD_HELLO:
		return "hello";
	case LOWPROF__CTL__ENVELOPE__PAYLOAD_STATS_REQUEST:
		return "stats_request";
	case LOWPROF__CTL__ENVELOPE__PAYLOAD_STATS:
		return "stats";
	case LOWPROF__CTL__ENVELOPE__PAYLOAD_SET_THROTTLE:
		return "set_throttle";
	case LOWPROF__CTL__ENVELOPE__PAYLOAD_GET_STATE:
		return "get_state";
	case LOWPROF__CTL__ENVELOPE__PAYLOAD_STATE:
		return "state";
	case LOWPROF__CTL__ENVELOPE__PAYLOAD_REPLY:
		return "reply";
	default:
		return "none";
	}
}

ssize_t wire_encode(const Lowprof__Ctl__Envelope *env, uint8_t *buf, size_t buflen)
{
	size_t size;

	/*
	 * protobuf-c silently skips a oneof member whose pointer is NULL, which
	 * would put an empty Envelope on the wire that the peer must refuse:
	 * refuse it here instead, where the bug is.
	 */
	if (env == NULL || payload_ptr(env) == NULL)
		return -EINVAL;
	size = lowprof__ctl__envelope__get_packed_size(env);
	if (buflen < WIRE_HEADER_SIZE || size == 0 || size > WIRE_MAX_FRAME ||
	    size > buflen - WIRE_HEADER_SIZE)
		return -EMSGSIZE;
	put_le32(buf, (uint32_t)size);
	lowprof__ctl__envelope__pack(env, buf + WIRE_HEADER_SIZE);
	return (ssize_t)(WIRE_HEADER_SIZE + size);
}

int wire_send(int fd, const Lowprof__Ctl__Envelope *env)
{
	uint8_t frame[WIRE_HEADER_SIZE + WIRE_MAX_FRAME];
	ssize_t len = wire_encode(env, frame, sizeof(frame));
	size_t done = 0;

	if (len < 0)
		return (int)len;
	while (done < (size_t)len) {
		ssize_t n = send(fd, frame + done, (size_t)len - done, MSG_NOSIGNAL);

		if (n >= 0) {
			done += (size_t)n;
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			/* Non-blocking socket full: frames are small, so wait a little. */
			struct pollfd pfd = { .fd = fd, .events = POLLOUT };
			int rc = poll(&pfd, 1, WIRE_SEND_TIMEOUT_MS);

			if (rc == 0)
				return -ETIMEDOUT;
			if (rc < 0 && errno != EINTR)
				return -errno;
			continue;
		}
		return -errno;
	}
	return 0;
}

void wire_reader_init(struct wire_reader *r)
{
	memset(r, 0, sizeof(*r));
}

/* Make the reader fail for good: the stream can no longer be trusted. */
static int reader_fail(struct wire_reader *r, int error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int reader_fail(struct wire_reader *r, int error, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	r->error = error;
	return error;
}

int wire_reader_feed(struct wire_reader *r, const void *data, size_t len)
{
	if (r->error)
		return r->error;
	if (len > sizeof(r->buf) - r->len)
		return -ENOBUFS;
	memcpy(r->buf + r->len, data, len);
	r->len += len;
	return 0;
}

void wire_reader_set_eof(struct wire_reader *r)
{
	r->eof = true;
}

static int reader_next(struct wire_reader *r, Lowprof__Ctl__Envelope **out)
{
	Lowprof__Ctl__Envelope *env;
	uint32_t size;

	*out = NULL;
	if (r->error)
		return r->error;
	if (r->len < WIRE_HEADER_SIZE) {
		if (!r->eof)
			return WIRE_AGAIN;
		if (r->len == 0)
			return WIRE_CLOSED;
		return reader_fail(r, -EPROTO, "connection closed inside a frame header (%zu of %u bytes)",
				   r->len, WIRE_HEADER_SIZE);
	}
	/* Check the length before waiting for the body: refuse early, never buffer it. */
	size = get_le32(r->buf);
	if (size == 0)
		return reader_fail(r, -EBADMSG, "frame of length zero");
	if (size > WIRE_MAX_FRAME)
		return reader_fail(r, -EMSGSIZE, "frame length %u exceeds the maximum %u",
				   size, WIRE_MAX_FRAME);
	if (r->len < WIRE_HEADER_SIZE + size) {
		if (!r->eof)
			return WIRE_AGAIN;
		return reader_fail(r, -EPROTO, "connection closed inside a frame (%zu of %u bytes)",
				   r->len - WIRE_HEADER_SIZE, size);
	}
	env = lowprof__ctl__envelope__unpack(NULL, size, r->buf + WIRE_HEADER_SIZE);
	if (env == NULL)
		return reader_fail(r, -EBADMSG, "frame of %u bytes is not a valid Envelope", size);
	if (payload_ptr(env) == NULL) {
		lowprof__ctl__envelope__free_unpacked(env, NULL);
		return reader_fail(r, -EBADMSG, "Envelope carries no known payload");
	}
	/* Keep any bytes of the next frames that arrived with this one. */
	r->len -= WIRE_HEADER_SIZE + size;
	memmove(r->buf, r->buf + WIRE_HEADER_SIZE + size, r->len);
	*out = env;
	return WIRE_MESSAGE;
}

static void copy_err(const struct wire_reader *r, int rc, char *err, size_t errlen)
{
	if (rc < 0 && err != NULL && errlen > 0)
		snprintf(err, errlen, "%s", r->err);
}

int wire_reader_next(struct wire_reader *r, Lowprof__Ctl__Envelope **out,
		     char *err, size_t errlen)
{
	int rc = reader_next(r, out);

	copy_err(r, rc, err, errlen);
	return rc;
}

int wire_recv(int fd, struct wire_reader *r, Lowprof__Ctl__Envelope **out,
	      char *err, size_t errlen)
{
	int rc = reader_next(r, out);
	ssize_t n;

	if (rc != WIRE_AGAIN)
		goto out;
	/* Room for at least the rest of one maximal frame is always left: see reader_next. */
	do {
		n = recv(fd, r->buf + r->len, sizeof(r->buf) - r->len, 0);
	} while (n < 0 && errno == EINTR);
	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			rc = WIRE_AGAIN;
		else
			rc = reader_fail(r, -errno, "recv: %s", strerror(errno));
		goto out;
	}
	if (n == 0)
		r->eof = true;
	else
		r->len += (size_t)n;
	rc = reader_next(r, out);
out:
	copy_err(r, rc, err, errlen);
	return rc;
}

void wire_free(Lowprof__Ctl__Envelope *env)
{
	if (env != NULL)
		lowprof__ctl__envelope__free_unpacked(env, NULL);
}

int wire_unwind_to_lowprof(Lowprof__Ctl__UnwindMode m)
{
	switch (m) {
	case LOWPROF__CTL__UNWIND_MODE__UNWIND_MODE_FP:
		return LOWPROF_UNWIND_FP;
	case LOWPROF__CTL__UNWIND_MODE__UNWIND_MODE_DWARF:
		return LOWPROF_UNWIND_DWARF;
	default:
		return -EINVAL;
	}
}

Lowprof__Ctl__UnwindMode wire_unwind_from_lowprof(int mode)
{
	switch (mode) {
	case LOWPROF_UNWIND_FP:
		return LOWPROF__CTL__UNWIND_MODE__UNWIND_MODE_FP;
	case LOWPROF_UNWIND_DWARF:
		return LOWPROF__CTL__UNWIND_MODE__UNWIND_MODE_DWARF;
	default:
		return LOWPROF__CTL__UNWIND_MODE__UNWIND_MODE_UNSPECIFIED;
	}
}

static bool is_power_of_two(uint32_t v)
{
	return v != 0 && (v & (v - 1)) == 0;
}

int wire_validate_throttle_state(const Lowprof__Ctl__ThrottleState *st,
				 const struct wire_limits *limits, char *err, size_t errlen)
{
	/* Compare as unsigned: an enum read off the wire can hold any int32. */
	unsigned int tier = (unsigned int)st->tier;
	unsigned int unwind = (unsigned int)st->unwind_mode;

	if (tier < LOWPROF__CTL__TIER__TIER_HEALTHY || tier > LOWPROF__CTL__TIER__TIER_CRITICAL) {
		snprintf(err, errlen, "tier %d is not healthy, high or critical", (int)st->tier);
		return -EINVAL;
	}
	if (unwind != LOWPROF__CTL__UNWIND_MODE__UNWIND_MODE_FP &&
	    unwind != LOWPROF__CTL__UNWIND_MODE__UNWIND_MODE_DWARF) {
		snprintf(err, errlen, "unwind mode %d is not fp or dwarf", (int)st->unwind_mode);
		return -EINVAL;
	}
	if (st->frequency_hz < 1 || st->frequency_hz > limits->max_frequency_hz) {
		snprintf(err, errlen, "frequency %u Hz outside [1, %u] (the -F ceiling)",
			 st->frequency_hz, limits->max_frequency_hz);
		return -EINVAL;
	}
	if (st->max_depth < 1 || st->max_depth > LOWPROF_MAX_USER_DEPTH) {
		snprintf(err, errlen, "max depth %u outside [1, %u]", st->max_depth,
			 LOWPROF_MAX_USER_DEPTH);
		return -EINVAL;
	}
	if (!is_power_of_two(st->sample_divisor) || st->sample_divisor > limits->max_divisor) {
		snprintf(err, errlen, "sample divisor %u is not a power of two in [1, %u]",
			 st->sample_divisor, limits->max_divisor);
		return -EINVAL;
	}
	/* protobuf-c unpacks bools as 0/1, but a caller may hand us its own struct. */
	if (st->paused != 0 && st->paused != 1) {
		snprintf(err, errlen, "paused is %d, not 0 or 1", (int)st->paused);
		return -EINVAL;
	}
	if (st->offcpu_prob_ppm > LOWPROF_OFFCPU_PPM_ONE) {
		snprintf(err, errlen, "off-CPU probability %u ppm above %u", st->offcpu_prob_ppm,
			 LOWPROF_OFFCPU_PPM_ONE);
		return -EINVAL;
	}
	return 0;
}

int wire_validate_set_throttle(const Lowprof__Ctl__SetThrottle *req,
			       const struct wire_limits *limits, char *err, size_t errlen)
{
	if (req == NULL || req->state == NULL) {
		snprintf(err, errlen, "SetThrottle carries no state");
		return -EINVAL;
	}
	return wire_validate_throttle_state(req->state, limits, err, errlen);
}
