/* examples/valgrind/hw_host.c: see hw_host.h. Freestanding. */
#include "hw_host.h"

int hw_host_setup(hw_host *h, void *(*alloc)(void *ctx, size_t n),
                  void (*free)(void *ctx, void *p), void *ctx) {
    hwp_zero(h, sizeof *h);
    h->alloc = alloc;
    h->free = free;
    h->eval_why = "";
    h->alloc_ctx = ctx;
    h->opts = (hwx_opts *)alloc(ctx, sizeof *h->opts);
    if (!h->opts) return 0;
    hwx_opts_default(h->opts);
    return 1;
}

hwp_status hw_host_option(hw_host *h, const char *kv, const char **why) {
    char key[64];
    size_t n = 0;
    while (kv[n] && kv[n] != '=' && n < sizeof key - 1) {
        key[n] = kv[n];
        n++;
    }
    if (kv[n] != '=') {
        *why = "hwprof: options are --key=value";
        return HWP_EINVAL;
    }
    key[n] = '\0';
    return hwx_opts_set(h->opts, key, kv + n + 1, why);
}

uint64_t hw_meta(hw_host *h, const uint8_t *bytes, uint32_t len, uint64_t pc,
                 const hw_vex_view *v, uint64_t *target) {
    hwx_x86_info info;
    uint32_t bcls = hwx_x86_decode(bytes, len, pc, &info);
    uint32_t vcls = v->cls < HWP_CLS_COUNT ? v->cls : HWP_CLS_OTHER;
    int indirect;
    if (bcls >= HWP_CLS_COUNT || !hwp_cls_is_branch(bcls)) bcls = HWP_CLS_OTHER;
    h->insns_translated++;
    h->agree[vcls][bcls]++;
    if (info.len != len) h->len_mismatch++;
    /* The bytes decide; VEX's target stands in where the decoder has
     * none (it always has one for a direct branch it recognised). */
    *target = info.has_target ? info.target : v->target;
    if (info.has_target && v->target && vcls == bcls && info.target != v->target)
        h->target_mismatch++;
    if (!hwp_cls_is_branch(bcls)) *target = 0;
    indirect = bcls == HWP_CLS_CALL && info.indirect;
    return (uint64_t)(len & 0xFFu) | ((uint64_t)bcls << 8) |
           (indirect ? HW_META_INDIRECT : 0);
}

static int hw__has(const uint8_t *a, uint32_t n, uint32_t reg) {
    uint32_t i;
    for (i = 0; i < n; i++)
        if (a[i] == reg) return 1;
    return 0;
}

void hw_regs_read(hw_host *h, hwp_core_ops *r, uint32_t reg) {
    if (!reg || hw__has(r->dst, r->ndst, reg) || hw__has(r->src, r->nsrc, reg)) return;
    if (r->nsrc == 3u) h->regs_src_over++;
    else r->src[r->nsrc++] = (uint8_t)reg;
}

void hw_regs_write(hw_host *h, hwp_core_ops *r, uint32_t reg) {
    if (!reg || hw__has(r->dst, r->ndst, reg)) return;
    if (r->ndst == 2u) h->regs_dst_over++;
    else r->dst[r->ndst++] = (uint8_t)reg;
}

uint64_t hw_regs_meta(const hwp_core_ops *r) {
    uint64_t m = (uint64_t)(r->op & 7u) | (uint64_t)r->src[0] << 3 |
                 (uint64_t)r->src[1] << 11 | (uint64_t)r->src[2] << 19 |
                 (uint64_t)r->dst[0] << 27 | (uint64_t)r->dst[1] << 35;
    return m << HW_META_REGS_SHIFT | (uint64_t)(r->upd & 3u) << HW_META_UPD_SHIFT;
}

hw_thread *hw_thread_new(hw_host *h, uint32_t tid, const char **why) {
    hw_thread *t = (hw_thread *)h->alloc(h->alloc_ctx, sizeof *t);
    size_t bytes;
    hwx_session *sess;
    void *mem;
    hwp_status st;
    if (!t) return NULL;
    hwp_zero(t, sizeof *t);
    t->tid = tid;
    *why = "";
    if (h->record) { /* recording does not depend on the models */
        t->tw = (hwx_trace_writer *)h->alloc(h->alloc_ctx, sizeof *t->tw);
        if (!t->tw) {
            *why = "hwprof: out of memory for the trace writer";
            return t;
        }
        hwx_trace_writer_init(t->tw, h->record, tid);
    }
    bytes = hwx_session_bytes(h->opts);
    if (!bytes) {
        *why = "hwprof: the session options are invalid";
        return t;
    }
    sess = (hwx_session *)h->alloc(h->alloc_ctx, sizeof *sess);
    mem = h->alloc(h->alloc_ctx, bytes);
    if (!sess || !mem) {
        *why = "hwprof: out of memory for the session";
        return t;
    }
    st = hwx_session_init(sess, mem, bytes, h->opts);
    if (st != HWP_OK) {
        *why = hwp_why(sess);
        return t;
    }
    t->s = sess;
    if (h->regs) {
        /* every source and destination slot is read; unused ones are 0 */
        t->regs = 1;
        t->ops.regs = 1;
        t->ops.nsrc = 3;
        t->ops.ndst = 2;
        hwx_core_regs(sess, &t->ops, "VEX IR");
    }
    return t;
}

void hw_thread_flush(hw_thread *t) {
    if (t->have) {
        t->rec.next_pc = t->rec.pc + t->len;
        hw_thread_emit(t);
        t->have = 0;
    }
    if (t->s) hwx_session_finish(t->s);
    if (t->tw) hwx_trace_flush(t->tw);
}

void hw_host_record_end(hw_host *h, hw_thread *const *ts, unsigned n) {
    uint64_t total = 0;
    unsigned i;
    if (!h->record) return;
    for (i = 0; i < n; i++)
        if (ts[i] && ts[i]->tw) total += ts[i]->tw->total;
    hwx_trace_write_end(h->record, total);
}

void hw_host_finish(hw_host *h, hw_thread *const *ts, unsigned n) {
    hw_stats *sum = &h->sum;
    unsigned i, c;
    hwp_zero(sum, sizeof *sum);
    h->threads = 0;
    h->merged = NULL;
    h->merge_failures = 0;
    h->eval_why = "";
    for (i = 0; i < n; i++) {
        const hw_thread *t = ts[i];
        if (!t) continue;
        h->threads++;
        sum->insns += t->st.insns;
        for (c = 0; c < HWP_CLS_COUNT; c++) sum->cls[c] += t->st.cls[c];
        sum->cond_taken += t->st.cond_taken;
        sum->cond_not_taken += t->st.cond_not_taken;
        sum->load_events += t->st.load_events;
        sum->store_events += t->st.store_events;
        if (!t->s) continue;
        if (!h->merged) h->merged = t->s;
        else if (hwx_session_merge(h->merged, t->s) != HWP_OK) h->merge_failures++;
    }
    /* Accuracy against exact, once, on the merged session. */
    if (h->merged && h->merged->exact) {
        size_t bytes = hwx_session_eval_bytes(h->merged);
        void *scratch = h->alloc(h->alloc_ctx, bytes);
        if (!scratch) h->eval_why = "hwprof: out of memory for the accuracy scratch";
        else if (hwx_session_evaluate(h->merged, scratch, bytes) != HWP_OK)
            h->eval_why = hwp_why(h->merged);
        if (scratch && h->free) h->free(h->alloc_ctx, scratch);
    }
}

static const char *const hw__cls_key[HWP_CLS_COUNT] = {
    "other", "load", "store", "br_cond", "jump", "call", "ret", "indirect"};

static void hw__kv(const hwp_writer *w, const char *k, uint64_t v) {
    hwp_put_str(w, k);
    hwp_put_u64(w, v);
    hwp_put_str(w, "\n");
}

void hw_host_retire(hw_host *h, hw_thread *const *ts, unsigned n, uint64_t lo, uint64_t hi) {
    unsigned t;
    if (lo > hi) return;
    h->unmapped++;
    h->unmapped_bytes += hi - lo + 1u;
    for (t = 0; t < n; t++)
        if (ts[t]) {
            if (ts[t]->s) hwx_session_retire(ts[t]->s, lo, hi);
            /* record=: the trace retires it at the same point of the
             * thread's stream, so its replay gives this run's report */
            if (ts[t]->tw) hwx_trace_put_retire(ts[t]->tw, lo, hi);
        }
}

void hw_host_report_text(const hw_host *h, const hwp_writer *w) {
    const hw_stats s = h->sum;
    unsigned c, b;
    uint64_t agree = 0;
    hwp_put_str(w, "== hwprof: Valgrind host ==\n");
    hw__kv(w, "threads                 ", h->threads);
    hw__kv(w, "instructions            ", s.insns);
    for (c = 0; c < HWP_CLS_COUNT; c++) {
        hwp_put_str(w, "  records ");
        hwp_put_str(w, hw__cls_key[c]);
        hw__kv(w, ": ", s.cls[c]);
    }
    hw__kv(w, "cond branches taken     ", s.cond_taken);
    hw__kv(w, "cond branches not taken ", s.cond_not_taken);
    hw__kv(w, "load events             ", s.load_events);
    hw__kv(w, "store events            ", s.store_events);
    hw__kv(w, "loads with no value view ", h->unseen_loads);
    hwp_put_str(w, h->auxv_fixed ? "AT_RANDOM               fixed (seeded)\n"
                                 : "AT_RANDOM               kernel's\n");
    hw__kv(w, "getrandom calls seeded  ", h->getrandom_calls);
    hw__kv(w, "clock calls virtualised ", h->clock_calls);
    hw__kv(w, "ranges unmapped, retired ", h->unmapped);
    hw__kv(w, "  bytes                 ", h->unmapped_bytes);
    for (c = 0; c < HWP_CLS_COUNT; c++) agree += h->agree[c][c];
    hw__kv(w, "translated instructions ", h->insns_translated);
    hw__kv(w, "  VEX and bytes agree   ", agree);
    hw__kv(w, "  length mismatches     ", h->len_mismatch);
    hw__kv(w, "  target mismatches     ", h->target_mismatch);
    for (c = 0; c < HWP_CLS_COUNT; c++)
        for (b = 0; b < HWP_CLS_COUNT; b++)
            if (b != c && h->agree[c][b]) {
                hwp_put_str(w, "  VEX ");
                hwp_put_str(w, hw__cls_key[c]);
                hwp_put_str(w, " / bytes ");
                hwp_put_str(w, hw__cls_key[b]);
                hw__kv(w, ": ", h->agree[c][b]);
            }
    if (h->regs) {
        hwp_put_str(w, "registers from VEX IR (core=on)\n");
        hw__kv(w, "  sources left out      ", h->regs_src_over);
        hw__kv(w, "  destinations left out ", h->regs_dst_over);
    }
    if (h->merge_failures) hw__kv(w, "session merges failed   ", h->merge_failures);
    if (h->eval_why[0]) {
        hwp_put_str(w, "accuracy not computed: ");
        hwp_put_str(w, h->eval_why);
        hwp_put_str(w, "\n");
    }
    if (h->merged) hwx_session_report_text(h->merged, w);
    else hwp_put_str(w, "(no session: models not run)\n");
}

/* ,"key":v */
static void hw__json_u64(const hwp_writer *w, const char *key, uint64_t v) {
    hwp_put_str(w, ",");
    hwp_put_json_str(w, key);
    hwp_put_str(w, ":");
    hwp_put_u64(w, v);
}

void hw_host_report_json(const hw_host *h, const hwp_writer *w, const hwx_module *mods,
                         size_t nmods) {
    const hw_stats s = h->sum;
    unsigned c, b, n;
    hwp_put_str(w, "{\"host\":\"valgrind\",\"threads\":");
    hwp_put_u64(w, h->threads);
    hwp_put_str(w, ",\"stream\":{\"instructions\":");
    hwp_put_u64(w, s.insns);
    hwp_put_str(w, ",\"records\":{");
    for (c = 0; c < HWP_CLS_COUNT; c++) {
        if (c) hwp_put_str(w, ",");
        hwp_put_json_str(w, hw__cls_key[c]);
        hwp_put_str(w, ":");
        hwp_put_u64(w, s.cls[c]);
    }
    hwp_put_str(w, "}");
    hw__json_u64(w, "cond_taken", s.cond_taken);
    hw__json_u64(w, "cond_not_taken", s.cond_not_taken);
    hw__json_u64(w, "load_events", s.load_events);
    hw__json_u64(w, "store_events", s.store_events);
    hw__json_u64(w, "loads_no_value", h->unseen_loads);
    hwp_put_str(w, ",\"at_random_fixed\":");
    hwp_put_str(w, h->auxv_fixed ? "true" : "false");
    hw__json_u64(w, "getrandom_seeded", h->getrandom_calls);
    hw__json_u64(w, "clock_virtualised", h->clock_calls);
    hw__json_u64(w, "unmapped", h->unmapped);
    hw__json_u64(w, "unmapped_bytes", h->unmapped_bytes);
    hwp_put_str(w, "},\"class_check\":{\"translated\":");
    hwp_put_u64(w, h->insns_translated);
    hw__json_u64(w, "len_mismatch", h->len_mismatch);
    hw__json_u64(w, "target_mismatch", h->target_mismatch);
    hwp_put_str(w, ",\"disagree\":[");
    for (c = 0, n = 0; c < HWP_CLS_COUNT; c++)
        for (b = 0; b < HWP_CLS_COUNT; b++)
            if (b != c && h->agree[c][b]) {
                hwp_put_str(w, n++ ? ",{\"vex\":" : "{\"vex\":");
                hwp_put_json_str(w, hw__cls_key[c]);
                hwp_put_str(w, ",\"bytes\":");
                hwp_put_json_str(w, hw__cls_key[b]);
                hwp_put_str(w, ",\"count\":");
                hwp_put_u64(w, h->agree[c][b]);
                hwp_put_str(w, "}");
            }
    hwp_put_str(w, "]},\"merge_failures\":");
    hwp_put_u64(w, h->merge_failures);
    /* the session object stays last: it is byte for byte the replayer's
     * report of the recorded trace */
    hwx_modules_json(w, mods, nmods);
    hwp_put_str(w, ",\"session\":");
    if (h->merged) hwx_session_report_json(h->merged, w);
    else hwp_put_str(w, "null");
    hwp_put_str(w, "}\n");
}
