/* SPDX-License-Identifier: MIT */
/* tests/fuzz/fuzz_strat.c: the stratified-sampling compressor (Sastry,
 * Bodik and Smith, Rapid Profiling via Stratified Sampling, ISCA 2001)
 * under the shared engine (fuzz_model.h), plus tuples of the input's
 * choosing (push, push_key, the hwp_insn selector) and an interrupt
 * handler whose behaviour the input sets: it takes the messages, and
 * may push tuples or flush from inside (a host's handler that profiles
 * itself, or ends the run). Checked:
 *  - in the handler: the guard bytes (a write past the queue shows here
 *    first), 1 <= n <= queue, the messages inside the instance's
 *    storage, their reserved word 0; a push or flush from inside
 *    enqueues nothing (the queue is the handler's input) and nests no
 *    interrupt (the handler pushes one tuple k times, so the push
 *    samples: it would need the queue);
 *  - after every step: samples = messages + dropped (no second level:
 *    every sample is one message or one drop; with A_k behind the
 *    sampler at most that), interrupts <= messages, and the messages
 *    not yet handed out stay below the queue size;
 *  - the lossless first levels (tagged, section 4; A_k alone, section
 *    3.4) conserve events: once the queue is empty and nothing was
 *    dropped, events = the counts handed out + hwp_strat_pending. */
#include "fuzz_model.h"

enum { ST_TAKE, ST_PUSH, ST_FLUSH };

typedef struct st_state {
    unsigned mode, k; /* what the handler does, and how many pushes */
    uint64_t pc, w;   /* the tuple it pushes (k times: it samples)     */
    unsigned depth;   /* handler runs in progress                      */
    bool tracked[2];  /* delivered[] is the instance's whole output    */
    uint64_t delivered[2], counted[2]; /* messages and counts handed out */
    uint32_t queue, scheme, l2;
    bool handler;
} st_state;

static hwp_strat *st_of(fz_ctx *c, int w) { return (hwp_strat *)c->in[w].x; }

static hwp_strat_stats st_stats(const hwp_strat *s) {
    hwp_strat_stats st;
    FZ_CHECK(hwp_strat_get_stats(s, &st) == HWP_OK);
    return st;
}

static void st_handler(void *ctx, const hwp_strat_msg *msgs, uint32_t n) {
    fz_ctx *c = (fz_ctx *)ctx;
    st_state *s = (st_state *)c->state;
    const unsigned char *p = (const unsigned char *)msgs;
    hwp_strat_stats a, b;
    hwp_strat *x;
    uint32_t i;
    int w;
    /* Which instance: the one whose storage holds the queue. The
     * engine's third instance (a report read back) has no handler. */
    for (w = 0; w < 2; w++)
        if (p >= c->in[w].mem && p < c->in[w].mem + c->in[w].n) break;
    FZ_CHECK(w < 2 && s);
    fz_guards(&c->in[w]);
    FZ_CHECK(s->depth == 0); /* no interrupt nests */
    FZ_CHECK(n >= 1 && n <= s->queue);
    FZ_CHECK(p + (size_t)n * sizeof *msgs <= c->in[w].mem + c->in[w].n);
    for (i = 0; i < n; i++) {
        FZ_CHECK(msgs[i].reserved == 0);
        s->counted[w] += msgs[i].count;
    }
    s->delivered[w] += n;
    x = st_of(c, w);
    a = st_stats(x);
    s->depth++;
    if (s->mode != ST_TAKE)
        for (i = 0; i < s->k; i++) hwp_strat_push(x, 0, s->pc, s->w);
    if (s->mode == ST_FLUSH) FZ_CHECK(hwp_strat_flush(x) == HWP_OK);
    s->depth--;
    fz_guards(&c->in[w]);
    b = st_stats(x);
    FZ_CHECK(b.messages == a.messages && b.interrupts == a.interrupts);
    FZ_CHECK(b.events == a.events + (s->mode != ST_TAKE ? s->k : 0u));
}

/* The handler is the target's (its context the engine's ctx), or none:
 * then the messages are counted as unhandled. */
static void st_desc(fz_ctx *c, void *desc, const void *orig, fz_in *f) {
    hwp_strat_desc *d = (hwp_strat_desc *)desc;
    (void)orig;
    d->on_interrupt = (fz_u8(f) & 7u) ? st_handler : NULL;
    d->ctx = c;
}

static void st_start(fz_ctx *c) {
    st_state *s = (st_state *)calloc(1, sizeof(st_state));
    const hwp_strat_desc *d = (const hwp_strat_desc *)c->desc;
    FZ_CHECK(s);
    c->state = s;
    s->queue = d->queue ? d->queue : 100u;
    s->scheme = d->scheme;
    s->l2 = d->l2_entries;
    s->handler = d->on_interrupt != NULL;
    s->tracked[0] = s->tracked[1] = true;
}

/* A burst of tuples: push, push_key or the selector. */
static void st_tuples(hwp_strat *x, fz_in *f, unsigned n) {
    unsigned k;
    for (k = 0; k < n; k++) {
        uint8_t how = fz_u8(f);
        uint32_t kind = how & 3u;
        uint64_t pc = 0x400000u + 4u * (fz_u8(f) & 63u);
        uint64_t v = (how & 4u) ? fz_u64(f) : fz_u8(f);
        if (how & 8u) {
            hwp_strat_push_key(x, hwp_strat_pc_key(x, kind, pc), kind, pc, v);
        } else if (how & 16u) {
            hwp_insn in;
            in.pc = pc;
            in.next_pc = pc + 4u + 4u * (v & 7u);
            in.addr = v;
            in.value = v;
            in.cls = fz_u8(f) % (HWP_CLS_COUNT + 1u);
            in.events = 0;
            hwp_strat_insn(x, &in);
        } else {
            hwp_strat_push(x, kind, pc, v);
        }
    }
}

static void st_op(fz_ctx *c, int w, fz_in *f) {
    st_state *s = (st_state *)c->state;
    hwp_strat *x = st_of(c, w);
    uint8_t sub = fz_u8(f);
    switch (sub % 3u) {
    case 0:
        st_tuples(x, f, 1u + fz_u8(f));
        break;
    case 1: /* a burst during which the handler pushes or flushes; only
             * here, so that the engine's flush stays the end of stream */
        s->mode = sub & 8u ? ST_FLUSH : ST_PUSH;
        s->k = 1u + fz_u8(f) % 64u;
        s->pc = 0x400000u + 4u * (fz_u8(f) & 63u);
        s->w = fz_u8(f);
        st_tuples(x, f, 4u * (1u + fz_u8(f)));
        s->mode = ST_TAKE;
        break;
    default: { /* the text report, into a growing buffer */
        fz_text t = {NULL, 0, 0};
        hwp_writer wr;
        wr.write = fz_text_write;
        wr.ctx = &t;
        hwp_strat_write_text(x, &wr);
        FZ_CHECK(t.s && t.n);
        free(t.s);
        break;
    }
    }
}

static void st_check_one(fz_ctx *c, int w) {
    st_state *s = (st_state *)c->state;
    hwp_strat_stats st = st_stats(st_of(c, w));
    uint64_t held;
    if (s->l2)
        FZ_CHECK(st.messages + st.dropped <= st.samples);
    else
        FZ_CHECK(st.messages + st.dropped == st.samples);
    FZ_CHECK(st.interrupts <= st.messages);
    /* the tables hold events not yet sampled, and P_r's counters their
     * starting phases (< rate each); a second level holds samples, whose
     * counts stand for more events */
    if (!s->l2) {
        const hwp_strat_desc *d = &st_of(c, w)->d;
        uint64_t phases = d->scheme == HWP_STRAT_SAMPLED && d->sampler == HWP_STRAT_PERIODIC &&
                                  !d->counter
                              ? (uint64_t)d->entries * (d->rate - 1u)
                              : 0;
        FZ_CHECK(hwp_strat_pending(st_of(c, w)) <= st.events + phases);
    }
    if (!s->tracked[w]) return;
    FZ_CHECK(st.messages >= s->delivered[w] + st.unhandled);
    held = st.messages - s->delivered[w] - st.unhandled; /* in the queue */
    FZ_CHECK(held < s->queue);
    if (held == 0 && st.dropped == 0 && s->handler && s->scheme != HWP_STRAT_SAMPLED)
        FZ_CHECK(st.events == s->counted[w] + hwp_strat_pending(st_of(c, w)));
}

static void st_check(fz_ctx *c) {
    st_check_one(c, 0);
    st_check_one(c, 1);
}

/* A merge adds src's counters, not its deliveries. */
static void st_merged(fz_ctx *c, int dst) { ((st_state *)c->state)->tracked[dst] = false; }

static void st_reset(fz_ctx *c, int w) {
    st_state *s = (st_state *)c->state;
    s->tracked[w] = true;
    s->delivered[w] = s->counted[w] = 0;
}

static const fz_hooks st_hooks = {st_desc, st_start, st_op, st_check, NULL,
                                  NULL, st_merged, st_reset};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return fz_run(fz_row(hwp_conf_stratified, "strat"), &st_hooks, data, size);
}
