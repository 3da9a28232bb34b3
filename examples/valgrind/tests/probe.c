/* examples/valgrind/tests/probe.c: a guest program whose event stream in
 * one routine is known exactly, for the Valgrind tool's stream test.
 *
 *   probe N     fills arr[i] = mix(i + 1) for a fixed PROBE_MAX elements,
 *               prints the routine's address range, the array's address
 *               and the 16 AT_RANDOM bytes, then runs probe_loop(N, arr)
 *               once (1 <= N <= PROBE_MAX). Everything but probe_loop
 *               does the same work whatever N is (same output length
 *               too), so two runs differ by probe_loop's records alone.
 *
 * probe_loop is hand-written assembly so every instruction's class, and
 * every branch's outcome, follows from N and arr alone (the test driver
 * recomputes them; see test_vg_stream.c for the expected records). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>

uint64_t probe_loop(uint64_t n, const uint64_t *arr);
/* The routine's bounds as data symbols: ISO C has no function-pointer to
 * object-pointer conversion. */
extern const char probe_loop_start[], probe_loop_end[];

/* rdi = n (>= 1), rsi = arr. Returns the sum of the odd elements. */
__asm__(".text\n"
        ".globl probe_loop\n"
        ".type probe_loop, @function\n"
        ".globl probe_loop_start\n"
        "probe_loop:\n"
        "probe_loop_start:\n"
        "  xor %eax, %eax\n"          /* other                          */
        "  xor %ecx, %ecx\n"          /* other                          */
        "1: mov (%rsi,%rcx,8), %rdx\n" /* load arr[i]                    */
        "  mov %rcx, -8(%rsp)\n"      /* store (red zone)               */
        "  test $1, %dl\n"            /* other                          */
        "  jz 2f\n"                   /* cond: taken iff arr[i] even    */
        "  add %rdx, %rax\n"          /* other, odd elements only       */
        "2: inc %rcx\n"               /* other                          */
        "  cmp %rdi, %rcx\n"          /* other                          */
        "  jb 1b\n"                   /* cond: taken iff i + 1 < n      */
        "  lea 3f(%rip), %r8\n"       /* other                          */
        "  jmp *%r8\n"                /* indirect jump to 3             */
        "3: call 4f\n"                /* call 4                         */
        "  jmp 5f\n"                  /* jump 5                         */
        "4: ret\n"                    /* return to the jmp              */
        "5: ret\n"                    /* return to main                 */
        ".globl probe_loop_end\n"
        "probe_loop_end:\n"
        ".size probe_loop, probe_loop_end - probe_loop\n");

/* The same mixer as hwp_mix64 (base.h), so the driver can recompute. */
static uint64_t mix(uint64_t x) {
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

#define PROBE_MAX 131072u

static uint64_t arr[PROBE_MAX];
static volatile uint64_t sink;

int main(int argc, char **argv) {
    uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000, i;
    const unsigned char *rnd = (const unsigned char *)getauxval(AT_RANDOM);
    if (n < 1) n = 1;
    if (n > PROBE_MAX) n = PROBE_MAX;
    for (i = 0; i < PROBE_MAX; i++) arr[i] = mix(i + 1);
    printf("range %p %p\narr %p\nrandom ", (const void *)probe_loop_start,
           (const void *)probe_loop_end, (void *)arr);
    for (i = 0; i < 16; i++) printf("%02x", rnd ? rnd[i] : 0);
    printf("\n");
    fflush(stdout);
    sink = probe_loop(n, arr);
    return 0;
}
