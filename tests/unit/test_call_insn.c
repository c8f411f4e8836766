/*
 * The walker's return-address check (bpf/call_insn.h): the bytes before an
 * address end with a call instruction, direct or indirect in each of its
 * encodings, and jumps, pushes and calls that end elsewhere do not count.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "bpf/call_insn.h"

/* The word the walker reads: n instruction bytes ending at the address,
 * after 8 - n bytes of fill (n <= 8). */
static __u64 code_before(const __u8 *insn, size_t n, __u8 fill)
{
	__u8 b[LOWPROF_CALL_WINDOW];
	__u64 w = 0;
	size_t k;

	memset(b, fill, sizeof(b));
	memcpy(b + sizeof(b) - n, insn, n);
	for (k = 0; k < sizeof(b); k++)
		w |= (__u64)b[k] << (8 * k);
	return w;
}

struct insn {
	const char *what;
	__u8 bytes[8];
	size_t n;
};

static const struct insn calls[] = {
	{"call rel32", {0xe8, 0x10, 0x20, 0x30, 0x40}, 5},
	{"call *%rax", {0xff, 0xd0}, 2},
	{"call *%r11 (REX.B)", {0x41, 0xff, 0xd3}, 3},
	{"call *(%rax)", {0xff, 0x10}, 2},
	{"call *0x10(%rax)", {0xff, 0x50, 0x10}, 3},
	{"call *(%rsp)", {0xff, 0x14, 0x24}, 3},
	{"call *0x8(%rsp)", {0xff, 0x54, 0x24, 0x08}, 4},
	{"call *0x1234(%rip)", {0xff, 0x15, 0x34, 0x12, 0x00, 0x00}, 6},
	{"call *0x100(%rbx)", {0xff, 0x93, 0x00, 0x01, 0x00, 0x00}, 6},
	{"call *0x100(%rsp)", {0xff, 0x94, 0x24, 0x00, 0x01, 0x00, 0x00}, 7},
	{"call *0x0(,%rax,8)", {0xff, 0x14, 0xc5, 0x00, 0x00, 0x00, 0x00}, 7},
	{"notrack call *%rdx", {0x3e, 0xff, 0xd2}, 3},
};

static const struct insn not_calls[] = {
	{"jmp *%rax", {0xff, 0xe0}, 2},
	{"jmp *0x10(%rax)", {0xff, 0x60, 0x10}, 3},
	{"push 0x10(%rax)", {0xff, 0x70, 0x10}, 3},
	{"inc (%rax)", {0xff, 0x00}, 2},
	{"call *%rax, then a nop", {0xff, 0xd0, 0x90}, 3},
	{"call rel32, then a nop", {0xe8, 0x10, 0x20, 0x30, 0x40, 0x90}, 6},
	{"call *0x1234(%rip), one byte short", {0xff, 0x15, 0x34, 0x12, 0x00}, 5},
	{"call *0x10(%rax), one byte long", {0xff, 0x50, 0x10, 0x00}, 4},
	{"call *(%rsp) without its SIB byte", {0xff, 0x14}, 2},
	{"ret", {0xc3}, 1},
	{"zeros", {0}, 8},
};

static void test_calls(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		/* Whatever came before the call: nops, zeros, int3s. */
		static const __u8 fills[] = {0x90, 0x00, 0xcc};
		size_t f;

		for (f = 0; f < sizeof(fills); f++) {
			__u64 w = code_before(calls[i].bytes, calls[i].n, fills[f]);

			if (!lowprof_code_ends_in_call(w))
				fail_msg("%s (fill %#x) not taken for a call", calls[i].what,
					 fills[f]);
		}
	}
}

static void test_not_calls(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(not_calls) / sizeof(not_calls[0]); i++) {
		__u64 w = code_before(not_calls[i].bytes, not_calls[i].n, 0x90);

		if (lowprof_code_ends_in_call(w))
			fail_msg("%s taken for a call", not_calls[i].what);
	}
}

static void test_ff_lengths(void **state)
{
	(void)state;
	assert_int_equal(lowprof_call_ff_len(0xd0, 0), 2);    /* *%rax */
	assert_int_equal(lowprof_call_ff_len(0x10, 0), 2);    /* *(%rax) */
	assert_int_equal(lowprof_call_ff_len(0x50, 0), 3);    /* *disp8(%rax) */
	assert_int_equal(lowprof_call_ff_len(0x90, 0), 6);    /* *disp32(%rax) */
	assert_int_equal(lowprof_call_ff_len(0x15, 0), 6);    /* *disp32(%rip) */
	assert_int_equal(lowprof_call_ff_len(0x14, 0x24), 3); /* *(%rsp) */
	assert_int_equal(lowprof_call_ff_len(0x54, 0x24), 4); /* *disp8(%rsp) */
	assert_int_equal(lowprof_call_ff_len(0x94, 0x24), 7); /* *disp32(%rsp) */
	assert_int_equal(lowprof_call_ff_len(0x14, 0xc5), 7); /* *disp32(,%rax,8) */
	assert_int_equal(lowprof_call_ff_len(0xe0, 0), 0);    /* jmp: not a call */
	assert_int_equal(lowprof_call_ff_len(0x30, 0), 0);    /* push: not a call */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_calls),
		cmocka_unit_test(test_not_calls),
		cmocka_unit_test(test_ff_lengths),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
