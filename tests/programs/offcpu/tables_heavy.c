/*
 * A program with a large unwind table (4,096 functions, each with its own
 * frame description) that sleeps: a new executable whose tables cost the
 * unwinder and the loader real work. Linked without a build id, every copy
 * is a file of its own (the tables are not shared between copies).
 *   usage: tables_heavy SECONDS
 */
#include <stdlib.h>
#include <unistd.h>

#define FN_(n)                                                                  \
	__attribute__((noinline)) int heavy_fn_##n(int x)                        \
	{                                                                       \
		volatile int a[4];                                              \
		a[0] = x;                                                       \
		return a[0] + n;                                                \
	}
#define FN(n) FN_(n)
#define X4(n) FN(n##0) FN(n##1) FN(n##2) FN(n##3)
#define X16(n) X4(n##0) X4(n##1) X4(n##2) X4(n##3)
#define X64(n) X16(n##0) X16(n##1) X16(n##2) X16(n##3)
#define X256(n) X64(n##0) X64(n##1) X64(n##2) X64(n##3)
#define X1024(n) X256(n##0) X256(n##1) X256(n##2) X256(n##3)
X1024(1) X1024(2) X1024(3) X1024(4)

int main(int argc, char **argv)
{
	int s = argc > 1 ? atoi(argv[1]) : 1;

	sleep((unsigned)s);
	return heavy_fn_100000(s) == 0;
}
