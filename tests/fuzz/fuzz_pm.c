/* SPDX-License-Identifier: MIT */
/* tests/fuzz/fuzz_pm.c: the ProfileMe sampler under the shared engine
 * (fuzz_model.h), plus the host's side of the tag protocol driven by the
 * input (Dean et al., ProfileMe: Hardware Support for Instruction-Level
 * Profiling on Out-of-Order Processors, MICRO 1997): fetches, tags,
 * stage reports, notes, retires and aborts, in any order. The tag
 * discipline checked after every call: a tag handed out is nonzero and
 * differs from every tag still in flight; reports on an in-flight tag are
 * accepted; a report on a completed tag, or on a tag never handed out,
 * is refused (the hardware's tag check) and changes nothing the host can
 * see but stats. */
#include "fuzz_model.h"

#define LIVE 64u
#define DEAD 16u

typedef struct pm_state {
    uint32_t live[2][LIVE], nlive[2];
    uint32_t dead[2][DEAD], ndead[2];
    uint64_t cycle;
} pm_state;

static hwp_pm *pm_of(fz_ctx *c, int w) { return (hwp_pm *)c->in[w].x; }

static void pm_start(fz_ctx *c) {
    c->state = calloc(1, sizeof(pm_state));
    FZ_CHECK(c->state);
}

static bool pm_live(const pm_state *s, int w, uint32_t tag, uint32_t *at) {
    uint32_t i;
    for (i = 0; i < s->nlive[w]; i++)
        if (s->live[w][i] == tag) {
            if (at) *at = i;
            return true;
        }
    return false;
}

static void pm_took(pm_state *s, int w, uint32_t tag) {
    if (!tag) return;
    FZ_CHECK(!pm_live(s, w, tag, NULL));
    if (s->nlive[w] < LIVE) s->live[w][s->nlive[w]++] = tag;
}

/* Completes live tag number i: it must be accepted once, then refused. */
static void pm_complete(fz_ctx *c, int w, uint32_t i, bool retire) {
    pm_state *s = (pm_state *)c->state;
    hwp_pm *p = pm_of(c, w);
    uint32_t tag = s->live[w][i];
    if (retire)
        FZ_CHECK(hwp_pm_retire(p, tag, ++s->cycle) == HWP_OK);
    else
        FZ_CHECK(hwp_pm_abort(p, tag, 1) == HWP_OK);
    s->live[w][i] = s->live[w][--s->nlive[w]];
    s->dead[w][s->ndead[w]++ % DEAD] = tag;
    FZ_CHECK(hwp_pm_retire(p, tag, ++s->cycle) != HWP_OK);
    FZ_CHECK(hwp_pm_abort(p, tag, 0) != HWP_OK);
}

static void pm_op(fz_ctx *c, int w, fz_in *f) {
    pm_state *s = (pm_state *)c->state;
    hwp_pm *p = pm_of(c, w);
    uint8_t sub = fz_u8(f);
    switch (sub % 6u) {
    case 0: { /* fetches; a selected one is tagged */
        unsigned k, n = 1u + fz_u8(f);
        for (k = 0; k < n; k++) {
            s->cycle++;
            if (hwp_pm_fetch(p)) {
                if (sub & 8u) {
                    hwp_status st = hwp_pm_tag_empty(p, s->cycle);
                    FZ_CHECK(st == HWP_OK || st == HWP_ESTATE);
                } else {
                    pm_took(s, w, hwp_pm_tag(p, 0x1000u + 4u * (fz_u8(f) & 63u), s->cycle));
                }
            }
            if (sub & 16u) hwp_pm_branch(p, (k & 1u) != 0);
        }
        break;
    }
    case 1: { /* a block of fetches, as an interpreter hands them */
        uint32_t n = fz_u8(f), k = hwp_pm_fetch_block(p, n);
        FZ_CHECK(k <= n);
        if (k) pm_took(s, w, hwp_pm_tag(p, 0x2000u + k, ++s->cycle));
        break;
    }
    case 2: /* stage reports and notes on a tag in flight */
        if (s->nlive[w]) {
            uint32_t tag = s->live[w][fz_u8(f) % s->nlive[w]];
            unsigned st = fz_u8(f) % (HWP_PM_ST_COUNT + 1u);
            hwp_status rc = hwp_pm_stage(p, tag, (hwp_pm_stage_id)st, s->cycle + fz_u8(f));
            FZ_CHECK(rc == ((st >= 1u && st < HWP_PM_ST_COUNT) ? HWP_OK : HWP_EINVAL));
            FZ_CHECK(hwp_pm_note(p, tag, fz_u8(f) % HWP_CLS_COUNT, fz_u64(f), fz_u8(f)) == HWP_OK);
        }
        break;
    case 3: /* complete a tag in flight */
        if (s->nlive[w]) pm_complete(c, w, fz_u8(f) % s->nlive[w], (sub & 8u) != 0);
        break;
    case 4: { /* a completed tag, or one never handed out */
        uint32_t tag = (sub & 8u) && s->ndead[w] ? s->dead[w][fz_u8(f) % (s->ndead[w] < DEAD ? s->ndead[w] : DEAD)]
                                                 : fz_u32(f);
        if (pm_live(s, w, tag, NULL)) break;
        FZ_CHECK(hwp_pm_stage(p, tag, (hwp_pm_stage_id)1, s->cycle) != HWP_OK);
        FZ_CHECK(hwp_pm_note(p, tag, 1, 1, 1) != HWP_OK);
        FZ_CHECK(hwp_pm_retire(p, tag, s->cycle) != HWP_OK);
        FZ_CHECK(hwp_pm_abort(p, tag, 0) != HWP_OK);
        break;
    }
    default: { /* whole instructions from a host without a pipeline */
        unsigned k, n = 1u + fz_u8(f);
        for (k = 0; k < n; k++) {
            hwp_insn in;
            in.pc = 0x4000u + 4u * (fz_u8(f) & 31u);
            in.next_pc = in.pc + 4u;
            in.addr = in.pc;
            in.value = 0;
            in.cls = fz_u8(f) % (HWP_CLS_COUNT + 1u);
            in.events = fz_u8(f);
            hwp_pm_insn(p, &in, ++s->cycle);
        }
        break;
    }
    }
}

static void pm_reset(fz_ctx *c, int w) {
    pm_state *s = (pm_state *)c->state;
    s->nlive[w] = s->ndead[w] = 0;
}

/* The deliver callback and its argument are the host's pointers, not
 * input: they stay the row's. */
static void pm_desc(fz_ctx *c, void *desc, const void *orig, fz_in *f) {
    hwp_pm_desc *d = (hwp_pm_desc *)desc;
    const hwp_pm_desc *o = (const hwp_pm_desc *)orig;
    (void)c;
    (void)f;
    d->deliver = o->deliver;
    d->user = o->user;
}

static const fz_hooks pm_hooks = {pm_desc, pm_start, pm_op, NULL, NULL,
                                  NULL, NULL, pm_reset};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return fz_run(fz_row(hwp_conf_profileme, "pm"), &pm_hooks, data, size);
}
