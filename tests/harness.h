/* tests/harness.h: hwprof's own small test harness (hosted; tests only).
 *
 *   static void test_split(void) { CHECK(x == 1); CHECK_EQ(a, b); }
 *   int main(int argc, char **argv) {
 *       hwt_begin(argc, argv);
 *       HWT_RUN(test_split);
 *       return hwt_end();
 *   }
 *
 * Every case prints "ok" or "FAIL" with its check count; a case that runs
 * no check at all counts as failed, so a test cannot pass by asserting
 * nothing. `./test_x NAME` runs only the cases whose name contains NAME.
 * The last line is "<program>: N cases passed, N failed (N checks)".
 */
#ifndef HWPROF_TESTS_HARNESS_H
#define HWPROF_TESTS_HARNESS_H

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define HWT__UNUSED __attribute__((unused))
#else
#define HWT__UNUSED
#endif

static struct {
    const char *prog, *filter;
    unsigned cases_passed, cases_failed;
    unsigned long checks, case_checks, case_fails;
} hwt__s;

HWT__UNUSED static void hwt_begin(int argc, char **argv) {
    const char *p = argv[0], *slash = strrchr(p, '/');
    hwt__s.prog = slash ? slash + 1 : p;
    hwt__s.filter = argc > 1 ? argv[1] : NULL;
}

HWT__UNUSED static int hwt__check(int ok, const char *expr, const char *file,
                                  int line) {
    hwt__s.checks++;
    hwt__s.case_checks++;
    if (!ok) {
        hwt__s.case_fails++;
        printf("    %s:%d: check failed: %s\n", file, line, expr);
    }
    return ok;
}

HWT__UNUSED static int hwt__check_u64(uint64_t a, uint64_t b, const char *ea,
                                      const char *eb, const char *file,
                                      int line) {
    int ok = a == b;
    if (!hwt__check(ok, "", file, line))
        printf("      %s == %s: %" PRIu64 " != %" PRIu64 "\n", ea, eb, a, b);
    return ok;
}

HWT__UNUSED static int hwt__check_near(double a, double b, double tol,
                                       const char *ea, const char *eb,
                                       const char *file, int line) {
    int ok = fabs(a - b) <= tol;
    if (!hwt__check(ok, "", file, line))
        printf("      |%s - %s| <= %g: %g vs %g\n", ea, eb, tol, a, b);
    return ok;
}

/* Does `got` contain `want` (or equal it, when whole is set)? */
HWT__UNUSED static int hwt__check_str(const char *got, const char *want,
                                      int whole, const char *file, int line) {
    int ok = whole ? strcmp(got, want) == 0 : strstr(got, want) != NULL;
    if (!hwt__check(ok, "", file, line))
        printf("      expected %s \"%s\"\n      got \"%s\"\n",
               whole ? "exactly" : "to contain", want, got);
    return ok;
}

/* Each check returns whether it held, so a test can stop early. */
#define CHECK(c) hwt__check(!!(c), #c, __FILE__, __LINE__)
#define CHECK_EQ(a, b) \
    hwt__check_u64((uint64_t)(a), (uint64_t)(b), #a, #b, __FILE__, __LINE__)
#define CHECK_STR(got, want) hwt__check_str(got, want, 1, __FILE__, __LINE__)
#define CHECK_HAS(got, want) hwt__check_str(got, want, 0, __FILE__, __LINE__)
#define CHECK_NEAR(a, b, tol) \
    hwt__check_near((double)(a), (double)(b), (double)(tol), #a, #b, \
                    __FILE__, __LINE__)

HWT__UNUSED static void hwt__run(const char *name, void (*fn)(void)) {
    if (hwt__s.filter && !strstr(name, hwt__s.filter)) return;
    hwt__s.case_checks = hwt__s.case_fails = 0;
    fn();
    if (hwt__s.case_checks == 0) {
        printf("FAIL %s (it checked nothing)\n", name);
        hwt__s.cases_failed++;
    } else if (hwt__s.case_fails) {
        printf("FAIL %s (%lu of %lu checks failed)\n", name, hwt__s.case_fails,
               hwt__s.case_checks);
        hwt__s.cases_failed++;
    } else {
        printf("ok   %s (%lu checks)\n", name, hwt__s.case_checks);
        hwt__s.cases_passed++;
    }
    fflush(stdout);
}
#define HWT_RUN(fn) hwt__run(#fn, fn)

/* out (cap bytes) = src with its first `from` replaced by `to`, for tests
 * that damage one field of a report; returns the replacement's offset,
 * or -1 after a failed check when src has no `from`. */
HWT__UNUSED static long hwt_edit(const char *src, const char *from, const char *to,
                                 char *out, size_t cap) {
    const char *p = strstr(src, from);
    size_t n;
    if (!CHECK(p != NULL) || (size_t)(p - src) >= cap) return -1;
    n = (size_t)(p - src);
    memcpy(out, src, n);
    snprintf(out + n, cap - n, "%s%s", to, p + strlen(from));
    return (long)n;
}

HWT__UNUSED static int hwt_end(void) {
    printf("%s: %u cases passed, %u failed (%lu checks)\n", hwt__s.prog,
           hwt__s.cases_passed, hwt__s.cases_failed, hwt__s.checks);
    if (hwt__s.cases_passed + hwt__s.cases_failed == 0) {
        printf("%s: no case matched the filter\n", hwt__s.prog);
        return 1;
    }
    return hwt__s.cases_failed ? 1 : 0;
}

#endif
