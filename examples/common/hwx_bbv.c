/* examples/common/hwx_bbv.c: basic-block vectors in the format of
 * Valgrind's exp-bbv tool and QEMU's bbv plugin, which SimPoint reads:
 * one line per interval, "T" then ":id:count " for every block executed
 * in it, ids from 1 in order of first execution, count = instructions
 * executed in that block during the interval (exp-bbv's weighting, so a
 * line's counts sum to the interval).
 *
 * The one writer behind the hosts' bbv= option and hwprof-report's
 * --bbv. A block starts at the first instruction and after every branch
 * (hwp_cls_is_branch), so a run a host hands over at once (a TB, a VM's
 * event-free instructions) that does not end in a branch continues the
 * same block. An interval is cut at exactly N instructions, so a block
 * may count in two intervals; the last, partial interval is written at
 * the end, as exp-bbv does.
 *
 * Freestanding like the rest of hwx: the block map lives in caller
 * memory (hwx_bbv_bytes), lines go out through a hwp_writer. A map that
 * fills either grows through the caller's callback (hwprof-report) or,
 * without one (the Valgrind tool), counts the instructions of the blocks
 * it could not number in `dropped`: their lines sum to less than N. */
#include "hwx_int.h"

/* Slots per block: the map stays at most half full. */
#define HWX__BBV_LOAD 2u

static size_t hwx__bbv_slots(uint32_t blocks) {
    size_t s = 16;
    while (s < (size_t)blocks * HWX__BBV_LOAD) s *= 2;
    return s;
}

size_t hwx_bbv_bytes(uint32_t blocks) {
    size_t slots;
    if (!blocks || blocks > HWX_BBV_MAX_BLOCKS) return 0;
    slots = hwx__bbv_slots(blocks);
    return hwp_align(slots * sizeof(uint64_t)) + hwp_align(slots * sizeof(uint32_t)) +
           hwp_align(((size_t)blocks + 1) * sizeof(uint64_t)) +
           hwp_align((size_t)blocks * sizeof(uint32_t)) + HWP_ALIGN;
}

/* Carve the arrays of a map of `blocks` from mem (zeroed). */
static void hwx__bbv_carve(hwx_bbv *b, void *mem, uint32_t blocks) {
    unsigned char *cur = (unsigned char *)mem;
    size_t slots = hwx__bbv_slots(blocks);
    cur += (HWP_ALIGN - ((uintptr_t)cur & (HWP_ALIGN - 1))) & (HWP_ALIGN - 1);
    hwp_zero(cur, hwx_bbv_bytes(blocks) - HWP_ALIGN);
    b->key = (uint64_t *)hwp_carve(&cur, slots * sizeof(uint64_t));
    b->slot_id = (uint32_t *)hwp_carve(&cur, slots * sizeof(uint32_t));
    b->cnt = (uint64_t *)hwp_carve(&cur, ((size_t)blocks + 1) * sizeof(uint64_t));
    b->touched = (uint32_t *)hwp_carve(&cur, (size_t)blocks * sizeof(uint32_t));
    b->mask = slots - 1;
    b->max = blocks;
}

hwp_status hwx_bbv_init(hwx_bbv *b, void *mem, size_t bytes, uint32_t blocks,
                        uint64_t interval, const hwp_writer *out) {
    hwp_zero(b, sizeof *b);
    if (!interval) return HWP_EINVAL; /* the host refuses bbv_interval=0 by name */
    if (!mem || !hwx_bbv_bytes(blocks) || bytes < hwx_bbv_bytes(blocks)) return HWP_ENOSPC;
    hwx__bbv_carve(b, mem, blocks);
    b->interval = interval;
    if (out) b->out = *out;
    return HWP_OK;
}

static size_t hwx__bbv_hash(const hwx_bbv *b, uint64_t k) {
    return (size_t)((k * 0x9E3779B97F4A7C15ull) >> 20) & b->mask;
}

hwp_status hwx_bbv_move(hwx_bbv *b, void *mem, size_t bytes, uint32_t blocks) {
    hwx_bbv n = *b;
    size_t i;
    if (blocks < b->used || !hwx_bbv_bytes(blocks) || bytes < hwx_bbv_bytes(blocks))
        return HWP_ENOSPC;
    hwx__bbv_carve(&n, mem, blocks);
    for (i = 0; i <= b->mask; i++)
        if (b->key[i]) {
            size_t h = hwx__bbv_hash(&n, b->key[i]);
            while (n.key[h]) h = (h + 1) & n.mask;
            n.key[h] = b->key[i];
            n.slot_id[h] = b->slot_id[i];
        }
    hwp_copy(n.cnt, b->cnt, ((size_t)b->used + 1) * sizeof(uint64_t));
    hwp_copy(n.touched, b->touched, (size_t)b->ntouched * sizeof(uint32_t));
    *b = n;
    return HWP_OK;
}

/* The id of the block starting at `start`, numbering it on its first
 * execution; 0 when the map is full and does not grow. */
static uint32_t hwx__bbv_id(hwx_bbv *b, uint64_t start) {
    uint64_t k = start + 1; /* 0 marks an empty slot */
    size_t h = hwx__bbv_hash(b, k);
    while (b->key[h] && b->key[h] != k) h = (h + 1) & b->mask;
    if (b->key[h]) return b->slot_id[h];
    if (b->used == b->max) {
        if (!b->grow || b->grow(b->grow_ctx, b) != HWP_OK || b->used == b->max) return 0;
        return hwx__bbv_id(b, start); /* the slot moved with the map */
    }
    b->key[h] = k;
    b->slot_id[h] = ++b->used;
    return b->used;
}

/* Close the open interval: its line, then a fresh vector. */
static void hwx__bbv_line(hwx_bbv *b) {
    uint32_t i;
    b->fill = 0;
    if (!b->ntouched) return;
    hwp_put(&b->out, "T", 1);
    for (i = 0; i < b->ntouched; i++) {
        uint32_t id = b->touched[i];
        hwp_put(&b->out, ":", 1);
        hwp_put_u64(&b->out, id);
        hwp_put(&b->out, ":", 1);
        hwp_put_u64(&b->out, b->cnt[id]);
        hwp_put(&b->out, " ", 1);
        b->cnt[id] = 0;
    }
    hwp_put(&b->out, "\n", 1);
    b->ntouched = 0;
    b->lines++;
}

void hwx_bbv_run(hwx_bbv *b, uint64_t pc, uint64_t n, bool ends_block) {
    uint32_t id;
    if (!b->out.write || !n) return; /* not on */
    if (!b->in_block) {
        b->start = pc;
        b->in_block = 1;
        b->id = hwx__bbv_id(b, pc);
    }
    id = b->id;
    b->insns += n;
    while (n) {
        uint64_t k = b->interval - b->fill;
        if (k > n) k = n;
        if (!id) b->dropped += k;
        else {
            if (!b->cnt[id]) b->touched[b->ntouched++] = id;
            b->cnt[id] += k;
        }
        n -= k;
        if ((b->fill += k) == b->interval) hwx__bbv_line(b);
    }
    if (ends_block) b->in_block = 0;
}

void hwx_bbv_finish(hwx_bbv *b) {
    if (b->out.write) hwx__bbv_line(b);
}
