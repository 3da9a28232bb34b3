/* SPDX-License-Identifier: MIT */
/* tests/fuzz/fuzz_cp.c: the profiling co-processor under the shared engine
 * (fuzz_model.h), plus loads and instructions of the input's choosing and
 * the value-profile query with random capacities (the count it returns
 * does not depend on the capacity; it writes only `cap` estimates). */
#include "fuzz_model.h"

static void cp_op(fz_ctx *c, int w, fz_in *f) {
    hwp_cp *x = (hwp_cp *)c->in[w].x;
    uint8_t sub = fz_u8(f);
    switch (sub % 3u) {
    case 0: {
        unsigned k, n = 1u + fz_u8(f);
        for (k = 0; k < n; k++)
            hwp_cp_load(x, 0x1000u + 4u * (fz_u8(f) & 31u), fz_u8(f), fz_u8(f) & (sub >> 4));
        break;
    }
    case 1: {
        unsigned k, n = 1u + fz_u8(f);
        for (k = 0; k < n; k++) {
            hwp_insn in;
            in.pc = 0x1000u + 4u * (fz_u8(f) & 31u);
            in.next_pc = in.pc + ((fz_u8(f) & 1u) ? 4u : 64u);
            in.addr = fz_u8(f);
            in.value = fz_u8(f);
            in.cls = fz_u8(f) % (HWP_CLS_COUNT + 1u);
            in.events = fz_u8(f);
            hwp_cp_insn(x, &in);
        }
        break;
    }
    default: {
        size_t cap = fz_u8(f) % 20u, n1, n2;
        hwp_cp_est *out = cap ? (hwp_cp_est *)malloc(cap * sizeof *out) : NULL;
        FZ_CHECK(!cap || out);
        n1 = hwp_cp_lvp_estimates(x, out, cap);
        n2 = hwp_cp_lvp_estimates(x, NULL, 0);
        FZ_CHECK(n1 == n2);
        free(out);
        break;
    }
    }
}

static const fz_hooks cp_hooks = {NULL, NULL, cp_op, NULL, NULL, NULL, NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return fz_run(fz_row(hwp_conf_coproc, "cp"), &cp_hooks, data, size);
}
