/* examples/common/hwx_path.c: the path profiler (Vaswani, Jacob &
 * Srikant, Representing, Detecting and Profiling Paths in Hardware) as a
 * session adapter: path stack + Hot Path Table + the path-based phase
 * detector. Scored by the HPT's overlap percentage with the exact path
 * profile (sec. 8.1, after Arnold & Ryder), the overlap of a perfect
 * table of as many entries, and the agreement of the detector's phase
 * changes with a basic-block-vector detector (Sherwood et al.) at the
 * same hardware budget, run beside it with exact=on. */
#include "hwx_int.h"

/* Intervals whose phase ids are kept for the report and the score. */
#define HWX__PHASE_LOG 4096u

/* path_metric=: what a path's counter sums along it (Vaswani et al.
 * sec. 4: the path stack's event counter, added to the HPT entry when
 * the path completes, so the table ranks paths by it). cycles and dcmiss
 * come from the core (core=on): its clock after each instruction and its
 * D-cache miss bit. */
enum { HWX__PM_PATHS, HWX__PM_INSNS, HWX__PM_CYCLES, HWX__PM_DCMISS };
static const char *const hwx__pm_names[] = {"paths", "insns", "cycles", "dcmiss", NULL};

typedef struct hwx__pathd {
    hwp_path_desc p;
    hwp_hpt_desc h;
    hwp_phase_desc ph;
    hwp_phase_desc bbv; /* the BBV detector at the same hardware budget */
    uint32_t blocks;    /* block map slots (a power of two); 0: no map  */
    uint32_t metric;    /* HWX__PM_*                                     */
    uint64_t window;    /* the dynamic overlap's window, instructions    */
} hwx__pathd;

/* The dynamic overlap percentage (sec. 8.1): "the average of overlap
 * percentages computed for path profiles of non-overlapping 100 million
 * instruction execution windows", the profiler enabled for each window
 * alone. With exact=on a second table of the same geometry and policy
 * takes every completed path of the model's stack, beside an exact
 * count of that window's paths; both are scored and emptied at each
 * window end. A trailing partial window is not scored. The exact count
 * is a hash of HWX__WIN_ROWS paths; a window with more distinct paths
 * is not scored (counted). */
#define HWX__WINDOW_DEFAULT 100000000u
#define HWX__WIN_ROWS 65536u
typedef struct hwx__win {
    hwp_hpt *hpt;         /* the table, emptied at each window            */
    hwp_path_row *exact;  /* HWX__WIN_ROWS slots; count 0: empty          */
    hwp_path_row *rows;   /* the table's rows at a window end             */
    uint32_t used;        /* occupied exact slots                         */
    uint32_t over;        /* this window's exact count overflowed         */
    uint64_t len, at;     /* window length and instructions into it       */
    uint64_t scored, lost; /* windows scored; windows not (overflow)      */
    double sum;           /* their overlaps                               */
} hwx__win;

typedef struct hwx__path {
    hwp_path *path;
    hwp_hpt *hpt;
    hwp_phase *phase;
    uint32_t *phase_ids;  /* detector's phase id per interval (bounded) */
    uint64_t phase_n;     /* intervals seen                              */
    hwp_phase *bbv;       /* reference detector, exact=on only           */
    uint32_t *bbv_ids;
    uint64_t bbv_n;
    uint32_t bbv_insns;   /* instructions since the last branch          */
    uint32_t path_pend;   /* block mode: instructions since the last branch */
    uint32_t entries;     /* the HPT's entries and ways, as configured   */
    uint32_t ways;
    const char *policy;   /* " lfu", " lru", " aging" or " decay": the report's overlap is its */
    uint64_t interval;    /* the detector's interval, as configured     */
    hwx_blocks *blocks;   /* the block map decoding hot paths, or NULL  */
    hwp_path_row *rows;   /* the HPT's rows, exported for that decoding */
    const hwx_session *sess; /* the core's figures (hwx_core_last)       */
    uint32_t metric;      /* HWX__PM_*                                   */
    uint32_t pend_ins;    /* cycles/dcmiss: instructions since the last branch */
    uint64_t pend_ev;     /* ... and the metric since then              */
    uint64_t last_cycle;  /* the core's clock after the last instruction */
    uint64_t fed;         /* cycles/dcmiss: the metric fed to the stack  */
    hwx__win win;         /* the dynamic overlap (exact=on only)          */
    int started;
} hwx__path;

/* Blocks a hot path may cross, and then some: a map of 16384 blocks
 * (640 KiB) holds every block a compressor or an interpreter's hot loop
 * runs; a larger program overflows it, counted in the report. */
#define HWX__BLOCKS_DEFAULT 16384u

/* The hosts' hot path table keeps decay's victims (Misra-Gries per set):
 * at 512 x 4 it held the most of a perfect table's overlap across the
 * corpus (docs/pathprof.md, "Results"), where the paper's LFU, the
 * library's zero desc, kept the first hot paths of programs whose hot set
 * moves (bash 0.65 of the perfect table, sqlite3 0.52). hpt_policy=lfu
 * gives the paper's table. */
static void hwx__path_defaults(void *dv, const hwx_opts *o) {
    (void)o;
    ((hwx__pathd *)dv)->blocks = HWX__BLOCKS_DEFAULT;
    ((hwx__pathd *)dv)->h.policy = HWP_HPT_DECAY;
}

/* The HPT's geometry as configured (zero: the documented 512 x 4). */
static uint32_t hwx__path_entries(const hwx__pathd *d) { return d->h.entries ? d->h.entries : 512; }

/* "512x4" -> 512, 4; a zero keeps that field's default (0x0: both). */
static hwp_status hwx__pair(const char *opt, const char *v, uint32_t *a, uint32_t *b,
                            const char **why) {
    char first[24];
    size_t n = 0;
    uint32_t x, y;
    while (v[n] && v[n] != 'x') n++;
    if (!v[n] || n == 0 || n >= sizeof first)
        return hwx_arg_fail(opt, "expected ENTRIESxWAYS, e.g. 512x4", why);
    hwp_copy(first, v, n);
    first[n] = 0;
    if (hwx__u32(opt, first, &x, why) != HWP_OK || hwx__u32(opt, v + n + 1, &y, why) != HWP_OK)
        return HWP_EINVAL;
    *a = x;
    *b = y;
    return HWP_OK;
}

static hwp_status hwx__path_set(void *dv, const char *k, const char *opt,
                              const char *v, const char **why) {
    static const char *const pol[] = {"lfu", "aging", "decay", NULL};
    static const uint32_t polv[] = {HWP_HPT_PLAIN, HWP_HPT_AGING, HWP_HPT_DECAY};
    static const char *const mode[] = {"bl", "wpp", NULL};
    static const uint32_t modev[] = {HWP_PATH_BL, HWP_PATH_WPP};
    hwx__pathd *d = (hwx__pathd *)dv;
    if (hwx_streq(k, "hpt")) return hwx__pair(opt, v, &d->h.entries, &d->h.ways, why);
    if (hwx_streq(k, "policy"))
        return hwx__enum(opt, v, pol, polv, &d->h.policy, why);
    if (hwx_streq(k, "mode"))
        return hwx__enum(opt, v, mode, modev, &d->p.mode, why);
    if (hwx_streq(k, "blocks")) { /* rounded up to a power of two */
        uint32_t n;
        if (hwx__u32(opt, v, &n, why) != HWP_OK) return HWP_EINVAL;
        if (n > (1u << 24)) return hwx_arg_fail(opt, "at most 16777216 blocks", why);
        for (d->blocks = n ? 2 : 0; d->blocks && d->blocks < n; d->blocks *= 2) {}
        return HWP_OK;
    }
    if (hwx_streq(k, "metric")) {
        static const uint32_t mv[] = {HWX__PM_PATHS, HWX__PM_INSNS, HWX__PM_CYCLES,
                                      HWX__PM_DCMISS};
        return hwx__enum(opt, v, hwx__pm_names, mv, &d->metric, why);
    }
    if (hwx_streq(k, "window")) return hwx__u64(opt, v, &d->window, why);
    if (hwx_streq(k, "bits")) return hwx__u32(opt, v, &d->p.counter_bits, why);
    if (hwx_streq(k, "maxlen")) return hwx__u32(opt, v, &d->p.max_len, why);
    return hwx__unknown(why);
}

/* The BBV reference: Sherwood et al.'s tracker at the path detector's
 * hardware budget (hwp_phase_bbv_desc); an invalid path desc leaves it
 * as the path desc, which the path detector's own init then refuses. */
static void hwx__path_derive(hwx__pathd *d) {
    static const uint32_t model[] = {HWP_PATH_M_PATHS, HWP_PATH_M_INSNS, HWP_PATH_M_EVENTS,
                                     HWP_PATH_M_EVENTS};
    if (hwp_phase_bbv_desc(&d->ph, &d->bbv) != HWP_OK) d->bbv = d->ph;
    d->p.metric = model[d->metric];
    /* The paper's 8-bit counter holds execution counts between updates;
     * a metric summed along a path of up to 32 branches needs more: 16
     * bits is hwx's default then (path_bits= sets it). */
    if (d->metric != HWX__PM_PATHS && !d->p.counter_bits) d->p.counter_bits = 16;
}

static uint32_t hwx__path_wants(const hwx_opts *o) {
    (void)o;
    return 0;
}

static size_t hwx__path_bytes(const void *dv, const hwx_opts *o, const char **why) {
    hwx__pathd d = *(const hwx__pathd *)dv;
    size_t a, b, c;
    (void)o;
    hwx__path_derive(&d);
    a = hwp_path_bytes(&d.p);
    b = hwp_hpt_bytes(&d.h);
    c = hwp_phase_bytes(&d.ph);
    if (!a) HWX__WHY(hwp_path, hwp_path_init(&x_, m_, 0, &d.p, NULL), why);
    else if (!b) HWX__WHY(hwp_hpt, hwp_hpt_init(&x_, m_, 0, &d.h, NULL), why);
    else if (!c) HWX__WHY(hwp_phase, hwp_phase_init(&x_, m_, 0, &d.ph, NULL), why);
    if (!a || !b || !c) return 0;
    return hwp_align(sizeof(hwp_path)) + hwp_align(a) + hwp_align(sizeof(hwp_hpt)) +
           hwp_align(b) + hwp_align(sizeof(hwp_phase)) + hwp_align(c) +
           hwp_align(HWX__PHASE_LOG * sizeof(uint32_t)) + hwp_align(sizeof(hwp_phase)) +
           hwp_align(hwp_phase_bytes(&d.bbv)) + hwp_align(HWX__PHASE_LOG * sizeof(uint32_t)) +
           (d.blocks ? hwp_align(sizeof(hwx_blocks)) + hwx_blocks_bytes(d.blocks) +
                           hwp_align(hwx__path_entries(&d) * sizeof(hwp_path_row))
                     : 0) +
           (o->exact ? hwp_align(sizeof(hwp_hpt)) + hwp_align(b) +
                           hwp_align(HWX__WIN_ROWS * sizeof(hwp_path_row)) +
                           hwp_align(hwx__path_entries(&d) * sizeof(hwp_path_row))
                     : 0);
}

/* A window ends: score its table against its exact paths, empty both. */
static void hwx__win_end(hwx__win *x, uint32_t entries) {
    uint32_t i, n = 0;
    size_t k;
    if (x->over) {
        x->lost++;
    } else {
        for (i = 0; i < HWX__WIN_ROWS && n < x->used; i++) /* compact */
            if (x->exact[i].count) x->exact[n++] = x->exact[i];
        k = hwp_hpt_export(x->hpt, x->rows, entries);
        x->sum += hwp_path_overlap(x->rows, k < entries ? k : entries, x->exact, n);
        x->scored++;
    }
    hwp_zero(x->exact, HWX__WIN_ROWS * sizeof(hwp_path_row));
    x->used = x->over = 0;
    hwp_hpt_reset(x->hpt);
}

/* Every completed path of the model's stack (exact=on): into the
 * window's table and its exact count. */
static void hwx__on_path(void *ctx, const hwp_path_rec *r) {
    hwx__win *x = &((hwx__path *)ctx)->win;
    uint32_t i = (uint32_t)hwp_path_index(r->pd.start ^ r->pd.shape, HWX__WIN_ROWS - 1);
    hwp_hpt_add(x->hpt, &r->pd, r->value);
    while (x->exact[i].count && !hwp_path_pd_eq(&x->exact[i].pd, &r->pd))
        i = (i + 1) & (HWX__WIN_ROWS - 1);
    if (!x->exact[i].count) {
        if (x->used == HWX__WIN_ROWS - 1) { /* keep one slot empty: probes end */
            x->over = 1;
            return;
        }
        x->used++;
        x->exact[i].pd = r->pd;
    }
    x->exact[i].count += r->value;
}

/* n more instructions retired: end the windows they complete. */
static void hwx__win_step(hwx__path *m, uint64_t n) {
    hwx__win *x = &m->win;
    for (x->at += n; x->at >= x->len; x->at -= x->len) hwx__win_end(x, m->entries);
}

static void hwx__on_interval(void *ctx, const hwp_phase_interval *r) {
    hwx__path *m = (hwx__path *)ctx;
    if (m->phase_n < HWX__PHASE_LOG) m->phase_ids[m->phase_n] = r->phase;
    m->phase_n++;
}

static void hwx__on_bbv_interval(void *ctx, const hwp_phase_interval *r) {
    hwx__path *m = (hwx__path *)ctx;
    if (m->bbv_n < HWX__PHASE_LOG) m->bbv_ids[m->bbv_n] = r->phase;
    m->bbv_n++;
}

/* Carve an instance and its storage, init it, fail with its reason. */
#define HWX__INIT(s, cur, type, ptr, bytesfn, initfn, desc)                   \
    do {                                                                      \
        size_t k_ = bytesfn(desc);                                            \
        ptr = (type *)hwp_carve(cur, sizeof(type));                          \
        if (initfn(ptr, hwp_carve(cur, k_), k_, desc, &(s)->cost) != HWP_OK) \
            return hwp_fail(&(s)->head, HWP_EINVAL, hwp_why(ptr));           \
    } while (0)

static hwp_status hwx__path_init(void *sv, void *dv, unsigned char **cur, hwx_session *s) {
    hwx__path *m = (hwx__path *)sv;
    hwx__pathd *d = (hwx__pathd *)dv;
    hwx__path_derive(d);
    if (d->metric >= HWX__PM_CYCLES && !(s->opts.models & HWX_M_CORE))
        return hwp_fail(&s->head, HWP_EINVAL,
                         "path_metric: cycles and dcmiss come from the core: add core=on");
    d->ph.on_interval = hwx__on_interval;
    d->ph.ctx = m;
    if (s->opts.exact) { /* the dynamic overlap's stream (below) */
        d->p.on_path = hwx__on_path;
        d->p.ctx = m;
    }
    HWX__INIT(s, cur, hwp_hpt, m->hpt, hwp_hpt_bytes, hwp_hpt_init, &d->h);
    HWX__INIT(s, cur, hwp_phase, m->phase, hwp_phase_bytes, hwp_phase_init, &d->ph);
    HWX__INIT(s, cur, hwp_path, m->path, hwp_path_bytes, hwp_path_init, &d->p);
    m->phase_ids = (uint32_t *)hwp_carve(cur, HWX__PHASE_LOG * sizeof(uint32_t));
    d->bbv.on_interval = hwx__on_bbv_interval;
    d->bbv.ctx = m;
    /* The reference detector is not hardware being modelled: no cost; it
     * only runs beside the exact profile (accuracy). */
    if (s->opts.exact) {
        size_t k = hwp_phase_bytes(&d->bbv);
        m->bbv = (hwp_phase *)hwp_carve(cur, sizeof(hwp_phase));
        if (hwp_phase_init(m->bbv, hwp_carve(cur, k), k, &d->bbv, NULL) != HWP_OK)
            return hwp_fail(&s->head, HWP_EINVAL, hwp_why(m->bbv));
    }
    m->bbv_ids = (uint32_t *)hwp_carve(cur, HWX__PHASE_LOG * sizeof(uint32_t));
    m->entries = hwx__path_entries(d);
    if (s->opts.exact) { /* the dynamic overlap's table: not modelled, no cost */
        size_t k = hwp_hpt_bytes(&d->h);
        m->win.hpt = (hwp_hpt *)hwp_carve(cur, sizeof(hwp_hpt));
        if (hwp_hpt_init(m->win.hpt, hwp_carve(cur, k), k, &d->h, NULL) != HWP_OK)
            return hwp_fail(&s->head, HWP_EINVAL, hwp_why(m->win.hpt));
        m->win.exact = (hwp_path_row *)hwp_carve(cur, HWX__WIN_ROWS * sizeof(hwp_path_row));
        hwp_zero(m->win.exact, HWX__WIN_ROWS * sizeof(hwp_path_row));
        m->win.rows = (hwp_path_row *)hwp_carve(cur, m->entries * sizeof(hwp_path_row));
        m->win.len = d->window ? d->window : HWX__WINDOW_DEFAULT;
    }
    if (hwp_path_attach(m->path, m->hpt, m->phase) != HWP_OK)
        return hwp_fail(&s->head, HWP_EINVAL, hwp_why(m->path));
    if (d->blocks) {
        m->blocks = (hwx_blocks *)hwp_carve(cur, sizeof(hwx_blocks));
        hwx_blocks_init(m->blocks, cur, d->blocks);
        m->rows = (hwp_path_row *)hwp_carve(cur, hwx__path_entries(d) * sizeof(hwp_path_row));
    }
    m->ways = d->h.ways ? d->h.ways : 4;
    m->policy = d->h.policy == HWP_HPT_DECAY   ? " decay"
                : d->h.policy == HWP_HPT_AGING ? " aging"
                : d->h.repl == HWP_HPT_LRU     ? " lru"
                                               : " lfu";
    m->interval = d->ph.interval ? d->ph.interval : 10000000u;
    m->metric = d->metric;
    m->sess = s;
    return HWP_OK;
}

static void hwx__path_insn(void *sv, const hwp_insn *in, uint64_t cycle) {
    hwx__path *m = (hwx__path *)sv;
    (void)cycle;
    if (HWP_UNLIKELY(!m->started)) {
        hwp_path_begin(m->path, in->pc); /* program entry, sec. 3 */
        if (m->blocks) hwx_blocks_begin(m->blocks, in->pc);
        m->started = 1;
    }
    if (m->metric >= HWX__PM_CYCLES) { /* the core's figures, per branch */
        uint64_t cyc;
        uint32_t ev;
        hwx_core_last(m->sess, &cyc, &ev);
        m->pend_ins++;
        m->pend_ev += m->metric == HWX__PM_CYCLES ? cyc - m->last_cycle
                                                  : (uint64_t)((ev & HWP_EV_DCMISS) != 0);
        m->last_cycle = cyc;
        if (hwp_cls_is_branch(in->cls)) {
            uint32_t e = m->pend_ev < 0xFFFFFFFFu ? (uint32_t)m->pend_ev : 0xFFFFFFFFu;
            m->fed += m->pend_ev;
            hwp_path_branch(m->path, in->pc, in->next_pc, in->cls,
                            (in->events & HWP_EV_TAKEN) != 0, m->pend_ins, e);
            m->pend_ins = 0;
            m->pend_ev = 0;
        }
    } else {
        hwp_path_insn(m->path, in);
    }
    if (m->blocks && hwp_cls_is_branch(in->cls))
        hwx_blocks_branch(m->blocks, in->pc, in->next_pc, in->cls,
                          (in->events & HWP_EV_TAKEN) != 0);
    m->bbv_insns++;
    if (m->bbv && hwp_cls_is_branch(in->cls)) {
        hwp_phase_add_branch(m->bbv, in->pc, m->bbv_insns);
        m->bbv_insns = 0;
    }
    if (m->win.hpt) hwx__win_step(m, 1);
}

static void hwx__path_block(void *sv, const hwx_block *b) {
    hwx__path *m = (hwx__path *)sv;
    const hwp_insn *last = b->last;
    if (HWP_UNLIKELY(!m->started)) {
        hwp_path_begin(m->path, b->pcs[0]);
        if (m->blocks) hwx_blocks_begin(m->blocks, b->pcs[0]);
        m->started = 1;
    }
    m->path_pend += b->n;
    m->bbv_insns += b->n;
    if (hwp_cls_is_branch(last->cls)) {
        hwp_path_branch(m->path, last->pc, last->next_pc, last->cls,
                        (last->events & HWP_EV_TAKEN) != 0, m->path_pend, 0);
        if (m->blocks)
            hwx_blocks_branch(m->blocks, last->pc, last->next_pc, last->cls,
                              (last->events & HWP_EV_TAKEN) != 0);
        if (m->bbv) hwp_phase_add_branch(m->bbv, last->pc, m->bbv_insns);
        m->path_pend = 0;
        m->bbv_insns = 0;
    }
    if (m->win.hpt) hwx__win_step(m, b->n);
}

static void hwx__path_flush(void *sv) { hwp_path_flush(((hwx__path *)sv)->path); }

/* A burst ended (burst_period=): the paths it left open are incomplete
 * and dropped, as the VM layer drops them, and the next burst begins a
 * path at its first pc, as a program's entry does. */
static void hwx__path_burst_end(void *sv) {
    hwx__path *m = (hwx__path *)sv;
    uint32_t open = hwp_path_depth(m->path);
    if (open) hwp_path_unwind(m->path, open, false);
    m->started = 0;
    m->path_pend = 0;
    m->pend_ins = 0;
    m->pend_ev = 0;
    if (m->metric >= HWX__PM_CYCLES) { /* the gap's cycles are no path's */
        uint32_t ev;
        hwx_core_last(m->sess, &m->last_cycle, &ev);
    }
}

/* The HPT merges; the path stack and the phase detectors are one
 * thread's stream and stay with dst. */
static void hwx__path_merge(void *dv, const void *sv) {
    hwx__path *d = (hwx__path *)dv;
    const hwx__path *s = (const hwx__path *)sv;
    hwp_hpt_merge(d->hpt, s->hpt);
    d->win.scored += s->win.scored; /* the mean over every thread's windows */
    d->win.lost += s->win.lost;
    d->win.sum += s->win.sum;
    if (d->blocks && s->blocks) hwx_blocks_merge(d->blocks, s->blocks);
}

static void hwx__path_text(const void *sv, const hwx_session *s, const hwp_writer *w) {
    const hwx__path *m = (const hwx__path *)sv;
    uint32_t top = s->opts.top;
    hwp_path_row rows[32];
    hwp_path_stats ps;
    hwp_hpt_stats hs;
    hwp_phase_stats phs;
    size_t n = hwp_hpt_export(m->hpt, rows, top < 32 ? top : 32), i;
    if (n > (top < 32 ? top : 32)) n = top < 32 ? top : 32;
    hwp_path_get_stats(m->path, &ps);
    hwp_hpt_get_stats(m->hpt, &hs);
    hwp_phase_get_stats(m->phase, &phs);
    hwp_put_str(w, "\n-- hot paths: path stack + Hot Path Table (Vaswani et al., 2004) --\n");
    hwx__kv(w, "  HPT ", m->entries);
    hwx__kv(w, "x", m->ways);
    hwp_put_str(w, m->policy);
    hwx__kv(w, ": paths ", ps.paths);
    hwx__kv(w, ", hits ", hs.hits);
    hwx__kv(w, ", misses ", hs.misses);
    if (m->metric != HWX__PM_PATHS) { /* the table ranks paths by it */
        hwp_put_str(w, "\n  path_metric ");
        hwp_put_str(w, hwx__pm_names[m->metric]);
        if (m->metric >= HWX__PM_CYCLES) hwx__kv(w, ": fed along paths ", m->fed);
    }
    hwp_put_str(w, m->metric == HWX__PM_PATHS
                       ? "\n  start               len  directions         count   (exact)\n"
                       : "\n  start               len  directions         metric  (exact count)\n");
    for (i = 0; i < n; i++) {
        hwp_put_str(w, "  ");
        hwp_put_hex(w, rows[i].pd.start);
        hwp_put_str(w, "  ");
        hwp_put_u64(w, hwp_path_pd_len(&rows[i].pd));
        hwp_put_str(w, "  ");
        hwp_put_hex(w, hwp_path_pd_dirs(&rows[i].pd));
        hwp_put_str(w, "  ");
        hwp_put_u64(w, rows[i].count);
        if (s->exact) {
            hwp_put_str(w, "  (");
            hwp_put_u64(w, hwx__xtab_get(&s->exact->path, rows[i].pd.start, rows[i].pd.shape));
            hwp_put_str(w, ")");
        }
        hwp_put_str(w, "\n");
    }
    hwx__kv(w, "\n-- phases: path-based detector (Vaswani et al. sec. 6) --\n  intervals ",
            phs.intervals);
    hwx__kv(w, " of ", m->interval);
    hwx__kv(w, " instructions, phase changes ", phs.changes);
    hwx__kv(w, ", phases ", phs.phases);
    hwp_put_str(w, "\n  timeline (phase id per interval): ");
    for (i = 0; i < m->phase_n && i < HWX__PHASE_LOG && i < 120; i++) {
        uint32_t id = m->phase_ids[i];
        char c = (char)(id < 10 ? '0' + id : id < 36 ? 'a' + (id - 10) : '+');
        hwp_put(w, &c, 1);
    }
    hwp_put_str(w, m->phase_n > 120 ? "...\n" : "\n");
}

/* Phase id per interval, as far as the log reaches. */
static void hwx__ids_json(const hwp_writer *w, const uint32_t *ids, uint64_t n) {
    uint64_t i;
    hwp_put_str(w, "[");
    for (i = 0; i < n && i < HWX__PHASE_LOG; i++) {
        if (i) hwp_put_str(w, ",");
        hwp_put_u64(w, ids[i]);
    }
    hwp_put_str(w, "]");
}

static void hwx__path_json(const void *sv, const hwp_writer *w) {
    const hwx__path *m = (const hwx__path *)sv;
    hwp_put_str(w, ",\"pathprof\":{\"metric\":");
    hwp_put_json_str(w, hwx__pm_names[m->metric]);
    hwp_put_json_u64(w, "metric_fed", m->fed);
    hwp_put_str(w, ",\"path\":");
    hwp_path_write_json(m->path, w);
    hwp_put_str(w, ",\"hpt\":");
    hwp_hpt_write_json(m->hpt, w);
    hwp_put_str(w, ",\"phase\":");
    hwp_phase_write_json(m->phase, w);
    hwp_put_str(w, ",\"phase_ids\":");
    hwx__ids_json(w, m->phase_ids, m->phase_n);
    hwp_put_str(w, ",\"bbv_ids\":");
    hwx__ids_json(w, m->bbv_ids, m->bbv_n);
    if (m->blocks) { /* host facts beside the models: the hot paths' blocks */
        size_t n = hwp_hpt_export(m->hpt, m->rows, m->entries);
        hwx_blocks_json(m->blocks, m->path, m->rows, n < m->entries ? n : m->entries, w);
    }
    hwp_put_str(w, "}");
}

/* The HPT's rows, then a heap of as many exact path counts. */
static size_t hwx__path_eval_bytes(const void *sv, const hwx_session *s) {
    const hwx__path *m = (const hwx__path *)sv;
    (void)s;
    return hwp_align((size_t)m->entries * sizeof(hwp_path_row)) +
           hwp_align((size_t)m->entries * sizeof(uint64_t));
}

/* The sum of the k largest counts in t, selected with a min-heap of k
 * counts in heap[] (scratch): O(n log k), no sort of the whole table. */
static uint64_t hwx__top_sum(const hwx_xtab *t, uint64_t *heap, uint32_t k) {
    uint32_t have = 0, j, c;
    uint64_t i, sum = 0;
    for (i = 0; i <= t->mask && k; i++) {
        uint64_t v = t->e[i].count;
        if (!v) continue;
        if (have < k) { /* sift up */
            for (j = have++; j > 0 && heap[(j - 1) / 2] > v; j = (j - 1) / 2)
                heap[j] = heap[(j - 1) / 2];
            heap[j] = v;
            continue;
        }
        if (v <= heap[0]) continue;
        for (j = 0; (c = 2 * j + 1) < have; j = c) { /* sift the root down */
            if (c + 1 < have && heap[c + 1] < heap[c]) c++;
            if (heap[c] >= v) break;
            heap[j] = heap[c];
        }
        heap[j] = v;
    }
    for (j = 0; j < have; j++) sum += heap[j];
    return sum;
}

static void hwx__path_eval(void *sv, const hwx_session *s, unsigned char *cur,
                           hwx_metric *out) {
    const hwx__path *m = (const hwx__path *)sv;
    /* Overlap percentage (Arnold & Ryder; sec. 8.1): the sum over paths
     * of the smaller of the path's shares in the two profiles. Exact
     * shares come from the exact profile's own path stack. */
    hwp_path_row *rows = (hwp_path_row *)(void *)cur;
    size_t n = hwp_hpt_export(m->hpt, rows, m->entries), i;
    double hsum = 0, xsum = (double)s->exact->path.total, ov = 0;
    if (n > m->entries) n = m->entries;
    for (i = 0; i < n; i++) hsum += (double)rows[i].count;
    for (i = 0; i < n && hsum > 0 && xsum > 0; i++) {
        double hf = (double)rows[i].count / hsum;
        double xf =
            (double)hwx__xtab_get(&s->exact->path, rows[i].pd.start, rows[i].pd.shape) / xsum;
        ov += hf < xf ? hf : xf;
    }
    out[0].valid = n > 0 && xsum > 0;
    out[0].n = (uint32_t)n;
    out[0].value = 100.0 * ov;
    {
        /* The reference: a perfect table of as many entries holds the
         * exact top paths, so its overlap is their share of the flow, an
         * upper bound on any table of that size (each path adds at most
         * its exact share). Programs with a wide path working set (an
         * interpreter) leave even this below 80%. */
        uint32_t k = m->entries;
        uint64_t *heap =
            (uint64_t *)(void *)(cur + hwp_align((size_t)k * sizeof(hwp_path_row)));
        out[1].valid = xsum > 0;
        out[1].n = k;
        out[1].value =
            xsum > 0 ? 100.0 * (double)hwx__top_sum(&s->exact->path, heap, k) / xsum : 0.0;
    }
    if (m->phase_n > 1 && m->bbv_n > 1) {
        uint64_t k, nn = m->phase_n < m->bbv_n ? m->phase_n : m->bbv_n, agree = 0;
        if (nn > HWX__PHASE_LOG) nn = HWX__PHASE_LOG;
        for (k = 1; k < nn; k++)
            agree += (m->phase_ids[k] != m->phase_ids[k - 1]) ==
                     (m->bbv_ids[k] != m->bbv_ids[k - 1]);
        out[2].valid = 1;
        out[2].n = (uint32_t)(nn - 1);
        out[2].value = 100.0 * (double)agree / (double)(nn - 1);
    }
    out[3].valid = m->win.scored > 0; /* n: the windows scored */
    out[3].n = (uint32_t)m->win.scored;
    out[3].value = m->win.scored ? m->win.sum / (double)m->win.scored : 0.0;
}

static const hwx_metric_def hwx__path_metrics[] = {
    {"hpt_overlap_pct", "  HPT complete overlap (Vaswani et al. 8.1):    ", 2, "%"},
    {"hpt_ideal_pct", "  perfect table of as many entries (ideal):    ", 2, "%"},
    {"phase_agree_pct", "  phase changes agreeing with BBV reference:   ", 2, "%"},
    {"hpt_dynamic_overlap_pct", "  HPT dynamic overlap (8.1, mean of windows):   ", 2, "%"},
};

/* Counters over time (timeline=N), cumulative. */
static const char *const hwx__path_counter_names[] = {"paths", "hpt_misses", "phase_changes", NULL};
static void hwx__path_counters(const void *sv, uint64_t *out) {
    const hwx__path *m = (const hwx__path *)sv;
    hwp_path_stats p;
    hwp_hpt_stats h;
    hwp_phase_stats ph;
    hwp_zero(&p, sizeof p);
    hwp_zero(&h, sizeof h);
    hwp_zero(&ph, sizeof ph);
    hwp_path_get_stats(m->path, &p);
    hwp_hpt_get_stats(m->hpt, &h);
    hwp_phase_get_stats(m->phase, &ph);
    out[0] = p.paths;
    out[1] = h.misses;
    out[2] = ph.changes;
}

const hwx_adapter hwx__adapter_path = {
    .name = "path",
    .alias = "pathprof",
    .model = HWP_MODEL_PATH,
    .params = "hpt (ENTRIESxWAYS), policy (lfu, aging, decay; also hpt_policy), metric, bits (counter_bits), mode (bl, wpp), maxlen (max_len), blocks, window, "
              "or any member of its desc by the name the report gives it (docs/pathprof.md)",
    .parts = {{hwp_path_desc_fields, offsetof(hwx__pathd, p)},
              {hwp_hpt_desc_fields, offsetof(hwx__pathd, h)},
              {hwp_phase_desc_fields, offsetof(hwx__pathd, ph)}},
    .desc_size = sizeof(hwx__pathd),
    .state_size = sizeof(hwx__path),
    .metrics = hwx__path_metrics,
    .nmetrics = HWX_COUNT(hwx__path_metrics),
    .defaults = hwx__path_defaults,
    .set = hwx__path_set,
    .wants = hwx__path_wants,
    .bytes = hwx__path_bytes,
    .init = hwx__path_init,
    .insn = hwx__path_insn,
    .block = hwx__path_block,
    .flush = hwx__path_flush,
    .in_bursts = 1,
    .burst_end = hwx__path_burst_end,
    .merge = hwx__path_merge,
    .report_text = hwx__path_text,
    .report_json = hwx__path_json,
    .eval_bytes = hwx__path_eval_bytes,
    .evaluate = hwx__path_eval,
    .counter_names = hwx__path_counter_names,
    .counters = hwx__path_counters,
};
