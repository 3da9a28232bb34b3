/* SPDX-License-Identifier: MIT */
/* examples/report/tests/oom_load.c: hwprof-report's reader when memory
 * runs out. Linked with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,
 * so the reader's allocations go through the wrappers below: for each
 * report given, it counts the allocations of reading it twice (the second
 * read is a merge) and building its tables (rp_tables: what every query
 * and export starts from), then runs the same once per allocation with
 * that one failing. Each read must refuse with one line naming the
 * file, or succeed (an allocation the reader can do without); the tables
 * then come out whole or fewer (a table without memory is left out);
 * everything taken is freed (ASan and Valgrind see the leaks); no crash.
 * Prints how many runs said "out of memory" and how many lost a table,
 * and fails if none did either. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../rp.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);

static unsigned long calls, fail_at; /* fail_at 0: none fails */

static int failing(void) { return fail_at && ++calls == fail_at; }

void *__wrap_malloc(size_t n) {
    calls += !fail_at;
    return failing() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size) {
    calls += !fail_at;
    return failing() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n) {
    calls += !fail_at;
    return failing() ? NULL : __real_realloc(p, n);
}

/* Reads buf twice into one set; returns rp_add_buf's first failure. */
static int read_twice(rp_set *s, const char *name, const char *buf, size_t n) {
    rp_set_init(s);
    return rp_add_buf(s, name, buf, n) != 0 || rp_add_buf(s, name, buf, n) != 0;
}

/* The set's tables, built and freed; how many came out. */
static size_t tables(const rp_set *s) {
    static rp_table t[64];
    size_t n = rp_tables(s, t, sizeof t / sizeof t[0]);
    rp_tables_free(t, n);
    return n;
}

int main(int argc, char **argv) {
    static rp_set s;
    unsigned long oom = 0, runs = 0, bad = 0, fewer = 0;
    int i;
    for (i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        char *buf;
        long len;
        unsigned long total, k;
        size_t whole;
        if (!f || fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 ||
            fseek(f, 0, SEEK_SET) != 0 || !(buf = (char *)__real_malloc((size_t)len + 1)) ||
            fread(buf, 1, (size_t)len, f) != (size_t)len) {
            fprintf(stderr, "oom_load: %s: cannot read\n", argv[i]);
            return 2;
        }
        fclose(f);
        fail_at = 0;
        calls = 0;
        if (read_twice(&s, argv[i], buf, (size_t)len)) {
            fprintf(stderr, "oom_load: %s: refused with memory: %s\n", argv[i], s.why);
            return 2;
        }
        whole = tables(&s);
        rp_set_free(&s);
        total = calls;
        for (k = 1; k <= total; k++) {
            calls = 0;
            fail_at = k;
            runs++;
            if (read_twice(&s, argv[i], buf, (size_t)len)) {
                if (!strstr(s.why, argv[i]) || strchr(s.why, '\n')) {
                    fprintf(stderr, "oom_load: %s: allocation %lu: the reason is not one line "
                                    "naming the file: %s\n", argv[i], k, s.why);
                    bad++;
                }
                oom += strstr(s.why, "out of memory") != NULL;
            } else if (tables(&s) < whole) {
                fewer++;
            }
            rp_set_free(&s);
        }
        fail_at = 0;
        free(buf);
        printf("%s: %lu allocations, each failed once\n", argv[i], total);
    }
    printf("%lu runs, %lu refused as out of memory, %lu with fewer tables, %lu badly\n", runs,
           oom, fewer, bad);
    return bad || !oom || !fewer;
}
