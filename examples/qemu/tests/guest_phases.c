/* A guest with distinct phases: A (an integer hash loop over a small
 * array) and B (a byte-histogram loop over a larger buffer) alternate
 * A B A B A, each for PHASE_ITERS iterations, so there are exactly four
 * phase changes. examples/qemu/tests/check_phases.py asserts that the
 * path-based phase detector finds them. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint32_t small[64];
static uint8_t big[1 << 14];
static uint32_t hist[256];

__attribute__((noinline)) static uint32_t phase_a(long iters) {
    uint32_t h = 1;
    long i;
    for (i = 0; i < iters; i++) {
        h = h * 31 + small[i & 63];
        if (h & 1) h ^= 0x9e3779b9u;
    }
    return h;
}

__attribute__((noinline)) static uint32_t phase_b(long iters) {
    long i;
    uint32_t m = 0;
    for (i = 0; i < iters; i++) {
        uint8_t c = big[(i * 7) & (sizeof big - 1)];
        hist[c]++;
        if (hist[c] > m) m = hist[c];
        else if (c == 0) m--;
    }
    return m;
}

int main(int argc, char **argv) {
    long iters = argc > 1 ? atol(argv[1]) : 400000;
    uint32_t r = 0;
    int k;
    for (k = 0; k < 64; k++) small[k] = (uint32_t)k * 2654435761u;
    for (k = 0; k < (int)sizeof big; k++) big[k] = (uint8_t)(k * 131 + (k >> 5));
    for (k = 0; k < 5; k++) r += k % 2 ? phase_b(iters) : phase_a(iters);
    printf("%u\n", r);
    return 0;
}
