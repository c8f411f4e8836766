/*
 * Signal frames for the DWARF walker, forged and real (x86_64):
 *   sigframe_forge MODE SECONDS
 * Forged: the process spins in forge_spin, whose CFI marks it a signal
 * trampoline (.cfi_signal_frame), with RSP pointing at a frame it wrote
 * itself: the saved rsp and rip the walker reads there are
 *   below      a heap address, far below the stack
 *   far        64 MiB above the frame
 *   misalign   just above the frame, not 8-byte aligned
 *   legit      just above the frame, aligned (a frame the walker follows)
 * and the saved rip is inside forge_bogus_MODE (forge_legit_target for
 * legit; one byte in, since a caller's frame is named by its return address
 * minus one): a function that appears in a stack only if the walker
 * believed the frame.
 * Real: a SIGALRM handler spins, entered from forge_interrupted on the
 * thread's stack (handler) or on a sigaltstack (altstack); the walk must go
 * through libc's __restore_rt back to main.
 * The thread's name is sf_MODE, so that each mode is its own comm.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/time.h>
#include <time.h>

/* Words of the forged frame as the walker reads them from RSP: the saved
 * rbp, rsp and rip of uc_mcontext (bpf/unwind_dwarf.bpf.h). */
#define FORGE_RBP 15
#define FORGE_RSP 20
#define FORGE_RIP 21
#define FORGE_WORDS 64

void forge_spin(uint64_t *frame, unsigned long iterations);

/* RSP at the forged frame while it counts down; restored before returning. */
__asm__(".text\n"
	".globl forge_spin\n"
	".type forge_spin, @function\n"
	"forge_spin:\n"
	".cfi_startproc\n"
	".cfi_signal_frame\n"
	"	mov %rsp, %rax\n"
	"	mov %rdi, %rsp\n"
	"1:	dec %rsi\n"
	"	jnz 1b\n"
	"	mov %rax, %rsp\n"
	"	ret\n"
	".cfi_endproc\n"
	".size forge_spin, .-forge_spin\n");

volatile unsigned long forge_sink;
static volatile sig_atomic_t forge_done;
static double forge_seconds;

static double forge_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Never called: only their addresses are written into forged frames. */
__attribute__((noinline)) void forge_bogus_below(void) { forge_sink++; }
__attribute__((noinline)) void forge_bogus_far(void) { forge_sink += 2; }
__attribute__((noinline)) void forge_bogus_misalign(void) { forge_sink += 3; }
__attribute__((noinline)) void forge_legit_target(void) { forge_sink += 4; }

__attribute__((noinline)) static void forge_run(const char *mode, double seconds)
{
	uint64_t frame[FORGE_WORDS];
	uint64_t *heap = aligned_alloc(4096, 1 << 16);
	double end = forge_now() + seconds;

	if (!heap)
		exit(1);
	memset(frame, 0, sizeof(frame));
	memset(heap, 0, 1 << 16);
	frame[FORGE_RBP] = 0;
	if (strcmp(mode, "below") == 0) {
		frame[FORGE_RSP] = (uint64_t)(uintptr_t)heap + 4096;
		frame[FORGE_RIP] = (uint64_t)(uintptr_t)forge_bogus_below + 1;
	} else if (strcmp(mode, "far") == 0) {
		frame[FORGE_RSP] = (uint64_t)(uintptr_t)frame + (64u << 20);
		frame[FORGE_RIP] = (uint64_t)(uintptr_t)forge_bogus_far + 1;
	} else if (strcmp(mode, "misalign") == 0) {
		frame[FORGE_RSP] = (uint64_t)(uintptr_t)&frame[40] + 4;
		frame[FORGE_RIP] = (uint64_t)(uintptr_t)forge_bogus_misalign + 1;
	} else {
		/* The caller's frame just above: where a real one would point. */
		frame[FORGE_RSP] = (uint64_t)(uintptr_t)&frame[40];
		frame[FORGE_RIP] = (uint64_t)(uintptr_t)forge_legit_target + 1;
	}
	while (forge_now() < end)
		forge_spin(frame, 200000000UL);
	free(heap);
}

__attribute__((noinline)) static void forge_handler_spin(void)
{
	double end = forge_now() + forge_seconds;
	unsigned long x = forge_sink;

	while (forge_now() < end) {
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
	}
	forge_sink = x;
}

static void forge_on_signal(int sig)
{
	(void)sig;
	forge_handler_spin();
	forge_done = 1;
}

/* Spins in user code until the handler has run (the timer interrupts it here). */
__attribute__((noinline)) static void forge_interrupted(void)
{
	unsigned long x = 1;

	while (!forge_done)
		x = x * 6364136223846793005UL + 1;
	forge_sink += x;
}

static void forge_signal(int on_altstack, double seconds)
{
	struct itimerval it;
	struct sigaction sa;

	forge_seconds = seconds;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = forge_on_signal;
	sigemptyset(&sa.sa_mask);
	if (on_altstack) {
		stack_t ss;

		ss.ss_size = 1 << 18;
		ss.ss_sp = mmap(NULL, ss.ss_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				-1, 0);
		ss.ss_flags = 0;
		if (ss.ss_sp == MAP_FAILED || sigaltstack(&ss, NULL) != 0) {
			perror("sigaltstack");
			exit(1);
		}
		sa.sa_flags = SA_ONSTACK;
	}
	if (sigaction(SIGALRM, &sa, NULL) != 0) {
		perror("sigaction");
		exit(1);
	}
	memset(&it, 0, sizeof(it));
	it.it_value.tv_usec = 20000;
	setitimer(ITIMER_REAL, &it, NULL);
	forge_interrupted();
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "legit";
	double seconds = argc > 2 ? atof(argv[2]) : 10.0;
	char name[16];

	snprintf(name, sizeof(name), "sf_%s", mode);
	prctl(PR_SET_NAME, name);
	if (strcmp(mode, "handler") == 0 || strcmp(mode, "altstack") == 0)
		forge_signal(mode[0] == 'a', seconds);
	else
		forge_run(mode, seconds);
	return 0;
}
