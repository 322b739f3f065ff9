/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target: the `.sock` script parser of `socktab replay` (replay/parse.c).
 *
 * The parser reads scripts written by people and by the differential fuzzer; a crash, a leak or
 * undefined behaviour on any input is a bug. The input is parsed as a whole file and thrown
 * away; nothing runs. On a rejected script the message must name the file and a line, as the
 * CLI promises ("file:line: ..."). Seeds: the scripts in tests/conformance.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[300];

	err[0] = 0;
	if (rp_parse_only("fuzz.sock", data, size, err, sizeof(err)) == 0)
		return 0;
	if (strncmp(err, "fuzz.sock:", 10) != 0) {
		fprintf(stderr, "fuzz_script: rejection without a file:line message: '%s'\n", err);
		abort();
	}
	return 0;
}
