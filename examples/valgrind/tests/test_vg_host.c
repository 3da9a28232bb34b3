/* examples/valgrind/tests/test_vg_host.c: the Valgrind tool's stream
 * logic (hw_host.c) natively, without Valgrind: class and target from
 * bytes vs VEX's view, and the records a sequence of instruction-mark,
 * load and store calls turns into (read back through record mode). */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "hw_host.h"

/* An arena: the host never frees what it allocates (the tool lives as
 * long as the process), so each test releases everything at its end. */
static void *arena[64];
static unsigned arena_n;

static void *t_alloc(void *ctx, size_t n) {
    (void)ctx;
    if (arena_n == 64) return NULL;
    return arena[arena_n++] = calloc(1, n);
}

static void t_free(void *ctx, void *p) {
    unsigned i;
    (void)ctx;
    for (i = 0; i < arena_n; i++)
        if (arena[i] == p) arena[i] = NULL;
    free(p);
}

static void arena_release(void) {
    while (arena_n) free(arena[--arena_n]);
}

static hw_host *new_host(void) {
    hw_host *h = t_alloc(NULL, sizeof *h);
    if (!h || !hw_host_setup(h, t_alloc, t_free, NULL)) abort();
    return h;
}

static void test_meta_classes(void) {
    hw_host *h = new_host();
    static const uint8_t jz[] = {0x74, 0x05};        /* jz +5          */
    static const uint8_t jmp0[] = {0xEB, 0x00};      /* jmp +0         */
    static const uint8_t callr[] = {0xFF, 0xD0};     /* call *rax      */
    static const uint8_t ret[] = {0xC3};
    static const uint8_t add[] = {0x48, 0x01, 0xD0}; /* add rax, rdx   */
    hw_vex_view v;
    uint64_t m, tgt;

    v.cls = HWP_CLS_BR_COND; v.indirect = 0; v.target = 0x1007;
    m = hw_meta(h, jz, 2, 0x1000, &v, &tgt);
    CHECK_EQ(HW_META_CLS(m), HWP_CLS_BR_COND);
    CHECK_EQ(HW_META_LEN(m), 2);
    CHECK_EQ(tgt, 0x1007);

    /* VEX sees no branch in a jump to the next instruction; bytes do. */
    v.cls = HWP_CLS_OTHER; v.target = 0;
    m = hw_meta(h, jmp0, 2, 0x2000, &v, &tgt);
    CHECK_EQ(HW_META_CLS(m), HWP_CLS_JUMP);
    CHECK_EQ(tgt, 0x2002);
    CHECK_EQ(h->agree[HWP_CLS_OTHER][HWP_CLS_JUMP], 1);

    v.cls = HWP_CLS_CALL; v.indirect = 1; v.target = 0;
    m = hw_meta(h, callr, 2, 0x3000, &v, &tgt);
    CHECK_EQ(HW_META_CLS(m), HWP_CLS_CALL);
    CHECK((m & HW_META_INDIRECT) != 0);

    v.cls = HWP_CLS_RET; v.indirect = 0;
    m = hw_meta(h, ret, 1, 0x4000, &v, &tgt);
    CHECK_EQ(HW_META_CLS(m), HWP_CLS_RET);

    v.cls = HWP_CLS_OTHER;
    m = hw_meta(h, add, 3, 0x5000, &v, &tgt);
    CHECK_EQ(HW_META_CLS(m), HWP_CLS_OTHER);
    CHECK_EQ(tgt, 0);
    CHECK_EQ(h->insns_translated, 5);
    CHECK_EQ(h->len_mismatch, 0);
    /* Four of five agree: the jmp +0 is the one disagreement. */
    CHECK_EQ(h->agree[HWP_CLS_BR_COND][HWP_CLS_BR_COND] + h->agree[HWP_CLS_CALL][HWP_CLS_CALL] +
                 h->agree[HWP_CLS_RET][HWP_CLS_RET] + h->agree[HWP_CLS_OTHER][HWP_CLS_OTHER],
             4);
    arena_release();
}

/* A growing buffer behind an hwp_writer, for record mode. */
typedef struct membuf {
    uint8_t *p;
    size_t n, cap;
} membuf;

static void mem_write(void *ctx, const char *s, size_t n) {
    membuf *b = (membuf *)ctx;
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2;
        b->p = realloc(b->p, b->cap);
        if (!b->p) abort();
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
}

#define META(len, cls) ((uint64_t)(len) | ((uint64_t)(cls) << 8))

static void test_records(void) {
    hw_host *h = new_host();
    membuf mb = {NULL, 0, 0};
    hwp_writer w;
    hw_thread *t;
    const char *why;
    hwx_trace_reader r;
    hwp_insn in[8];
    int n = 0;
    w.write = mem_write;
    w.ctx = &mb;
    hwx_trace_write_header(&w);
    h->record = &w;
    t = hw_thread_new(h, 1, &why);
    if (!CHECK(t != NULL && t->tw != NULL)) {
        arena_release();
        return;
    }
    /* 0x100 mov rax,[0x9000] (loads 42); 0x107 mov [0x9008],rax;
     * 0x10e jz 0x200 taken; 0x200 jz 0x300 not taken; 0x202 push [m]
     * (a store then a load: stays a LOAD); 0x208 ret (its load does not
     * make it a load) to 0x500; 0x500 exit syscall, flushed. */
    hw_thread_insn(t, 0x100, META(7, HWP_CLS_OTHER), 0);
    hw_thread_load(t, 0x9000, 42);
    hw_thread_insn(t, 0x107, META(7, HWP_CLS_OTHER), 0);
    hw_thread_store(t, 0x9008);
    hw_thread_insn(t, 0x10e, META(2, HWP_CLS_BR_COND), 0x200);
    hw_thread_insn(t, 0x200, META(2, HWP_CLS_BR_COND), 0x300);
    hw_thread_insn(t, 0x202, META(6, HWP_CLS_OTHER), 0);
    hw_thread_store(t, 0x7ff8);
    hw_thread_load(t, 0x9010, 7);
    hw_thread_insn(t, 0x208, META(1, HWP_CLS_RET), 0);
    hw_thread_load(t, 0x7ff0, 0x500);
    hw_thread_insn(t, 0x500, META(2, HWP_CLS_OTHER), 0);
    hw_thread_flush(t);
    hwx_trace_write_end(&w, t->tw->total);
    CHECK_EQ(t->st.insns, 7);
    CHECK_EQ(t->st.cond_taken, 1);
    CHECK_EQ(t->st.cond_not_taken, 1);
    CHECK_EQ(t->st.load_events, 3);
    CHECK_EQ(t->st.store_events, 2);
    arena_release();
    if (!CHECK_EQ(hwx_trace_open(&r, mb.p, mb.n), HWP_OK)) {
        free(mb.p);
        return;
    }
    while (n < 8 && hwx_trace_next(&r, &in[n]) == 1) n++;
    if (!CHECK_EQ(n, 7)) {
        free(mb.p);
        return;
    }
    CHECK(in[0].cls == HWP_CLS_LOAD && in[0].addr == 0x9000 && in[0].value == 42 &&
          in[0].next_pc == 0x107);
    CHECK(in[1].cls == HWP_CLS_STORE && in[1].addr == 0x9008 && in[1].next_pc == 0x10e);
    CHECK(in[2].cls == HWP_CLS_BR_COND && (in[2].events & HWP_EV_TAKEN) &&
          in[2].addr == 0x200 && in[2].next_pc == 0x200);
    CHECK(in[3].cls == HWP_CLS_BR_COND && !(in[3].events & HWP_EV_TAKEN) &&
          in[3].addr == 0x300 && in[3].next_pc == 0x202);
    CHECK(in[4].cls == HWP_CLS_LOAD && in[4].addr == 0x9010 && in[4].value == 7);
    CHECK(in[5].cls == HWP_CLS_RET && (in[5].events & HWP_EV_TAKEN) &&
          in[5].addr == 0x500 && in[5].next_pc == 0x500);
    CHECK(in[6].cls == HWP_CLS_OTHER && in[6].next_pc == 0x502);
    free(mb.p);
}

/* Registers gathered at translation (hw_regs_*), packed into meta and
 * handed to the session's core with each record. */
static void test_regs(void) {
    hw_host *h = new_host();
    hwp_core_ops r;
    hw_thread *t;
    const char *why = "";
    membuf mb = {NULL, 0, 0};
    hwp_writer w;
    uint64_t meta;
    CHECK_EQ(hw_host_option(h, "core=on", &why), HWP_OK);
    h->regs = 1;
    memset(&r, 0, sizeof r);
    /* RAX read twice counts once; the flags written, then read (the
     * instruction's own result): no source; a fourth source and a third
     * destination are counted and left out; 0 is no register */
    hw_regs_read(h, &r, 1);
    hw_regs_read(h, &r, 1);
    hw_regs_write(h, &r, 1);
    hw_regs_write(h, &r, 1);
    hw_regs_write(h, &r, 17);
    hw_regs_read(h, &r, 17);
    hw_regs_read(h, &r, 4);
    hw_regs_read(h, &r, 0);
    hw_regs_read(h, &r, 18);
    hw_regs_read(h, &r, 19);
    hw_regs_write(h, &r, 34);
    hw_regs_write(h, &r, 0);
    r.op = HWP_CORE_OP_MUL;
    r.upd = 2;
    CHECK_EQ(r.nsrc, 3);
    CHECK_EQ(r.ndst, 2);
    CHECK_EQ(h->regs_src_over, 1);
    CHECK_EQ(h->regs_dst_over, 1);
    meta = hw_regs_meta(&r);
    CHECK_EQ(meta & 0x1FFFFu, 0); /* clear of length, class, indirect */
    t = hw_thread_new(h, 1, &why);
    if (!CHECK(t != NULL && t->s != NULL)) {
        arena_release();
        return;
    }
    hw_thread_insn(t, 0x100, META(4, HWP_CLS_OTHER) | meta, 0);
    hw_thread_insn(t, 0x104, META(4, HWP_CLS_OTHER), 0); /* emits 0x100 */
    CHECK(t->ops.regs == 1 && t->ops.nsrc == 3 && t->ops.ndst == 2);
    CHECK(t->ops.src[0] == 1 && t->ops.src[1] == 4 && t->ops.src[2] == 18);
    CHECK(t->ops.dst[0] == 1 && t->ops.dst[1] == 17);
    CHECK_EQ(t->ops.op, HWP_CORE_OP_MUL);
    CHECK_EQ(t->ops.upd, 2);
    hw_thread_flush(t); /* 0x104: no registers, all slots 0 */
    CHECK(t->ops.src[0] == 0 && t->ops.dst[0] == 0 && t->ops.op == 0 && t->ops.upd == 0);
    w.write = mem_write;
    w.ctx = &mb;
    hwx_session_report_text(t->s, &w);
    mem_write(&mb, "", 1);
    CHECK_HAS((const char *)mb.p, "(registers from VEX IR: timing with dependences)");
    free(mb.p);
    arena_release();
}

static void test_options(void) {
    hw_host *h = new_host();
    const char *why = "";
    CHECK_EQ(hw_host_option(h, "exact=on", &why), HWP_OK);
    CHECK(h->opts->exact != 0);
    CHECK(hw_host_option(h, "exact", &why) != HWP_OK);
    CHECK_HAS(why, "key=value");
    CHECK(hw_host_option(h, "no_such_key=1", &why) != HWP_OK);
    arena_release();
}

int main(int argc, char **argv) {
    hwt_begin(argc, argv);
    HWT_RUN(test_meta_classes);
    HWT_RUN(test_records);
    HWT_RUN(test_regs);
    HWT_RUN(test_options);
    return hwt_end();
}
