/* SPDX-License-Identifier: MIT */
/* examples/lua/hwlua_int.h: what the glue's two event paths share; not
 * the interpreter's business (lvm.c sees hwlua.h only).
 *
 * hwlua.c parses HWPROF and owns the hooks of hwlua.h. With layer=vm it
 * hands every hook to hwlua_vm.c, which feeds hwprof/vm.h directly;
 * otherwise the hooks build the session's hwp_insn records (hwlua.c). */
#ifndef HWLUA_INT_H
#define HWLUA_INT_H

#include <stdint.h>
#include <stdio.h>

#include "hwlua.h"
#include "hwprof/vm.h"

/* A value as the models see it: the Lua type tag in the top byte, the
 * payload (an integer, a float's bits, an object's address) below. */
uint64_t hwlua_bits(const TValue *v);
/* A Proto's source name, copied into a table (a Proto may be collected
 * before the report): its index, and the name of an index. */
unsigned hwlua_source(const Proto *p);
const char *hwlua_source_name(unsigned i);
/* Where a function's code is: a Lua function's bytecode array (*lp its
 * Proto), a C function's entry point (*lp NULL; 1 for a call through
 * __call). */
uint64_t hwlua_fn_key(const TValue *fn, const Proto **lp);
/* The source line that names the loop whose back edge at `at` goes to
 * `header`: the for statement's, else the header's (LuaJIT's naming). */
int hwlua_loop_line(const Proto *p, const Instruction *at, const Instruction *header);

/* layer=vm's settings (docs/lua.md, "The VM layer path"). */
typedef struct hwlua_vm_opts {
    uint32_t models;    /* HWX_M_* bits (core refused by the caller)     */
    hwp_vm_desc d;      /* the layer's desc from the options; d.models,
                           on_decision and user are hwlua_vm_start's    */
    int floor;          /* 1: a zeroed hwp_vm behind the same hooks      */
    int exact;          /* 1: exact call and back-edge counts, to score  */
    FILE *decisions;    /* one line per decision, or NULL                */
} hwlua_vm_opts;

/* Sets up the layer and arms the interpreter's countdown (hwlua_left);
 * NULL, or why it could not. */
const char *hwlua_vm_start(const hwlua_vm_opts *o);
/* The hooks of hwlua.h on the layer's path. */
long hwlua_vm_select(const Proto *p, const Instruction *at);
void hwlua_vm_cond(const Instruction *at, int taken);
void hwlua_vm_jump(const Proto *p, const Instruction *at, const Instruction *target);
void hwlua_vm_loop(const Proto *p, const Instruction *at, int taken,
                   const Instruction *target);
void hwlua_vm_call(const Instruction *at, const TValue *fn);
void hwlua_vm_ret(const Instruction *at);
void hwlua_vm_load(const Instruction *at, const TValue *v);
void hwlua_vm_operands(const Instruction *at, const TValue *a, const TValue *b);
/* End of run: the layer's last decisions, then report (text; "" is
 * standard output) and json (hwp_vm_write_json; "" none). Prints why
 * a report could not be written to stderr. */
void hwlua_vm_finish(const char *report, const char *json);

#endif
