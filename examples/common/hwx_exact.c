/* examples/common/hwx_exact.c: exact ground truth of the event stream.
 *
 * Hash tables in the session's memory (open addressing, linear probing,
 * load factor capped at 3/4) count every PC, every (load PC, value) pair,
 * every RAP key (for value or address keys) and every path. Nothing is
 * sampled or evicted: when a table is full, the occurrences of keys that
 * found no room are counted in `dropped` and the report says the exact
 * profile is incomplete (raise exact_mb=).
 *
 * Paths are the acyclic intra-procedural paths of Vaswani et al. sec. 3,
 * Table 1, detected with our own path stack (not the model's):
 *   call      push a path starting at the call's target
 *   return    pop (the path ends)
 *   forward   update: length + 1, direction bit = taken
 *   backward  update, pop, push at the target (a taken branch whose target
 *             is at or below its own pc)
 *   indirect  update, pop, push at the target
 * A conditional branch or jump is backward only when taken to an address at
 * or below its own (a not-taken loop branch exits the loop: forward). A
 * path that reaches HWX__PATH_MAXLEN (32, sec. 3) branches is popped and
 * a new one pushed at the branch's target. A path is identified by its
 * descriptor: start pc and "shape", the direction bits below a leading 1
 * (newest branch in bit 0), the same encoding as hwprof/pathprof.h.
 * The stream's first instruction opens a path (program entry); a branch
 * that finds the stack empty later (returning past the entry, or past
 * frames lost when the 1024-deep stack overflowed) opens a path whose
 * start is unknown: it is not counted, as in the hardware.
 */
#include "hwx_int.h"

#define HWX__PATH_MAXLEN 32u
#define HWX__PATH_DEPTH 1024u

/* The open paths live after the struct, in the same storage. */
typedef struct hwx__pframe {
    uint64_t start, shape;
    uint32_t incomplete, pad_;
} hwx__pframe;

typedef struct hwx__pstack {
    uint32_t depth, bottom; /* ring: entries bottom .. bottom+depth-1 */
    uint32_t started, pad_;
    uint64_t overflow;      /* frames lost off the bottom              */
    hwx__pframe f[HWX__PATH_DEPTH];
} hwx__pstack;

static uint64_t hwx__hash2(uint64_t a, uint64_t b) {
    return hwp_mix64(a ^ hwp_mix64(b + 0x9E3779B97F4A7C15ull));
}

static size_t hwx__entries_for(uint64_t bytes) {
    uint64_t n = 1024;
    while (n * 2 * sizeof(hwx_xent) <= bytes) n *= 2;
    return (size_t)n;
}

#define HWX__NTABS 5u

/* Split of exact_bytes between the tables; the core's timing table
 * (core=on only) comes on top, twice the pc table: two keys per PC. */
static void hwx__exact_sizes(const hwx_opts *o, size_t n[HWX__NTABS]) {
    uint64_t b = o->exact_bytes;
    n[0] = hwx__entries_for(b / 8);                      /* pc    */
    n[1] = o->values ? hwx__entries_for(b / 2) : 1024;   /* value */
    n[2] = o->rap_key != HWX_KEY_PC ? hwx__entries_for(b / 8) : 1024;
    n[3] = hwx__entries_for(b / 4);                      /* path  */
    n[4] = o->models & HWX_M_CORE ? hwx__entries_for(b / 4) : 1024; /* tm */
}

size_t hwx__exact_bytes(const hwx_opts *o) {
    size_t n[HWX__NTABS], total = hwp_align(sizeof(hwx__pstack));
    unsigned i;
    hwx__exact_sizes(o, n);
    for (i = 0; i < HWX__NTABS; i++) total += hwp_align(n[i] * sizeof(hwx_xent));
    return total;
}

static void hwx__xtab_init(hwx_xtab *t, unsigned char **cursor, size_t n) {
    t->e = (hwx_xent *)hwp_carve(cursor, n * sizeof(hwx_xent));
    hwp_zero(t->e, n * sizeof(hwx_xent));
    t->mask = n - 1;
    t->used = 0;
    t->limit = n - n / 4;
    t->dropped = 0;
    t->total = 0;
}

static hwx__pstack *hwx__ps(const hwx_exact *x) {
    return (hwx__pstack *)x->pstack;
}

void hwx__exact_init(hwx_exact *x, unsigned char **cursor, const hwx_opts *o) {
    size_t n[HWX__NTABS];
    hwx__pstack *ps;
    hwx__exact_sizes(o, n);
    hwp_zero(x, sizeof *x);
    ps = (hwx__pstack *)hwp_carve(cursor, sizeof(hwx__pstack));
    hwp_zero(ps, sizeof *ps);
    x->pstack = ps;
    hwx__xtab_init(&x->pc, cursor, n[0]);
    hwx__xtab_init(&x->val, cursor, n[1]);
    hwx__xtab_init(&x->key, cursor, n[2]);
    hwx__xtab_init(&x->path, cursor, n[3]);
    hwx__xtab_init(&x->tm, cursor, n[4]);
    x->rap_key = o->rap_key;
}

void hwx__xtab_add(hwx_xtab *t, uint64_t k1, uint64_t k2, uint64_t n,
                   uint64_t aux) {
    uint64_t i = hwx__hash2(k1, k2) & t->mask;
    for (;;) {
        hwx_xent *e = &t->e[i];
        if (e->count == 0) {
            if (t->used >= t->limit) {
                t->dropped += n;
                return;
            }
            t->used++;
            e->k1 = k1;
            e->k2 = k2;
            e->count = n;
            e->aux = aux;
            t->total += n;
            return;
        }
        if (e->k1 == k1 && e->k2 == k2) {
            e->count += n;
            e->aux += aux;
            t->total += n;
            return;
        }
        i = (i + 1) & t->mask;
    }
}

const hwx_xent *hwx__xtab_find(const hwx_xtab *t, uint64_t k1, uint64_t k2) {
    uint64_t i = hwx__hash2(k1, k2) & t->mask;
    for (;;) {
        const hwx_xent *e = &t->e[i];
        if (e->count == 0) return NULL;
        if (e->k1 == k1 && e->k2 == k2) return e;
        i = (i + 1) & t->mask;
    }
}

uint64_t hwx__xtab_get(const hwx_xtab *t, uint64_t k1, uint64_t k2) {
    const hwx_xent *e = hwx__xtab_find(t, k1, k2);
    return e ? e->count : 0;
}

uint64_t hwx__xtab_range(const hwx_xtab *t, uint64_t lo, uint64_t hi) {
    uint64_t i, sum = 0;
    for (i = 0; i <= t->mask; i++)
        if (t->e[i].count && t->e[i].k1 >= lo && t->e[i].k1 <= hi)
            sum += t->e[i].count;
    return sum;
}

uint64_t hwx__xtab_box(const hwx_xtab *t, uint64_t lo1, uint64_t hi1,
                       uint64_t lo2, uint64_t hi2) {
    uint64_t i, sum = 0;
    for (i = 0; i <= t->mask; i++) {
        const hwx_xent *e = &t->e[i];
        if (e->count && e->k1 >= lo1 && e->k1 <= hi1 && e->k2 >= lo2 && e->k2 <= hi2)
            sum += e->count;
    }
    return sum;
}

uint32_t hwx__xtab_top(const hwx_xtab *t, hwx_xent *out, uint32_t n) {
    uint32_t have = 0, j;
    uint64_t i;
    for (i = 0; i <= t->mask; i++) {
        const hwx_xent *e = &t->e[i];
        if (!e->count) continue;
        if (have == n && e->count <= out[n - 1].count) continue;
        j = have < n ? have++ : n - 1; /* insertion into a sorted list */
        while (j > 0 && out[j - 1].count < e->count) {
            out[j] = out[j - 1];
            j--;
        }
        out[j] = *e;
    }
    return have;
}

/* ---- the path stack ------------------------------------------------------ */

static hwx__pframe *hwx__top(hwx__pstack *ps) {
    return &ps->f[(ps->bottom + ps->depth - 1) % HWX__PATH_DEPTH];
}

static void hwx__push(hwx__pstack *ps, uint64_t start, uint32_t incomplete) {
    hwx__pframe *f;
    if (ps->depth == HWX__PATH_DEPTH) { /* lose the outermost frame */
        ps->bottom = (ps->bottom + 1) % HWX__PATH_DEPTH;
        ps->depth--;
        ps->overflow++;
    }
    ps->depth++;
    f = hwx__top(ps);
    f->start = start;
    f->shape = 1;
    f->incomplete = incomplete;
}

static void hwx__pop(hwx_exact *x, hwx__pstack *ps) {
    hwx__pframe *f;
    if (!ps->depth) return;
    f = hwx__top(ps);
    if (!f->incomplete) {
        hwx__xtab_add(&x->path, f->start, f->shape, 1, 0);
        x->paths++;
    }
    ps->depth--;
}

/* Update the top path with one branch; splits at the length limit. */
static void hwx__update(hwx_exact *x, hwx__pstack *ps, bool taken,
                        uint64_t target) {
    hwx__pframe *f = hwx__top(ps);
    f->shape = f->shape << 1 | (uint64_t)taken;
    if (f->shape >> HWX__PATH_MAXLEN) {
        hwx__pop(x, ps);
        hwx__push(ps, target, 0);
    }
}

static void hwx__exact_path(hwx_exact *x, const hwp_insn *in) {
    hwx__pstack *ps = hwx__ps(x);
    bool taken = (in->events & HWP_EV_TAKEN) != 0;
    if (!ps->started) { /* program entry */
        ps->started = 1;
        hwx__push(ps, in->pc, 0);
    }
    if (!hwp_cls_is_branch(in->cls)) return;
    if (!ps->depth) hwx__push(ps, in->pc, 1);
    switch (in->cls) {
    case HWP_CLS_CALL:
        hwx__push(ps, in->next_pc, 0);
        break;
    case HWP_CLS_RET:
        hwx__pop(x, ps);
        break;
    case HWP_CLS_BR_COND:
    case HWP_CLS_JUMP:
    case HWP_CLS_INDIRECT:
        hwx__update(x, ps, taken, in->next_pc);
        /* Backward and indirect branches end the path (unless the length
         * limit just did) and start one at the target. */
        if ((in->cls == HWP_CLS_INDIRECT || (taken && in->next_pc <= in->pc)) &&
            hwx__top(ps)->shape != 1) {
            hwx__pop(x, ps);
            hwx__push(ps, in->next_pc, 0);
        }
        break;
    default:
        break;
    }
}

void hwx__exact_insn(hwx_exact *x, const hwp_insn *in, uint32_t core_ev) {
    bool taken = (in->events & HWP_EV_TAKEN) != 0;
    hwx__xtab_add(&x->pc, in->pc, 0, 1, taken);
    if (in->cls == HWP_CLS_LOAD) {
        hwx__xtab_add(&x->val, in->pc, in->value, 1, 0);
        if (x->rap_key == HWX_KEY_VALUE) hwx__xtab_add(&x->key, in->value, 0, 1, 0);
    }
    if (x->rap_key == HWX_KEY_ADDR &&
        (in->cls == HWP_CLS_LOAD || in->cls == HWP_CLS_STORE))
        hwx__xtab_add(&x->key, in->addr, 0, 1, 0);
    if (x->rap_key == HWX_KEY_PCADDR &&
        (in->cls == HWP_CLS_LOAD || in->cls == HWP_CLS_STORE))
        hwx__xtab_add(&x->key, in->pc, in->addr, 1, 0);
    /* key=dmiss: the miss bit is the core's (it ran first on this
     * instruction); the exact count keeps every missing address. */
    if (x->rap_key == HWX_KEY_DMISS && (core_ev & HWP_EV_DCMISS) &&
        (in->cls == HWP_CLS_LOAD || in->cls == HWP_CLS_STORE))
        hwx__xtab_add(&x->key, in->addr, 0, 1, 0);
    if (x->rap_key == HWX_KEY_TARGET && taken && in->cls != HWP_CLS_RET)
        hwx__xtab_add(&x->key, in->next_pc, 0, 1, 0);
    hwx__exact_path(x, in);
}

/* Drained every instruction: the core keeps a bounded ring of finished
 * records and would drop the oldest. Latency and wasted slots come from
 * the same record, so both cover exactly the finished instructions. */
void hwx__exact_timed(hwx_exact *x, hwx_session *s) {
    hwp_core_rec r[16];
    size_t n, i;
    while ((n = hwx__core_done(s, r, 16)) > 0)
        for (i = 0; i < n; i++) {
            hwx__xtab_add(&x->tm, r[i].pc, HWX_TM_LATENCY, 1, r[i].ready - r[i].fetch);
            hwx__xtab_add(&x->tm, r[i].pc, HWX_TM_WASTED, 1, r[i].wasted);
        }
}

void hwx__exact_finish(hwx_exact *x) {
    hwx__pstack *ps = hwx__ps(x);
    while (ps->depth) hwx__pop(x, ps);
}

static void hwx__xtab_merge(hwx_xtab *dst, const hwx_xtab *src) {
    uint64_t i;
    for (i = 0; i <= src->mask; i++)
        if (src->e[i].count)
            hwx__xtab_add(dst, src->e[i].k1, src->e[i].k2, src->e[i].count,
                          src->e[i].aux);
    dst->dropped += src->dropped;
}

void hwx__exact_merge(hwx_exact *dst, const hwx_exact *src) {
    hwx__xtab_merge(&dst->pc, &src->pc);
    hwx__xtab_merge(&dst->val, &src->val);
    hwx__xtab_merge(&dst->key, &src->key);
    hwx__xtab_merge(&dst->path, &src->path);
    hwx__xtab_merge(&dst->tm, &src->tm);
    dst->paths += src->paths;
}

/* ---- reports ------------------------------------------------------------- */

static const char *const hwx__tab_names[HWX__NTABS] = {
    "pcs", "load values", "keys", "paths", "timing entries"};

static const hwx_xtab *hwx__tab(const hwx_exact *x, unsigned i) {
    return i == 0 ? &x->pc : i == 1 ? &x->val : i == 2 ? &x->key
         : i == 3 ? &x->path : &x->tm;
}

void hwx__exact_report_text(const hwx_exact *x, const hwp_writer *w,
                            uint32_t top) {
    hwx_xent best[16];
    uint32_t n, i;
    unsigned t;
    if (top > 16) top = 16;
    hwp_put_str(w, "exact: ");
    for (t = 0; t < HWX__NTABS; t++) {
        const hwx_xtab *tab = hwx__tab(x, t);
        if (t == 4 && !tab->used && !tab->dropped) continue; /* core off */
        hwp_put_str(w, t ? ", " : "");
        hwp_put_u64(w, tab->used);
        hwp_put_str(w, " ");
        hwp_put_str(w, hwx__tab_names[t]);
        if (tab->dropped) {
            hwp_put_str(w, " (INCOMPLETE: ");
            hwp_put_u64(w, tab->dropped);
            hwp_put_str(w, " dropped, raise exact_mb)");
        }
    }
    hwp_put_str(w, "\n  hottest paths (exact):\n");
    n = hwx__xtab_top(&x->path, best, top);
    for (i = 0; i < n; i++) {
        hwp_put_str(w, "    start ");
        hwp_put_hex(w, best[i].k1);
        hwp_put_str(w, " len ");
        hwp_put_u64(w, hwp_log2(best[i].k2));
        hwp_put_str(w, " shape ");
        hwp_put_hex(w, best[i].k2);
        hwp_put_str(w, "  ");
        hwp_put_u64(w, best[i].count);
        hwp_put_str(w, " (");
        hwp_put_f64(w, 100.0 * (double)best[i].count /
                           (double)(x->path.total ? x->path.total : 1), 2);
        hwp_put_str(w, "%)\n");
    }
}

void hwx__kv(const hwp_writer *w, const char *label, uint64_t v) {
    hwp_put_str(w, label);
    hwp_put_u64(w, v);
}

static void hwx__json_top(const hwx_xtab *t, const hwp_writer *w,
                          uint32_t top) {
    hwx_xent best[16];
    uint32_t n = hwx__xtab_top(t, best, top > 16 ? 16 : top), i;
    hwx__kv(w, "{\"distinct\":", t->used);
    hwx__kv(w, ",\"total\":", t->total);
    hwx__kv(w, ",\"dropped\":", t->dropped);
    hwp_put_str(w, ",\"top\":[");
    for (i = 0; i < n; i++) {
        hwx__kv(w, i ? ",[" : "[", best[i].k1);
        hwx__kv(w, ",", best[i].k2);
        hwx__kv(w, ",", best[i].count);
        hwp_put_str(w, "]");
    }
    hwp_put_str(w, "]}");
}

void hwx__exact_report_json(const hwx_exact *x, const hwp_writer *w,
                            uint32_t top) {
    hwp_put_str(w, "{\"pcs\":");
    hwx__json_top(&x->pc, w, top);
    hwp_put_str(w, ",\"values\":");
    hwx__json_top(&x->val, w, top);
    hwp_put_str(w, ",\"keys\":");
    hwx__json_top(&x->key, w, top);
    hwp_put_str(w, ",\"paths\":");
    hwx__json_top(&x->path, w, top);
    hwp_put_str(w, "}");
}
