/* examples/valgrind/tests/regchain.c: a guest for check_vg_regs.py and
 * check_qemu_regs.py.
 * "chain": N multiplies, each reading the register the one before wrote;
 * "indep": N multiplies of the same two unchanged values;
 * "block": the chain four multiplies to an iteration, so three of every
 * four read a register written earlier in the same basic block.
 * Under a host with core=on and registers the chains take at least
 * N x lat_mul cycles; without registers all run at the issue rate.
 * The loops are written out in assembly, so the compiler's choices
 * cannot add instructions to them (3, 4 and 6 an iteration). */
#include <string.h>

#define N 1000000L

int main(int argc, char **argv) {
    long n = N, x = 3, y = 0, k = 5;
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "chain") == 0) {
        __asm__ volatile("1: imul %2, %0\n\tsub $1, %1\n\tjne 1b"
                         : "+r"(x), "+r"(n) : "r"(k));
    } else if (strcmp(mode, "block") == 0) {
        n /= 4;
        __asm__ volatile("1: imul %2, %0\n\timul %2, %0\n\timul %2, %0\n\timul %2, %0\n\t"
                         "sub $1, %1\n\tjne 1b"
                         : "+r"(x), "+r"(n) : "r"(k));
    } else {
        __asm__ volatile("1: mov %2, %0\n\timul %3, %0\n\tsub $1, %1\n\tjne 1b"
                         : "=&r"(y), "+r"(n) : "r"(x), "r"(k));
    }
    return (int)((x + y) & 1);
}
