/* bench/rap/peers.h: the peers RAP is measured beside, on the same
 * stream in the same run (hosted; benchmarks only).
 *   exact   open-addressing hash table of every distinct key (the answer)
 *   ss      Space-Saving top-k (Metwally, Agrawal & El Abbadi, ICDT 2005)
 *           with the stream-summary structure, in the default RAP tree's
 *           8 KB
 *   cm      count-min with dyadic range queries, at any memory */
#ifndef HWPROF_BENCH_RAP_PEERS_H
#define HWPROF_BENCH_RAP_PEERS_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct exact_tab {
    uint64_t *key, *count;
    uint64_t mask;
    unsigned shift; /* the product's bits that index: its top ones past 2^24 slots */
} exact_tab;

static inline void exact_init(exact_tab *t, unsigned log2_slots) {
    size_t n = (size_t)1 << log2_slots;
    t->key = (uint64_t *)calloc(n, sizeof *t->key);
    t->count = (uint64_t *)calloc(n, sizeof *t->count);
    t->mask = n - 1;
    t->shift = log2_slots <= 24 ? 40 : 64 - log2_slots;
}

static inline void exact_free(exact_tab *t) {
    free(t->key);
    free(t->count);
}

static inline void exact_add(exact_tab *t, uint64_t key) {
    uint64_t i = (key * 0x9E3779B97F4A7C15ull) >> t->shift & t->mask;
    while (t->count[i] && t->key[i] != key) i = (i + 1) & t->mask;
    t->key[i] = key;
    t->count[i]++;
}

/* Space-Saving with the stream-summary structure (Metwally et al., sec.
 * 3.1): counters sit in buckets of equal count, buckets in a list by
 * count, so an increment moves a counter to the next bucket and the
 * minimum is the first bucket's first counter: O(1) per update. 256
 * counters of (key, count, error), 16-bit links and a 512-slot index:
 * 8 KB, the default RAP tree's memory. */
#define SS_K 256u
#define SS_SLOTS 512u
#define SS_NIL 0xFFFFu
typedef struct ss_tab {
    uint64_t key[SS_K], count[SS_K], err[SS_K]; /* 6 KB */
    uint16_t slot[SS_SLOTS];       /* entry + 1, 0 = empty             */
    uint16_t bucket[SS_K];         /* entry -> its bucket              */
    uint16_t enext[SS_K], eprev[SS_K]; /* entries of one bucket        */
    uint16_t bfirst[SS_K], bnext[SS_K], bprev[SS_K]; /* buckets by count */
    uint16_t bfree, bmin;          /* free bucket list, smallest count */
    unsigned size;
} ss_tab;

static inline unsigned ss_hash(uint64_t key) {
    return (unsigned)((key * 0x9E3779B97F4A7C15ull) >> 55);
}

static inline void ss_init(ss_tab *s) {
    unsigned i;
    memset(s, 0, sizeof *s);
    for (i = 0; i < SS_K; i++) s->bnext[i] = (uint16_t)(i + 1 < SS_K ? i + 1 : SS_NIL);
    s->bfree = 0;
    s->bmin = SS_NIL;
}

/* Take entry e out of its bucket; an emptied bucket is freed. */
static inline void ss_detach(ss_tab *s, unsigned e) {
    unsigned b = s->bucket[e];
    if (s->eprev[e] != SS_NIL) s->enext[s->eprev[e]] = s->enext[e];
    else s->bfirst[b] = s->enext[e];
    if (s->enext[e] != SS_NIL) s->eprev[s->enext[e]] = s->eprev[e];
    if (s->bfirst[b] == SS_NIL) {
        if (s->bprev[b] != SS_NIL) s->bnext[s->bprev[b]] = s->bnext[b];
        else s->bmin = s->bnext[b];
        if (s->bnext[b] != SS_NIL) s->bprev[s->bnext[b]] = s->bprev[b];
        s->bnext[b] = s->bfree;
        s->bfree = (uint16_t)b;
    }
}

/* Put entry e (count already set) into the bucket after `after` (SS_NIL:
 * the front), creating it when its count differs. */
static inline void ss_attach(ss_tab *s, unsigned e, unsigned after) {
    unsigned b = after == SS_NIL ? s->bmin : s->bnext[after];
    if (b == SS_NIL || s->count[s->bfirst[b]] != s->count[e]) {
        unsigned nb = s->bfree;
        s->bfree = s->bnext[nb];
        s->bprev[nb] = (uint16_t)after;
        s->bnext[nb] = (uint16_t)b;
        if (b != SS_NIL) s->bprev[b] = (uint16_t)nb;
        if (after != SS_NIL) s->bnext[after] = (uint16_t)nb;
        else s->bmin = (uint16_t)nb;
        s->bfirst[nb] = SS_NIL;
        b = nb;
    }
    s->bucket[e] = (uint16_t)b;
    s->eprev[e] = SS_NIL;
    s->enext[e] = s->bfirst[b];
    if (s->bfirst[b] != SS_NIL) s->eprev[s->bfirst[b]] = (uint16_t)e;
    s->bfirst[b] = (uint16_t)e;
}

/* count[e] + 1: to the next bucket. The bucket before the move is kept
 * as the anchor unless the move empties it. */
static inline void ss_bump(ss_tab *s, unsigned e) {
    unsigned b = s->bucket[e], anchor = b;
    if (s->bfirst[b] == e && s->enext[e] == SS_NIL) anchor = s->bprev[b];
    ss_detach(s, e);
    s->count[e]++;
    ss_attach(s, e, anchor);
}

static inline void ss_unlink(ss_tab *s, uint64_t key) { /* backward-shift delete */
    unsigned i = ss_hash(key), j;
    while (s->key[s->slot[i] - 1] != key) i = (i + 1) & (SS_SLOTS - 1);
    for (j = (i + 1) & (SS_SLOTS - 1); s->slot[j]; j = (j + 1) & (SS_SLOTS - 1)) {
        unsigned home = ss_hash(s->key[s->slot[j] - 1]);
        if (((j - home) & (SS_SLOTS - 1)) >= ((j - i) & (SS_SLOTS - 1))) {
            s->slot[i] = s->slot[j];
            i = j;
        }
    }
    s->slot[i] = 0;
}

static inline void ss_add(ss_tab *s, uint64_t key) {
    unsigned i = ss_hash(key), e;
    while (s->slot[i]) {
        e = s->slot[i] - 1u;
        if (s->key[e] == key) {
            ss_bump(s, e);
            return;
        }
        i = (i + 1) & (SS_SLOTS - 1);
    }
    if (s->size < SS_K) {
        e = s->size++;
        s->key[e] = key;
        s->count[e] = 1;
        s->err[e] = 0;
        s->slot[i] = (uint16_t)(e + 1);
        ss_attach(s, e, SS_NIL);
        return;
    }
    e = s->bfirst[s->bmin]; /* a counter of the minimum count */
    ss_unlink(s, s->key[e]);
    for (i = ss_hash(key); s->slot[i]; i = (i + 1) & (SS_SLOTS - 1)) {
    }
    s->slot[i] = (uint16_t)(e + 1);
    s->key[e] = key;
    s->err[e] = s->count[e];
    ss_bump(s, e);
}

/* Count-min (Cormode & Muthukrishnan, J. Algorithms 2005) with range
 * queries by dyadic decomposition (their sec. 4.1): one sketch of depth
 * CM_D per level l = 0 .. bits-1 counting key >> l, so [lo, hi] is the
 * sum of at most 2 bits dyadic intervals. `width` counters a row, from
 * the memory given. Estimates never fall below the truth. */
#define CM_D 2u
typedef struct cm_tab {
    uint32_t *c;      /* bits x CM_D x width */
    unsigned bits, width;
} cm_tab;

static inline void cm_init(cm_tab *t, unsigned bits, size_t bytes) {
    t->bits = bits;
    t->width = (unsigned)(bytes / (4u * CM_D * bits));
    if (t->width < 1) t->width = 1;
    t->c = (uint32_t *)calloc((size_t)bits * CM_D * t->width, 4);
}

static inline unsigned cm_col(const cm_tab *t, uint64_t x, unsigned l,
                              unsigned r) {
    uint64_t h = (x + 0x9E3779B97F4A7C15ull * (1u + l * CM_D + r)) *
                 0xBF58476D1CE4E5B9ull;
    return (unsigned)(((h ^ (h >> 31)) >> 32) * t->width >> 32);
}

static inline void cm_add(cm_tab *t, uint64_t key) {
    unsigned l, r;
    for (l = 0; l < t->bits; l++)
        for (r = 0; r < CM_D; r++)
            t->c[((size_t)l * CM_D + r) * t->width + cm_col(t, key >> l, l, r)]++;
}

static inline uint64_t cm_point(const cm_tab *t, uint64_t x, unsigned l) {
    uint64_t m = ~(uint64_t)0;
    unsigned r;
    for (r = 0; r < CM_D; r++) {
        uint64_t v = t->c[((size_t)l * CM_D + r) * t->width + cm_col(t, x, l, r)];
        if (v < m) m = v;
    }
    return m;
}

/* [lo, hi] inside [0, 2^bits): the largest aligned blocks, left to right. */
static inline uint64_t cm_range(const cm_tab *t, uint64_t lo, uint64_t hi) {
    uint64_t sum = 0, end;
    for (;;) {
        unsigned l = 0;
        while (l + 1 < t->bits && !(lo & (((uint64_t)2 << l) - 1)) &&
               hi - lo >= ((uint64_t)2 << l) - 1)
            l++;
        sum += cm_point(t, lo >> l, l);
        end = lo + (((uint64_t)1 << l) - 1);
        if (end >= hi) return sum;
        lo = end + 1;
    }
}

#endif
