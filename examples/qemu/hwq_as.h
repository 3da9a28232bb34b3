/* examples/qemu/hwq_as.h: address-space tags for system mode, and where
 * the flow of TBs breaks or a TB was left early (the QEMU plugin,
 * hwprof_tcg.c; tested by test_hwq_as.c).
 *
 * Two processes run the same binary at the same virtual addresses, so a
 * profile keyed by virtual PC would merge them. The plugin reads CR3 (the
 * page-table base, one per address space) and gives each address space a
 * small number, its tag; the tag goes into the high bits of every
 * user-half address the models see:
 *
 *   tagged = tag << 48 | address         (address < 2^47, user half)
 *   kernel addresses (>= 0xffff800000000000) stay as they are: the kernel
 *   is mapped the same way in every address space, so its code is shared.
 *
 * Why that is sound: x86-64 user addresses are canonical, bits 47..63
 * zero, so an address below 2^47 leaves bits 48..62 free; a tag of 1 ..
 * 0x7fff there gives a value in [2^48, 2^63), which is neither another
 * address space's tagged value (the tags differ), nor an untagged user
 * address (< 2^47), nor a kernel one (bit 63 set). Within one address
 * space the order and the distances of addresses are kept, so what the
 * models compute from them (back-edges as next_pc <= pc, ranges, hashes)
 * is unchanged, and no model's header changes. Tag 0 (user mode, or no
 * CR3 to read) leaves addresses as they are.
 *
 * Address spaces are numbered in the order they are first seen, by their
 * CR3 with the PCID (bits 0..11) and the no-flush bit (63) masked off:
 * the same process gets different PCIDs on different CPUs. A page-table
 * base freed and reused by a later process gets the old one's tag (an
 * ASID-tagged hardware profiler would see the same). Beyond
 * HWQ_AS_MAX - 1 address spaces the rest share tag HWQ_AS_MAX, counted.
 */
#ifndef HWQ_AS_H
#define HWQ_AS_H

#include "hwprof/base.h"

/* x86-64 canonical addresses with bit 47 set are the kernel's half. */
#define HWQ_KERNEL_BASE 0xffff800000000000ull
#define HWQ_AS_USER_END (1ull << 47) /* first address above the user half */
#define HWQ_AS_SHIFT 48
#define HWQ_AS_MAX 0x7fffu           /* the shared tag of the overflow   */
#define HWQ_AS_SLOTS 65536u          /* hash slots: at most half full    */

/* What broke the flow at a block's end (hwq_as_block): told apart by the
 * halves the two sides' addresses are in and by their address spaces. */
enum {
    HWQ_BRK_NONE,  /* no break: the flow went where the block leads      */
    HWQ_BRK_ENTER, /* user code into the kernel's: an interrupt, an
                      exception or a system call                          */
    HWQ_BRK_LEAVE, /* kernel code back to user code                      */
    HWQ_BRK_SPACE, /* user code into another address space's             */
    HWQ_BRK_SAME,  /* within one half and address space: an interrupt or
                      exception that changed no privilege                 */
    HWQ_BRK_KINDS
};

/* The page-table base of a CR3 value (bits 12..51). */
HWP_INLINE uint64_t hwq_as_key(uint64_t cr3) { return cr3 & 0x000ffffffffff000ull; }

/* `a` in address space `tag` (pre-shifted: id << HWQ_AS_SHIFT). */
HWP_INLINE uint64_t hwq_as_addr(uint64_t a, uint64_t tag) {
    return a < HWQ_AS_USER_END ? a | tag : a;
}

/* The address space number of a tagged value (0: untagged or kernel). */
HWP_INLINE uint32_t hwq_as_of(uint64_t a) {
    return a >> 63 ? 0 : (uint32_t)(a >> HWQ_AS_SHIFT);
}

/* 1 when code at `pc` runs privileged (the report's kernel-mode count).
 * The address alone (pc >= HWQ_KERNEL_BASE) calls everything before the
 * kernel maps itself high user code: the firmware in real mode, the
 * bootloader, the kernel's decompressor in its low identity map. The CPU
 * says it instead: real mode (CR0.PE clear) runs at privilege 0, and in
 * protected and long mode the current privilege level is the low two bits
 * of the CS selector; only level 0 is the kernel's. `regs` is 0 when CR0
 * and CS could not be read: then the address decides. */
HWP_INLINE int hwq_as_kernel(uint64_t pc, int regs, uint64_t cr0, uint64_t cs) {
    if (!regs) return pc >= HWQ_KERNEL_BASE;
    return !(cr0 & 1) || (cs & 3) == 0;
}

/* Page-table bases to numbers: open addressing, linear probing. */
typedef struct hwq_as_table {
    uint64_t slot[HWQ_AS_SLOTS];  /* key + 1; 0: empty                 */
    uint16_t id[HWQ_AS_SLOTS];
    uint64_t key[HWQ_AS_MAX];     /* key[i - 1]: the CR3 base of tag i  */
    uint32_t n;                   /* tags given (1 .. n)                */
    uint32_t pad_;
    uint64_t over;                /* look-ups that got HWQ_AS_MAX       */
} hwq_as_table;

/* The tag (1 .. HWQ_AS_MAX) of page-table base `key`, a new one for a key
 * not seen before. Not thread-safe: the caller serialises. */
HWP_INLINE uint32_t hwq_as_id(hwq_as_table *t, uint64_t key) {
    uint32_t i = (uint32_t)((key >> 12) * 0x9E3779B97F4A7C15ull >> 48) & (HWQ_AS_SLOTS - 1);
    for (;; i = (i + 1) & (HWQ_AS_SLOTS - 1)) {
        if (t->slot[i] == key + 1) return t->id[i];
        if (!t->slot[i]) break;
    }
    if (t->n + 1 >= HWQ_AS_MAX) {
        t->over++;
        return HWQ_AS_MAX;
    }
    t->slot[i] = key + 1;
    t->id[i] = (uint16_t)++t->n;
    t->key[t->n - 1] = key;
    return t->n;
}

/* QEMU's x86 system mode translates position-independent blocks
 * (CF_PCREL) and finds them by physical address, so one translated block
 * runs at every virtual address its code is mapped at: the kernel's text
 * through the boot's identity map and later through its own mapping, one
 * library page in two processes. The pcs taken at translation are the
 * first mapping's. A block that runs `delta` bytes from there (its first
 * pc read at run time minus the translated one, a whole number of pages)
 * has out[0..n] = pcs[0..n] + delta, and its records' pcs, next pcs and
 * direct branch target moved as far; data addresses are run-time values
 * and stay. */
HWP_INLINE void hwq_as_rebase(uint64_t *out, const uint64_t *pcs, uint32_t n, hwp_insn *last,
                              hwp_insn *mem, uint32_t nmem, uint64_t delta) {
    uint32_t i;
    for (i = 0; i <= n; i++) out[i] = pcs[i] + delta;
    for (i = 0; i < nmem; i++) {
        mem[i].pc += delta;
        mem[i].next_pc += delta;
    }
    last->pc += delta;
    last->next_pc += delta;
    if (hwp_cls_is_branch(last->cls)) last->addr += delta;
}

/* A block pcs[0..n) (ascending, n >= 3) whose last instruction leads
 * only to pcs[n] or to `target` (its decoded direct target; 0: none) was
 * followed by `next`. Where next is one of pcs[1..n-2] and not the
 * target, QEMU left the block early and went on there (hwprof_tcg.c,
 * hwq_finish_tb): returns that index, the instructions that retired;
 * else 0. The last instruction itself is not taken (a rep string op
 * jumps back to itself), nor the first (a block left there looks like
 * one that ran to its end and branched back to its start). */
HWP_INLINE uint32_t hwq_left_at(const uint64_t *pcs, uint32_t n, uint64_t next,
                                uint64_t target) {
    uint32_t lo = 1, hi = n - 1;
    if (next <= pcs[0] || next >= pcs[hi] || next == target) return 0;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (pcs[mid] < next) lo = mid + 1;
        else hi = mid;
    }
    return pcs[lo] == next ? lo : 0;
}

/* One finished block of system-mode code, before the models see it.
 * pcs[0..n) ran in address space `tag` (pcs[n]: the address after the
 * last one) and the vCPU went on at `last->next_pc` (untagged) in
 * address space `next_tag`; a branch's last->addr is its target (the
 * decoded one, or where it went when only execution tells). The flow
 * breaks there, unlike any branch, when the address space or the
 * privilege changes (next_tag != tag: kernel code has tag 0) or when the
 * vCPU did not go where the last instruction leads: an interrupt, an
 * exception, a syscall (neither the fall-through pcs[n], nor a branch's
 * target, nor the instruction itself, which a rep string op jumps back
 * to; after an indirect branch, which may go anywhere, an interrupt in
 * the same address space goes unseen), or when QEMU told of an interrupt
 * or exception since the block started (how & HWQ_AS_TOLD: QEMU's
 * discontinuity callbacks, which see them all; the API 7 build). In 16- and 32-bit code (how &
 * HWQ_AS_NO_INFER: run without paging) the x86-64 decoder's reading of
 * the last instruction does not hold, so only a change of address space or
 * privilege, or a told one, is a break there. A break reaches the models as a taken indirect jump to
 * where the vCPU went, so the path profiler ends the path there and
 * starts the next at that address instead of letting one path run from
 * one process through the kernel into another (an indirect jump is where
 * Vaswani et al.'s paths end); the instruction's own memory record, if
 * it had one, is dropped. Then every address is tagged: out[0..n) the
 * pcs, last's pc and target, the memory records' pcs and data addresses
 * (user data is per address space too). Returns the break's kind,
 * HWQ_BRK_NONE (0) where there is none. */
enum { HWQ_AS_TOLD = 1, HWQ_AS_NO_INFER = 2 };
HWP_INLINE int hwq_as_block(uint64_t *out, const uint64_t *pcs, uint32_t n, hwp_insn *last,
                            hwp_insn *mem, uint32_t nmem, uint64_t tag,
                            uint64_t next_tag, unsigned how) {
    uint64_t next = last->next_pc;
    uint32_t i;
    int brk = (how & HWQ_AS_TOLD) || next_tag != tag ||
              (!(how & HWQ_AS_NO_INFER) && next != pcs[n] &&
               next != (hwp_cls_is_branch(last->cls) ? last->addr : last->pc));
    for (i = 0; i < n; i++) out[i] = hwq_as_addr(pcs[i], tag);
    for (i = 0; i < nmem; i++) {
        mem[i].pc = hwq_as_addr(mem[i].pc, tag);
        mem[i].next_pc = hwq_as_addr(mem[i].next_pc, tag);
        mem[i].addr = hwq_as_addr(mem[i].addr, tag);
    }
    if (brk) {
        int from_kernel = last->pc >= HWQ_KERNEL_BASE, to_kernel = next >= HWQ_KERNEL_BASE;
        brk = !from_kernel && to_kernel   ? HWQ_BRK_ENTER
              : from_kernel && !to_kernel ? HWQ_BRK_LEAVE
              : next_tag != tag           ? HWQ_BRK_SPACE
                                          : HWQ_BRK_SAME;
    }
    last->pc = hwq_as_addr(last->pc, tag);
    last->next_pc = hwq_as_addr(next, next_tag);
    if (brk) {
        last->cls = HWP_CLS_INDIRECT;
        last->events = HWP_EV_TAKEN | HWP_EV_INDIRECT;
        last->addr = last->next_pc;
        last->value = 0;
    } else if (last->cls != HWP_CLS_OTHER) {
        /* a branch's target (next_tag == tag), a memory access's data */
        last->addr = hwq_as_addr(last->addr, tag);
    }
    return brk;
}

#endif /* HWQ_AS_H */
