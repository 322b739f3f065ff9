/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What common.h and rcu.h declare and every file may use: the misuse abort, the per-thread
 * registration count the read-side assertions read, and the ThreadSanitizer grace-period token.
 * Nothing here calls another file of the library.
 */
#include <stdio.h>
#include <stdlib.h>

#include "common.h"

#ifdef SOCKTAB_TSAN
char socktab__tsan_gp_token;
#endif

_Thread_local int socktab__registered __attribute__((tls_model("initial-exec")));

void socktab__misuse(const char *what)
{
	fprintf(stderr, "socktab: %s\n", what);
	abort();
}
