/* A guest that does what a JIT does with its code pages: it writes
 * sixteen copies of a counting loop into page A (one every 256 bytes),
 * runs them, maps page B, and then, unless its argument is "keep",
 * unmaps A before it runs the same loops written into B. It prints
 * "A B" (the pages' guest addresses) first.
 *
 * each copy: mov ecx, 4096; loop: dec ecx; jnz loop; ret
 * (B9 00 10 00 00, FF C9, 75 FC, C3) */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

static const unsigned char hwq_loop[] = {0xb9, 0x00, 0x10, 0x00, 0x00, 0xff, 0xc9,
                                         0x75, 0xfc, 0xc3};

static unsigned char *hwq_page(void) {
    unsigned char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    int k;
    if (p == MAP_FAILED) return NULL;
    for (k = 0; k < 16; k++) memcpy(p + 256 * k, hwq_loop, sizeof hwq_loop);
    if (mprotect(p, 4096, PROT_READ | PROT_EXEC) != 0) return NULL;
    return p;
}

/* Code bytes become a function through memcpy, as POSIX's dlsym does:
 * ISO C has no cast from an object pointer to a function pointer. */
static void hwq_run(unsigned char *p, int rounds) {
    int r, k;
    for (r = 0; r < rounds; r++)
        for (k = 0; k < 16; k++) {
            void (*fn)(void);
            unsigned char *at = p + 256 * k;
            memcpy(&fn, &at, sizeof fn);
            fn();
        }
}

int main(int argc, char **argv) {
    unsigned char *a = hwq_page(), *b;
    if (!a) return 1;
    hwq_run(a, 200);
    if (!(b = hwq_page())) return 1;
    printf("%p %p\n", (void *)a, (void *)b);
    fflush(stdout);
    if (argc < 2 || strcmp(argv[1], "keep") != 0) munmap(a, 4096);
    hwq_run(b, 200);
    return 0;
}
