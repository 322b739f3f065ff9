/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Every public header compiles alone, as C and as C++, with -Wall -Wextra -Werror: meson builds
 * this file once per header with SOCKTAB_TEST_HEADER naming it (test_headers_cxx.cc includes it
 * for C++). Running the result checks nothing more; the build is the test.
 */
#include SOCKTAB_TEST_HEADER
#include SOCKTAB_TEST_HEADER /* and twice: the include guard works */

int main(void)
{
	return 0;
}
