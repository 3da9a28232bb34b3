/* SPDX-License-Identifier: MIT */
/* tests/fuzz/fuzz_rap2.c: the two-dimensional RAP tree (row "rap2") under
 * the shared engine (fuzz_model.h), plus pairs of the input's choosing
 * with weights up to 2^16, box queries and the hot rectangles with
 * random capacities (Mysore et al., Profiling over Adaptive Ranges,
 * extended to pairs as rap.h describes). Checked: a box's estimate lies
 * within its bounds, after a flush too, and the hot rectangles' count
 * does not depend on the capacity, which bounds what is written (ASan
 * watches the exact-size buffer). */
#include "fuzz_model.h"

static hwp_rap2 *rap2_of(fz_ctx *c, int w) { return (hwp_rap2 *)c->in[w].x; }

/* A box's estimate, if the tree answers, lies within its bounds. */
static void rap2_box(const hwp_rap2 *r, const hwp_rap2_box *b) {
    hwp_rap_est e;
    if (hwp_rap2_query(r, b, &e) == HWP_OK)
        FZ_CHECK(e.lower <= e.upper && (double)e.lower <= e.estimate &&
                 e.estimate <= (double)e.upper);
}

static void rap2_op(fz_ctx *c, int w, fz_in *f) {
    hwp_rap2 *r = rap2_of(c, w);
    hwp_rap2_desc d;
    uint8_t sub = fz_u8(f);
    FZ_CHECK(hwp_rap2_get_desc(r, &d) == HWP_OK);
    if (sub & 1u) { /* pairs near the bases, a few far outside */
        unsigned k, n = 1u + fz_u8(f) % 64u;
        for (k = 0; k < n; k++) {
            uint64_t x = d.x_base + fz_u8(f), y = d.y_base + fz_u32(f);
            if (fz_u8(f) == 255) x = fz_u64(f);
            hwp_rap2_add(r, x, y, 1u + (fz_u8(f) | (uint64_t)fz_u8(f) << 8));
        }
    } else if (sub & 2u) { /* a box, and the whole domain */
        hwp_rap2_box b;
        b.x_lo = d.x_base + fz_u8(f);
        b.x_hi = b.x_lo + fz_u32(f);
        b.y_lo = d.y_base + fz_u32(f);
        b.y_hi = b.y_lo + fz_u64(f) % ((uint64_t)1 << 40);
        rap2_box(r, &b);
        FZ_CHECK(hwp_rap2_flush(r) == HWP_OK);
        b.x_lo = 0, b.x_hi = UINT64_MAX, b.y_lo = 0, b.y_hi = UINT64_MAX;
        rap2_box(r, &b);
    } else {
        size_t cap = fz_u8(f) % 20u, n1, n2;
        double phi = (1.0 + fz_u8(f)) / 512.0;
        hwp_rap2_rect *out = cap ? (hwp_rap2_rect *)malloc(cap * sizeof *out) : NULL;
        FZ_CHECK(!cap || out);
        n1 = hwp_rap2_hot(r, phi, out, cap);
        n2 = hwp_rap2_hot(r, phi, NULL, 0);
        FZ_CHECK(n1 == n2);
        free(out);
    }
}

static const fz_hooks rap2_hooks = {NULL, NULL, rap2_op, NULL, NULL,
                                    NULL, NULL, NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return fz_run(fz_row(hwp_conf_rap, "rap2"), &rap2_hooks, data, size);
}
