/* SPDX-License-Identifier: MIT */
/* tests/fuzz/fuzz_cp_simple.c: the co-processor's buffered sampling
 * baseline (row "cp_simple"): fuzz_cp.c's target on that row, so every
 * component has its target under its own name (tests/components.py). */
#define FZ_NAME cp_simple
#include "fuzz_cp.c"
