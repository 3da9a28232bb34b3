/* SPDX-License-Identifier: MIT */
/* tests/fuzz/fuzz_opts.c: the hosts' option parser (examples/common,
 * hwx_opts_parse, then hwx_opts_validate) on raw input. Any input is
 * either refused with a nonempty reason or accepted; accepted options
 * then validate (refused with a reason, or every enabled model inits on
 * scratch storage of the size the parser states, fenced by guard bytes
 * that must survive). */
#include <stdlib.h>
#include <string.h>

#include "hwx.h"

#define GUARD 64u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static hwx_opts o;
    const char *why = NULL;
    char *s = (char *)malloc(size + 1);
    unsigned char *raw;
    size_t need, i;
    if (!s) __builtin_trap();
    memcpy(s, data, size);
    s[size] = 0;
    hwx_opts_default(&o);
    if (hwx_opts_parse(&o, s, &why) != HWP_OK) {
        if (!why || !why[0]) __builtin_trap();
        free(s);
        return 0;
    }
    free(s);
    need = hwx_opts_scratch_bytes(&o);
    if (need > ((size_t)16 << 20)) return 0;
    raw = (unsigned char *)malloc(need + 2 * GUARD);
    if (!raw) __builtin_trap();
    memset(raw, 0xA5, need + 2 * GUARD);
    why = NULL;
    if (hwx_opts_validate(&o, raw + GUARD, need, &why) != HWP_OK && (!why || !why[0]))
        __builtin_trap();
    for (i = 0; i < GUARD; i++)
        if (raw[i] != 0xA5 || raw[GUARD + need + i] != 0xA5) __builtin_trap();
    free(raw);
    return 0;
}
