/* examples/synth.h: a small synthetic program that emits the hwp_insn
 * stream a real host would, for the quickstart and for tests that want a
 * stream with known structure but no emulator.
 *
 * The program, in two phases of equal length, each with its own code:
 *
 *   top:   load  r = a[i & 63]        a[] is 42 except every 10th slot
 *          add
 *          br    (i % 3 == 0) -> side  conditional, taken one time in three
 *          call  f                     f: 4-trip loop loading tbl[j & 1]
 *          jump  latch
 *   side:  store b[i & 15]
 *          ijmp  case[i & 3]           indirect jump through a table
 *   caseK: jump  latch
 *   latch: add
 *          br    (i < n) -> top        backward, loop-closing
 *
 * Phase 2 runs the same shape at other addresses with other data, so a
 * phase detector sees one change at the midpoint.
 */
#ifndef HWPROF_EXAMPLES_SYNTH_H
#define HWPROF_EXAMPLES_SYNTH_H

#include "hwprof/base.h"

typedef void (*synth_sink)(void *ctx, const hwp_insn *in);

typedef struct synth {
    synth_sink sink;
    void *ctx;
    uint64_t insns, loads, branches;
} synth;

static void synth__emit(synth *s, uint64_t pc, uint64_t next, uint32_t cls,
                        uint64_t addr, uint64_t value, int taken) {
    hwp_insn in;
    in.pc = pc;
    in.next_pc = next;
    in.addr = addr;
    in.value = value;
    in.cls = cls;
    in.events = taken ? HWP_EV_TAKEN : 0u;
    s->insns++;
    s->loads += cls == HWP_CLS_LOAD;
    s->branches += hwp_cls_is_branch(cls);
    s->sink(s->ctx, &in);
}

/* One phase: `iters` trips of the loop at code base `cb`, data base `db`. */
static void synth__phase(synth *s, uint64_t cb, uint64_t db, uint64_t iters,
                         uint64_t seed) {
    uint64_t i, j;
    for (i = 0; i < iters; i++) {
        uint64_t top = cb, side = cb + 0x20, latch = cb + 0x30, f = cb + 0x1000;
        uint64_t a = (i % 10 == 9) ? hwp_mix64(seed + i) & 0xFFFF : 42;
        synth__emit(s, top, top + 4, HWP_CLS_LOAD, db + 8 * (i & 63), a, 0);
        synth__emit(s, top + 4, top + 8, HWP_CLS_OTHER, 0, 0, 0);
        if (i % 3 == 0) {
            synth__emit(s, top + 8, side, HWP_CLS_BR_COND, side, 0, 1);
            synth__emit(s, side, side + 4, HWP_CLS_STORE, db + 0x800 + 8 * (i & 15), i, 0);
            synth__emit(s, side + 4, cb + 0x40 + 8 * (i & 3), HWP_CLS_INDIRECT,
                        cb + 0x40 + 8 * (i & 3), 0, 1);
            synth__emit(s, cb + 0x40 + 8 * (i & 3), latch, HWP_CLS_JUMP, latch, 0, 1);
        } else {
            synth__emit(s, top + 8, top + 12, HWP_CLS_BR_COND, side, 0, 0);
            synth__emit(s, top + 12, f, HWP_CLS_CALL, f, 0, 1);
            for (j = 0; j < 4; j++) {
                synth__emit(s, f, f + 4, HWP_CLS_LOAD, db + 0x1000 + 8 * (j & 1),
                            (j & 1) ? 9 : 7, 0);
                synth__emit(s, f + 4, f + 8, HWP_CLS_OTHER, 0, 0, 0);
                synth__emit(s, f + 8, j < 3 ? f : f + 12, HWP_CLS_BR_COND, f, 0, j < 3);
            }
            synth__emit(s, f + 12, top + 16, HWP_CLS_RET, top + 16, 0, 1);
            synth__emit(s, top + 16, latch, HWP_CLS_JUMP, latch, 0, 1);
        }
        synth__emit(s, latch, latch + 4, HWP_CLS_OTHER, 0, 0, 0);
        synth__emit(s, latch + 4, i + 1 < iters ? top : latch + 8, HWP_CLS_BR_COND,
                    top, 0, i + 1 < iters);
    }
}

/* Runs both phases of `iters` loop trips each. */
static void synth_run(synth *s, uint64_t iters, uint64_t seed) {
    synth__phase(s, 0x401000, 0x7f0000100000ull, iters, seed);
    synth__phase(s, 0x409000, 0x7f0000900000ull, iters, seed ^ 0x5555);
}

#endif
