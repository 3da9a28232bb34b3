/* SPDX-License-Identifier: MIT */
/* tests/rap/fuzz_rap2_json.c: libFuzzer entry for the 2-D RAP tree's JSON
 * reader. Any input: hwp_rap2_read_desc either refuses it with an offset
 * inside the text or gives a desc init accepts; hwp_rap2_read_json either
 * refuses it leaving the instance's report unchanged, or accepts it, and
 * then the report written back reads back to the same report. Traps
 * otherwise. */
/* The fuzz target is built with -DHWPROF_IMPL; test_rap2 links this file. */
#include "hwprof/rap.h"

#include <stdlib.h>
#include <string.h>

static char before[1 << 20], after[1 << 20];

static size_t report(const hwp_rap2 *r, char *buf, size_t cap) {
    hwp_bufwriter b;
    hwp_writer w = hwp_writer_buf(&b, buf, cap);
    hwp_rap2_write_json(r, &w);
    return b.len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *s = (const char *)data;
    hwp_rap2_desc d;
    hwp_json_err err;
    hwp_rap2 r;
    size_t need, n0;
    void *mem;
    if (hwp_rap2_read_desc(&d, s, size, &err) != HWP_OK) {
        if (!err.why || err.offset > size) __builtin_trap();
        return 0;
    }
    need = hwp_rap2_bytes(&d);
    if (!need) __builtin_trap();
    if (need > (16u << 20)) return 0;
    mem = malloc(need);
    if (!mem || hwp_rap2_init(&r, mem, need, &d, NULL) != HWP_OK) __builtin_trap();
    n0 = report(&r, before, sizeof before);
    if (hwp_rap2_read_json(&r, s, size, &err) != HWP_OK) {
        if (!err.why || err.offset > size) __builtin_trap();
        if (report(&r, after, sizeof after) != n0 || memcmp(before, after, n0))
            __builtin_trap();
    } else {
        n0 = report(&r, before, sizeof before);
        if (hwp_rap2_read_json(&r, before, n0, &err) != HWP_OK) __builtin_trap();
        if (report(&r, after, sizeof after) != n0 || memcmp(before, after, n0))
            __builtin_trap();
    }
    free(mem);
    return 0;
}
