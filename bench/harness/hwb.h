/* bench/harness/hwb.h: what hwprof-bench's translation units share. */
#ifndef HWPROF_BENCH_HWB_H
#define HWPROF_BENCH_HWB_H

#include <stddef.h>
#include <stdint.h>

/* A rank to a distinct 64-bit key (tests/gen.h's bijection). */
uint64_t hwb_key(uint64_t rank);
/* n ranks in [0, distinct): uniform, or Zipf with exponent s. */
void hwb_gen_ranks(int zipf, double s, uint64_t distinct, uint64_t seed,
                   uint64_t *out, size_t n);
/* n basic-block start PCs of the RAP tests' synthetic program of nfunc
 * functions (tests/rap/rap_util.h, hwx_code). */
void hwb_gen_code(uint32_t nfunc, uint64_t seed, uint64_t *out, size_t n);

#endif
