/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * socktab replay: run `.sock` conformance scripts (../shared/spec/script-format.md) against
 * socktab and the live kernel, or fuzz the two against each other. What the rest of the tree
 * calls: the CLI's entry point and, for the libFuzzer target, the parser alone. The harness's
 * own types are in script.h.
 */
#ifndef SOCKTAB_REPLAY_H
#define SOCKTAB_REPLAY_H

#include <stddef.h>
#include <stdint.h>

/* `socktab replay ...` with argv[0] = "replay": exit status (2: bad usage or script). */
int rp_main(int argc, char **argv);

/*
 * Parse @len bytes of script text as file @file and throw the result away: 0 for a valid script,
 * -1 with a file:line message in @err otherwise. Runs nothing; the libFuzzer target
 * tests/fuzz/fuzz_script.c calls it.
 */
int rp_parse_only(const char *file, const uint8_t *text, size_t len, char *err, size_t errcap);

#endif
