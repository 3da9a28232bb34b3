/* SPDX-License-Identifier: MIT */
/* tests/fuzz/fuzz_phase.c: the phase detectors (Vaswani, Jacob and
 * Srikant, section 6, path-based; Sherwood, Sair and Calder, Phase
 * Tracking and Prediction, ISCA 2003, BBV) under the shared engine
 * (fuzz_model.h), plus paths and branches of the input's choosing with
 * instruction counts from 0 to 2^32 - 1 (an interval of one
 * instruction, adds of many intervals) and the interval callback set or
 * not. Checked: each closed interval reaches the callback once, in
 * order (index = the intervals closed before it), with a phase id
 * already handed out and changed in {0, 1}, the first interval never a
 * change; the detector's intervals equal the callbacks (until a merge
 * adds another detector's); phases and changes never exceed intervals;
 * the hardware budget of the BBV baseline equals the detector's. */
#include "fuzz_model.h"

typedef struct ph_state {
    bool tracked[2];
    uint64_t seen[2]; /* callbacks per instance */
} ph_state;

static hwp_phase *ph_of(fz_ctx *c, int w) { return (hwp_phase *)c->in[w].x; }

static void ph_interval(void *ctx, const hwp_phase_interval *r) {
    fz_ctx *c = (fz_ctx *)ctx;
    ph_state *s = (ph_state *)c->state;
    hwp_phase_stats st;
    int w = c->cur;
    FZ_CHECK(s);
    FZ_CHECK(hwp_phase_get_stats(ph_of(c, w), &st) == HWP_OK);
    FZ_CHECK(r->changed <= 1u);
    FZ_CHECK(r->phase < st.phases);
    if (s->tracked[w]) {
        FZ_CHECK(r->index == s->seen[w]);
        if (r->index == 0) FZ_CHECK(!r->changed && r->distance == 0);
    }
    s->seen[w]++;
}

static void ph_desc(fz_ctx *c, void *desc, const void *orig, fz_in *f) {
    hwp_phase_desc *d = (hwp_phase_desc *)desc;
    (void)orig;
    d->on_interval = (fz_u8(f) & 7u) ? ph_interval : NULL;
    d->ctx = c;
}

static void ph_start(fz_ctx *c) {
    ph_state *s = (ph_state *)calloc(1, sizeof(ph_state));
    const hwp_phase_desc *d = (const hwp_phase_desc *)c->desc;
    hwp_phase_desc b;
    FZ_CHECK(s);
    c->state = s;
    s->tracked[0] = s->tracked[1] = d->on_interval != NULL;
    FZ_CHECK(hwp_phase_bbv_desc(d, &b) == HWP_OK);
    FZ_CHECK(hwp_phase_hw_bytes(&b) == hwp_phase_hw_bytes(d) && hwp_phase_hw_bytes(d) > 0);
}

static void ph_op(fz_ctx *c, int w, fz_in *f) {
    hwp_phase *ph = ph_of(c, w);
    uint8_t sub = fz_u8(f);
    unsigned k, n = 1u + fz_u8(f) % 64u;
    for (k = 0; k < n; k++) {
        uint8_t how = fz_u8(f);
        uint32_t insns = (how & 1u) ? fz_u32(f) : (uint32_t)fz_u8(f) << (how >> 5);
        if (sub & 1u) {
            hwp_path_pd pd;
            pd.start = 0x400000u + 0x40u * (fz_u8(f) & 31u);
            pd.shape = 4u | (how >> 1 & 3u);
            hwp_phase_add_path(ph, &pd, insns);
        } else {
            hwp_phase_add_branch(ph, 0x400000u + 4u * fz_u8(f), insns);
        }
    }
}

static void ph_check(fz_ctx *c) {
    ph_state *s = (ph_state *)c->state;
    int w;
    for (w = 0; w < 2; w++) {
        hwp_phase_stats st;
        FZ_CHECK(hwp_phase_get_stats(ph_of(c, w), &st) == HWP_OK);
        FZ_CHECK(st.phases <= st.intervals && st.changes <= st.intervals);
        FZ_CHECK(st.evicted <= st.intervals && st.cycles == 0 && st.dropped == 0);
        if (s->tracked[w]) FZ_CHECK(st.intervals == s->seen[w]);
    }
}

static void ph_merged(fz_ctx *c, int dst) { ((ph_state *)c->state)->tracked[dst] = false; }

static void ph_reset(fz_ctx *c, int w) {
    ph_state *s = (ph_state *)c->state;
    const hwp_phase_desc *d = (const hwp_phase_desc *)c->desc;
    s->tracked[w] = d->on_interval != NULL;
    s->seen[w] = 0;
}

static const fz_hooks ph_hooks = {ph_desc, ph_start, ph_op, ph_check, NULL,
                                  NULL, ph_merged, ph_reset};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return fz_run(fz_row(hwp_conf_pathprof, "phase"), &ph_hooks, data, size);
}
