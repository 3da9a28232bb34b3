/* Unit tests for the host's dictionary of the co-processor's calling
 * contexts (hwx_ctx.h): the keys are the co-processor's own, a full
 * dictionary counts what it could not store, the stack saturates like the
 * program's, dictionaries merge. */
#include <stdlib.h>
#include <string.h>

#define HWPROF_STDIO
#include "hwx_ctx.h"
#include "hwprof/coproc.h"

#include "harness.h"

static hwx_ctx *mk(uint32_t keep) {
    /* the hosts hand over uncleared storage: so does the test */
    hwx_ctx *c = (hwx_ctx *)malloc(sizeof *c);
    void *e = malloc(hwx_ctx_bytes());
    if (c) memset(c, 0xa5, sizeof *c);
    if (e) memset(e, 0xa5, hwx_ctx_bytes());
    if (c && e) hwx_ctx_init(c, e, keep);
    return c;
}

static void drop(hwx_ctx *c) {
    free(c->e);
    free(c);
}

static void call(hwx_ctx *c, uint64_t site, uint64_t callee) {
    hwp_insn in;
    memset(&in, 0, sizeof in);
    in.pc = site;
    in.next_pc = callee;
    in.cls = HWP_CLS_CALL;
    hwx_ctx_step(c, &in, 0);
}

static void ret(hwx_ctx *c) {
    hwp_insn in;
    memset(&in, 0, sizeof in);
    in.cls = HWP_CLS_RET;
    hwx_ctx_step(c, &in, 0);
}

static const hwx_ctx_ent *find(const hwx_ctx *c, uint64_t key) {
    uint32_t i;
    for (i = 0; i < HWX_CTX_ENTRIES; i++)
        if (c->e[i].flags && c->e[i].key == key) return &c->e[i];
    return NULL;
}

/* Keys as hwp_cp_callstack_key gives them for the innermost sites. */
static void test_ctx_keys(void) {
    hwx_ctx *c = mk(2);
    uint64_t s[2] = {0x300, 0x200};
    const hwx_ctx_ent *e;
    call(c, 0x100, 0x1000);
    call(c, 0x200, 0x2000);
    call(c, 0x300, 0x3000); /* three open, two kept */
    e = find(c, hwp_cp_callstack_key(s, 2));
    CHECK(e != NULL);
    if (e) {
        CHECK_EQ(e->n, 2u);
        CHECK_EQ(e->site[0], 0x300u);
        CHECK_EQ(e->site[1], 0x200u);
        CHECK_EQ(e->callee, 0x3000u);
        CHECK(e->flags & 2u); /* deeper */
    }
    ret(c);
    ret(c);
    ret(c);
    e = find(c, hwp_cp_callstack_key(NULL, 0));
    CHECK(e != NULL && e->n == 0); /* the outermost context */
    /* the same site calling elsewhere: an indirect call */
    call(c, 0x100, 0x1111);
    s[0] = 0x100;
    e = find(c, hwp_cp_callstack_key(s, 1));
    CHECK(e != NULL && e->callee == 0);
    CHECK_EQ(c->stored, 4u);
    drop(c);
}

/* A full dictionary stores what it can and counts the rest; merge adds
 * what the other lacks and its overflow. */
static void test_ctx_overflow_merge(void) {
    hwx_ctx *a = mk(4), *b = mk(4);
    uint32_t i, n = HWX_CTX_ENTRIES + 904; /* + the outermost context */
    for (i = 0; i < n; i++) {
        call(a, 0x10000 + 4u * i, 0x90000);
        ret(a);
    }
    CHECK_EQ(a->stored, HWX_CTX_ENTRIES);
    CHECK_EQ(a->overflow, n + 1 - HWX_CTX_ENTRIES);
    call(b, 0x1, 0x2); /* b: the outermost context and one of its own */
    hwx_ctx_merge(b, a);
    CHECK_EQ(b->stored, HWX_CTX_ENTRIES);
    /* a's, and the one of a's contexts b had no room for (b held two) */
    CHECK_EQ(b->overflow, a->overflow + 1);
    drop(a);
    drop(b);
}

/* 70 calls deep: the stack wraps at 64 and the depth saturates at 63, as
 * the co-processor's; returns then read what the co-processor reads. */
static void test_ctx_saturates(void) {
    hwx_ctx *c = mk(1);
    uint32_t i;
    for (i = 0; i < 70; i++) call(c, 0x100 + i, 0x5000 + i);
    CHECK_EQ(c->cp.depth, 63u);
    for (i = 0; i < 70; i++) ret(c);
    CHECK_EQ(c->cp.depth, 0u);
    CHECK_EQ(c->overflow, 0u);
    drop(c);
}

/* A call whose sample the co-processor dropped never reaches its stack:
 * the host's follows the co-processor's, and the contexts it then counts
 * for calls that are not open are stale. */
static void test_ctx_dropped(void) {
    hwx_ctx *c = mk(4);
    hwp_insn in;
    uint64_t s[1] = {0x100};
    const hwx_ctx_ent *e;
    call(c, 0x100, 0x1000);
    memset(&in, 0, sizeof in);
    in.pc = 0x200;
    in.next_pc = 0x2000;
    in.cls = HWP_CLS_CALL;
    hwx_ctx_step(c, &in, 1); /* dropped: the co-processor stays in [0x100] */
    CHECK_EQ(c->lost, 1u);
    CHECK_EQ(c->cp.depth, 1u);
    CHECK_EQ(c->stored, 2u);
    e = find(c, hwp_cp_callstack_key(s, 1));
    CHECK(e != NULL && !(e->flags & 4u));
    ret(c); /* B returns: the co-processor pops A's call */
    e = find(c, hwp_cp_callstack_key(NULL, 0));
    CHECK(e != NULL && (e->flags & 4u)); /* stale: A's call is still open */
    ret(c);
    CHECK_EQ(c->cp.depth, 0u);
    CHECK_EQ(c->real.depth, 0u);
    drop(c);
}

int main(int argc, char **argv) {
    hwt_begin(argc, argv);
    HWT_RUN(test_ctx_keys);
    HWT_RUN(test_ctx_overflow_merge);
    HWT_RUN(test_ctx_saturates);
    HWT_RUN(test_ctx_dropped);
    return hwt_end();
}
