/* Exhaustive period check of the 32-bit LFSR (heavy suite: ~4.3e9 steps).
 * A maximal-length LFSR returns to its seed after exactly 2^32 - 1 steps
 * and never passes through 0. */
#define HWPROF_IMPL
#include "hwprof/base.h"

#include "harness.h"

static void test_lfsr32_period(void) {
    hwp_lfsr l;
    uint64_t n = 0;
    uint32_t zero_seen = 0;
    hwp_lfsr_init(&l, 32, 0x12345678u);
    do {
        zero_seen |= hwp_lfsr_next(&l) == 0;
        n++;
    } while (l.state != 0x12345678u && n <= 0x100000000ull);
    CHECK_EQ(n, 0xFFFFFFFFull);
    CHECK_EQ(zero_seen, 0);
}

int main(int argc, char **argv) {
    hwt_begin(argc, argv);
    HWT_RUN(test_lfsr32_period);
    return hwt_end();
}
