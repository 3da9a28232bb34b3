/* SPDX-License-Identifier: MIT */
/* Benchmarks of the stratified-sampling compressors (Sastry, Bodik and
 * Smith, "Rapid Profiling via Stratified Sampling", ISCA 2001) on a
 * Zipf-distributed <pc, value> tuple stream, beside the peer: an exact
 * open-addressing hash-table count of the same stream (tests/stratified/
 * ref.h), measured in the same run. The handler folds nothing (it sums
 * counts), so the figures are the modelled hardware's software cost;
 * hwp_strat_acc_fold's cost per message is measured separately. */
#include "bench.h"

#include "gen.h"

#define HWPROF_IMPL
#include "hwprof/stratified.h"

#include "stratified/ref.h"

#define N_EV 65536u
static uint64_t pcs[N_EV], vals[N_EV];

typedef struct ctx {
    hwp_strat s;
    void *raw;
    uint64_t sink;
} ctx;

static void sum_handler(void *c, const hwp_strat_msg *m, uint32_t n) {
    uint32_t i;
    for (i = 0; i < n; i++) ((ctx *)c)->sink += m[i].count;
}

static uint64_t run_strat(void *p, uint64_t iters) {
    ctx *c = (ctx *)p;
    uint64_t it;
    unsigned k;
    for (it = 0; it < iters; it++)
        for (k = 0; k < N_EV; k++) hwp_strat_push(&c->s, 0, pcs[k], vals[k]);
    return c->sink;
}

/* The same with each pc's half of the hash computed ahead, as a host
 * caches it per translated instruction (hwp_strat_pc_key). */
static uint32_t keys[N_EV];
static uint64_t run_strat_key(void *p, uint64_t iters) {
    ctx *c = (ctx *)p;
    uint64_t it;
    unsigned k;
    for (it = 0; it < iters; it++)
        for (k = 0; k < N_EV; k++) hwp_strat_push_key(&c->s, keys[k], 0, pcs[k], vals[k]);
    return c->sink;
}

static uint64_t run_exact(void *p, uint64_t iters) {
    ref_map *m = (ref_map *)p;
    uint64_t it;
    unsigned k;
    for (it = 0; it < iters; it++)
        for (k = 0; k < N_EV; k++) ref_add(m, 0, pcs[k], vals[k], 1);
    return m->n;
}

/* Software side: folding one message into the accumulator. */
static hwp_strat_msg msgs[N_EV];
static uint64_t run_fold(void *p, uint64_t iters) {
    hwp_strat_acc *a = (hwp_strat_acc *)p;
    uint64_t it;
    hwp_strat_acc_stats st;
    for (it = 0; it < iters; it++) hwp_strat_acc_fold(a, msgs, N_EV);
    return hwp_strat_acc_get_stats(a, &st) == HWP_OK ? st.total : 0;
}

static void bench_with(const char *name, hwp_strat_desc d,
                       uint64_t (*run)(void *, uint64_t)) {
    static ctx c;
    unsigned k;
    size_t n;
    d.on_interrupt = sum_handler;
    d.ctx = &c;
    d.seed = 1;
    n = hwp_strat_bytes(&d);
    c.raw = malloc(n);
    if (hwp_strat_init(&c.s, c.raw, n, &d,
                       NULL) != HWP_OK) {
        fprintf(stderr, "%s: %s\n", name, hwp_why(&c.s));
        exit(1);
    }
    for (k = 0; k < N_EV; k++) keys[k] = hwp_strat_pc_key(&c.s, 0, pcs[k]);
    hwb_run(name, run, &c, N_EV);
    free(c.raw);
}

static void bench(const char *name, hwp_strat_desc d) {
    bench_with(name, d, run_strat);
}

int main(int argc, char **argv) {
    hwp_rng rng;
    hwg_zipf z;
    unsigned k;
    hwp_strat_desc d;
    ref_map exact;
    hwp_strat_acc acc;
    void *accmem;
    size_t ab;
    hwb_begin(argc, argv);
    hwp_rng_seed(&rng, 1);
    hwg_zipf_init(&z, 1u << 20, 1.0);
    for (k = 0; k < N_EV; k++) {
        uint64_t r = hwg_zipf_next(&z, &rng);
        pcs[k] = 0x400000 + 4 * (r & 4095);
        vals[k] = hwg_key(r >> 12);
        msgs[k].pc = pcs[k];
        msgs[k].w = vals[k];
        msgs[k].count = 256;
        msgs[k].kind = 0;
        msgs[k].stratum = 0;
        msgs[k].samples = 1;
        msgs[k].reserved = 0;
    }
    ref_init(&exact, 1u << 17);
    run_exact(&exact, 1); /* grow the table before timing */
    hwb_run("strat/peer_exact_hashmap", run_exact, &exact, N_EV);
    ref_free(&exact);

#define D0() memset(&d, 0, sizeof d)
    D0(); d.entries = 1; d.sampler = HWP_STRAT_RANDOM;
    bench("strat/R_256", d);
    D0(); d.entries = 1;
    bench("strat/P_256", d);
    D0(); d.entries = 1; d.sampler = HWP_STRAT_RANDOM; d.counter = 1;
    bench("strat/CR_256", d);
    D0();
    bench("strat/H[P_256]_2048", d);
    D0();
    bench_with("strat/H[P_256]_2048_pckey", d, run_strat_key);
    D0(); d.hash = HWP_STRAT_HASH_CHEAP;
    bench("strat/H[P_256]_2048_cheap", d);
    D0(); d.sampler = HWP_STRAT_RANDOM; d.counter = 1;
    bench("strat/H[CR_256]_2048", d);
    D0(); d.sampler = HWP_STRAT_COUNTDOWN;
    bench("strat/H[Rcd_256]_2048", d);
    D0(); d.l2_entries = 16;
    bench("strat/H[P_256]_2048+A_16", d);
    D0(); d.scheme = HWP_STRAT_TAGGED;
    bench("strat/tag2-256-2048x2", d);
    D0(); d.scheme = HWP_STRAT_TAGGED; d.hash = HWP_STRAT_HASH_CHEAP;
    bench("strat/tag2-256-2048x2_cheap", d);
    D0(); d.scheme = HWP_STRAT_ASSOC;
    bench("strat/A_4096x8", d);
#undef D0

    ab = hwp_strat_acc_bytes(NULL);
    accmem = malloc(ab);
    hwp_strat_acc_init(&acc, accmem, ab, NULL, NULL);
    hwb_run("strat/acc_fold_per_message", run_fold, &acc, N_EV);
    free(accmem);
    return hwb_end();
}
