/* bench/harness/hwb_gen.c: hwprof-bench's generated streams, from the
 * test generators (tests/gen.h) and the synthetic code trace of the RAP
 * tests (tests/rap/rap_util.h). A translation unit of its own: the RAP
 * helpers name a type the host glue (hwx.h) also names. */
#include "hwb.h"

#include "gen.h"
#include "rap/rap_util.h"

uint64_t hwb_key(uint64_t rank) { return hwg_key(rank); }

void hwb_gen_ranks(int zipf, double s, uint64_t distinct, uint64_t seed,
                   uint64_t *out, size_t n) {
    hwp_rng r;
    hwg_zipf z;
    size_t i;
    hwp_rng_seed(&r, seed);
    if (zipf) {
        hwg_zipf_init(&z, distinct, s);
        for (i = 0; i < n; i++) out[i] = hwg_zipf_next(&z, &r);
    } else {
        for (i = 0; i < n; i++) out[i] = hwg_uniform(&r, distinct);
    }
}

void hwb_gen_code(uint32_t nfunc, uint64_t seed, uint64_t *out, size_t n) {
    hwx_code c;
    size_t i;
    hwx_code_init(&c, nfunc, 0x400000, seed);
    for (i = 0; i < n; i++) out[i] = hwx_code_next(&c);
    hwx_code_free(&c);
}
