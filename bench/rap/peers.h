/* bench/rap/peers.h: the peers RAP is measured beside, on the same
 * stream in the same run (hosted; benchmarks only).
 *   exact   open-addressing hash table of every distinct key (the answer)
 *   ss      Space-Saving top-k (Metwally, Agrawal & El Abbadi, ICDT 2005)
 *           in the same 8 KB as the default RAP pool: 256 counters of
 *           (key, count, error), a 512-slot hash index and a min-heap. */
#ifndef HWPROF_BENCH_RAP_PEERS_H
#define HWPROF_BENCH_RAP_PEERS_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct exact_tab {
    uint64_t *key, *count;
    uint64_t mask;
} exact_tab;

static inline void exact_init(exact_tab *t, unsigned log2_slots) {
    size_t n = (size_t)1 << log2_slots;
    t->key = (uint64_t *)calloc(n, sizeof *t->key);
    t->count = (uint64_t *)calloc(n, sizeof *t->count);
    t->mask = n - 1;
}

static inline void exact_free(exact_tab *t) {
    free(t->key);
    free(t->count);
}

static inline void exact_add(exact_tab *t, uint64_t key) {
    uint64_t i = (key * 0x9E3779B97F4A7C15ull) >> 40 & t->mask;
    while (t->count[i] && t->key[i] != key) i = (i + 1) & t->mask;
    t->key[i] = key;
    t->count[i]++;
}

#define SS_K 256u
#define SS_SLOTS 512u
typedef struct ss_tab {
    uint64_t key[SS_K], count[SS_K], err[SS_K]; /* 6 KB */
    uint16_t slot[SS_SLOTS];                    /* entry + 1, 0 = empty */
    uint16_t heap[SS_K], pos[SS_K];             /* min-heap by count */
    unsigned size;
} ss_tab;

static inline unsigned ss_hash(uint64_t key) {
    return (unsigned)((key * 0x9E3779B97F4A7C15ull) >> 55);
}

static inline void ss_swap(ss_tab *s, unsigned a, unsigned b) {
    uint16_t t = s->heap[a];
    s->heap[a] = s->heap[b];
    s->heap[b] = t;
    s->pos[s->heap[a]] = (uint16_t)a;
    s->pos[s->heap[b]] = (uint16_t)b;
}

static inline void ss_down(ss_tab *s, unsigned i) {
    for (;;) {
        unsigned l = 2 * i + 1, m = i;
        if (l < s->size && s->count[s->heap[l]] < s->count[s->heap[m]]) m = l;
        if (l + 1 < s->size && s->count[s->heap[l + 1]] < s->count[s->heap[m]])
            m = l + 1;
        if (m == i) return;
        ss_swap(s, i, m);
        i = m;
    }
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
            s->count[e]++;
            ss_down(s, s->pos[e]);
            return;
        }
        i = (i + 1) & (SS_SLOTS - 1);
    }
    if (s->size < SS_K) {
        unsigned h = s->size++;
        e = h;
        s->key[e] = key;
        s->count[e] = 1;
        s->err[e] = 0;
        s->heap[h] = (uint16_t)e;
        s->pos[e] = (uint16_t)h;
        s->slot[i] = (uint16_t)(e + 1); /* count 1 is the minimum: heap ok */
        while (h && s->count[s->heap[(h - 1) / 2]] > s->count[s->heap[h]]) {
            ss_swap(s, h, (h - 1) / 2);
            h = (h - 1) / 2;
        }
        return;
    }
    e = s->heap[0]; /* replace the minimum (Space-Saving) */
    ss_unlink(s, s->key[e]);
    for (i = ss_hash(key); s->slot[i]; i = (i + 1) & (SS_SLOTS - 1)) {
    }
    s->slot[i] = (uint16_t)(e + 1);
    s->key[e] = key;
    s->err[e] = s->count[e];
    s->count[e]++;
    ss_down(s, 0);
}

#endif
