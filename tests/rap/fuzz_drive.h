/* tests/rap/fuzz_drive.h: drives a JSON reader's libFuzzer entry
 * deterministically (the unit tests link the entry): a report, every
 * cut of it, then `rounds` copies each damaged at one random byte (a bit
 * flipped, a digit, a structural character, a byte deleted). */
#ifndef HWPROF_TESTS_FUZZ_DRIVE_H
#define HWPROF_TESTS_FUZZ_DRIVE_H

#include <stdint.h>
#include <string.h>

#include "hwprof/base.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Returns the number of inputs on which the entry returned nonzero (it
 * traps on a broken reader). m holds at least len bytes. */
static unsigned hwx_fuzz_drive(const char *s, size_t len, char *m,
                               uint64_t seed, unsigned rounds) {
    hwp_rng g;
    size_t k;
    unsigned i, bad = 0;
    hwp_rng_seed(&g, seed);
    bad += LLVMFuzzerTestOneInput((const uint8_t *)s, len) != 0;
    for (k = 0; k < len; k += 1 + k / 32)
        bad += LLVMFuzzerTestOneInput((const uint8_t *)s, k) != 0;
    for (i = 0; i < rounds; i++) {
        size_t n = len, at = hwp_rng_below(&g, len);
        memcpy(m, s, len);
        switch (i % 4) {
        case 0: m[at] ^= (char)(1u << hwp_rng_below(&g, 8)); break;
        case 1: m[at] = (char)('0' + hwp_rng_below(&g, 10)); break;
        case 2: m[at] = "{}[],:\"x-"[hwp_rng_below(&g, 9)]; break;
        default: memmove(m + at, m + at + 1, len - at - 1); n--; break;
        }
        bad += LLVMFuzzerTestOneInput((const uint8_t *)m, n) != 0;
    }
    return bad;
}

#endif
