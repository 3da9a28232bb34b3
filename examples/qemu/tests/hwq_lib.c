/* The shared library of guest_lib.c: its one function is where the guest
 * spends nearly all its instructions. */
#include <stdint.h>

uint64_t hwq_lib_spin(uint64_t n) {
    uint64_t s = 1, i;
    for (i = 0; i < n; i++) s = (s ^ (s >> 7)) * 0x9e3779b97f4a7c15ull + i;
    return s;
}
