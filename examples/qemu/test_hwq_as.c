/* examples/qemu/test_hwq_as.c: the system-mode address-space tags of the
 * QEMU plugin (hwq_as.h), without QEMU: numbering CR3 values, tagging
 * addresses, breaking the flow where the address space or the privilege
 * changes, telling privileged code by CS and CR0, finding where QEMU left
 * a TB early, and a session whose profile keeps two processes' identical
 * user PCs apart while the kernel's stay shared. */
#define HWPROF_STDIO
#include "harness.h"
#include "hwq_as.h"
#include "hwx.h"

static hwq_as_table tab; /* 1.2 MB: not on the stack */

static void test_tag_bits(void) {
    const uint64_t pc = 0x555555558a30ull, kpc = 0xffffffff81000000ull;
    uint64_t a = hwq_as_addr(pc, (uint64_t)1 << HWQ_AS_SHIFT);
    uint64_t b = hwq_as_addr(pc, (uint64_t)2 << HWQ_AS_SHIFT);
    uint64_t top = hwq_as_addr(HWQ_AS_USER_END - 1, (uint64_t)HWQ_AS_MAX << HWQ_AS_SHIFT);
    CHECK(a != b);
    CHECK(a != pc && b != pc);
    CHECK_EQ(a & (HWQ_AS_USER_END - 1), pc); /* the address is kept */
    CHECK_EQ(hwq_as_of(a), 1);
    CHECK_EQ(hwq_as_of(b), 2);
    /* the kernel's code is not tagged: shared by every address space */
    CHECK_EQ(hwq_as_addr(kpc, (uint64_t)5 << HWQ_AS_SHIFT), kpc);
    CHECK_EQ(hwq_as_of(kpc), 0);
    /* the largest tagged value stays below the kernel half, the smallest
     * above the user half */
    CHECK(top < HWQ_KERNEL_BASE);
    CHECK(hwq_as_addr(0, (uint64_t)1 << HWQ_AS_SHIFT) >= HWQ_AS_USER_END);
    CHECK_EQ(hwq_as_addr(pc, 0), pc); /* tag 0: user mode, untouched */
    /* order within one address space is kept (back-edges, ranges) */
    CHECK(hwq_as_addr(pc + 16, (uint64_t)3 << HWQ_AS_SHIFT) >
          hwq_as_addr(pc, (uint64_t)3 << HWQ_AS_SHIFT));
}

static void test_table(void) {
    uint32_t i, a, b;
    memset(&tab, 0, sizeof tab);
    a = hwq_as_id(&tab, hwq_as_key(0x12345000ull));
    b = hwq_as_id(&tab, hwq_as_key(0x6789a000ull));
    CHECK_EQ(a, 1);
    CHECK_EQ(b, 2);
    /* the same page-table base under another PCID, with the no-flush bit */
    CHECK_EQ(hwq_as_id(&tab, hwq_as_key(0x8000000012345003ull)), a);
    CHECK_EQ(hwq_as_id(&tab, hwq_as_key(0x6789a7ffull)), b);
    /* fill it: the overflow shares HWQ_AS_MAX and is counted; the
     * address spaces numbered before keep their tags */
    for (i = 0; i < HWQ_AS_MAX + 10; i++) hwq_as_id(&tab, (uint64_t)(i + 0x100000) << 12);
    CHECK_EQ(tab.n, HWQ_AS_MAX - 1);
    CHECK(tab.over >= 10);
    CHECK_EQ(hwq_as_id(&tab, (uint64_t)0x7777777 << 12), HWQ_AS_MAX);
    CHECK_EQ(hwq_as_id(&tab, hwq_as_key(0x12345000ull)), a);
    CHECK_EQ(tab.key[b - 1], 0x6789a000ull);
}

/* The privilege of code from a boot's stages: the firmware and the
 * decompressor run at level 0 below the kernel half; labelled by address
 * they would be user code. */
static void test_privilege(void) {
    const uint64_t real = 0x60000010ull, prot = 0x80050033ull; /* CR0: PE clear / set */
    /* the BIOS at its reset vector, real mode (CS 0xf000) */
    CHECK_EQ(hwq_as_kernel(0xffff0ull, 1, real, 0xf000), 1);
    /* real mode: a segment whose low bits are 3 is still privilege 0 */
    CHECK_EQ(hwq_as_kernel(0x7c00ull, 1, real, 0x07c3), 1);
    /* the kernel's decompressor: long mode, kernel CS, low addresses */
    CHECK_EQ(hwq_as_kernel(0x1000000ull, 1, prot, 0x10), 1);
    /* the kernel proper and a user process (CS 0x33: level 3) */
    CHECK_EQ(hwq_as_kernel(0xffffffff81000000ull, 1, prot, 0x10), 1);
    CHECK_EQ(hwq_as_kernel(0x401000ull, 1, prot, 0x33), 0);
    /* a 32-bit process (CS 0x23) */
    CHECK_EQ(hwq_as_kernel(0x8048000ull, 1, prot, 0x23), 0);
    /* registers not readable: the address decides */
    CHECK_EQ(hwq_as_kernel(0x1000000ull, 0, 0, 0), 0);
    CHECK_EQ(hwq_as_kernel(0xffffffff81000000ull, 0, 0, 0), 1);
}

static hwp_insn rec(uint64_t pc, uint64_t next, uint32_t cls, uint64_t addr) {
    hwp_insn r = {0};
    r.pc = pc, r.next_pc = next, r.cls = cls, r.addr = addr;
    return r;
}

static void test_block(void) {
    const uint64_t t1 = (uint64_t)1 << HWQ_AS_SHIFT, t2 = (uint64_t)2 << HWQ_AS_SHIFT;
    const uint64_t pcs[] = {0x401000, 0x401004, 0x401008, 0x40100a};
    const uint64_t kpcs[] = {0xffffffff81000000ull, 0xffffffff81000004ull,
                             0xffffffff81000006ull, 0xffffffff81000008ull};
    uint64_t out[4];
    hwp_insn last, mem[1];

    /* a loop's back-edge in one address space: no break, all tagged */
    last = rec(0x401008, 0x401000, HWP_CLS_BR_COND, 0x401000);
    mem[0] = rec(0x401000, 0x401004, HWP_CLS_LOAD, 0x7ffff000);
    CHECK_EQ(hwq_as_block(out, pcs, 3, &last, mem, 1, t1, t1, 0), 0);
    CHECK_EQ(out[0], 0x401000 | t1);
    CHECK_EQ(out[2], 0x401008 | t1);
    CHECK_EQ(last.cls, HWP_CLS_BR_COND);
    CHECK_EQ(last.next_pc, 0x401000 | t1);
    CHECK_EQ(last.addr, 0x401000 | t1);
    CHECK_EQ(mem[0].pc, 0x401000 | t1);
    CHECK_EQ(mem[0].addr, 0x7ffff000 | t1);

    /* a conditional branch not taken falls through: no break */
    last = rec(0x401008, 0x40100a, HWP_CLS_BR_COND, 0x401000);
    CHECK_EQ(hwq_as_block(out, pcs, 3, &last, NULL, 0, t2, t2, 0), 0);
    CHECK_EQ(last.addr, 0x401000 | t2);

    /* an instruction that jumps back to itself (rep movs): no break */
    last = rec(0x401008, 0x401008, HWP_CLS_OTHER, 0);
    CHECK_EQ(hwq_as_block(out, pcs, 3, &last, NULL, 0, t1, t1, 0), 0);
    CHECK_EQ(last.cls, HWP_CLS_OTHER);
    CHECK_EQ(last.addr, 0); /* no address to tag */

    /* an indirect jump may go anywhere in its address space: no break */
    last = rec(0x401008, 0x405000, HWP_CLS_INDIRECT, 0x405000);
    CHECK_EQ(hwq_as_block(out, pcs, 3, &last, NULL, 0, t1, t1, 0), 0);
    /* ... unless QEMU told of an interrupt on the way (told): the handler
     * starts a new path, and the jump's target is where the vCPU went */
    last = rec(0x401008, 0x405000, HWP_CLS_INDIRECT, 0x405000);
    CHECK_EQ(hwq_as_block(out, pcs, 3, &last, NULL, 0, t1, t1, HWQ_AS_TOLD), HWQ_BRK_SAME);
    CHECK_EQ(last.cls, HWP_CLS_INDIRECT);
    CHECK(last.events & HWP_EV_TAKEN);
    CHECK_EQ(last.next_pc, 0x405000 | t1);
    /* told, from user code into the kernel's handler: into the kernel */
    last = rec(0x401008, 0x40100a, HWP_CLS_OTHER, 0);
    last.next_pc = 0xffffffff81200000ull;
    CHECK_EQ(hwq_as_block(out, pcs, 3, &last, NULL, 0, t1, 0, HWQ_AS_TOLD), HWQ_BRK_ENTER);
    /* 16-bit code (no paging): a successor the decoder cannot explain is
     * no break, unless told or the address space changes */
    last = rec(0x401008, 0x409000, HWP_CLS_OTHER, 0);
    CHECK_EQ(hwq_as_block(out, pcs, 3, &last, NULL, 0, t1, t1, HWQ_AS_NO_INFER), 0);
    last = rec(0x401008, 0x409000, HWP_CLS_OTHER, 0);
    CHECK_EQ(hwq_as_block(out, pcs, 3, &last, NULL, 0, t1, t1, HWQ_AS_NO_INFER | HWQ_AS_TOLD),
             HWQ_BRK_SAME);
    last = rec(0x401008, 0x409000, HWP_CLS_OTHER, 0);
    CHECK_EQ(hwq_as_block(out, pcs, 3, &last, NULL, 0, t1, t2, HWQ_AS_NO_INFER), HWQ_BRK_SPACE);

    /* syscall: user code of as 1 goes on in the kernel (tag 0) */
    last = rec(0x401008, 0xffffffff81000000ull, HWP_CLS_OTHER, 0);
    CHECK_EQ(hwq_as_block(out, pcs, 3, &last, NULL, 0, t1, 0, 0), HWQ_BRK_ENTER);
    CHECK_EQ(last.cls, HWP_CLS_INDIRECT);
    CHECK(last.events & HWP_EV_TAKEN);
    CHECK_EQ(last.pc, 0x401008 | t1);
    CHECK_EQ(last.next_pc, 0xffffffff81000000ull);
    CHECK_EQ(last.addr, 0xffffffff81000000ull);

    /* iret into another process (as 2): a return becomes a break, so the
     * path stack does not pop back into as 1's paths */
    last = rec(0xffffffff81000006ull, 0x401000, HWP_CLS_RET, 0x401000);
    CHECK_EQ(hwq_as_block(out, kpcs, 3, &last, NULL, 0, 0, t2, 0), HWQ_BRK_LEAVE);
    CHECK_EQ(out[0], kpcs[0]); /* kernel pcs untagged */
    CHECK_EQ(last.pc, 0xffffffff81000006ull);
    CHECK_EQ(last.next_pc, 0x401000 | t2);
    CHECK_EQ(last.cls, HWP_CLS_INDIRECT);
    CHECK_EQ(last.addr, 0x401000 | t2);

    /* an interrupt after a plain instruction, in the kernel (both tag 0) */
    last = rec(0xffffffff81000004ull, 0xffffffff81200000ull, HWP_CLS_OTHER, 0);
    CHECK_EQ(hwq_as_block(out, kpcs, 2, &last, NULL, 0, 0, 0, 0), HWQ_BRK_SAME);
    /* ... and after a direct jump, which went neither to its target nor on */
    last = rec(0x401008, 0xffffffff81200000ull, HWP_CLS_JUMP, 0x401000);
    CHECK_EQ(hwq_as_block(out, pcs, 3, &last, NULL, 0, t1, 0, 0), HWQ_BRK_ENTER);
    last = rec(0x401008, 0x409000, HWP_CLS_BR_COND, 0x401000);
    CHECK_EQ(hwq_as_block(out, pcs, 3, &last, NULL, 0, t1, t1, 0), HWQ_BRK_SAME);
    /* user code of as 1 goes on in as 2's (no kernel code between: a
     * vCPU whose CR3 changed under it) */
    last = rec(0x401008, 0x40100a, HWP_CLS_OTHER, 0);
    CHECK_EQ(hwq_as_block(out, pcs, 3, &last, NULL, 0, t1, t2, 0), HWQ_BRK_SPACE);
    CHECK_EQ(last.next_pc, 0x40100a | t2);
    /* a load that is the last instruction keeps its data address tagged */
    last = rec(0x401008, 0x40100a, HWP_CLS_LOAD, 0x601000);
    CHECK_EQ(hwq_as_block(out, pcs, 3, &last, NULL, 0, t1, t1, 0), 0);
    CHECK_EQ(last.addr, 0x601000 | t1);
}

/* A JSON report into memory. */
static char json[1 << 20];
static size_t njson;
static void put(void *ctx, const char *s, size_t n) {
    (void)ctx;
    if (njson + n < sizeof json) {
        memcpy(json + njson, s, n);
        njson += n;
    }
}

/* Two processes run the same loop at the same addresses, each entering
 * the kernel's same code between turns: the exact profile (one entry per
 * pc) keeps the two loops apart and the kernel's code as one. */
/* A block translated through the boot's identity map of the kernel's
 * text, run later through the kernel's own mapping (QEMU shares it: one
 * physical page): moved there, its ret to a kernel caller is no break. */
static void test_rebase(void) {
    const uint64_t at = 0x15401d30, delta = 0xffffffff8f601d30ull - at,
                   caller = 0xffffffff9087924dull, data = 0xffff888000001000ull;
    const uint64_t pcs[] = {at, at + 4, at + 5};
    uint64_t out[3];
    hwp_insn last, mem[1], keep;
    /* a load, then a ret: the successor (the caller) as seen from the
     * translated pcs, as hwq_finish_tb gets it */
    mem[0] = rec(at, at + 4, HWP_CLS_LOAD, data);
    last = rec(at + 4, caller - delta, HWP_CLS_RET, caller - delta);
    keep = last;
    hwq_as_rebase(out, pcs, 2, &last, mem, 1, delta);
    CHECK_EQ(out[0], at + delta);
    CHECK_EQ(out[2], at + 5 + delta);
    CHECK_EQ(mem[0].pc, at + delta);
    CHECK_EQ(mem[0].next_pc, at + 4 + delta);
    CHECK_EQ(mem[0].addr, data); /* a run-time value: not moved */
    CHECK_EQ(last.pc, at + 4 + delta);
    CHECK_EQ(last.next_pc, caller);
    CHECK_EQ(last.addr, caller);
    CHECK_EQ(hwq_as_block(out, out, 2, &last, mem, 1, 0, 0, 0), HWQ_BRK_NONE);
    CHECK_EQ(last.cls, HWP_CLS_RET);
    /* left where it was translated, the same block seems to be user code
     * (tagged with the running process's address space) that leaves for
     * the kernel: a break, and the path it ends is cut short */
    last = keep;
    last.next_pc = last.addr = caller;
    CHECK_EQ(hwq_as_block(out, pcs, 2, &last, NULL, 0, (uint64_t)5 << HWQ_AS_SHIFT, 0, 0),
             HWQ_BRK_ENTER);
    /* a direct jump's decoded target moves with it; a load's data address
     * does not */
    last = rec(at + 4, at + 0x40, HWP_CLS_JUMP, at + 0x40);
    hwq_as_rebase(out, pcs, 2, &last, NULL, 0, delta);
    CHECK_EQ(last.addr, at + 0x40 + delta);
    last = rec(at + 4, at + 5, HWP_CLS_LOAD, data);
    hwq_as_rebase(out, pcs, 2, &last, NULL, 0, delta);
    CHECK_EQ(last.addr, data);
    CHECK_EQ(hwq_as_block(out, out, 2, &last, NULL, 0, 0, 0, 0), HWQ_BRK_NONE);
}

/* TBs left early (hwq_left_at): the index where QEMU went on, against a
 * linear search over blocks of every length up to 40 with gaps between
 * the pcs (so that an address between two is no instruction's). */
static void test_left_at(void) {
    const uint64_t pcs[] = {0x1000, 0x1003, 0x1005, 0x100a, 0x100b};
    uint64_t big[41];
    uint32_t n, i, bad = 0;
    CHECK_EQ(hwq_left_at(pcs, 4, 0x1003, 0), 1);      /* after the first     */
    CHECK_EQ(hwq_left_at(pcs, 4, 0x1005, 0), 2);
    CHECK_EQ(hwq_left_at(pcs, 4, 0x1005, 0x1005), 0); /* its branch's target */
    CHECK_EQ(hwq_left_at(pcs, 4, 0x1000, 0), 0);      /* its start           */
    CHECK_EQ(hwq_left_at(pcs, 4, 0x100a, 0), 0);      /* its last (rep op)   */
    CHECK_EQ(hwq_left_at(pcs, 4, 0x100b, 0), 0);      /* fall-through        */
    CHECK_EQ(hwq_left_at(pcs, 4, 0x1004, 0), 0);      /* no instruction      */
    CHECK_EQ(hwq_left_at(pcs, 4, 0x2000, 0), 0);      /* elsewhere           */
    CHECK_EQ(hwq_left_at(pcs, 3, 0x1003, 0), 1);
    for (i = 0; i <= 40; i++) big[i] = 0x400000 + 3 * i * i + i;
    for (n = 3; n <= 40; n++) {
        uint64_t next;
        for (next = big[0] - 1; next <= big[n]; next++) {
            uint32_t want = 0, j;
            for (j = 1; j + 1 < n; j++)
                if (big[j] == next) want = j;
            bad += hwq_left_at(big, n, next, 0) != want;
        }
    }
    CHECK_EQ(bad, 0);
}

static void test_session(void) {
    const uint64_t loop[] = {0x401000, 0x401004, 0x401008, 0x40100c, 0x401010};
    const uint64_t kern[] = {0xffffffff81000000ull, 0xffffffff81000004ull,
                             0xffffffff81000008ull, 0xffffffff8100000aull};
    static uint64_t mem[1 << 22]; /* hwx_session_bytes with exact_mb=8 */
    hwx_opts o;
    hwx_session s;
    hwp_writer w;
    uint64_t out[4], tag = 0;
    const char *why = "";
    int turn, i;
    char want[64];
    hwx_opts_default(&o);
    CHECK_EQ(hwx_opts_set(&o, "path", "on", &why), HWP_OK);
    CHECK_EQ(hwx_opts_set(&o, "exact", "on", &why), HWP_OK);
    CHECK_EQ(hwx_opts_set(&o, "exact_mb", "8", &why), HWP_OK);
    CHECK(hwx_session_bytes(&o) <= sizeof mem);
    if (hwx_session_bytes(&o) > sizeof mem) return;
    CHECK_EQ(hwx_session_init(&s, mem, sizeof mem, &o), HWP_OK);
    for (turn = 0; turn < 40; turn++) {
        uint64_t t = (uint64_t)(1 + turn % 2) << HWQ_AS_SHIFT;
        hwp_insn last;
        /* the kernel returns into process 1 + turn % 2 */
        last = rec(kern[2], loop[0], HWP_CLS_RET, loop[0]);
        hwq_as_block(out, kern, 3, &last, NULL, 0, tag, t, 0);
        for (i = 0; i < 3; i++) {
            hwp_insn in = rec(out[i], i < 2 ? out[i + 1] : last.next_pc, HWP_CLS_OTHER, 0);
            hwx_session_insn(&s, i < 2 ? &in : &last);
        }
        tag = t;
        for (i = 0; i < 5; i++) { /* the loop: 4 instructions, back-edge */
            int j, end = i == 4;
            last = rec(loop[3], end ? kern[0] : loop[0], end ? HWP_CLS_OTHER : HWP_CLS_BR_COND,
                       loop[0]);
            hwq_as_block(out, loop, 4, &last, NULL, 0, tag, end ? 0 : tag, 0);
            for (j = 0; j < 4; j++) {
                hwp_insn in = rec(out[j], j < 3 ? out[j + 1] : last.next_pc, HWP_CLS_OTHER, 0);
                hwx_session_insn(&s, j < 3 ? &in : &last);
            }
        }
        tag = 0;
    }
    hwx_session_finish(&s);
    w.write = put;
    w.ctx = NULL;
    hwx_session_report_json(&s, &w);
    json[njson] = 0;
    /* both processes' loops are in the profile, apart */
    snprintf(want, sizeof want, "\"0x%llx\"", (unsigned long long)(0x401000 | 1ull << 48));
    CHECK_HAS(json, want);
    snprintf(want, sizeof want, "\"0x%llx\"", (unsigned long long)(0x401000 | 2ull << 48));
    CHECK_HAS(json, want);
    /* no untagged user pc: nothing merged them */
    CHECK(!strstr(json, "\"0x401000\""));
    /* the kernel's code, shared, is there untagged */
    CHECK_HAS(json, "\"0xffffffff81000000\"");
}

int main(int argc, char **argv) {
    hwt_begin(argc, argv);
    HWT_RUN(test_tag_bits);
    HWT_RUN(test_table);
    HWT_RUN(test_privilege);
    HWT_RUN(test_block);
    HWT_RUN(test_rebase);
    HWT_RUN(test_left_at);
    HWT_RUN(test_session);
    return hwt_end();
}
