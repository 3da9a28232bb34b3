/* examples/valgrind/hw_host.h: the Valgrind tool's event-stream logic,
 * kept apart from Valgrind's headers so it builds (and is unit-tested)
 * natively as well as inside the no-libc tool.
 *
 * The instrumented code calls three things per guest instruction:
 *   hw_thread_insn(t, pc, meta, target)   at the instruction mark;
 *   hw_thread_load(t, addr, value)        after each load;
 *   hw_thread_store(t, addr)              after each store.
 * A record is completed when the next instruction mark arrives (its pc is
 * the record's next_pc), so taken bits are exact whatever way control
 * left the superblock. hw_meta() packs an instruction's static facts at
 * translation time and counts where the byte decoder and VEX disagree.
 *
 * Freestanding: memory comes from the host's allocator callback.
 */
#ifndef HW_HOST_H
#define HW_HOST_H

#include "hwprof/hwprof.h"
#include "hwx.h"

/* meta layout: bits 0..7 length, 8..15 class, bit 16 indirect call;
 * with core=on the registers VEX IR says the instruction reads and
 * writes (hw_regs_meta): bits 17..18 which destinations are address
 * updates (hwp_core_ops.upd), 21..23 the core's op class, 24..47 three
 * source register numbers, 48..63 two destinations (0: none). */
#define HW_META_UPD_SHIFT 17
#define HW_META_LEN(m) ((uint32_t)(m) & 0xFFu)
#define HW_META_CLS(m) (((uint32_t)(m) >> 8) & 0xFFu)
#define HW_META_INDIRECT ((uint64_t)1 << 16)
#define HW_META_REGS_SHIFT 21

/* Exact counts of the stream the tool produced, kept beside the models:
 * the figures the QEMU plugin is cross-checked against. */
typedef struct hw_stats {
    uint64_t insns;
    uint64_t cls[HWP_CLS_COUNT];  /* records per class               */
    uint64_t cond_taken;          /* conditional branches taken       */
    uint64_t cond_not_taken;
    uint64_t load_events;         /* every load, also inside branches */
    uint64_t store_events;
} hw_stats;

typedef struct hw_host {
    void *(*alloc)(void *ctx, size_t n); /* zero-filled not required    */
    void (*free)(void *ctx, void *p);
    void *alloc_ctx;
    hwx_opts *opts;
    uint64_t unseen_loads;      /* load statements with no value view */
    uint64_t insns_translated;  /* instruction marks instrumented     */
    /* [VEX class][byte class] of every instruction translated; off the
     * diagonal is a disagreement (explained in docs/valgrind.md). */
    uint64_t agree[HWP_CLS_COUNT][HWP_CLS_COUNT];
    uint64_t target_mismatch;   /* both know a direct target, differ  */
    uint64_t len_mismatch;      /* decoder length != VEX length       */
    /* core=on: registers from VEX IR (hw_regs_*), counted at translation */
    int regs;                   /* the tool collects registers        */
    uint64_t regs_src_over;     /* sources beyond the core's three    */
    uint64_t regs_dst_over;     /* destinations beyond its two        */
    int auxv_fixed;             /* AT_RANDOM was overwritten          */
    uint64_t getrandom_calls;   /* getrandom(2) results replaced      */
    uint64_t clock_calls;       /* clock syscall results replaced     */
    uint64_t unmapped;          /* munmap'ed ranges retired           */
    uint64_t unmapped_bytes;
    const hwp_writer *record;   /* record=FILE output, or NULL        */
    /* Filled by hw_host_finish at exit: */
    hw_stats sum;               /* every thread's counts              */
    unsigned threads;
    hwx_session *merged;        /* every session merged, or NULL      */
    uint64_t merge_failures;
    const char *eval_why;       /* why accuracy was not computed, "" */
} hw_host;

typedef struct hw_thread {
    hwp_insn rec;        /* the record in flight                     */
    uint32_t len;        /* its instruction length                   */
    uint32_t have;       /* rec holds an instruction                 */
    uint32_t tid;
    uint32_t regs;       /* the session takes ops (hwx_core_regs)    */
    uint64_t meta;       /* the record's meta, for its registers     */
    hwp_core_ops ops;    /* the record's registers, handed on        */
    hw_stats st;
    hwx_session *s;      /* NULL when the session could not be built */
    hwx_trace_writer *tw;/* record=FILE: this thread's chunk writer   */
} hw_thread;

/* Host set-up before the options are parsed: session options at their
 * defaults, in storage from `alloc`. 0 if the allocation failed. */
int hw_host_setup(hw_host *h, void *(*alloc)(void *ctx, size_t n),
                  void (*free)(void *ctx, void *p), void *ctx);
/* One "key=value" option (the tool strips the leading "--"); HWP_OK or a
 * status with the reason in *why. */
hwp_status hw_host_option(hw_host *h, const char *kv, const char **why);

/* What VEX's IR says about one instruction: the class its superblock's
 * jump kind and side exit imply (OTHER for all but the last instruction),
 * the direct target, whether a call's target is computed. */
typedef struct hw_vex_view {
    uint32_t cls;
    uint32_t indirect;
    uint64_t target;
} hw_vex_view;

/* Translation time: class from the `len` bytes at `bytes` (the guest's
 * instruction at pc), cross-checked with VEX's view; packs length, class
 * and the indirect bit for hw_thread_insn and sets *target (the direct
 * target of a branch, else 0). */
uint64_t hw_meta(hw_host *h, const uint8_t *bytes, uint32_t len, uint64_t pc,
                 const hw_vex_view *v, uint64_t *target);

/* Translation time, core=on: one instruction's registers, gathered
 * from its IR statements into r (zeroed first; the op stays the most
 * expensive one seen). A register read after the instruction wrote it is
 * its own value, no source; repeats count once; registers beyond the
 * core's three sources and two destinations are counted and left out.
 * hw_regs_meta packs r into the meta bits above. */
void hw_regs_read(hw_host *h, hwp_core_ops *r, uint32_t reg);
void hw_regs_write(hw_host *h, hwp_core_ops *r, uint32_t reg);
uint64_t hw_regs_meta(const hwp_core_ops *r);

/* A thread's state and its session; NULL if out of memory. A session
 * that cannot be built leaves t->s NULL with the reason in *why (the
 * stream counts still run). */
hw_thread *hw_thread_new(hw_host *h, uint32_t tid, const char **why);

/* Run time. */
HWP_INLINE void hw_thread_emit(hw_thread *t) {
    hwp_insn *r = &t->rec;
    uint64_t fall = r->pc + t->len;
    t->st.insns++;
    if (r->cls == HWP_CLS_BR_COND) {
        /* addr already holds the static target */
        if (r->next_pc != fall) {
            r->events |= HWP_EV_TAKEN;
            t->st.cond_taken++;
        } else {
            t->st.cond_not_taken++;
        }
    } else if (hwp_cls_is_branch(r->cls)) {
        r->events |= HWP_EV_TAKEN;
        r->addr = r->next_pc;
    }
    t->st.cls[r->cls]++;
    if (t->regs) {
        uint64_t m = t->meta >> HW_META_REGS_SHIFT;
        t->ops.op = (uint8_t)(m & 7u);
        t->ops.src[0] = (uint8_t)(m >> 3);
        t->ops.src[1] = (uint8_t)(m >> 11);
        t->ops.src[2] = (uint8_t)(m >> 19);
        t->ops.dst[0] = (uint8_t)(m >> 27);
        t->ops.dst[1] = (uint8_t)(m >> 35);
        t->ops.upd = (uint8_t)((t->meta >> HW_META_UPD_SHIFT) & 3u);
    }
    if (t->s) hwx_session_insn(t->s, r);
    if (t->tw) hwx_trace_put(t->tw, r);
}

HWP_INLINE void hw_thread_insn(hw_thread *t, uint64_t pc, uint64_t meta,
                               uint64_t target) {
    if (t->have) {
        t->rec.next_pc = pc;
        hw_thread_emit(t);
    }
    t->rec.pc = pc;
    t->rec.next_pc = 0;
    t->rec.addr = target;
    t->rec.value = 0;
    t->rec.cls = HW_META_CLS(meta);
    t->rec.events = (meta & HW_META_INDIRECT) ? HWP_EV_INDIRECT : 0u;
    t->len = HW_META_LEN(meta);
    t->meta = meta;
    t->have = 1;
}

/* The first load of a plain instruction makes it a LOAD record (a store
 * seen before it in the same instruction, as in `push [mem]` order, does
 * not win); branches keep their class (ret's load of its target). */
HWP_INLINE void hw_thread_load(hw_thread *t, uint64_t addr, uint64_t value) {
    t->st.load_events++;
    if (t->rec.cls == HWP_CLS_OTHER || t->rec.cls == HWP_CLS_STORE) {
        t->rec.cls = HWP_CLS_LOAD;
        t->rec.addr = addr;
        t->rec.value = value;
    }
}

HWP_INLINE void hw_thread_store(hw_thread *t, uint64_t addr) {
    t->st.store_events++;
    if (t->rec.cls == HWP_CLS_OTHER) {
        t->rec.cls = HWP_CLS_STORE;
        t->rec.addr = addr;
    }
}

/* At exit: the last record gets the fall-through as its next_pc; the
 * session closes open state and the trace writer emits its chunk. */
void hw_thread_flush(hw_thread *t);
/* record=FILE: the end marker with every thread's record count. */
void hw_host_record_end(hw_host *h, hw_thread *const *ts, unsigned n);

/* The client unmapped [lo, hi]: every thread's session lets go of the
 * code it held there (hwx_session_retire), counted for the report; with
 * record=, every thread's trace gets a retire item at that point, for a
 * replay to repeat. */
void hw_host_retire(hw_host *h, hw_thread *const *ts, unsigned n, uint64_t lo, uint64_t hi);

/* At exit, after hw_thread_flush on every thread (NULL slots skipped):
 * sums the counts, merges every session into the first one and, with
 * exact=on, computes the accuracy metrics. */
void hw_host_finish(hw_host *h, hw_thread *const *ts, unsigned n);
/* Reports (after hw_host_finish): stream counts, the VEX/bytes
 * cross-check, then the merged session's report. The JSON wraps the
 * session's own JSON (docs/valgrind.md) under "session". */
void hw_host_report_text(const hw_host *h, const hwp_writer *w);
/* mods: the code images the tool saw (Valgrind's debug info), written as
 * the report's "modules" member for hwprof-report; nmods may be 0. */
void hw_host_report_json(const hw_host *h, const hwp_writer *w, const hwx_module *mods,
                         size_t nmods);

#endif
