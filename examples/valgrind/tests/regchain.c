/* examples/valgrind/tests/regchain.c: a guest for check_vg_regs.py.
 * "chain": N multiplies, each reading the register the one before wrote;
 * "indep": N multiplies of the same two unchanged values. Under the tool
 * with core=on and registers from VEX IR the chain takes at least
 * N x lat_mul cycles; without registers both run at the issue rate. */
#include <string.h>

#define N 1000000L

int main(int argc, char **argv) {
    long i, x = 3, y = 0, k = 5;
    if (argc > 1 && strcmp(argv[1], "chain") == 0) {
        for (i = 0; i < N; i++) __asm__ volatile("imul %1, %0" : "+r"(x) : "r"(k));
    } else {
        for (i = 0; i < N; i++)
            __asm__ volatile("imul %2, %0" : "=r"(y) : "0"(x), "r"(k));
    }
    return (int)((x + y) & 1);
}
