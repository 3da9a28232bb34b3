/* examples/common/test_hwx_bbv.c: the basic-block vector writer (hwx_bbv)
 * and the session's bbv= option against vectors computed by hand from a
 * small program: instruction by instruction, in whole blocks, across
 * interval cuts, with a map that grows and one that fills. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HWPROF_STDIO
#include "hwx.h"

static int fails;
#define CHECK(c, ...)                                    \
    do {                                                 \
        if (!(c)) {                                      \
            fails++;                                     \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);  \
            printf(__VA_ARGS__);                         \
            printf("\n");                                \
        }                                                \
    } while (0)

typedef struct sink {
    char buf[4096];
    size_t n;
} sink;

static void sink_write(void *ctx, const char *s, size_t n) {
    sink *k = (sink *)ctx;
    if (k->n + n < sizeof k->buf) {
        memcpy(k->buf + k->n, s, n);
        k->n += n;
        k->buf[k->n] = 0;
    }
}

/* The program: block A at 0x100 (2 instructions, the second a branch),
 * block B at 0x200 (3, the last a branch), run A B A B A. With an interval
 * of 4 instructions, by hand:
 *   A0 A1 B0 B1 | B2 A0 A1 B0 | B1 B2 A0 A1 |
 *   T:1:2 :2:2 / T:2:2 :1:2 / T:2:2 :1:2 (ids: A 1, B 2; a block once
 *   per line, listed where it first ran in the interval). */
static const char *const want4 = "T:1:2 :2:2 \nT:2:2 :1:2 \nT:2:2 :1:2 \n";
static const uint64_t prog[] = {0x100, 0x200, 0x100, 0x200, 0x100};

static uint32_t len_of(uint64_t b) { return b == 0x100 ? 2 : 3; }

static void by_insn(hwx_bbv *b) {
    size_t i;
    uint32_t j;
    for (i = 0; i < sizeof prog / sizeof prog[0]; i++)
        for (j = 0; j < len_of(prog[i]); j++)
            hwx_bbv_run(b, prog[i] + 4 * j, 1, j + 1 == len_of(prog[i]));
}

static void by_block(hwx_bbv *b) {
    size_t i;
    for (i = 0; i < sizeof prog / sizeof prog[0]; i++)
        hwx_bbv_run(b, prog[i], len_of(prog[i]), true);
}

static hwp_status grow(void *ctx, hwx_bbv *b) {
    void **mem = (void **)ctx;
    size_t n = hwx_bbv_bytes(b->max * 2);
    void *m = malloc(n);
    if (!m || hwx_bbv_move(b, m, n, b->max * 2) != HWP_OK) return HWP_ENOSPC;
    free(*mem);
    *mem = m;
    return HWP_OK;
}

/* The vectors of feed() over a map of `blocks` ids (growing when asked). */
static void run(void (*feed)(hwx_bbv *), uint32_t blocks, uint64_t interval, int grows,
                sink *k, hwx_bbv *b) {
    size_t n = hwx_bbv_bytes(blocks);
    void *mem = malloc(n);
    hwp_writer w;
    memset(k, 0, sizeof *k);
    w.write = sink_write;
    w.ctx = k;
    CHECK(hwx_bbv_init(b, mem, n, blocks, interval, &w) == HWP_OK, "init");
    if (grows) {
        b->grow = grow;
        b->grow_ctx = &mem;
    }
    feed(b);
    hwx_bbv_finish(b);
    free(mem);
}

static void test_writer(void) {
    sink k;
    hwx_bbv b;
    unsigned char small[64];
    run(by_insn, 4, 4, 0, &k, &b);
    CHECK(!strcmp(k.buf, want4), "by instruction:\n%s\nwant\n%s", k.buf, want4);
    CHECK(b.lines == 3 && b.insns == 12 && !b.dropped, "counts %llu %llu",
          (unsigned long long)b.lines, (unsigned long long)b.insns);
    run(by_block, 4, 4, 0, &k, &b);
    CHECK(!strcmp(k.buf, want4), "by block (cut inside blocks):\n%s", k.buf);
    /* one id to start with: the map grows at B, ids unchanged */
    run(by_block, 1, 4, 1, &k, &b);
    CHECK(!strcmp(k.buf, want4) && b.max >= 2, "grown map:\n%s", k.buf);
    /* one id and no growth: B's 6 instructions are dropped, A's counted */
    run(by_block, 1, 4, 0, &k, &b);
    CHECK(!strcmp(k.buf, "T:1:2 \nT:1:2 \nT:1:2 \n") && b.dropped == 6,
          "full map: %s dropped %llu", k.buf, (unsigned long long)b.dropped);
    /* one interval holds the whole run: the partial line at the end */
    run(by_insn, 4, 1000, 0, &k, &b);
    CHECK(!strcmp(k.buf, "T:1:6 :2:6 \n"), "one interval: %s", k.buf);
    CHECK(hwx_bbv_init(&b, small, sizeof small, 4, 0, NULL) == HWP_EINVAL, "interval 0");
    CHECK(hwx_bbv_init(&b, small, sizeof small, 1u << 20, 4, NULL) == HWP_ENOSPC,
          "memory too small");
    CHECK(hwx_bbv_bytes(0) == 0 && hwx_bbv_bytes(HWX_BBV_MAX_BLOCKS + 1u) == 0, "bytes bounds");
}

/* The session's bbv=: TBs that do not end in a branch continue a block,
 * and a VM host's skipped instructions stay in the open block. */
static void test_session(void) {
    hwx_opts o;
    hwx_session s;
    const char *why = "";
    sink k;
    hwp_writer w;
    hwp_insn in;
    uint64_t pcs[3] = {0x200, 0x204, 0x208};
    void *mem;
    size_t n;
    hwx_opts_default(&o);
    CHECK(hwx_opts_parse(&o, "bbv=/dev/null,bbv_interval=4", &why) == HWP_OK, "%s", why);
    CHECK(hwx_opts_set(&o, "bbv_interval", "0", &why) == HWP_EINVAL &&
              strstr(why, "bbv_interval"), "bbv_interval=0 refused by name: %s", why);
    {   /* Fields a host set itself, past hwx_opts_set: each refused by name. */
        static const struct { uint64_t interval; uint32_t blocks; const char *field; } bad[] = {
            {4, 0, "bbv_blocks"}, {4, HWX_BBV_MAX_BLOCKS + 1u, "bbv_blocks"}, {0, 16, "bbv_interval"}};
        hwx_opts b = o;
        size_t i;
        for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            b.bbv_interval = bad[i].interval;
            b.bbv_blocks = bad[i].blocks;
            n = hwx_session_bytes(&b);
            mem = malloc(n);
            CHECK(hwx_session_init(&s, mem, n, &b) == HWP_EINVAL &&
                      strstr(hwp_why(&s), bad[i].field),
                  "interval %llu blocks %u refused by name %s: %s",
                  (unsigned long long)bad[i].interval, bad[i].blocks, bad[i].field, hwp_why(&s));
            free(mem);
        }
    }
    n = hwx_session_bytes(&o);
    mem = malloc(n);
    CHECK(hwx_session_init(&s, mem, n, &o) == HWP_OK, "session");
    memset(&k, 0, sizeof k);
    w.write = sink_write;
    w.ctx = &k;
    hwx_session_bbv_out(&s, &w);
    memset(&in, 0, sizeof in);
    /* A at 0x100 instruction by instruction, the second a branch */
    CHECK(hwx_session_until(&s) == 1, "a block's first instruction comes whole");
    in.pc = 0x100;
    in.cls = HWP_CLS_OTHER;
    hwx_session_insn(&s, &in);
    CHECK(hwx_session_until(&s) > 1, "inside a block, any number may be skipped");
    in.pc = 0x104;
    in.cls = HWP_CLS_BR_COND;
    hwx_session_insn(&s, &in);
    CHECK(hwx_session_until(&s) == 1, "after a branch, the next comes whole");
    /* B at 0x200 as two TBs: 0x200, 0x204 (no branch), then 0x208 */
    in.cls = HWP_CLS_OTHER;
    in.pc = 0x204;
    hwx_session_block(&s, pcs, 2, &in, NULL, 0);
    in.pc = 0x208;
    in.cls = HWP_CLS_JUMP;
    hwx_session_block(&s, pcs + 2, 1, &in, NULL, 0);
    /* C at 0x300 as a VM host feeds it: whole, one skipped, the branch */
    in.pc = 0x300;
    in.cls = HWP_CLS_OTHER;
    hwx_session_insn(&s, &in);
    hwx_session_skip(&s, 1);
    in.pc = 0x308;
    in.cls = HWP_CLS_JUMP;
    hwx_session_insn(&s, &in);
    hwx_session_finish(&s);
    /* A0 A1 B0 B1 | B2 C0 C1 C2 (ids A 1, B 2, C 3) */
    CHECK(!strcmp(k.buf, "T:1:2 :2:2 \nT:2:1 :3:3 \n"), "session vectors:\n%s", k.buf);
    free(mem);
}

int main(void) {
    test_writer();
    test_session();
    printf("%s\n", fails ? "FAILED" : "ok");
    return fails != 0;
}
