/* Benchmarks of base.h primitives: the PRNG, the LFSR, and the two hashes
 * a stratified compressor can use (the paper's byte-randomize hash against
 * the cheap mixer), on the same key stream in the same run. */
#include "bench.h"

#include "gen.h"

#define N_KEYS 4096u
static uint64_t keys[N_KEYS];
static hwp_bytehash bh;

static uint64_t run_rng(void *ctx, uint64_t iters) {
    hwp_rng *r = (hwp_rng *)ctx;
    uint64_t s = 0, i;
    for (i = 0; i < iters; i++) s += hwp_rng_next(r);
    return s;
}

static uint64_t run_lfsr(void *ctx, uint64_t iters) {
    hwp_lfsr *l = (hwp_lfsr *)ctx;
    uint64_t s = 0, i;
    for (i = 0; i < iters; i++) s += hwp_lfsr_next(l);
    return s;
}

static uint64_t run_bytehash(void *ctx, uint64_t iters) {
    uint64_t s = 0, i;
    unsigned k;
    (void)ctx;
    for (i = 0; i < iters; i++)
        for (k = 0; k < N_KEYS; k++)
            s += hwp_xor_fold(hwp_bytehash_sig(&bh, keys[k], k), 11);
    return s;
}

static uint64_t run_mix64(void *ctx, uint64_t iters) {
    uint64_t s = 0, i;
    unsigned k;
    (void)ctx;
    for (i = 0; i < iters; i++)
        for (k = 0; k < N_KEYS; k++)
            s += hwp_mix64(keys[k] ^ hwp_mix64(k)) >> 53;
    return s;
}

int main(int argc, char **argv) {
    hwp_rng rng;
    hwp_lfsr lfsr;
    hwg_zipf z;
    unsigned k;
    hwb_begin(argc, argv);
    hwp_rng_seed(&rng, 1);
    hwp_lfsr_init(&lfsr, 32, 1);
    hwp_bytehash_init(&bh, 1);
    hwg_zipf_init(&z, 1u << 20, 1.0);
    for (k = 0; k < N_KEYS; k++) keys[k] = hwg_key(hwg_zipf_next(&z, &rng));
    hwb_run("base/rng_next", run_rng, &rng, 1);
    hwb_run("base/lfsr32_next", run_lfsr, &lfsr, 1);
    hwb_run("base/bytehash_index", run_bytehash, NULL, N_KEYS);
    hwb_run("base/mix64_index", run_mix64, NULL, N_KEYS);
    return hwb_end();
}
