/* SPDX-License-Identifier: MIT */
/* hwprof/hwprof.h: the umbrella header; includes every component and
 * nothing else. See base.h for the HWPROF_IMPL / HWPROF_STATIC /
 * HWPROF_STDIO switches. */
#ifndef HWPROF_HWPROF_H
#define HWPROF_HWPROF_H

/* The component list, HWP_COMPONENTS, is in cost.h, beside the cost
 * shim's operations: cost.h takes its models from it, and every
 * component header includes it. */
#include "base.h"
#include "cost.h"
#include "profileme.h"
#include "stratified.h"
#include "rap.h"
#include "pathprof.h"
#include "coproc.h"
#include "core.h"
#include "vm.h"

#endif /* HWPROF_HWPROF_H */
