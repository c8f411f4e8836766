/* A tiny shared library: plt_calls calls into it through the PLT. */
__attribute__((noinline)) double unwtest_lib_scale(double x)
{
	return x * 1.5 + 2.0;
}

int unwtest_lib_add(int a, int b)
{
	return a + b;
}
