/* SPDX-License-Identifier: MIT */
/* tests/fuzz/fuzz_report.c: hwprof-report's reader (examples/report/
 * rp_load.c) on raw input. Every input is either refused with one line
 * that names the file (and, with a byte offset, one inside the text), or
 * read; a report that was read gives its tables, its merged JSON reads
 * back, and folding the input into itself (a merge) is a status, never a
 * crash. The model readers underneath have targets of their own. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../examples/report/rp.h"

#define FR_CHECK(c)                                                            \
    do {                                                                       \
        if (!(c)) {                                                            \
            fprintf(stderr, "fuzz_report: %s:%d: %s\n", __FILE__, __LINE__, #c); \
            abort();                                                           \
        }                                                                      \
    } while (0)

static void fr_refused(const rp_set *s, size_t size) {
    const char *b = strstr(s->why, "byte ");
    FR_CHECK(!strncmp(s->why, "in: ", 4) && s->why[4]);
    FR_CHECK(!strchr(s->why, '\n'));
    if (b && !strncmp(s->why, "in: byte ", 9)) FR_CHECK(strtoull(b + 5, NULL, 10) <= size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    rp_set *s = (rp_set *)malloc(sizeof *s), *again;
    rp_table t[RP_MAXTAB];
    size_t nt, n = 0;
    char *buf = NULL;
    FILE *f;
    FR_CHECK(s);
    rp_max_bytes = (size_t)64 << 20;
    rp_set_init(s);
    if (rp_add_buf(s, "in", (const char *)data, size) != 0) {
        fr_refused(s, size);
        rp_set_free(s);
        free(s);
        return 0;
    }
    nt = rp_tables(s, t, RP_MAXTAB);
    rp_tables_free(t, nt);
    f = open_memstream(&buf, &n);
    FR_CHECK(f);
    rp_write_json(s, f);
    FR_CHECK(fclose(f) == 0);
    again = (rp_set *)malloc(sizeof *again);
    FR_CHECK(again);
    rp_set_init(again);
    if (rp_add_buf(again, "merged", buf, n) != 0) {
        fprintf(stderr, "fuzz_report: the merged report does not read back: %s\n", again->why);
        abort();
    }
    FR_CHECK(again->ncomp == s->ncomp);
    rp_set_free(again);
    free(again);
    free(buf);
    if (rp_add_buf(s, "in", (const char *)data, size) != 0) fr_refused(s, size);
    rp_set_free(s);
    free(s);
    return 0;
}
