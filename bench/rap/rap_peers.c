/* SPDX-License-Identifier: MIT */
/* rap_peers: range-query error of RAP against Space-Saving (stream
 * summary) and count-min with dyadic ranges at equal memory, on the same
 * streams in the same run. Every structure gets the stream's key domain
 * (RAP as key_base/key_bits, count-min as its dyadic levels).
 *
 * Queries: every aligned block of 2^0, 2^4, 2^8, 2^12 and 2^16 keys that
 * holds at least 1% of the stream in the exact profile. Error: |estimate
 * - exact| / n, mean and worst over the queries; RAP answers with
 * hwp_rap_query's estimate, Space-Saving with the sum of its counters
 * inside the block, count-min with the sum over the block's dyadic
 * decomposition. Memory: RAP's 8 KB tree (512 nodes, no stage 0; its
 * walk tables, a software stand-in for the paper's TCAM, are extra),
 * Space-Saving 256 counters (8 KB), count-min 8 KB of 32-bit counters. */
#define HWPROF_IMPL
#include "hwprof/rap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "rap/peers.h"
#include "rap/rap_util.h"

#define N (1u << 22)

static hwx_event ev[N];
static uint64_t keys[N];
static ss_tab ss;

typedef struct err_acc {
    double sum, max;
    unsigned n;
} err_acc;

static void acc(err_acc *a, double est, double exact) {
    double e = (est > exact ? est - exact : exact - est) / (double)N;
    a->sum += e;
    if (e > a->max) a->max = e;
    a->n++;
}

static uint64_t ss_range(uint64_t lo, uint64_t hi) {
    uint64_t s = 0;
    unsigned i;
    for (i = 0; i < ss.size; i++)
        if (ss.key[i] >= lo && ss.key[i] <= hi) s += ss.count[i];
    return s;
}

static void stream(const char *name, uint64_t base, unsigned bits,
                   double eps) {
    static const unsigned widths[] = {0, 4, 8, 12, 16};
    static unsigned char store[1u << 16];
    hwp_rap r;
    hwp_rap_desc d;
    hwx_exact x;
    cm_tab cm;
    err_acc er = {0, 0, 0}, es = {0, 0, 0}, ec = {0, 0, 0};
    size_t i;
    unsigned w;
    memset(&d, 0, sizeof d);
    d.key_base = base;
    d.key_bits = bits;
    d.eps = eps;
    d.nodes = 512;
    d.buffer = HWP_RAP_BUFFER_NONE;
    if (hwp_rap_init(&r, store, sizeof store, &d, NULL) != HWP_OK) {
        fprintf(stderr, "rap_peers: %s\n", hwp_why(&r));
        exit(1);
    }
    ss_init(&ss);
    cm_init(&cm, bits, 8192);
    for (i = 0; i < N; i++) {
        hwp_rap_add(&r, keys[i], 1);
        ss_add(&ss, keys[i]);
        cm_add(&cm, keys[i] - base);
        ev[i].key = keys[i];
        ev[i].weight = 1;
    }
    hwx_exact_build(&x, ev, N);
    for (w = 0; w < sizeof widths / sizeof widths[0]; w++) {
        size_t a = 0;
        while (a < x.n) { /* blocks in key order: the keys of one block */
            uint64_t blo = x.key[a] >> widths[w] << widths[w];
            uint64_t bhi = blo + (((uint64_t)1 << widths[w]) - 1);
            uint64_t t = hwx_exact_range(&x, blo, bhi);
            hwp_rap_est e;
            while (a < x.n && x.key[a] <= bhi) a++;
            if (t < N / 100) continue;
            hwp_rap_query(&r, blo, bhi, &e);
            acc(&er, e.estimate, (double)t);
            acc(&es, (double)ss_range(blo, bhi), (double)t);
            acc(&ec, (double)cm_range(&cm, blo - base, bhi - base), (double)t);
        }
    }
    printf("| %-14s | %u | %.5f / %.5f | %.5f / %.5f | %.5f / %.5f |\n", name,
           er.n, er.n ? er.sum / er.n : 0, er.max, es.n ? es.sum / es.n : 0,
           es.max, ec.n ? ec.sum / ec.n : 0, ec.max);
    hwx_exact_free(&x);
    free(cm.c);
}

int main(void) {
    hwp_rng g;
    hwg_zipf z;
    hwx_code code;
    size_t i;
    printf("| stream (2^22 events) | hot blocks | RAP 8KB eps=10%%: mean / max "
           "err/n | Space-Saving 8KB | count-min 8KB dyadic |\n"
           "|---|---|---|---|---|\n");
    hwx_code_init(&code, 3000, 0x400000, 1);
    for (i = 0; i < N; i++) keys[i] = hwx_code_next(&code);
    hwx_code_free(&code);
    stream("code", 0x400000, 24, 0.10);
    hwp_rng_seed(&g, 2);
    hwg_zipf_init(&z, 1u << 20, 1.0);
    for (i = 0; i < N; i++) keys[i] = hwg_zipf_next(&z, &g);
    stream("zipf values", 0, 24, 0.10);
    hwp_rng_seed(&g, 3);
    for (i = 0; i < N; i++) { /* heap-like data addresses: 4 hot arrays */
        unsigned u = hwp_rng_below(&g, 10);
        keys[i] = 0x10000000 + (u < 6 ? (u & 3u) * 0x100000 +
                                           8u * hwp_rng_below(&g, 4096)
                                     : hwp_rng_below(&g, 1u << 24));
    }
    stream("data addresses", 0x10000000, 24, 0.10);
    return 0;
}
