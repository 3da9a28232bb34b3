/* A guest whose loop stores into its own code page on every iteration,
 * as code beside its data or a JIT patching near the code running does:
 * QEMU write-protects pages it has translated, so each store ends the
 * loop's TB there and the next TB starts at the instruction after it
 * (examples/qemu/tests/check_smc.py). Runs the loop argv[1] times.
 *
 *   mov ecx, edi
 *   loop: nop; mov [rip + 0x7f7], ecx (into the page, at 0x800); nop x3;
 *         dec ecx; jnz loop          (7 instructions an iteration)
 *   ret */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static const unsigned char hwq_code[] = {
    0x89, 0xf9,                         /* mov ecx, edi          */
    0x90,                               /* loop: nop             */
    0x89, 0x0d, 0xf7, 0x07, 0x00, 0x00, /* mov [rip + 0x7f7], ecx */
    0x90, 0x90, 0x90,                   /* nop x3                */
    0xff, 0xc9,                         /* dec ecx               */
    0x75, 0xf2,                         /* jnz loop              */
    0xc3};                              /* ret                   */

int main(int argc, char **argv) {
    unsigned char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    void (*fn)(int);
    if (p == MAP_FAILED || argc < 2) return 1;
    memcpy(p, hwq_code, sizeof hwq_code);
    /* Code bytes become a function through memcpy, as POSIX's dlsym does. */
    memcpy(&fn, &p, sizeof fn);
    fn(atoi(argv[1]));
    return 0;
}
