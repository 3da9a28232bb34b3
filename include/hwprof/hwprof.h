/* SPDX-License-Identifier: MIT */
/* hwprof/hwprof.h: the umbrella header; includes every component and
 * lists them. See base.h for the HWPROF_IMPL / HWPROF_STATIC /
 * HWPROF_STDIO switches. */
#ifndef HWPROF_HWPROF_H
#define HWPROF_HWPROF_H

/* The components, one row each: X(c, header, envelope).
 *   c         the C prefix: hwp_<c>, hwp_<c>_desc, hwp_<c>_stats and the
 *             contract's calls hwp_<c>_bytes, _init, _reset, _merge,
 *             _get_stats, _write_json, _write_text, _read_desc, _read_json,
 *             _desc_fields
 *   header    the header that defines it (<header>.h), which is also its
 *             page (docs/<header>.md), its conformance rows
 *             (tests/conformance/<header>.c) and its tests' and
 *             benchmarks' folders
 *   envelope  the "model" its JSON report carries
 * Whatever handles every component reads this list: the report tool's
 * loader, hwprof-bench, the conformance driver, the fuzz targets and the
 * build (through tests/components.py for Meson and Python); the test
 * compile/components fails when a component lacks what the list implies. */
#define HWP_COMPONENTS(X)                   \
    X(pm, profileme, "profileme")           \
    X(pm_table, profileme, "pm_table")      \
    X(strat, stratified, "strat")           \
    X(strat_acc, stratified, "strat_acc")   \
    X(rap, rap, "rap")                      \
    X(rap2, rap, "rap2")                    \
    X(path, pathprof, "path")               \
    X(hpt, pathprof, "hpt")                 \
    X(phase, pathprof, "phase")             \
    X(cp, coproc, "coproc")                 \
    X(cp_simple, coproc, "coproc_simple")   \
    X(core, core, "core")                   \
    X(vm, vm, "vm")

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
