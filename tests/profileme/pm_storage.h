/* tests/profileme/pm_storage.h: 16-byte aligned static storage in C99 for
 * the ProfileMe tests and benchmarks (long double is 16-byte aligned on
 * the x86-64 and AArch64 ABIs; C99 has no _Alignas). */
#ifndef HWPROF_TESTS_PM_STORAGE_H
#define HWPROF_TESTS_PM_STORAGE_H

#define STORAGE(name, bytes)                                              \
    static union { long double align; unsigned char b[bytes]; } name##_u; \
    static unsigned char *const name = name##_u.b

#endif
