#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Run the conformance corpus on one backend: tests/conformance/run.sh SOCKTAB_EXE socktab|kernel
# The kernel backend needs root (or CAP_SYS_ADMIN) to create namespaces: exit 77 (skipped)
# without it. Prints the failing lines and "N passed, M failed" (script lines).
set -u
exe=$(readlink -f "$1")
backend=$2
cd "$(dirname "$0")/../.."
exec "$exe" replay -q --backend "$backend" tests/conformance/*.sock tests/replay/smoke.sock
