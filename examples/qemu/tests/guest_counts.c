/* A guest whose instruction, branch and load counts in one code region are
 * known in closed form (examples/qemu/tests/check_counts.py computes them
 * from N). It prints "BEGIN END LOADPC TABLE N" (guest addresses) and runs
 * the kernel once.
 *
 * kernel, for rcx = N-1 down to 0:
 *   dec rcx; mov rax, [table + 8 rcx]; add sum, rax; test cl, 1; jz skip;
 *   nop;
 *   skip: test rcx, rcx; jnz loop
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

extern const char hwq_kbegin[], hwq_kend[], hwq_kload[];

static uint64_t table[1 << 16];

__attribute__((noinline)) static uint64_t kernel(uint64_t n, const uint64_t *t) {
    uint64_t sum = 0;
    __asm__ volatile(
        ".globl hwq_kbegin\n"
        "hwq_kbegin:\n\t"
        "mov %[n], %%rcx\n"
        "1:\n\t"
        "dec %%rcx\n"
        ".globl hwq_kload\n"
        "hwq_kload:\n\t"
        "mov (%[t],%%rcx,8), %%rax\n\t"
        "add %%rax, %[sum]\n\t"
        "test $1, %%cl\n\t"
        "jz 2f\n\t"
        "nop\n"
        "2:\n\t"
        "test %%rcx, %%rcx\n\t"
        "jnz 1b\n"
        ".globl hwq_kend\n"
        "hwq_kend:\n"
        : [sum] "+r"(sum)
        : [n] "r"(n), [t] "r"(t)
        : "rcx", "rax", "cc", "memory");
    return sum;
}

int main(int argc, char **argv) {
    uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 0) : 10000, i;
    if (n == 0 || n > (1u << 16)) return 2;
    for (i = 0; i < n; i++) table[i] = i % 7;
    printf("%p %p %p %p %llu\n", (const void *)hwq_kbegin, (const void *)hwq_kend,
           (const void *)hwq_kload, (void *)table, (unsigned long long)n);
    fflush(stdout);
    return kernel(n, table) == 0 && n > 7 ? 1 : 0;
}
