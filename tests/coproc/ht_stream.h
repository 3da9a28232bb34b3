/* SPDX-License-Identifier: MIT */
/* The load stream of examples/minivm/programs/hashtable.mvs (default
 * parameters), regenerated in C for the coproc regression test of the
 * hashtable bug report: an open-addressing table (16384 slots, linear
 * probing) gets 10000 keys from an LCG in [0, 20000), then 40000 lookups.
 * The same (pc, value) records the VM hands to hwp_cp_insn, in the same
 * order (checked against a capture of the VM: 282788 loads, identical).
 * The loads that matter:
 *   HTS_PROBE  slot+9, keys[i] in the probe loop: 61391 executions, value 0
 *              (an empty slot) 31950 times (0.5204), 7505 other values;
 *              its value-0 share falls as the table fills (0.98 over the
 *              first 500, 0.91 over the first 2874, 0.52 overall)
 *   HTS_SEEN   main+69, keys[slot] after the insert's probe: 10000
 *              executions, value 0 7881 times (0.7881)
 *   HTS_LOOK   main+106, keys[slot] after a lookup's probe: 40000
 *              executions, value 0 24069 times (0.6017), a steady share
 * Values carry the VM's integer tag (bit 60) as the VM reports them. */
#ifndef HWPROF_TEST_HT_STREAM_H
#define HWPROF_TEST_HT_STREAM_H

#include <stdint.h>
#include <stddef.h>

#define HTS_PC(i) (0x10000u + 8u * (uint64_t)(i)) /* bytecode index -> pc */
#define HTS_TAG 0x1000000000000000ull
#define HTS_PROBE HTS_PC(24)
#define HTS_SEEN HTS_PC(69)
#define HTS_LOOK HTS_PC(106)
#define HTS_CAP 16384u
#define HTS_LOADS 282788u /* loads in the whole run */

typedef struct hts_ev {
    uint64_t pc, value;
} hts_ev;

typedef struct hts {
    hts_ev *ev;
    size_t n, cap;
    uint64_t state;
    uint64_t keys[HTS_CAP], counts[HTS_CAP];
} hts;

static void hts__put(hts *h, uint32_t idx, uint64_t v) {
    if (h->n < h->cap) {
        h->ev[h->n].pc = HTS_PC(idx);
        h->ev[h->n].value = HTS_TAG | v;
    }
    h->n++;
}

/* rand: gload STATE (idx 0), gload RANGE (idx 11) */
static uint64_t hts__rand(hts *h) {
    hts__put(h, 0, h->state);
    h->state = (h->state * 1103515245u + 12345u) & 0x7fffffffu;
    hts__put(h, 11, 20000);
    return (h->state >> 8) % 20000u;
}

/* slot: gload MASK (idx 19), then per probe aload keys[i] (idx 24) and,
 * when the probe goes on, gload MASK (idx 37) */
static uint32_t hts__slot(hts *h, uint64_t k) {
    uint32_t i;
    hts__put(h, 19, HTS_CAP - 1u);
    i = (uint32_t)((k * 73244475u) >> 16) & (HTS_CAP - 1u);
    for (;;) {
        uint64_t s = h->keys[i];
        hts__put(h, 24, s);
        if (!s || s == k + 1u) return i;
        hts__put(h, 37, HTS_CAP - 1u);
        i = (i + 1u) & (HTS_CAP - 1u);
    }
}

/* Fills ev[0..cap) and returns the number of loads of the whole run. */
static size_t hts_generate(hts *h, hts_ev *ev, size_t cap) {
    uint32_t n, j;
    h->ev = ev, h->cap = cap, h->n = 0;
    for (j = 0; j < HTS_CAP; j++) h->keys[j] = h->counts[j] = 0;
    hts__put(h, 43, HTS_CAP); /* main: MASK = CAP - 1, STATE = SEED, ... */
    hts__put(h, 47, 777);
    h->state = 777;
    hts__put(h, 49, HTS_CAP);
    hts__put(h, 52, HTS_CAP);
    hts__put(h, 57, 10000);
    for (n = 0; n < 10000u; n++) { /* inserts */
        uint64_t k = hts__rand(h);
        uint32_t s = hts__slot(h, k);
        hts__put(h, 69, h->keys[s]);
        if (!h->keys[s]) h->keys[s] = k + 1u;
        hts__put(h, 85, h->counts[s]);
        h->counts[s]++;
    }
    hts__put(h, 96, 40000);
    for (n = 0; n < 40000u; n++) { /* lookups */
        uint32_t s = hts__slot(h, hts__rand(h));
        hts__put(h, 106, h->keys[s]);
    }
    return h->n;
}

#endif
