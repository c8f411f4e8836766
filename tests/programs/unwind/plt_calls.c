/* Calls into a shared library and libm through lazily bound PLT entries. */
#include <math.h>
#include <stdio.h>

double unwtest_lib_scale(double x);
int unwtest_lib_add(int a, int b);

int main(int argc, char **argv)
{
	double v = unwtest_lib_scale((double)argc);

	v += cos(v) + sqrt(v * v + 1.0);
	printf("%f %d\n", v, unwtest_lib_add(argc, 2));
	return 0;
}
