/* examples/common/hwx_rap.c: RAP (Mysore et al., Profiling over Adaptive
 * Ranges, CGO 2006) as a session adapter: hot code, value or address
 * ranges (key=pc|value|addr|target), scored by the average error on the hot
 * ranges against the exact range counts (sec. 4.3). */
#include "hwx_int.h"

typedef struct hwx__rap {
    hwp_rap *rap;
    uint32_t key; /* HWX_KEY_* */
    uint32_t pad_;
} hwx__rap;

static void hwx__rap_defaults(void *dv, const hwx_opts *o) {
    hwp_rap_desc *d = (hwp_rap_desc *)dv;
    d->source = o->rap_key == HWX_KEY_VALUE    ? HWP_RAP_SRC_VALUE
                : o->rap_key == HWX_KEY_ADDR   ? HWP_RAP_SRC_ADDR
                : o->rap_key == HWX_KEY_TARGET ? HWP_RAP_SRC_NEXT_PC
                                               : HWP_RAP_SRC_PC;
    d->buffer = 1024; /* the stage-0 combining buffer, 1K as in sec. 3.3 */
    d->cls_mask = o->rap_key == HWX_KEY_VALUE  ? HWP_CLS_BIT(HWP_CLS_LOAD)
                  : o->rap_key == HWX_KEY_ADDR
                      ? HWP_CLS_BIT(HWP_CLS_LOAD) | HWP_CLS_BIT(HWP_CLS_STORE)
                  : o->rap_key == HWX_KEY_TARGET
                      ? HWP_CLS_BIT(HWP_CLS_BR_COND) | HWP_CLS_BIT(HWP_CLS_JUMP) |
                            HWP_CLS_BIT(HWP_CLS_CALL) | HWP_CLS_BIT(HWP_CLS_INDIRECT)
                      : 0;
    /* Targets of transfers that happened: taken branches and calls. */
    d->ev_mask = o->rap_key == HWX_KEY_TARGET ? HWP_EV_TAKEN : 0;
}

static hwp_status hwx__rap_set(void *dv, const char *k, const char *opt,
                              const char *v, const char **why) {
    hwp_rap_desc *d = (hwp_rap_desc *)dv;
    if (hwx_streq(k, "kb")) {
        uint32_t kb; /* 0: the model's default node count */
        if (hwx_arg_u32(opt, v, 0, 1u << 20, &kb, why) != HWP_OK) return HWP_EINVAL;
        d->nodes = kb * 1024u / (uint32_t)sizeof(hwp_rap_node); /* sec. 3.4 */
        return HWP_OK;
    }
    if (hwx_streq(k, "eps")) return hwx__f64(opt, v, &d->eps, why);
    if (hwx_streq(k, "b")) return hwx__u32(opt, v, &d->branching, why);
    if (hwx_streq(k, "q")) return hwx__u32(opt, v, &d->q, why);
    if (hwx_streq(k, "buffer")) return hwx__u32(opt, v, &d->buffer, why);
    if (hwx_streq(k, "bits")) return hwx__u32(opt, v, &d->key_bits, why);
    if (hwx_streq(k, "hot")) return hwx__f64(opt, v, &d->hot, why);
    if (hwx_streq(k, "first_merge")) return hwx__u64(opt, v, &d->first_merge, why);
    return hwx__unknown(why);
}

static uint32_t hwx__rap_wants(const hwx_opts *o) {
    return o->rap_key == HWX_KEY_VALUE  ? HWX_WANT_VALUES
           : o->rap_key == HWX_KEY_ADDR ? HWX_WANT_MEMORY
                                        : 0;
}

static size_t hwx__rap_bytes(const void *dv, const hwx_opts *o, const char **why) {
    size_t k = hwp_rap_bytes((const hwp_rap_desc *)dv);
    (void)o;
    if (!k) {
        HWX__WHY(hwp_rap, hwp_rap_init(&x_, m_, 0, (const hwp_rap_desc *)dv, NULL), why);
        return 0;
    }
    return hwp__align(sizeof(hwp_rap)) + hwp__align(k);
}

static hwp_status hwx__rap_init(void *sv, void *dv, unsigned char **cur, hwx_session *s) {
    hwx__rap *m = (hwx__rap *)sv;
    size_t k = hwp_rap_bytes((const hwp_rap_desc *)dv);
    m->key = s->opts.rap_key;
    m->rap = (hwp_rap *)hwp__carve(cur, sizeof(hwp_rap));
    if (hwp_rap_init(m->rap, hwp__carve(cur, k), k, (const hwp_rap_desc *)dv, &s->cost) !=
        HWP_OK)
        return hwp__fail(&s->head, HWP_EINVAL, hwp_why(m->rap));
    return HWP_OK;
}

static void hwx__rap_insn(void *sv, const hwp_insn *in, uint64_t cycle) {
    (void)cycle;
    hwp_rap_insn(((hwx__rap *)sv)->rap, in);
}

/* Code profile at block granularity: the block's instructions count at
 * its first pc (one combined event instead of n). Value and address keys
 * come from the memory records. */
static void hwx__rap_block(void *sv, const hwx_block *b) {
    const hwx__rap *m = (const hwx__rap *)sv;
    uint32_t j;
    if (m->key == HWX_KEY_PC) {
        hwp_rap_add(m->rap, b->pcs[0], b->n);
    } else {
        for (j = 0; j < b->nmem; j++) hwp_rap_insn(m->rap, &b->mem[j]);
        hwp_rap_insn(m->rap, b->last);
    }
}

static void hwx__rap_flush(void *sv) { hwp_rap_flush(((hwx__rap *)sv)->rap); }

static void hwx__rap_merge(void *dv, const void *sv) {
    hwp_rap_merge(((hwx__rap *)dv)->rap, ((const hwx__rap *)sv)->rap);
}

static uint64_t hwx__rap_exact(void *ctx, uint64_t lo, uint64_t hi) {
    const hwx_session *s = (const hwx_session *)ctx;
    return hwx__xtab_range(s->opts.rap_key == HWX_KEY_PC ? &s->exact->pc : &s->exact->key,
                           lo, hi);
}

static void hwx__rap_text(const void *sv, const hwx_session *s, const hwp_writer *w) {
    const hwp_rap *rap = ((const hwx__rap *)sv)->rap;
    hwp_rap_range r[24];
    size_t n = hwp_rap_hot(rap, rap->desc.hot, r, 24), i;
    if (n > 24) n = 24; /* it returns how many there are */
    hwp_put_str(w, "\n-- hot ");
    hwp_put_str(w, s->opts.rap_key == HWX_KEY_PC      ? "code"
                   : s->opts.rap_key == HWX_KEY_VALUE ? "value"
                   : s->opts.rap_key == HWX_KEY_ADDR  ? "address"
                                                      : "target");
    hwx__kv(w, " ranges: RAP (Mysore et al., CGO 2006) --\n  ", rap->nodes);
    hwx__kv(w, " of ", rap->cap);
    hwp_put_str(w, " nodes, eps ");
    hwp_put_f64(w, rap->desc.eps, 3);
    hwp_put_str(w, ", hot = at least ");
    hwx__pct(w, rap->desc.hot, 1.0);
    hwp_put_str(w, " of ");
    hwp_put_u64(w, rap->n);
    hwp_put_str(w, " events\n");
    for (i = 0; i < n; i++) {
        hwp_put_str(w, "  [");
        hwp_put_hex(w, r[i].lo);
        hwp_put_str(w, ", ");
        hwp_put_hex(w, r[i].hi);
        hwp_put_str(w, "]  ");
        hwx__pct(w, (double)r[i].sum, (double)rap->n);
        if (s->exact) {
            hwp_put_str(w, "  (exact ");
            hwx__pct(w, (double)hwx__rap_exact((void *)(uintptr_t)s, r[i].lo, r[i].hi),
                     (double)rap->n);
            hwp_put_str(w, ")");
        }
        hwp_put_str(w, "\n");
    }
}

static void hwx__rap_json(const void *sv, const hwp_writer *w) {
    hwp_put_str(w, ",\"rap\":");
    hwp_rap_write_json(((const hwx__rap *)sv)->rap, w);
}

static void hwx__rap_eval(void *sv, const hwx_session *s, unsigned char *scratch,
                          hwx_metric *out) {
    const hwp_rap *rap = ((const hwx__rap *)sv)->rap;
    hwp_rap_acc ra;
    (void)scratch;
    if (hwp_rap_accuracy(rap, rap->desc.hot, hwx__rap_exact, (void *)(uintptr_t)s, &ra) ==
            HWP_OK &&
        ra.hot) {
        out[0].valid = 1;
        out[0].n = ra.hot;
        out[0].value = ra.mean_pct;
    }
}

/* A code profile counts every instruction: none may be skipped. */
static uint64_t hwx__rap_until(const void *sv) {
    return ((const hwx__rap *)sv)->key == HWX_KEY_PC ? 1 : UINT64_MAX;
}

static const hwx_metric_def hwx__rap_metrics[] = {
    {"rap_hot_err_pct", "  RAP avg error on hot ranges (Mysore et al. 4.3): ", 3, "%"},
};

const hwx_adapter hwx__adapter_rap = {
    "rap", NULL, HWP_MODEL_RAP, "kb, eps, b, q, buffer, bits, hot, first_merge",
    sizeof(hwp_rap_desc), sizeof(hwx__rap), hwx__rap_metrics, 1,
    hwx__rap_defaults, hwx__rap_set, hwx__rap_wants, hwx__rap_bytes, hwx__rap_init,
    hwx__rap_insn, hwx__rap_block, hwx__rap_flush, hwx__rap_merge, hwx__rap_text,
    hwx__rap_json, NULL, hwx__rap_eval, NULL, NULL, hwx__rap_until,
};
