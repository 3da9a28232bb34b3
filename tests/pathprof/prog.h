/* tests/pathprof/prog.h: a synthetic control-flow program for the path
 * profiler's tests and benchmarks (hosted).
 *
 * The program (main loop with an if/else, a call, an indirect jump table
 * and a recursive call; a procedure with nested loops and an if/else; a
 * recursive procedure) is written as C functions, one activation record
 * per simulated call. It hands every retired branch to `emit` and, in
 * parallel, keeps the reference BL path profile the paper defines
 * (section 3, Table 1) in a form that shares nothing with the model: each
 * activation holds its own current path as (start, length, bits) in a
 * local struct, the way a Ball-Larus instrumented procedure would, and a
 * completed path is counted in an exact hash map.
 *
 * With `cap` set, it also knows which paths a path stack of that depth
 * with the drop policy must ignore: an activation whose entry was pushed
 * out of the bottom (more than cap activations above it) has its current
 * path poisoned; the path is ignored when it completes.
 */
#ifndef HWPROF_TESTS_PATHPROF_PROG_H
#define HWPROF_TESTS_PATHPROF_PROG_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hwprof/base.h"

#if defined(__GNUC__) || defined(__clang__)
#define PP__UNUSED __attribute__((unused))
#else
#define PP__UNUSED
#endif

/* ---- exact path map --------------------------------------------------- */

typedef struct pp_key {
    uint64_t start, bits; /* bits: first branch most significant */
    uint32_t len;
} pp_key;

typedef struct pp_slot {
    pp_key k;
    uint64_t count, insns, value;
    int used;
} pp_slot;

typedef struct pp_map {
    pp_slot *s;
    size_t cap, n;
} pp_map;

PP__UNUSED static void pp_map_init(pp_map *m, size_t cap) {
    m->s = (pp_slot *)calloc(cap, sizeof *m->s);
    m->cap = cap;
    m->n = 0;
}

PP__UNUSED static void pp_map_free(pp_map *m) { free(m->s); }

static pp_slot *pp_map_get(pp_map *m, pp_key k) {
    size_t i = (size_t)((k.start * 31 + k.bits * 7 + k.len) * 0x9E3779B97F4A7C15ull >> 20) % m->cap;
    for (;; i = (i + 1) % m->cap) {
        pp_slot *s = &m->s[i];
        if (!s->used) {
            s->used = 1;
            s->k = k;
            m->n++;
            if (m->n * 2 > m->cap) abort(); /* tests size maps generously */
            return s;
        }
        if (s->k.start == k.start && s->k.bits == k.bits && s->k.len == k.len)
            return s;
    }
}

/* Same entries with the same counts (count, insns, value as asked)? */
PP__UNUSED static int pp_map_same(const pp_map *a, pp_map *b, int cmp_insns) {
    size_t i;
    if (a->n != b->n) return 0;
    for (i = 0; i < a->cap; i++) {
        pp_slot *x = &a->s[i], *y;
        if (!x->used) continue;
        y = pp_map_get(b, x->k);
        if (y->count != x->count) return 0;
        if (cmp_insns && y->insns != x->insns) return 0;
    }
    return a->n == b->n;
}

/* ---- the program ------------------------------------------------------ */

typedef void (*pp_emit_fn)(void *ctx, uint64_t pc, uint64_t next, uint32_t cls,
                           int taken, uint32_t insns);

typedef struct pp_frame {
    uint64_t start, bits, insns;
    uint32_t len;
    int poisoned, level;
} pp_frame;

typedef struct pp_prog {
    pp_emit_fn emit;
    void *ctx;
    hwp_rng rng;
    pp_map *ref;       /* expected completed paths, or NULL          */
    unsigned cap;      /* path-stack depth for poisoning; 0 = none    */
    unsigned max_len;  /* split length (paper: 32)                    */
    unsigned max_rec;  /* recursion depth bound                       */
    uint32_t pend;     /* instructions since the last branch          */
    uint64_t ignored;  /* expected ignored paths                      */
    uint64_t branches, insns;
    pp_frame *frames[1024];
} pp_prog;

PP__UNUSED static void pp_restart(pp_frame *f, uint64_t at) {
    f->start = at;
    f->bits = 0;
    f->len = 0;
    f->insns = 0;
}

PP__UNUSED static void pp_complete(pp_prog *g, pp_frame *f) {
    if (f->poisoned) {
        g->ignored++;
        f->poisoned = 0;
    } else if (g->ref) {
        pp_key k;
        pp_slot *s;
        k.start = f->start;
        k.bits = f->bits;
        k.len = f->len;
        s = pp_map_get(g->ref, k);
        s->count++;
        s->insns += f->insns;
    }
}

PP__UNUSED static void pp_blk(pp_prog *g, uint32_t n) {
    g->pend += n;
    g->insns += n;
}

PP__UNUSED static void pp_send(pp_prog *g, pp_frame *f, uint64_t pc, uint64_t next,
                    uint32_t cls, int taken) {
    g->pend++;
    g->insns++;
    g->branches++;
    f->insns += g->pend;
    g->emit(g->ctx, pc, next, cls, taken, g->pend);
    g->pend = 0;
}

/* conditional branch or direct jump */
PP__UNUSED static void pp_br(pp_prog *g, pp_frame *f, uint64_t pc, uint64_t target,
                  int taken, uint32_t cls) {
    uint64_t next = taken ? target : pc + 4;
    pp_send(g, f, pc, next, cls, taken);
    f->bits = f->bits * 2 + (taken ? 1 : 0);
    f->len++;
    if (taken && target <= pc) { /* a back edge ends the path */
        pp_complete(g, f);
        pp_restart(f, target);
    } else if (f->len == g->max_len) { /* descriptor full: split */
        pp_complete(g, f);
        pp_restart(f, next);
    }
}

PP__UNUSED static void pp_indirect(pp_prog *g, pp_frame *f, uint64_t pc, uint64_t target) {
    pp_send(g, f, pc, target, HWP_CLS_INDIRECT, 1);
    f->bits = f->bits * 2 + 1;
    f->len++;
    pp_complete(g, f);
    pp_restart(f, target);
}

/* A call: the caller's path only counts the block; the callee's
 * activation starts its own path at the target. */
PP__UNUSED static void pp_call(pp_prog *g, pp_frame *f, pp_frame *callee, uint64_t pc,
                    uint64_t target) {
    pp_send(g, f, pc, target, HWP_CLS_CALL, 1);
    pp_restart(callee, target);
    callee->poisoned = 0;
    callee->level = f->level + 1;
    g->frames[callee->level] = callee;
    if (g->cap && (unsigned)callee->level >= g->cap)
        g->frames[callee->level - (int)g->cap]->poisoned = 1;
}

PP__UNUSED static void pp_ret(pp_prog *g, pp_frame *f, uint64_t pc, uint64_t to) {
    pp_send(g, f, pc, to, HWP_CLS_RET, 1);
    pp_complete(g, f);
}

PP__UNUSED static int pp_coin(pp_prog *g, unsigned pct) {
    return hwp_rng_below(&g->rng, 100) < pct;
}

/* f1 @0x2000: nested loops with an if/else in the inner one. */
PP__UNUSED static void pp_f1(pp_prog *g, pp_frame *caller, uint64_t call_pc) {
    pp_frame f;
    unsigned o, i, no = 1 + hwp_rng_below(&g->rng, 3);
    pp_call(g, caller, &f, call_pc, 0x2000);
    pp_blk(g, 2);
    for (o = 0; o < no; o++) { /* outer head 0x2010 */
        unsigned ni = 1 + hwp_rng_below(&g->rng, 4);
        pp_blk(g, 1);
        for (i = 0; i < ni; i++) { /* inner head 0x2020 */
            int t;
            pp_blk(g, 2);
            t = pp_coin(g, 50);
            pp_br(g, &f, 0x2024, 0x2034, t, HWP_CLS_BR_COND);
            if (!t) {
                pp_blk(g, 1);
                pp_br(g, &f, 0x2030, 0x2038, 1, HWP_CLS_JUMP);
            } else {
                pp_blk(g, 2);
            }
            pp_blk(g, 1);
            pp_br(g, &f, 0x203c, 0x2020, i + 1 < ni, HWP_CLS_BR_COND);
        }
        pp_blk(g, 1);
        pp_br(g, &f, 0x2044, 0x2010, o + 1 < no, HWP_CLS_BR_COND);
    }
    pp_blk(g, 1);
    pp_ret(g, &f, 0x2050, call_pc + 4);
}

/* rec @0x3000: recursion d levels deep. */
PP__UNUSED static void pp_rec(pp_prog *g, pp_frame *caller, uint64_t call_pc, unsigned d) {
    pp_frame f;
    pp_call(g, caller, &f, call_pc, 0x3000);
    pp_blk(g, 2);
    pp_br(g, &f, 0x3004, 0x3010, d == 0, HWP_CLS_BR_COND);
    if (d) {
        pp_blk(g, 1);
        pp_rec(g, &f, 0x3008, d - 1);
        pp_blk(g, 1);
    }
    pp_blk(g, 1);
    pp_br(g, &f, 0x3014, 0x3020, pp_coin(g, 30), HWP_CLS_BR_COND);
    pp_blk(g, 2);
    pp_ret(g, &f, 0x3024, call_pc + 4);
}

/* main @0x1000: `iters` iterations of the main loop; its own path stays
 * open at the end (the caller flushes). main is activation level 0. */
PP__UNUSED static void pp_main(pp_prog *g, pp_frame *m, unsigned iters) {
    static const uint64_t cases[3] = {0x1100, 0x1200, 0x1300};
    unsigned it;
    m->level = 0;
    m->poisoned = 0;
    g->frames[0] = m;
    pp_restart(m, 0x1000);
    for (it = 0; it < iters; it++) {
        unsigned c;
        int t = pp_coin(g, 30);
        pp_blk(g, 3);
        pp_br(g, m, 0x1010, 0x1030, t, HWP_CLS_BR_COND);
        if (!t) {
            pp_blk(g, 2);
            pp_br(g, m, 0x1020, 0x1040, 1, HWP_CLS_JUMP);
        } else {
            pp_blk(g, 4);
        }
        pp_blk(g, 1);
        pp_f1(g, m, 0x1044);
        pp_blk(g, 2);
        c = hwp_rng_below(&g->rng, 3);
        pp_indirect(g, m, 0x104c, cases[c]);
        pp_blk(g, 1 + c);
        pp_br(g, m, cases[c] + 0x20, 0x1400, 1, HWP_CLS_JUMP);
        pp_blk(g, 1);
        pp_rec(g, m, 0x1404, hwp_rng_below(&g->rng, g->max_rec + 1));
        pp_blk(g, 1);
        pp_br(g, m, 0x1410, 0x1000, it + 1 < iters, HWP_CLS_BR_COND);
    }
    pp_blk(g, 1);
}

PP__UNUSED static void pp_init(pp_prog *g, pp_emit_fn emit, void *ctx, uint64_t seed) {
    memset(g, 0, sizeof *g);
    g->emit = emit;
    g->ctx = ctx;
    hwp_rng_seed(&g->rng, seed);
    g->max_len = 32;
    g->max_rec = 6;
}

/* Completes main's open path, as hwp_path_flush does at the end. */
PP__UNUSED static void pp_finish(pp_prog *g, pp_frame *m) { pp_complete(g, m); }

#endif
