/* SPDX-License-Identifier: MIT */
/* tests/fuzz/impl.c: the cold paths of every model, compiled once and
 * linked into every fuzz target (each target is then a small unit). */
#define HWPROF_IMPL
#include "hwprof/hwprof.h"
