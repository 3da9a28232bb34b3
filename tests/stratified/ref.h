/* tests/stratified/ref.h: an exact reference count of (kind, pc, w)
 * tuples, written independently of stratified.h (malloc'd open
 * addressing, growing), so tests and benches compare the model against
 * counts it did not produce. Also a message recorder for the handler. */
#ifndef HWPROF_TESTS_STRAT_REF_H
#define HWPROF_TESTS_STRAT_REF_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hwprof/stratified.h"

#if defined(__GNUC__) || defined(__clang__)
#define REF__UNUSED __attribute__((unused))
#else
#define REF__UNUSED
#endif

typedef struct ref_ent {
    uint64_t pc, w, count;
    uint32_t kind, used;
} ref_ent;

typedef struct ref_map {
    ref_ent *e;
    size_t mask, n;
} ref_map;

REF__UNUSED static uint64_t ref__hash(uint32_t kind, uint64_t pc, uint64_t w) {
    uint64_t x = pc * 0x9E3779B97F4A7C15ull ^ (w + 0x632BE59BD9B4E019ull) ^
                 ((uint64_t)kind << 40);
    x ^= x >> 31;
    x *= 0xD6E8FEB86659FD93ull;
    return x ^ (x >> 29);
}

REF__UNUSED static void ref_init(ref_map *m, size_t slots_pow2) {
    m->e = (ref_ent *)calloc(slots_pow2, sizeof(ref_ent));
    m->mask = slots_pow2 - 1;
    m->n = 0;
}

REF__UNUSED static void ref_free(ref_map *m) { free(m->e); }

REF__UNUSED static ref_ent *ref__slot(const ref_map *m, uint32_t kind, uint64_t pc,
                          uint64_t w) {
    size_t i = (size_t)ref__hash(kind, pc, w) & m->mask;
    while (m->e[i].used &&
           !(m->e[i].pc == pc && m->e[i].w == w && m->e[i].kind == kind))
        i = (i + 1) & m->mask;
    return m->e + i;
}

REF__UNUSED static void ref_add(ref_map *m, uint32_t kind, uint64_t pc, uint64_t w,
                    uint64_t c) {
    ref_ent *e;
    if (2 * (m->n + 1) > m->mask + 1) { /* grow */
        ref_map g;
        size_t i;
        ref_init(&g, 2 * (m->mask + 1));
        for (i = 0; i <= m->mask; i++)
            if (m->e[i].used) {
                *ref__slot(&g, m->e[i].kind, m->e[i].pc, m->e[i].w) = m->e[i];
                g.n++;
            }
        ref_free(m);
        *m = g;
    }
    e = ref__slot(m, kind, pc, w);
    if (!e->used) {
        e->used = 1;
        e->kind = kind;
        e->pc = pc;
        e->w = w;
        m->n++;
    }
    e->count += c;
}

REF__UNUSED static uint64_t ref_get(const ref_map *m, uint32_t kind, uint64_t pc,
                        uint64_t w) {
    const ref_ent *e = ref__slot(m, kind, pc, w);
    return e->used ? e->count : 0;
}

/* A handler that records every message and every batch size. */
typedef struct rec {
    hwp_strat_msg *m;
    size_t n, cap;
    uint32_t batches, bad_batches, batch_size; /* bad: != batch_size */
    uint64_t sum;
} rec;

REF__UNUSED static void rec_handler(void *ctx, const hwp_strat_msg *msgs, uint32_t n) {
    rec *r = (rec *)ctx;
    uint32_t i;
    r->batches++;
    if (r->batch_size && n != r->batch_size) r->bad_batches++;
    if (r->n + n > r->cap) {
        r->cap = 2 * (r->n + n) + 64;
        r->m = (hwp_strat_msg *)realloc(r->m, r->cap * sizeof *r->m);
    }
    for (i = 0; i < n; i++) {
        r->m[r->n++] = msgs[i];
        r->sum += msgs[i].count;
    }
}

#endif
