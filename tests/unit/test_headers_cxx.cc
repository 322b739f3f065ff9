// SPDX-License-Identifier: BSD-2-Clause
// The same check as test_headers.c, compiled as C++ (extern "C" blocks, no C-only syntax).
#include "test_headers.c"
