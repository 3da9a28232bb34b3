/* SPDX-License-Identifier: MIT */
/* hwprof/hwprof.h: the umbrella header; includes every component.
 * See base.h for the HWPROF_IMPL / HWPROF_STATIC / HWPROF_STDIO switches. */
#ifndef HWPROF_HWPROF_H
#define HWPROF_HWPROF_H
#endif

#include "base.h"
#include "cost.h"
#include "profileme.h"
#include "stratified.h"
#include "rap.h"
#include "pathprof.h"
#include "coproc.h"
#include "core.h"
#include "vm.h"
