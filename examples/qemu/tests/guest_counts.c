/* A guest whose instruction, branch and load counts in three code regions
 * are known in closed form (examples/qemu/tests/check_counts.py computes
 * them from N). It prints "BEGIN END LOADPC TABLE N" and then
 * "RBEGIN REND MOVSPC STOSPC SRC DST PBEGIN PEND" (guest addresses) and
 * runs the three kernels once each.
 *
 * kernel, for rcx = N-1 down to 0:
 *   dec rcx; mov rax, [table + 8 rcx]; add sum, rax; test cl, 1; jz skip;
 *   nop;
 *   skip: test rcx, rcx; jnz loop
 */
/* rep kernel (rep_kernel): rep string ops. QEMU 7.2 ends a TB
 * after one iteration of a rep instruction and jumps back to it, so each
 * rep below sits at the end of a multi-instruction TB; the counting
 * convention is Valgrind's (one record per pass through the instruction:
 * count K retires K + 1 times, the last pass only tests rcx):
 *   r8 = R; loop: rsi = src; rdi = dst; rcx = r8 - 1; rep movsb;
 *   rcx = 3; eax = 0; rep stosq; dec r8; jnz loop
 *
 * page kernel (hwq_pbegin): three nops and a 10-byte movabs that starts 3
 * bytes before a page end, then ret. QEMU 7.2 cuts a TB's non-first
 * instruction that crosses into another page and re-translates it at the
 * head of the next TB, but the plugin still sees the cut copy: the
 * plugin must drop that copy, so a call retires exactly 5 instructions.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

extern const char hwq_kbegin[], hwq_kend[], hwq_kload[];
extern const char hwq_rbegin[], hwq_rend[], hwq_rmovs[], hwq_rstos[];
extern const char hwq_pbegin[], hwq_pend[];

/* A global label other code (and the printed addresses) can refer to. */
#define HWQ_LABEL(name) ".globl " #name "\n" #name ":\n\t"

static uint64_t table[1 << 16];
static unsigned char rsrc[64];
static uint64_t rdst[64 / 8 + 3];

/* A page of its own: int3 filler up to 3 bytes before the page end, where
 * the movabs starts; hwq_pbegin is 3 nops before it. */
__asm__(".pushsection .text.hwq_page,\"ax\",@progbits\n"
        ".balign 4096\n"
        ".fill 4096 - 6, 1, 0xcc\n"
        HWQ_LABEL(hwq_pbegin)
        "nop\n\tnop\n\tnop\n\t"
        "movabs $0x1122334455667788, %rax\n\t"
        "ret\n"
        HWQ_LABEL(hwq_pend)
        ".popsection\n");

__attribute__((noinline)) static void rep_kernel(uint64_t r) {
    __asm__ volatile(
        HWQ_LABEL(hwq_rbegin)
        "mov %[r], %%r8\n"
        "1:\n\t"
        "lea %[src], %%rsi\n\t"
        "lea %[dst], %%rdi\n\t"
        "lea -1(%%r8), %%rcx\n"
        HWQ_LABEL(hwq_rmovs)
        "rep movsb\n\t"
        "mov $3, %%ecx\n\t"
        "xor %%eax, %%eax\n"
        HWQ_LABEL(hwq_rstos)
        "rep stosq\n\t"
        "dec %%r8\n\t"
        "jnz 1b\n"
        HWQ_LABEL(hwq_rend)
        : [dst] "=m"(rdst)
        : [r] "r"(r), [src] "m"(rsrc)
        : "r8", "rcx", "rsi", "rdi", "rax", "cc", "memory");
}

__attribute__((noinline)) static uint64_t kernel(uint64_t n, const uint64_t *t) {
    uint64_t sum = 0;
    __asm__ volatile(
        HWQ_LABEL(hwq_kbegin)
        "mov %[n], %%rcx\n"
        "1:\n\t"
        "dec %%rcx\n"
        HWQ_LABEL(hwq_kload)
        "mov (%[t],%%rcx,8), %%rax\n\t"
        "add %%rax, %[sum]\n\t"
        "test $1, %%cl\n\t"
        "jz 2f\n\t"
        "nop\n"
        "2:\n\t"
        "test %%rcx, %%rcx\n\t"
        "jnz 1b\n"
        HWQ_LABEL(hwq_kend)
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
    printf("%p %p %p %p %p %p %p %p\n", (const void *)hwq_rbegin, (const void *)hwq_rend,
           (const void *)hwq_rmovs, (const void *)hwq_rstos, (void *)rsrc, (void *)rdst,
           (const void *)hwq_pbegin, (const void *)hwq_pend);
    fflush(stdout);
    for (i = 0; i < sizeof rsrc; i++) rsrc[i] = (unsigned char)(i * 3 + 1);
    rep_kernel(sizeof rsrc);
    for (i = 0; i < 100; i++) ((void (*)(void))(uintptr_t)hwq_pbegin)();
    return kernel(n, table) == 0 && n > 7 ? 1 : 0;
}
