/* SPDX-License-Identifier: MIT */
/* Benchmarks of the co-processor model's host-side cost, with peers in the
 * same run:
 *   coproc/reject_class     retired non-loads while the load-value program
 *                           runs: rejected by the opcode filter
 *   coproc/reject_region    loads outside the PC-filter region
 *   coproc/reject_masked    loads masked in the PC bit table
 *   coproc/lvp_mixed        one load in five instructions, every load
 *                           tagged and run through the LVP routine
 *   coproc/lvp_loads        loads only, every one tagged
 *   peer/empty_hook         the coproc/ benchmarks' loop calling a hook
 *                           that does nothing: the loop's own cost, to
 *                           subtract from theirs
 *   peer/walk               reading each record's class
 *   peer/simple_sampler     the paper's simple sampler over the same loads
 *   peer/exact_value_prof   exact (pc, value) counting in a hash table:
 *                           what instrumentation-based value profiling pays
 * Events are retired instructions handed to the model. */
#include "bench.h"

#define HWPROF_IMPL
#include "hwprof/coproc.h"

#include "gen.h"

#define N 4096u
static hwp_insn other[N], loads[N], mixed[N];
static hwp_cp cp;
static unsigned char *cp_mem;
static hwp_cp_simple simple;

/* 16-byte aligned storage from malloc (C99 has no aligned allocator). */

/* The loop every coproc/ benchmark runs: HOOK(&cp, record) per record. */
#define RETIRE_LOOP(HOOK)                                       \
    do {                                                        \
        const hwp_insn *v_ = (const hwp_insn *)ctx;             \
        uint64_t i_;                                            \
        unsigned k_;                                            \
        for (i_ = 0; i_ < iters; i_++)                          \
            for (k_ = 0; k_ < N; k_++) HOOK(&cp, &v_[k_]);      \
    } while (0)

static uint64_t run_retire(void *ctx, uint64_t iters) {
    RETIRE_LOOP(hwp_cp_insn);
    {
        hwp_cp_stats st;
        hwp_cp_get_stats(&cp, &st);
        return st.events + st.tagged;
    }
}

/* A hook that does nothing. The empty volatile asm emits no instruction
 * but may not be deleted, so the loop around it stays and is counted;
 * elsewhere a volatile store keeps it (one instruction more). */
#if defined(__GNUC__)
#define EMPTY_HOOK(x, in) __asm__ __volatile__("" : : "r"(x), "r"(in))
#else
static const hwp_insn *volatile empty_sink;
#define EMPTY_HOOK(x, in) ((void)(x), empty_sink = (in))
#endif

static uint64_t run_empty(void *ctx, uint64_t iters) {
    RETIRE_LOOP(EMPTY_HOOK);
    return iters * N;
}

static uint64_t run_walk(void *ctx, uint64_t iters) {
    const hwp_insn *v = (const hwp_insn *)ctx;
    uint64_t i, s = 0;
    unsigned k;
    for (i = 0; i < iters; i++)
        for (k = 0; k < N; k++) s += v[k].cls;
    return s;
}

static uint64_t run_simple(void *ctx, uint64_t iters) {
    uint64_t i;
    unsigned k;
    (void)ctx;
    for (i = 0; i < iters; i++)
        for (k = 0; k < N; k++) hwp_cp_simple_load(&simple, loads[k].pc, loads[k].value);
    {
        hwp_cp_simple_stats st = {0, 0, 0, 0, 0, 0, 0};
        hwp_cp_simple_get_stats(&simple, &st);
        return st.samples;
    }
}

/* Exact value profiling peer: open-addressing (pc, value) -> count. */
#define EXACT_BITS 16u
static struct { uint64_t pc, value, count; } exact[1u << EXACT_BITS];

static uint64_t run_exact(void *ctx, uint64_t iters) {
    uint64_t i, s = 0;
    unsigned k;
    (void)ctx;
    for (i = 0; i < iters; i++)
        for (k = 0; k < N; k++) {
            uint64_t pc = loads[k].pc, v = loads[k].value;
            uint32_t h = (uint32_t)hwp_mix64(pc ^ hwp_mix64(v)) & ((1u << EXACT_BITS) - 1);
            while (exact[h].count && (exact[h].pc != pc || exact[h].value != v))
                h = (h + 1) & ((1u << EXACT_BITS) - 1);
            exact[h].pc = pc;
            exact[h].value = v;
            s += ++exact[h].count;
        }
    return s;
}

/* A fresh LVP instance; `setup` 1 = region excludes every load, 2 = every
 * load masked, 0 = profile everything. Profiling never completes during
 * a benchmark: the load set is re-armed by masking nothing. */
static void fresh(int setup) {
    hwp_cp_desc d;
    hwp_cp_lvp_desc ld;
    size_t b;
    unsigned k;
    memset(&d, 0, sizeof d);
    memset(&ld, 0, sizeof ld);
    ld.max_visits = 1000000;
    ld.min_visits = 1000000;
    ld.idle_limit = 0xFFFFFFFFu;
    b = hwp_cp_bytes(&d);
    free(cp_mem);
    if (!(cp_mem = (unsigned char *)malloc(b))) abort();
    if (hwp_cp_init(&cp, cp_mem, b, &d, NULL) || hwp_cp_lvp_start(&cp, &ld)) abort();
    if (setup == 1) {
        for (k = 0; k < 0xFFFFu; k++) { /* a region no load falls in */
            unsigned j, hit = 0;
            for (j = 0; j < N && !hit; j++)
                hit = (((loads[j].pc * 0x9E3779B97F4A7C15ull) >> 32) & 0xFFFFu) == k;
            if (!hit) break;
        }
        if (hwp_cp_filter_region(&cp, 0xFFFFu, k) != HWP_OK) abort();
    } else if (setup == 2) {
        for (k = 0; k < N; k++) hwp_cp_filter_mask_pc(&cp, loads[k].pc);
    }
}

int main(int argc, char **argv) {
    hwp_rng r;
    hwg_zipf z;
    hwp_cp_simple_desc sd;
    unsigned k;
    void *smem;
    hwb_begin(argc, argv);
    hwp_rng_seed(&r, 1);
    hwg_zipf_init(&z, 256, 1.0);
    for (k = 0; k < N; k++) {
        uint64_t rank = hwg_zipf_next(&z, &r);
        loads[k].pc = 0x400000 + 8 * rank;
        loads[k].addr = 0x10000000 + 64 * rank;
        loads[k].value = hwp_rng_below(&r, 8) ? rank : hwp_rng_below(&r, 4);
        loads[k].cls = HWP_CLS_LOAD;
        other[k].pc = 0x500000 + 4 * k;
        other[k].cls = k % 3 ? HWP_CLS_OTHER : HWP_CLS_BR_COND;
        mixed[k] = k % 5 == 4 ? loads[k] : other[k];
    }
    memset(&sd, 0, sizeof sd);
    sd.period = 10000;
    if (!(smem = malloc(hwp_cp_simple_bytes(&sd))) ||
        hwp_cp_simple_init(&simple, smem, hwp_cp_simple_bytes(&sd), &sd, NULL))
        abort();

    fresh(0);
    hwb_run("coproc/reject_class", run_retire, other, N);
    fresh(1);
    hwb_run("coproc/reject_region", run_retire, loads, N);
    fresh(2);
    hwb_run("coproc/reject_masked", run_retire, loads, N);
    fresh(0);
    hwb_run("coproc/lvp_mixed", run_retire, mixed, N);
    fresh(0);
    hwb_run("coproc/lvp_loads", run_retire, loads, N);
    hwb_run("peer/empty_hook", run_empty, other, N);
    hwb_run("peer/walk", run_walk, other, N);
    hwb_run("peer/simple_sampler", run_simple, NULL, N);
    hwb_run("peer/exact_value_prof", run_exact, NULL, N);
    free(cp_mem);
    free(smem);
    return hwb_end();
}
