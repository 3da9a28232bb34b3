/* A guest whose hot loop is in a shared library (hwq_lib.c), for the
 * module names of the QEMU plugin's report: it prints where the loader
 * put every image (dl_iterate_phdr's dlpi_addr: the load bias), which the
 * test compares with the report's "modules" member.
 * usage: guest_lib [ITERATIONS] */
#define _GNU_SOURCE
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

uint64_t hwq_lib_spin(uint64_t n);

static int show(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    (void)data;
    if (info->dlpi_name && info->dlpi_name[0])
        printf("image %s 0x%llx\n", info->dlpi_name, (unsigned long long)info->dlpi_addr);
    return 0;
}

int main(int argc, char **argv) {
    uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 0) : 1000000;
    dl_iterate_phdr(show, NULL);
    printf("sum %llu\n", (unsigned long long)hwq_lib_spin(n));
    return 0;
}
