/* SPDX-License-Identifier: MIT */
/* tests/fuzz/fuzz_core.c: the core timing model (include/hwprof/core.h)
 * under the shared engine (fuzz_model.h), plus instructions of the
 * input's choosing and the finished-record queue drained with random
 * capacities: it reports the same count asked with or without a buffer,
 * hands out min(count, cap) records and keeps the rest. */
#include "fuzz_model.h"

static void core_op(fz_ctx *c, int w, fz_in *f) {
    hwp_core *x = (hwp_core *)c->in[w].x;
    uint8_t sub = fz_u8(f);
    if (sub & 1u) {
        unsigned k, n = 1u + fz_u8(f);
        for (k = 0; k < n; k++) {
            hwp_insn in;
            hwp_core_out o;
            uint8_t b = fz_u8(f);
            in.pc = 0x400000u + 4u * (fz_u8(f) | (uint64_t)(b & 3u) << 8);
            in.next_pc = (b & 4u) ? in.pc + 4u : 0x400000u + 64u * fz_u8(f);
            in.addr = (b & 8u) ? fz_u64(f) : 0x10000u + 8u * fz_u8(f);
            in.value = fz_u8(f);
            in.cls = fz_u8(f) % (HWP_CLS_COUNT + 2u);
            in.events = fz_u8(f);
            hwp_core_insn(x, &in, (b & 16u) ? &o : NULL);
            if (b & 16u) FZ_CHECK(o.ilevel <= 4u && o.dlevel <= 4u);
        }
    } else {
        size_t cap = fz_u8(f) % 20u, n0, n1, n2;
        hwp_core_rec *out = (hwp_core_rec *)malloc(cap ? cap * sizeof *out : 1u);
        FZ_CHECK(out);
        n0 = hwp_core_done(x, NULL, 0);
        n1 = hwp_core_done(x, out, cap);
        FZ_CHECK(n0 == n1);
        n2 = hwp_core_done(x, NULL, 0);
        FZ_CHECK(n2 == n1 - (n1 < cap ? n1 : cap));
        free(out);
    }
}

static const fz_hooks core_hooks = {NULL, NULL, core_op, NULL, NULL,
                                    NULL, NULL, NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return fz_run(fz_row(hwp_conf_core, "core"), &core_hooks, data, size);
}
