/* SPDX-License-Identifier: MIT */
/* examples/lua/hwlua.h: the hooks lua-hwprof's interpreter loop calls.
 *
 * lua-hwprof.patch puts one HWLUA_* macro at each place in lvm.c where a
 * JIT's profiler would look:
 *   HWLUA_FETCH      every bytecode dispatched (ProfileMe's countdown)
 *   HWLUA_COND       a conditional jump, taken or not (comparisons, tests)
 *   HWLUA_JUMP       an unconditional jump (forward or a loop's back edge)
 *   HWLUA_LOOP       a numeric or generic for loop's back edge
 *   HWLUA_CALL       a call (Lua or C function), HWLUA_TAILCALL a tail
 *                    call, HWLUA_RET a return
 *   HWLUA_LOAD       the value a table read produced
 *   HWLUA_OPERANDS   the operands of arithmetic and comparisons
 * Everything else is in hwlua.c (hwlua_vm.c with HWPROF=layer=vm, where
 * the countdown is hwprof/vm.h's and hwlua_on mirrors its flag). The
 * interpreter keeps ProfileMe's countdown in a local (a register), writes
 * it back wherever it saves its pc (any call out that may re-enter the
 * VM), and reads it back wherever it reloads its trap flag; so the one
 * decrement per bytecode the paper asks for is all a non-selected
 * bytecode costs. The other hooks test one
 * global word of enabled streams first.
 */
#ifndef HWLUA_H
#define HWLUA_H

#include "lstate.h"

/* Streams the glue asked for, HWLUA_EV_* bits. */
enum {
    HWLUA_EV_COND = 1u << 0,
    HWLUA_EV_JUMP = 1u << 1,
    HWLUA_EV_CALL = 1u << 2,
    HWLUA_EV_RET = 1u << 3,
    HWLUA_EV_LOAD = 1u << 4,
    HWLUA_EV_OPND = 1u << 5,
    HWLUA_EV_ALL = (1u << 6) - 1u
};

extern unsigned hwlua_on;
/* Bytecodes left before ProfileMe's next selection (>= 1). */
extern long hwlua_left;

/* A selection (the countdown ran out in L's frame): returns the next
 * countdown. */
long hwlua_select(lua_State *L, const Proto *p, const Instruction *at);
void hwlua_cond(const Instruction *at, int taken);
void hwlua_jump(const Proto *p, const Instruction *at,
                const Instruction *target);
void hwlua_loop(const Proto *p, const Instruction *at, int taken,
                const Instruction *target);
void hwlua_call(const Instruction *at, const TValue *fn, int tail);
void hwlua_ret(const Instruction *at, const CallInfo *ci);
void hwlua_load(const Instruction *at, const TValue *v);
void hwlua_operands(const Instruction *at, const TValue *a, const TValue *b);

/* The model's tiering decisions as they are taken (docs/lua.md,
 * "Tiering decisions"): fn(ctx, d) runs once per decision, d an
 * hwx_decision (examples/common/hwx_host.h). Register before the script
 * runs; lua-hwprof's decisions=FILE option registers a writer of one
 * line per decision. */
struct hwx_decision;
void hwlua_on_decision(void (*fn)(void *ctx, const struct hwx_decision *d), void *ctx);

#define HWLUA_LOCALS long hwl_left = hwlua_left
#define HWLUA_SAVE() (hwlua_left = hwl_left)
#define HWLUA_RELOAD() (hwl_left = hwlua_left)

/* HWLUA_FETCH is used only in luaV_execute, where L is the running
 * thread. The glue reads the countdown to learn how many bytecodes went by, and
 * may restart it. */
#define HWLUA__IF(bit, call) \
    (l_unlikely(hwlua_on & (bit)) \
         ? (void)(HWLUA_SAVE(), (call), HWLUA_RELOAD()) : (void)0)
#define HWLUA_FETCH(p, at) \
    (l_unlikely(--hwl_left == 0) \
         ? (void)(HWLUA_SAVE(), hwl_left = hwlua_select(L, p, at)) : (void)0)
#define HWLUA_COND(at, taken) HWLUA__IF(HWLUA_EV_COND, hwlua_cond(at, taken))
#define HWLUA_JUMP(p, at, target) \
    HWLUA__IF(HWLUA_EV_JUMP, hwlua_jump(p, at, target))
#define HWLUA_LOOP(p, at, taken, target) \
    HWLUA__IF(HWLUA_EV_JUMP, hwlua_loop(p, at, taken, target))
#define HWLUA_CALL(at, fn) HWLUA__IF(HWLUA_EV_CALL, hwlua_call(at, fn, 0))
#define HWLUA_TAILCALL(at, fn) HWLUA__IF(HWLUA_EV_CALL, hwlua_call(at, fn, 1))
/* ci: the returning frame */
#define HWLUA_RET(at, ci) HWLUA__IF(HWLUA_EV_RET, hwlua_ret(at, ci))
#define HWLUA_LOAD(at, v) HWLUA__IF(HWLUA_EV_LOAD, hwlua_load(at, v))
#define HWLUA_OPERANDS(at, a, b) \
    HWLUA__IF(HWLUA_EV_OPND, hwlua_operands(at, a, b))

#endif
