/*
 * A frame-pointer chain that loops: spins with RBP at a "frame" on its own
 * stack whose saved RBP is that frame itself and whose return address is
 * fp_loop_return. Any process can leave RBP so (a register used for data
 * may point anywhere); a walk that follows [RBP] blindly, as the kernel's
 * bpf_get_stack does, records fp_loop_return again and again up to its
 * depth. lowprof's frame-pointer walk believes a step only upwards
 * (tests/integration/test_unwind_fp.sh): the stack is the spinning pc and
 * one fp_loop_return.
 * Built -fomit-frame-pointer: the compiler may then let the asm clobber RBP
 * (it saves and restores it around the call). Runs for argv[1] seconds.
 */
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) void fp_loop_return(void)
{
	__asm__ volatile("" ::: "memory");
}

/* n iterations of a loop with RBP = frame. */
__attribute__((noinline)) void fp_loop_spin(unsigned long *frame, unsigned long n)
{
	__asm__ volatile("mov %0, %%rbp\n"
			 "1:\n\t"
			 "dec %1\n\t"
			 "jnz 1b"
			 : "+r"(frame), "+r"(n)
			 :
			 : "rbp", "cc", "memory");
}

static double fp_loop_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 10, end = fp_loop_now() + seconds;
	/* On this stack, above fp_loop_spin's frame: where a frame pointer
	 * would point. Its saved RBP is itself; + 1 is past a call, as a
	 * return address is. */
	volatile unsigned long frame[2] __attribute__((aligned(16)));

	frame[0] = (unsigned long)&frame[0];
	frame[1] = (unsigned long)fp_loop_return + 1;
	while (fp_loop_now() < end)
		fp_loop_spin((unsigned long *)frame, 50000000UL);
	return 0;
}
