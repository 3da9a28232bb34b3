/* examples/common/hwx_rap.c: RAP (Mysore et al., Profiling over Adaptive
 * Ranges, CGO 2006) as a session adapter: hot code, value or address
 * ranges (key=pc|value|addr|target), hot missing-data ranges (key=dmiss:
 * the addresses of the loads and stores the core, core=on, finds missing
 * the L1D), or hot rectangles of (PC, data address) pairs, "which code
 * touches which data" (key=pcaddr, the 2-D tree), scored by the average
 * error on the hot ranges against the exact range or rectangle counts
 * (sec. 4.3). */
#include "hwx_int.h"

/* Address keys: the user address space of a 64-bit Linux guest. */
#define HWX__RAP_VA_BITS 48u

/* key=pcaddr's default domain: a side is the aligned window of 2^bits
 * keys around the first pair the session profiles (x: code, y: data),
 * since no fixed window serves every host: the Valgrind tool places the
 * client's code below 2^27 and its data (heap, thread stacks, the main
 * stack just under 2^37) below 2^37, qemu-user 7.2 places image,
 * libraries, heap and stack from 0x4000000000 (2^38) up, with its
 * code and data at the same addresses. 27 + 37 bits use the 64 a pair of
 * the tree may have. The window is a function of the first pair's
 * window, not of the pair itself, so the threads of one program, whose
 * first pairs lie in the same windows, get the same domain and their
 * trees merge (hwx__rap_merge). A pair outside is counted in
 * stats.dropped and the report says how many; x_base/y_base fix a side. */
#define HWX__RAP_CODE_BITS 27u
#define HWX__RAP_DATA_BITS 37u
#define HWX__RAP_ANCHOR_X 1u
#define HWX__RAP_ANCHOR_Y 2u

typedef struct hwx__rap {
    hwp_rap *rap;   /* the 1-D tree, or NULL with key=pcaddr      */
    hwp_rap2 *rap2; /* the 2-D tree with key=pcaddr, else NULL    */
    /* The session's timing: the core (registered first) has set the
     * events of the instruction being fed (key=dmiss). */
    const hwx_timing *tm;
    uint32_t key;   /* HWX_KEY_* */
    /* key=pcaddr: the sides still to anchor at the first pair
     * (HWX__RAP_ANCHOR_*), and what re-initialising the tree there
     * takes. */
    uint32_t anchor;
    hwp_rap2_desc d2;
    void *mem;
    size_t bytes;
    hwp_cost *cost;
} hwx__rap;

/* The desc of either tree: the 1-D tree's is d2.tree. */
typedef struct hwx__rap_desc {
    hwp_rap2_desc d2;
    uint32_t pairs;  /* key=pcaddr */
    uint32_t anchor; /* HWX__RAP_ANCHOR_*: sides whose base the user left */
} hwx__rap_desc;

static void hwx__rap_defaults(void *dv, const hwx_opts *o) {
    hwx__rap_desc *x = (hwx__rap_desc *)dv;
    hwp_rap_desc *d = &x->d2.tree;
    x->pairs = o->rap_key == HWX_KEY_PCADDR;
    if (x->pairs) { /* (pc, addr) of loads and stores */
        x->d2.x_source = HWP_RAP_SRC_PC;
        x->d2.y_source = HWP_RAP_SRC_ADDR;
        x->d2.x_bits = HWX__RAP_CODE_BITS;
        x->d2.y_bits = HWX__RAP_DATA_BITS;
        x->anchor = HWX__RAP_ANCHOR_X | HWX__RAP_ANCHOR_Y;
        d->cls_mask = HWP_CLS_BIT(HWP_CLS_LOAD) | HWP_CLS_BIT(HWP_CLS_STORE);
        return;
    }
    /* An address key lives in the guest's user address space, not in all
     * 2^64 keys: RAP's log(R) is "the maximum possible height of the
     * tree" over "the maximum range to be considered" (Mysore et al.,
     * sec. 2.2), and the split threshold is eps n / log(R). A 64-bit
     * domain has 32 levels where a 48-bit one has 24, the extra ones an
     * empty chain above every program, so its threshold is a quarter
     * lower, the same stream splits more, and an 8 KB tree fills and
     * defers splits; the weight then piles up in the ranges that could
     * not split (bzip2 under the Valgrind tool: 7.6% of all instructions
     * in one 64 KB range, a hot child off by 29%). Linux
     * user space of the guests the hosts run ends below 2^48 (x86-64:
     * 2^47; aarch64 with 48-bit VAs: 2^48). Values stay 64-bit. A key
     * outside counts in stats.dropped; rap_bits/rap_base override. */
    if (o->rap_key != HWX_KEY_VALUE) d->key_bits = HWX__RAP_VA_BITS;
    d->source = o->rap_key == HWX_KEY_VALUE    ? HWP_RAP_SRC_VALUE
                : o->rap_key == HWX_KEY_ADDR ||
                        o->rap_key == HWX_KEY_DMISS ? HWP_RAP_SRC_ADDR
                : o->rap_key == HWX_KEY_TARGET ? HWP_RAP_SRC_NEXT_PC
                                               : HWP_RAP_SRC_PC;
    d->cls_mask = o->rap_key == HWX_KEY_VALUE  ? HWP_CLS_BIT(HWP_CLS_LOAD)
                  : o->rap_key == HWX_KEY_ADDR || o->rap_key == HWX_KEY_DMISS
                      ? HWP_CLS_BIT(HWP_CLS_LOAD) | HWP_CLS_BIT(HWP_CLS_STORE)
                  : o->rap_key == HWX_KEY_TARGET
                      ? HWP_CLS_BIT(HWP_CLS_BR_COND) | HWP_CLS_BIT(HWP_CLS_JUMP) |
                            HWP_CLS_BIT(HWP_CLS_CALL) | HWP_CLS_BIT(HWP_CLS_INDIRECT)
                      : 0;
    /* Targets of transfers that happened: taken branches and calls;
     * accesses that missed the core's L1D. */
    d->ev_mask = o->rap_key == HWX_KEY_TARGET  ? HWP_EV_TAKEN
                 : o->rap_key == HWX_KEY_DMISS ? HWP_EV_DCMISS
                                               : 0;
}

static hwp_status hwx__rap_set(void *dv, const char *k, const char *opt,
                              const char *v, const char **why) {
    hwx__rap_desc *x = (hwx__rap_desc *)dv;
    hwp_rap_desc *d = &x->d2.tree;
    if (hwx_streq(k, "kb")) {
        uint32_t kb; /* 0: the model's default node count */
        if (hwx_arg_u32(opt, v, 0, 1u << 20, &kb, why) != HWP_OK) return HWP_EINVAL;
        d->nodes = kb * 1024u / (uint32_t)sizeof(hwp_rap_node); /* sec. 3.4 */
        return HWP_OK;
    }
    if (hwx_streq(k, "b")) return hwx__u32(opt, v, &d->branching, why);
    if (hwx_streq(k, "bits")) return hwx__u32(opt, v, &d->key_bits, why);
    if (hwx_streq(k, "base")) return hwx__u64(opt, v, &d->key_base, why);
    /* key=pcaddr: a side's base set by the user is no longer anchored at
     * the first pair (the members themselves are the rap2 desc's). */
    if (hwx_streq(k, "x_base")) x->anchor &= ~HWX__RAP_ANCHOR_X;
    if (hwx_streq(k, "y_base")) x->anchor &= ~HWX__RAP_ANCHOR_Y;
    return hwx__unknown(why);
}

static uint32_t hwx__rap_wants(const hwx_opts *o) {
    return o->rap_key == HWX_KEY_VALUE ? HWX_WANT_VALUES
           : o->rap_key == HWX_KEY_ADDR || o->rap_key == HWX_KEY_PCADDR ||
                   o->rap_key == HWX_KEY_DMISS
               ? HWX_WANT_MEMORY
               : 0;
}

static size_t hwx__rap_bytes(const void *dv, const hwx_opts *o, const char **why) {
    const hwx__rap_desc *x = (const hwx__rap_desc *)dv;
    size_t k = x->pairs ? hwp_rap2_bytes(&x->d2) : hwp_rap_bytes(&x->d2.tree);
    /* Hosts model no cache: without the core no access carries a miss,
     * and a profile of nothing would pass for a program that never
     * misses. */
    if (o->rap_key == HWX_KEY_DMISS && !(o->models & HWX_M_CORE)) {
        hwx__bad(why, "key=dmiss: the D-cache misses come from the core: add core=on");
        return 0;
    }
    if (!k && x->pairs)
        HWX__WHY(hwp_rap2, hwp_rap2_init(&x_, m_, 0, &x->d2, NULL), why);
    else if (!k)
        HWX__WHY(hwp_rap, hwp_rap_init(&x_, m_, 0, &x->d2.tree, NULL), why);
    if (!k) return 0;
    return hwp_align(x->pairs ? sizeof(hwp_rap2) : sizeof(hwp_rap)) + hwp_align(k);
}

static hwp_status hwx__rap_init(void *sv, void *dv, unsigned char **cur, hwx_session *s) {
    hwx__rap *m = (hwx__rap *)sv;
    const hwx__rap_desc *x = (const hwx__rap_desc *)dv;
    size_t k = x->pairs ? hwp_rap2_bytes(&x->d2) : hwp_rap_bytes(&x->d2.tree);
    m->key = s->opts.rap_key;
    m->tm = &s->timing;
    if (x->pairs) {
        m->rap2 = (hwp_rap2 *)hwp_carve(cur, sizeof(hwp_rap2));
        m->mem = hwp_carve(cur, k);
        m->bytes = k;
        m->cost = &s->cost;
        m->d2 = x->d2;
        m->anchor = x->anchor;
        if (hwp_rap2_init(m->rap2, m->mem, k, &x->d2, &s->cost) != HWP_OK)
            return hwp_fail(&s->head, HWP_EINVAL, hwp_why(m->rap2));
        return HWP_OK;
    }
    m->rap = (hwp_rap *)hwp_carve(cur, sizeof(hwp_rap));
    if (hwp_rap_init(m->rap, hwp_carve(cur, k), k, &x->d2.tree, &s->cost) != HWP_OK)
        return hwp_fail(&s->head, HWP_EINVAL, hwp_why(m->rap));
    return HWP_OK;
}

/* key=pcaddr: the tree's domain from its first pair (x, y), each side
 * not fixed by the user the aligned window of its bits that holds it.
 * The tree holds nothing yet, so it is initialised again over the new
 * domain (same storage and sizes: the desc was checked at init). */
static void hwx__rap_anchor(hwx__rap *m, uint64_t x, uint64_t y) {
    if (m->anchor & HWX__RAP_ANCHOR_X) m->d2.x_base = x & ~hwp_mask64(m->d2.x_bits);
    if (m->anchor & HWX__RAP_ANCHOR_Y) m->d2.y_base = y & ~hwp_mask64(m->d2.y_bits);
    m->anchor = 0;
    (void)hwp_rap2_init(m->rap2, m->mem, m->bytes, &m->d2, m->cost);
}

/* One record into whichever tree the session runs. */
static void hwx__rap_take(hwx__rap *m, const hwp_insn *in) {
    if (!m->rap2) {
        hwp_rap_insn(m->rap, in);
        return;
    }
    if (HWP_UNLIKELY(m->anchor) && hwp_rap_takes(&m->d2.tree, in))
        hwx__rap_anchor(m, hwp_rap_key(in, m->d2.x_source),
                        hwp_rap_key(in, m->d2.y_source));
    hwp_rap2_insn(m->rap2, in);
}

static void hwx__rap_insn(void *sv, const hwp_insn *in, uint64_t cycle) {
    hwx__rap *m = (hwx__rap *)sv;
    (void)cycle;
    if (m->key == HWX_KEY_DMISS) { /* the record with the core's miss bit */
        hwp_insn c;
        if (!(m->tm->events & HWP_EV_DCMISS)) return;
        c = *in;
        c.events |= m->tm->events;
        hwp_rap_insn(m->rap, &c);
        return;
    }
    hwx__rap_take(m, in);
}

/* Code profile at block granularity: the block's instructions count at
 * its first pc (one combined event instead of n). Value and address keys
 * come from the memory records. */
static void hwx__rap_block(void *sv, const hwx_block *b) {
    hwx__rap *m = (hwx__rap *)sv;
    uint32_t j;
    if (m->key == HWX_KEY_PC) {
        hwp_rap_add(m->rap, b->pcs[0], b->n);
    } else {
        for (j = 0; j < b->nmem; j++) hwx__rap_take(m, &b->mem[j]);
        hwx__rap_take(m, b->last);
    }
}

/* Tallies (hwx_session_tally_ok: key=pc only): one weighted event, as a
 * block is. */
static void hwx__rap_tally(void *sv, uint64_t pc, uint64_t n) {
    hwp_rap_add(((hwx__rap *)sv)->rap, pc, n);
}

/* The code keys' tree only: a value or a data address in an unmapped
 * range is still a value a program may load, and the 2-D tree's code
 * side has no retire of its own. */
static void hwx__rap_retire(void *sv, uint64_t lo, uint64_t hi) {
    hwx__rap *m = (hwx__rap *)sv;
    if (m->key == HWX_KEY_PC && m->rap) (void)hwp_rap_retire(m->rap, lo, hi);
}

static void hwx__rap_flush(void *sv) {
    const hwx__rap *m = (const hwx__rap *)sv;
    if (m->rap2) hwp_rap2_flush(m->rap2);
    else hwp_rap_flush(m->rap);
}

/* key=pcaddr: a session that saw no pair has nothing to give, and one
 * that saw none yet takes the other's domain. Sessions whose first pairs
 * fell in different windows cannot share a tree: the source's pairs are
 * counted as outside the destination's domain (stats.dropped, in the
 * report), not lost. */
static void hwx__rap_merge(void *dv, const void *sv) {
    hwx__rap *d = (hwx__rap *)dv;
    const hwx__rap *s = (const hwx__rap *)sv;
    hwp_rap_stats st;
    if (!d->rap2) {
        hwp_rap_merge(d->rap, s->rap);
        return;
    }
    if (s->anchor) return;
    if (d->anchor) hwx__rap_anchor(d, s->d2.x_base, s->d2.y_base);
    if (hwp_rap2_merge(d->rap2, s->rap2) == HWP_EMISMATCH &&
        hwp_rap2_get_stats(s->rap2, &st) == HWP_OK && st.events)
        /* x_base - 1 is outside every x domain of fewer than 64 bits. */
        hwp_rap2_add(d->rap2, d->d2.x_base - 1u, d->d2.y_base, st.events);
}

/* The exact weight of (pc, addr) pairs in a box: the session's table. */
static uint64_t hwx__rap_exact2(void *ctx, const hwp_rap2_box *b) {
    const hwx_session *s = (const hwx_session *)ctx;
    return hwx__xtab_box(&s->exact->key, b->x_lo, b->x_hi, b->y_lo, b->y_hi);
}

/* key=pcaddr: the hot rectangles, code range x data range. */
static void hwx__rap2_text(const hwp_rap2 *rap, const hwx_session *s, const hwp_writer *w) {
    hwp_rap2_rect r[24];
    hwp_rap2_desc d;
    hwp_rap_stats st;
    size_t n, i;
    hwp_rap2_get_desc(rap, &d);
    hwp_rap2_get_stats(rap, &st);
    n = hwp_rap2_hot(rap, d.tree.hot, r, 24);
    if (n > 24) n = 24;
    hwx__kv(w, "\n-- hot code x data rectangles: 2-D RAP (Mysore et al., CGO 2006) --\n  ",
            st.nodes);
    hwx__kv(w, " of ", st.pool);
    hwp_put_str(w, " nodes, eps ");
    hwp_put_f64(w, d.tree.eps, 3);
    hwp_put_str(w, ", hot = at least ");
    hwx__pct(w, d.tree.hot, 1.0);
    hwp_put_str(w, " of ");
    hwp_put_u64(w, st.n);
    hwp_put_str(w, " accesses; ");
    hwp_put_u64(w, st.dropped);
    hwp_put_str(w, " outside the domain pc [");
    hwp_put_hex(w, d.x_base);
    hwp_put_str(w, ", ");
    hwp_put_hex(w, d.x_base + hwp_mask64(d.x_bits));
    hwp_put_str(w, "] x data [");
    hwp_put_hex(w, d.y_base);
    hwp_put_str(w, ", ");
    hwp_put_hex(w, d.y_base + hwp_mask64(d.y_bits));
    hwp_put_str(w, "] (rap_x_base/x_bits, rap_y_base/y_bits)\n");
    for (i = 0; i < n; i++) {
        hwp_put_str(w, "  pc [");
        hwp_put_hex(w, r[i].box.x_lo);
        hwp_put_str(w, ", ");
        hwp_put_hex(w, r[i].box.x_hi);
        hwp_put_str(w, "] x data [");
        hwp_put_hex(w, r[i].box.y_lo);
        hwp_put_str(w, ", ");
        hwp_put_hex(w, r[i].box.y_hi);
        hwp_put_str(w, "]  ");
        hwx__pct(w, (double)r[i].sum, (double)st.n);
        if (s->exact) {
            hwp_put_str(w, "  (exact ");
            hwx__pct(w, (double)hwx__rap_exact2((void *)(uintptr_t)s, &r[i].box), (double)st.n);
            hwp_put_str(w, ")");
        }
        hwp_put_str(w, "\n");
    }
}

static uint64_t hwx__rap_exact(void *ctx, uint64_t lo, uint64_t hi) {
    const hwx_session *s = (const hwx_session *)ctx;
    return hwx__xtab_range(s->opts.rap_key == HWX_KEY_PC ? &s->exact->pc : &s->exact->key,
                           lo, hi);
}

static void hwx__rap_text(const void *sv, const hwx_session *s, const hwp_writer *w) {
    const hwp_rap *rap = ((const hwx__rap *)sv)->rap;
    hwp_rap_range r[24];
    hwp_rap_desc d;
    hwp_rap_stats st;
    size_t n, i;
    if (((const hwx__rap *)sv)->rap2) {
        hwx__rap2_text(((const hwx__rap *)sv)->rap2, s, w);
        return;
    }
    hwp_rap_get_desc(rap, &d);
    hwp_rap_get_stats(rap, &st);
    n = hwp_rap_hot(rap, d.hot, r, 24);
    if (n > 24) n = 24; /* it returns how many there are */
    hwp_put_str(w, "\n-- hot ");
    hwp_put_str(w, s->opts.rap_key == HWX_KEY_PC      ? "code"
                   : s->opts.rap_key == HWX_KEY_VALUE ? "value"
                   : s->opts.rap_key == HWX_KEY_ADDR  ? "address"
                   : s->opts.rap_key == HWX_KEY_DMISS ? "D-cache miss address"
                                                      : "target");
    hwx__kv(w, " ranges: RAP (Mysore et al., CGO 2006) --\n  ", st.nodes);
    hwx__kv(w, " of ", st.pool);
    hwp_put_str(w, " nodes, eps ");
    hwp_put_f64(w, d.eps, 3);
    hwp_put_str(w, ", hot = at least ");
    hwx__pct(w, d.hot, 1.0);
    hwp_put_str(w, " of ");
    hwp_put_u64(w, st.n);
    hwp_put_str(w, " events\n");
    for (i = 0; i < n; i++) {
        hwp_put_str(w, "  [");
        hwp_put_hex(w, r[i].lo);
        hwp_put_str(w, ", ");
        hwp_put_hex(w, r[i].hi);
        hwp_put_str(w, "]  ");
        hwx__pct(w, (double)r[i].sum, (double)st.n);
        if (s->exact) {
            hwp_put_str(w, "  (exact ");
            hwx__pct(w, (double)hwx__rap_exact((void *)(uintptr_t)s, r[i].lo, r[i].hi),
                     (double)st.n);
            hwp_put_str(w, ")");
        }
        hwp_put_str(w, "\n");
    }
}

static void hwx__rap_json(const void *sv, const hwp_writer *w) {
    const hwx__rap *m = (const hwx__rap *)sv;
    hwp_put_str(w, ",\"rap\":");
    if (m->rap2) hwp_rap2_write_json(m->rap2, w);
    else hwp_rap_write_json(m->rap, w);
}

static void hwx__rap_eval(void *sv, const hwx_session *s, unsigned char *scratch,
                          hwx_metric *out) {
    const hwx__rap *m = (const hwx__rap *)sv;
    hwp_rap_acc ra;
    hwp_rap_desc d;
    hwp_rap2_desc d2;
    hwp_status st;
    (void)scratch;
    if (m->rap2) {
        hwp_rap2_get_desc(m->rap2, &d2);
        st = hwp_rap2_accuracy(m->rap2, d2.tree.hot, hwx__rap_exact2, (void *)(uintptr_t)s,
                               &ra);
    } else {
        hwp_rap_get_desc(m->rap, &d);
        st = hwp_rap_accuracy(m->rap, d.hot, hwx__rap_exact, (void *)(uintptr_t)s, &ra);
    }
    if (st == HWP_OK && ra.hot) {
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

/* Counters over time (timeline=N), cumulative. */
static const char *const hwx__rap_counter_names[] = {"events", "splits", "merges", NULL};
static void hwx__rap_counters(const void *sv, uint64_t *out) {
    const hwx__rap *m = (const hwx__rap *)sv;
    hwp_rap_stats st;
    hwp_zero(&st, sizeof st);
    if (m->rap2) hwp_rap2_get_stats(m->rap2, &st);
    else hwp_rap_get_stats(m->rap, &st);
    out[0] = st.events;
    out[1] = st.splits;
    out[2] = st.merges;
}

const hwx_adapter hwx__adapter_rap = {
    .name = "rap",
    .model = HWP_MODEL_RAP,
    .params = "kb, b (branching), bits (key_bits), base (key_base), " "or any member of its desc by the name the report gives it (docs/rap.md)",
    .parts = {{hwp_rap_desc_fields, offsetof(hwx__rap_desc, d2.tree)},
              {hwp_rap2_desc_fields, offsetof(hwx__rap_desc, d2)}},
    .desc_size = sizeof(hwx__rap_desc),
    .state_size = sizeof(hwx__rap),
    .metrics = hwx__rap_metrics,
    .nmetrics = HWX_COUNT(hwx__rap_metrics),
    .defaults = hwx__rap_defaults,
    .set = hwx__rap_set,
    .wants = hwx__rap_wants,
    .bytes = hwx__rap_bytes,
    .init = hwx__rap_init,
    .insn = hwx__rap_insn,
    .block = hwx__rap_block,
    .flush = hwx__rap_flush,
    .merge = hwx__rap_merge,
    .report_text = hwx__rap_text,
    .report_json = hwx__rap_json,
    .evaluate = hwx__rap_eval,
    .until = hwx__rap_until,
    .tally = hwx__rap_tally,
    .retire = hwx__rap_retire,
    .counter_names = hwx__rap_counter_names,
    .counters = hwx__rap_counters,
};
