/* examples/common/hwx_blocks.c: the host's block map, for decoding a hot
 * path back to the blocks it covers (hwp_path_decode).
 *
 * A fixed table, open addressing keyed by block start, filled from the
 * branch records the path adapter already sees: a block starts at the
 * previous branch's next PC and ends at this branch. A record gives one
 * side of the branch: a taken one its target, a not-taken one its
 * fallthrough. A call's fallthrough is never in its own record (a trace
 * has no instruction lengths): it is the next PC of the return that
 * matches it, found with a small return-address stack of block starts,
 * as the path stack itself pairs calls and returns. A block the full
 * table cannot take is counted (overflow, once per execution), never
 * silently lost: the paths through it then fail to decode with "block
 * not in map". */
#include "hwx_int.h"

#define HWX__BLK_EMPTY UINT64_MAX /* no block starts at the top address */
#define HWX__BLK_MAX_FILL(m) ((m)->mask - ((m)->mask >> 2)) /* 3/4 of mask + 1 */

size_t hwx_blocks_bytes(uint32_t cap) {
    return hwp_align((size_t)cap * sizeof(uint64_t)) +
           hwp_align((size_t)cap * sizeof(hwp_path_block));
}

/* cap: a power of two (the option rounds it up). */
void hwx_blocks_init(hwx_blocks *m, unsigned char **cur, uint32_t cap) {
    uint32_t i;
    hwp_zero(m, sizeof *m);
    m->key = (uint64_t *)hwp_carve(cur, (size_t)cap * sizeof(uint64_t));
    m->b = (hwp_path_block *)hwp_carve(cur, (size_t)cap * sizeof(hwp_path_block));
    m->mask = cap - 1;
    for (i = 0; i < cap; i++) m->key[i] = HWX__BLK_EMPTY;
    m->start = HWX__BLK_EMPTY;
}

/* The slot of start, or of the empty slot where it goes; NULL when the
 * table is full and start is not in it. */
static hwp_path_block *hwx__blk_slot(hwx_blocks *m, uint64_t start, int add) {
    uint32_t i = (uint32_t)((start * 0x9E3779B97F4A7C15ull) >> 40) & m->mask, k;
    for (k = 0; k <= m->mask; k++, i = (i + 1) & m->mask) {
        if (m->key[i] == start) return &m->b[i];
        if (m->key[i] != HWX__BLK_EMPTY) continue;
        if (!add) return NULL;
        /* Fill to 3/4 at most: a lookup that misses walks to the next
         * empty slot, a few slots at this load under linear probing but
         * half the table on average with one slot left free (that made a
         * program with more blocks than the table, python3 under QEMU,
         * spend 93% of its time here). */
        if (m->stored >= HWX__BLK_MAX_FILL(m)) break;
        m->key[i] = start;
        m->stored++;
        hwp_zero(&m->b[i], sizeof m->b[i]);
        return &m->b[i];
    }
    if (add) m->overflow++;
    return NULL;
}

void hwx_blocks_begin(hwx_blocks *m, uint64_t pc) { m->start = pc; }

void hwx_blocks_branch(hwx_blocks *m, uint64_t pc, uint64_t next_pc, uint32_t cls,
                       int taken) {
    uint64_t start = m->start;
    hwp_path_block *b;
    m->start = next_pc;
    if (start == HWX__BLK_EMPTY || start > pc) return; /* records lost: no block */
    if (cls == HWP_CLS_RET && m->nret) { /* the matching call's fallthrough */
        hwp_path_block *c = hwx__blk_slot(m, m->ret[--m->nret & (HWX_BLK_RAS - 1)], 0);
        if (c && c->cls == HWP_CLS_CALL) c->fallthrough = next_pc;
    }
    if (!(b = hwx__blk_slot(m, start, 1))) return;
    if (b->branch_pc && (b->branch_pc != pc || b->cls != cls)) {
        m->conflicts++; /* code changed under the same address: the latest wins */
        hwp_zero(b, sizeof *b);
    }
    b->branch_pc = pc;
    b->cls = cls;
    if (cls == HWP_CLS_CALL) m->ret[m->nret++ & (HWX_BLK_RAS - 1)] = start;
    if (cls == HWP_CLS_RET || cls == HWP_CLS_INDIRECT) return; /* no one target */
    if (taken) {
        /* a direct branch has one target: another one is an indirect
         * branch the host classed as direct; its paths will not decode */
        if (b->target && b->target != next_pc) m->conflicts++;
        b->target = next_pc;
    } else {
        b->fallthrough = next_pc;
    }
}

bool hwx_blocks_get(void *ctx, uint64_t start, hwp_path_block *out) {
    hwx_blocks *m = (hwx_blocks *)ctx;
    hwp_path_block *b = hwx__blk_slot(m, start, 0);
    if (!b) {
        m->missed = 1;
        return false;
    }
    *out = *b;
    return true;
}

void hwx_blocks_merge(hwx_blocks *dst, const hwx_blocks *src) {
    uint32_t i;
    for (i = 0; i <= src->mask; i++) {
        hwp_path_block *b;
        const hwp_path_block *s = &src->b[i];
        if (src->key[i] == HWX__BLK_EMPTY || !(b = hwx__blk_slot(dst, src->key[i], 1)))
            continue;
        if (!b->branch_pc) *b = *s;
        if (!b->target) b->target = s->target;
        if (!b->fallthrough) b->fallthrough = s->fallthrough;
    }
    dst->overflow += src->overflow;
    dst->conflicts += src->conflicts;
}

/* ,"hot_blocks":{...}: every hot path of rows[0..n) decoded, or the
 * reason it did not decode (docs/report-format.md). */
void hwx_blocks_json(hwx_blocks *m, const hwp_path *p, const hwp_path_row *rows, size_t n,
                     const hwp_writer *w) {
    uint64_t out[HWX_BLK_PATH_MAX];
    size_t i, k, undecoded = 0;
    hwp_put_str(w, ",\"hot_blocks\":{\"paths\":[");
    for (i = 0; i < n; i++) {
        size_t nb;
        m->missed = 0;
        nb = hwp_path_decode(p, &rows[i].pd, hwx_blocks_get, m, out, HWX_BLK_PATH_MAX);
        hwp_put_str(w, i ? ",{\"start\":\"" : "{\"start\":\"");
        hwp_put_hex(w, rows[i].pd.start);
        hwp_put_str(w, "\",\"shape\":\"");
        hwp_put_hex(w, rows[i].pd.shape);
        if (!nb) {
            undecoded++;
            hwp_put_str(w, "\",\"error\":\"");
            /* a path of no branch (a flush's at entry) covers no whole block */
            hwp_put_str(w, !hwp_path_pd_len(&rows[i].pd) ? "no branch recorded"
                           : m->missed                   ? "block not in map"
                                                         : "map and path disagree");
            hwp_put_str(w, "\"}");
            continue;
        }
        hwx__kv(w, "\",\"n\":", nb);
        hwp_put_str(w, ",\"blocks\":[");
        for (k = 0; k < nb && k < HWX_BLK_PATH_MAX; k++) {
            hwp_put_str(w, k ? ",\"" : "\"");
            hwp_put_hex(w, out[k]);
            hwp_put_str(w, "\"");
        }
        hwp_put_str(w, "]}");
    }
    hwx__kv(w, "],\"capacity\":", (uint64_t)m->mask + 1);
    hwx__kv(w, ",\"blocks\":", m->stored);
    hwx__kv(w, ",\"overflow\":", m->overflow);
    hwx__kv(w, ",\"conflicts\":", m->conflicts);
    hwx__kv(w, ",\"undecoded\":", undecoded);
    hwp_put_str(w, "}");
}
