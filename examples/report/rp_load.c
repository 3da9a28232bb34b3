/* examples/report/rp_load.c: finding the model reports in a saved JSON
 * text, loading each with its model's reader, merging same-configuration
 * reports with the model's merge (rp.h). */
#define HWPROF_STDIO
#include "rp.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hwprof/hwprof.h"

size_t rp_max_bytes = (size_t)1 << 30;

/* ---- the models ---------------------------------------------------------- */

typedef struct rp_model {
    const char *name; /* as in the envelope's "model" */
    int (*load)(void **out, const char *json, size_t n, hwp_json_err *err,
                char *why, size_t cap);
    hwp_status (*merge)(void *dst, const void *src);
    void (*write)(const void *x, const hwp_writer *w);
    void (*stats)(const void *x, rp_stat4 *st);
    const char *(*why)(const void *x);
} rp_model;

/* The handle first, its storage after it in one block. */
#define RP__HS(T) ((sizeof(T) + 63u) & ~(size_t)63u)

/* Every component's loader, merge, writer, stats and reason, from the
 * contract's calls (the component list, HWP_COMPONENTS). */
#define RP__MODEL_FNS(X, header, envelope, kind, model)                                   \
    static int rp__load_##X(void **out, const char *json, size_t n,            \
                            hwp_json_err *err, char *why, size_t cap) {        \
        hwp_##X##_desc d;                                                      \
        hwp_##X *x;                                                            \
        size_t k;                                                              \
        unsigned char *blk;                                                    \
        memset(&d, 0, sizeof d);                                               \
        *out = NULL;                                                           \
        if (hwp_##X##_read_desc(&d, json, n, err) != HWP_OK) return -1;        \
        k = hwp_##X##_bytes(&d);                                               \
        if (k > rp_max_bytes) {                                                \
            snprintf(why, cap, "its desc needs %zu bytes, over the reader's "  \
                     "limit of %zu", k, rp_max_bytes);                         \
            return -1;                                                         \
        }                                                                      \
        blk = (unsigned char *)calloc(1, RP__HS(hwp_##X) + k + 1);             \
        if (!blk) {                                                            \
            snprintf(why, cap, "out of memory for %zu bytes", k);              \
            return -1;                                                         \
        }                                                                      \
        x = (hwp_##X *)(void *)blk;                                            \
        if (hwp_##X##_init(x, blk + RP__HS(*x), k, &d, NULL) != HWP_OK) {      \
            snprintf(why, cap, "desc refused: %s", hwp_why(x));                \
            free(blk);                                                         \
            return -1;                                                         \
        }                                                                      \
        if (hwp_##X##_read_json(x, json, n, err) != HWP_OK) {                  \
            if (!err->why) snprintf(why, cap, "%s", hwp_why(x));               \
            free(blk);                                                         \
            return -1;                                                         \
        }                                                                      \
        *out = x;                                                              \
        return 0;                                                              \
    }                                                                          \
    static hwp_status rp__merge_##X(void *dst, const void *src) {              \
        return hwp_##X##_merge((hwp_##X *)dst, (const hwp_##X *)src);          \
    }                                                                          \
    static void rp__write_##X(const void *x, const hwp_writer *w) {            \
        hwp_##X##_write_json((const hwp_##X *)x, w);                           \
    }                                                                          \
    static void rp__stats_##X(const void *x, rp_stat4 *st) {                   \
        hwp_##X##_stats s;                                                     \
        memset(&s, 0, sizeof s);                                               \
        hwp_##X##_get_stats((const hwp_##X *)x, &s);                           \
        st->events = s.events;                                                 \
        st->dropped = s.dropped;                                               \
        st->evicted = s.evicted;                                               \
        st->cycles = s.cycles;                                                 \
    }                                                                          \
    static const char *rp__why_##X(const void *x) {                            \
        return hwp_why((const hwp_##X *)x);                                    \
    }

HWP_COMPONENTS(RP__MODEL_FNS)
#undef RP__MEM

/* ---- tables ----------------------------------------------------------------- */

static rp_table *rp__tab(rp_table *out, size_t *n, size_t cap, const rp_comp *c,
                         const char *suffix, const char *title, size_t rows) {
    rp_table *t;
    if (*n >= cap) return NULL;
    t = &out[*n];
    memset(t, 0, sizeof *t);
    if (c->ordinal)
        snprintf(t->name, sizeof t->name, "%s%u.%s", c->m->name, c->ordinal + 1, suffix);
    else
        snprintf(t->name, sizeof t->name, "%s.%s", c->m->name, suffix);
    t->title = title;
    t->rows = (rp_row *)calloc(rows ? rows : 1, sizeof(rp_row));
    if (!t->rows) return NULL;
    (*n)++;
    return t;
}

static void rp__col(rp_table *t, const char *name, unsigned dec);

/* A column whose figures add up over rows (per-function totals). */
static void rp__sum(rp_table *t, const char *name, unsigned dec) {
    if (t->ncol < RP_MAXCOL) t->sums |= 1u << t->ncol;
    rp__col(t, name, dec);
}

static void rp__col(rp_table *t, const char *name, unsigned dec) {
    if (t->ncol >= RP_MAXCOL) return;
    t->dec[t->ncol] = dec;
    t->col[t->ncol++] = name;
}

static const char *const rp__stage[HWP_PM_LAT_COUNT] = {
    "lat_fetch_map", "lat_map_ready", "lat_ready_issue",
    "lat_issue_rr",  "lat_rr_retire", "lat_load"};

/* ProfileMe: every sampled PC with its estimates (Dean et al., sec. 5). */
static void rp__tables_pm_table(const rp_comp *c, rp_table *out, size_t *n,
                                size_t cap) {
    const hwp_pm_table *t = (const hwp_pm_table *)c->x;
    size_t k = hwp_pm_table_rank(t, HWP_PM_RANK_SAMPLES, 1.96, NULL, 0), i, j;
    hwp_pm_row *rows = (hwp_pm_row *)calloc(k ? k : 1, sizeof *rows);
    double S = hwp_pm_table_interval(t), lat = 0, wasted = 0;
    rp_table *tab;
    if (!rows) return;
    k = hwp_pm_table_rank(t, HWP_PM_RANK_SAMPLES, 1.96, rows, k);
    tab = rp__tab(out, n, cap, c, "insns",
                  "costliest instructions (ProfileMe estimates, 95% intervals)", k);
    if (!tab) {
        free(rows);
        return;
    }
    tab->key_name = "pc";
    tab->pc_keyed = 1;
    rp__sum(tab, "samples", 0);
    rp__sum(tab, "fetches", 0);
    rp__col(tab, "fetches_lo", 0);
    rp__col(tab, "fetches_hi", 0);
    rp__sum(tab, "latency", 0);
    rp__sum(tab, "dcmiss", 0);
    rp__sum(tab, "wasted_slots", 1);
    rp__col(tab, "ipc_near", 3);
    for (j = 0; j < HWP_PM_LAT_COUNT; j++) rp__sum(tab, rp__stage[j], 0);
    rp__col(tab, "interval", 1);
    for (i = 0; i < k; i++) {
        rp_row *r = &tab->rows[i];
        const hwp_pm_entry *e = hwp_pm_table_find(t, rows[i].pc);
        r->key = rows[i].pc;
        r->v[0] = (double)rows[i].count.samples;
        r->v[1] = rows[i].count.value;
        r->v[2] = rows[i].count.lo;
        r->v[3] = rows[i].count.hi;
        r->v[4] = rows[i].latency.value;
        r->v[5] = rows[i].dcmiss.value;
        r->v[6] = rows[i].wasted_slots;
        r->v[7] = rows[i].ipc_near;
        for (j = 0; j < HWP_PM_LAT_COUNT; j++)
            r->v[8 + j] = e ? S * (double)e->lat_sum[j] : 0.0;
        r->v[14] = S;
        lat += r->v[4];
        wasted += r->v[6];
    }
    tab->n = k;
    /* As the model's own text report ranks: wasted issue slots when the
     * sampler pairs, else latency, else estimated fetches. */
    tab->sort = wasted > 0 ? 6 : lat > 0 ? 4 : 1;
    free(rows);
}

typedef struct rp__rapv {
    rp_table *t; /* NULL: the first walk, which counts the nodes in cap */
    size_t cap;
} rp__rapv;

/* The next row of a RAP tree's table, NULL when the count was short (or
 * on the counting walk). */
static rp_row *rp__rap_row(rp__rapv *v, uint64_t lo, uint64_t hi) {
    rp_row *r;
    if (!v->t) {
        v->cap++;
        return NULL;
    }
    if (v->t->n >= v->cap) return NULL;
    r = &v->t->rows[v->t->n++];
    r->key = lo;
    r->key2 = hi;
    return r;
}

/* A node's figures, the same in one and two dimensions. */
static void rp__rap_figs(double *v, uint64_t excl, uint64_t sum, uint64_t upper,
                         uint64_t count, uint32_t depth, uint32_t hot) {
    v[0] = (double)excl;
    v[1] = (double)sum;
    v[2] = (double)upper;
    v[3] = (double)count;
    v[4] = (double)depth;
    v[5] = (double)hot;
}

/* A RAP tree's table of k nodes: keys, then in two dimensions the y
 * side, then the node's figures (rp__rap_figs); ranked by hot weight. */
static int rp__rap_tab(rp__rapv *v, rp_table *out, size_t *n, size_t cap, const rp_comp *c,
                       const char *suffix, const char *title, size_t k, int two, int pc) {
    rp_table *t = rp__tab(out, n, cap, c, suffix, title, k);
    if (!t) return 0;
    v->t = t;
    v->cap = k;
    t->key_name = two ? "x_lo" : "lo";
    t->key2_name = two ? "x_hi" : "hi";
    t->pc_keyed = (unsigned)pc;
    if (two) {
        rp__col(t, "y_lo", 0);
        rp__col(t, "y_hi", 0);
    }
    rp__col(t, "hot_weight", 0);
    rp__col(t, "lower", 0);
    rp__col(t, "upper", 0);
    rp__sum(t, "own", 0);
    rp__col(t, "depth", 0);
    rp__col(t, "hot", 0);
    t->sort = two ? 2 : 0;
    return 1;
}

static void rp__rap_visit(void *ctx, const hwp_rap_range *g) {
    rp_row *r = rp__rap_row((rp__rapv *)ctx, g->lo, g->hi);
    if (r) rp__rap_figs(r->v, g->excl, g->sum, g->upper, g->count, g->depth, g->hot);
}

/* RAP: every node of the range tree (Mysore et al., sec. 3 and 4.1). */
static void rp__tables_rap(const rp_comp *c, rp_table *out, size_t *n, size_t cap) {
    const hwp_rap *r = (const hwp_rap *)c->x;
    hwp_rap_desc d;
    rp__rapv v = {NULL, 0};
    hwp_rap_foreach(r, rp__rap_visit, &v); /* counts the nodes, then fills their rows */
    hwp_rap_get_desc(r, &d);
    if (rp__rap_tab(&v, out, n, cap, c, "ranges",
                    "range tree (RAP): hot weight, lower and upper bounds", v.cap, 0,
                    d.source == HWP_RAP_SRC_PC))
        hwp_rap_foreach(r, rp__rap_visit, &v);
}

/* The hot path table: paths by their accumulators (Vaswani et al.). */
static void rp__tables_hpt(const rp_comp *c, rp_table *out, size_t *n, size_t cap) {
    const hwp_hpt *h = (const hwp_hpt *)c->x;
    size_t k = hwp_hpt_export(h, NULL, 0), i;
    hwp_path_row *rows = (hwp_path_row *)calloc(k ? k : 1, sizeof *rows);
    rp_table *t;
    if (!rows) return;
    k = hwp_hpt_export(h, rows, k);
    t = rp__tab(out, n, cap, c, "paths", "hot paths (HPT): start, shape, count", k);
    if (t) {
        t->key_name = "start";
        t->key2_name = "shape";
        t->pc_keyed = 1;
        rp__sum(t, "count", 0);
        rp__col(t, "branches", 0);
        for (i = 0; i < k; i++) {
            t->rows[i].key = rows[i].pd.start;
            t->rows[i].key2 = rows[i].pd.shape;
            t->rows[i].v[0] = (double)rows[i].count;
            t->rows[i].v[1] = (double)hwp_path_pd_len(&rows[i].pd);
        }
        t->n = k;
    }
    free(rows);
}

/* RAP over (x, y) pairs (rap_key=pcaddr: PC, data address): every node
 * of the tree as its rectangle, keyed by its x side (named when x is the
 * PC), the y side in columns, the figures as the 1-D tree's. */
static void rp__rap2_visit(void *ctx, const hwp_rap2_rect *g) {
    rp_row *r = rp__rap_row((rp__rapv *)ctx, g->box.x_lo, g->box.x_hi);
    if (!r) return;
    r->v[0] = (double)g->box.y_lo;
    r->v[1] = (double)g->box.y_hi;
    rp__rap_figs(r->v + 2, g->excl, g->sum, g->upper, g->count, g->depth, g->hot);
}

static void rp__tables_rap2(const rp_comp *c, rp_table *out, size_t *n, size_t cap) {
    const hwp_rap2 *r = (const hwp_rap2 *)c->x;
    hwp_rap2_desc d;
    rp__rapv v = {NULL, 0};
    hwp_rap2_foreach(r, rp__rap2_visit, &v);
    hwp_rap2_get_desc(r, &d);
    if (rp__rap_tab(&v, out, n, cap, c, "rects",
                    "2-D range tree (RAP over pairs): rectangles x by y, hot weight, bounds",
                    v.cap, 1, d.x_source == HWP_RAP_SRC_PC))
        hwp_rap2_foreach(r, rp__rap2_visit, &v);
}

/* An invariance table: per load, its top value's share of `count_name`
 * events and the 95% interval; extra columns after those. */
static rp_table *rp__inv_table(const rp_comp *c, rp_table *out, size_t *n, size_t cap,
                               const char *title, const char *key2, const char *count_name,
                               size_t rows) {
    rp_table *t = rp__tab(out, n, cap, c, "invariance", title, rows);
    if (!t) return NULL;
    t->key_name = "pc";
    t->key2_name = key2;
    t->pc_keyed = 1;
    t->sort = 1;
    /* a load's count repeats on each of its values' rows (co-processor) */
    if (strcmp(key2, "value")) {
        rp__sum(t, count_name, 0);
        rp__sum(t, "invariant", 0);
    } else {
        rp__col(t, count_name, 0);
        rp__col(t, "invariant", 0);
    }
    rp__col(t, "invariance", 3);
    rp__col(t, "lo", 3);
    rp__col(t, "hi", 3);
    return t;
}

static rp_row *rp__inv_row(rp_table *t, uint64_t pc, uint64_t value, uint64_t count,
                           double inv, double lo, double hi) {
    rp_row *r = &t->rows[t->n++];
    r->key = pc;
    r->key2 = value;
    r->v[0] = (double)count;
    r->v[1] = (double)(uint64_t)(inv * (double)count + 0.5);
    r->v[2] = inv;
    r->v[3] = lo;
    r->v[4] = hi;
    return r;
}

/* Stratified sampling's accumulated profile: the most invariant pcs of
 * each profile kind (Sastry, Bodik & Smith, sec. 5.3). */
static void rp__tables_strat_acc(const rp_comp *c, rp_table *out, size_t *n,
                                 size_t cap) {
    const hwp_strat_acc *a = (const hwp_strat_acc *)c->x;
    size_t total = 0, k, i;
    uint32_t kind;
    rp_table *t;
    for (kind = 0; kind <= HWP_STRAT_KIND_CALL; kind++)
        total += hwp_strat_acc_top_pcs(a, kind, NULL, 0);
    t = rp__inv_table(c, out, n, cap,
                      "invariance per pc (stratified sampling): top value's share, 95% interval",
                      "top_value", "events", total);
    if (!t) return;
    rp__sum(t, "samples", 0);
    rp__col(t, "kind", 0);
    for (kind = 0; kind <= HWP_STRAT_KIND_CALL; kind++) {
        hwp_strat_pc *p;
        k = hwp_strat_acc_top_pcs(a, kind, NULL, 0);
        p = (hwp_strat_pc *)calloc(k ? k : 1, sizeof *p);
        if (!p) continue;
        k = hwp_strat_acc_top_pcs(a, kind, p, k);
        for (i = 0; i < k && t->n < total; i++) {
            rp_row *r = rp__inv_row(t, p[i].pc, p[i].top_w, p[i].count, p[i].invariance,
                                    p[i].lo, p[i].hi);
            r->v[5] = (double)p[i].samples;
            r->v[6] = kind;
        }
        free(p);
    }
}

/* Load-value estimates, best value of each load first (Zilles & Sohi,
 * sec. 5; the baseline sampler's the same way), from `est` of the
 * co-processor or of its baseline sampler. */
typedef size_t (*rp__est_fn)(const void *x, hwp_cp_est *out, size_t cap);

static void rp__est_table(const rp_comp *c, rp_table *out, size_t *n, size_t cap,
                          rp__est_fn est) {
    size_t k = est(c->x, NULL, 0), i;
    hwp_cp_est *e;
    rp_table *t;
    if (!k || !(e = (hwp_cp_est *)calloc(k, sizeof *e))) return;
    k = est(c->x, e, k);
    t = rp__inv_table(c, out, n, cap,
                      "load-value invariance (co-processor): estimate, 95% interval", "value",
                      "samples", k);
    if (t) {
        rp__col(t, "characterised", 0);
        for (i = 0; i < k; i++)
            rp__inv_row(t, e[i].pc, e[i].value, e[i].samples, e[i].inv, e[i].lo, e[i].hi)->v[5] =
                e[i].characterised;
    }
    free(e);
}

static size_t rp__est_cp(const void *x, hwp_cp_est *out, size_t cap) {
    return hwp_cp_lvp_estimates((const hwp_cp *)x, out, cap);
}

static size_t rp__est_cp_simple(const void *x, hwp_cp_est *out, size_t cap) {
    return hwp_cp_simple_estimates((const hwp_cp_simple *)x, out, cap);
}

static void rp__tables_cp(const rp_comp *c, rp_table *out, size_t *n, size_t cap) {
    rp__est_table(c, out, n, cap, rp__est_cp);
}

static void rp__tables_cp_simple(const rp_comp *c, rp_table *out, size_t *n, size_t cap) {
    rp__est_table(c, out, n, cap, rp__est_cp_simple);
}

#define RP__ENTRY(X, header, envelope, kind, model)                                       \
    {envelope, rp__load_##X, rp__merge_##X, rp__write_##X, rp__stats_##X, rp__why_##X},
static const rp_model rp__models[] = {HWP_COMPONENTS(RP__ENTRY)};
#undef RP__ENTRY
#define RP__NMODELS (sizeof rp__models / sizeof rp__models[0])

/* The components whose reports hold per-PC tables, by envelope. */
static const struct {
    const char *name;
    void (*tables)(const rp_comp *c, rp_table *out, size_t *n, size_t cap);
} rp__tabled[] = {{"pm_table", rp__tables_pm_table}, {"strat_acc", rp__tables_strat_acc},
                  {"rap", rp__tables_rap},           {"rap2", rp__tables_rap2},
                  {"hpt", rp__tables_hpt},           {"coproc", rp__tables_cp},
                  {"coproc_simple", rp__tables_cp_simple}};

const char *rp_model_names(void) {
#define RP__NAME(X, header, envelope, kind, model) " " envelope
    return HWP_COMPONENTS(RP__NAME);
#undef RP__NAME
}

static const rp_model *rp__model(const char *name) {
    size_t i;
    for (i = 0; i < RP__NMODELS; i++)
        if (!strcmp(rp__models[i].name, name)) return &rp__models[i];
    return NULL;
}

const char *rp_comp_model(const rp_comp *c) { return c->m->name; }

void rp_comp_stats(const rp_comp *c, rp_stat4 *st) {
    memset(st, 0, sizeof *st);
    if (c && c->x) c->m->stats(c->x, st);
}

/* ---- walking a saved report ------------------------------------------------ */

/* What one file holds, before it is folded into the set. */
typedef struct rp__found {
    rp_comp comp[RP_MAXCOMP];
    size_t ncomp;
    uint64_t insns;
    double host_clock, total_cycles;
    char ov_name[12][16];
    double ov_cycles[12];
    unsigned nov;
    uint32_t *ids[2];
    size_t nids[2];
    uint64_t phase_interval;
    char path_metric[8];  /* the hosts' path_metric= ("": execution counts) */
    rp_module mod[RP_MAXMOD];
    unsigned nmod;
    rp_calls calls;
    rp_hpath *hp;
    size_t nhp;
    uint64_t hp_overflow;
    /* "timeline": the points' clock, each counter's values and name */
    uint64_t *tl_insns, *tl_val[RP_TL_MAX];
    size_t ntl, tl_n[RP_TL_MAX];
    char tl_name[RP_TL_MAX][48];
    unsigned tl_cols;
} rp__found;

typedef struct rp__walk {
    hwp_json j;
    const char *file;
    rp__found *f;
    char *why;
    size_t cap;
    size_t why_at; /* byte offset of an error found by this walker       */
    int failed;    /* an error that is not the cursor's                   */
} rp__walk;

static void rp__fail(rp__walk *w, size_t at, const char *fmt, ...) {
    char m[320];
    va_list ap;
    if (w->failed) return;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    snprintf(w->why, w->cap, "%s: byte %zu: %s", w->file, at, m);
    w->why_at = at;
    w->failed = 1;
}

static char rp__peek(hwp_json *j) {
    while (j->pos < j->n && (j->s[j->pos] == ' ' || j->s[j->pos] == '\n' ||
                             j->s[j->pos] == '\r' || j->s[j->pos] == '\t'))
        j->pos++;
    return j->pos < j->n ? j->s[j->pos] : '\0';
}

static void rp__free_comp(rp_comp *c) {
    free(c->x);
    c->x = NULL;
}

/* One model report at [at, end): its model's reader. */
static void rp__envelope(rp__walk *w, const char *model, size_t name_at, size_t at,
                         size_t end, const char *path) {
    const rp_model *m = rp__model(model);
    rp__found *f = w->f;
    rp_comp *c;
    hwp_json_err err;
    char why[256];
    size_t i;
    if (!m) {
        rp__fail(w, name_at, "unknown model \"%s\" (this reader knows:%s)", model,
                 rp_model_names());
        return;
    }
    if (f->ncomp >= RP_MAXCOMP) {
        rp__fail(w, at, "more than %d model reports in one file", RP_MAXCOMP);
        return;
    }
    c = &f->comp[f->ncomp];
    memset(c, 0, sizeof *c);
    c->m = m;
    snprintf(c->path, sizeof c->path, "%s", path[0] ? path : model);
    for (i = 0; i < f->ncomp; i++)
        if (f->comp[i].m == m) c->ordinal++;
    err.why = NULL;
    err.offset = 0;
    why[0] = '\0';
    if (m->load(&c->x, w->j.s + at, end - at, &err, why, sizeof why) != 0) {
        if (err.why)
            rp__fail(w, at + err.offset, "%s report at %s: %s", model, c->path, err.why);
        else
            rp__fail(w, at, "%s report at %s: %s", model, c->path, why);
        return;
    }
    /* the first phase detector's interval: the clock of phase_ids, read
     * from its desc, which the report writes with the defaults filled in */
    if (!strcmp(model, "phase") && !f->phase_interval) {
        hwp_phase_desc d;
        memset(&d, 0, sizeof d);
        if (hwp_phase_read_desc(&d, w->j.s + at, end - at, &err) == HWP_OK)
            f->phase_interval = d.interval;
    }
    f->ncomp++;
}

static void rp__ids(rp__walk *w, int which) {
    hwp_json *j = &w->j;
    uint64_t v;
    size_t cap = 0;
    if (!hwp_json_array(j)) return;
    while (hwp_json_next(j)) {
        if (!hwp_json_u64(j, &v)) return;
        if (w->f->nids[which] >= cap) {
            uint32_t *p;
            cap = cap ? 2 * cap : 256;
            p = (uint32_t *)realloc(w->f->ids[which], cap * sizeof *p);
            if (!p) {
                rp__fail(w, j->pos, "out of memory");
                return;
            }
            w->f->ids[which] = p;
        }
        w->f->ids[which][w->f->nids[which]++] = (uint32_t)v;
    }
}

/* A JSON array of numbers into a fresh *out (*n of them). */
static void rp__u64s(rp__walk *w, uint64_t **out, size_t *n) {
    hwp_json *j = &w->j;
    size_t cap = 0;
    uint64_t v;
    if (!hwp_json_array(j)) return;
    while (hwp_json_next(j)) {
        if (!hwp_json_u64(j, &v)) return;
        if (*n >= cap) {
            uint64_t *p = (uint64_t *)realloc(*out, (cap = cap ? 2 * cap : 256) * sizeof *p);
            if (!p) {
                rp__fail(w, j->pos, "out of memory");
                return;
            }
            *out = p;
        }
        (*out)[(*n)++] = v;
    }
}

/* The hosts' counters over time: {"every":N,"insns":[...],
 * "counters":{"rap.splits":[...],...}} (a counter past RP_TL_MAX is
 * left out). */
static void rp__timeline(rp__walk *w) {
    hwp_json *j = &w->j;
    rp__found *f = w->f;
    char key[48];
    if (!hwp_json_object(j)) return;
    while (hwp_json_member(j, key, sizeof key)) {
        if (!strcmp(key, "insns") && rp__peek(j) == '[') {
            rp__u64s(w, &f->tl_insns, &f->ntl);
        } else if (!strcmp(key, "counters") && rp__peek(j) == '{') {
            hwp_json_object(j);
            while (hwp_json_member(j, key, sizeof key)) {
                if (f->tl_cols == RP_TL_MAX || rp__peek(j) != '[') {
                    hwp_json_skip(j);
                    continue;
                }
                memcpy(f->tl_name[f->tl_cols], key, sizeof key);
                rp__u64s(w, &f->tl_val[f->tl_cols], &f->tl_n[f->tl_cols]);
                f->tl_cols++;
            }
        } else {
            hwp_json_skip(j);
        }
    }
}

/* hwp_cost_write_json: total_cycles, host_clock, per-model cycles. */
static void rp__overhead(rp__walk *w) {
    hwp_json *j = &w->j;
    char key[64];
    if (!hwp_json_object(j)) return;
    while (hwp_json_member(j, key, sizeof key)) {
        if (!strcmp(key, "total_cycles")) {
            hwp_json_f64(j, &w->f->total_cycles);
        } else if (!strcmp(key, "host_clock")) {
            hwp_json_f64(j, &w->f->host_clock);
        } else if (!strcmp(key, "models") && rp__peek(j) == '{') {
            char name[16];
            hwp_json_object(j);
            while (hwp_json_member(j, name, sizeof name)) {
                double v = 0;
                if (!hwp_json_f64(j, &v)) return;
                if (w->f->nov < 12) {
                    snprintf(w->f->ov_name[w->f->nov], sizeof w->f->ov_name[0], "%s", name);
                    w->f->ov_cycles[w->f->nov++] = v;
                }
            }
        } else {
            hwp_json_skip(j);
        }
    }
}

/* "modules":[{"path":"/bin/gzip","lo":"0x..","hi":"0x..","bias":"0x.."}],
 * bias optional (docs/report-format.md) */
static void rp__modules(rp__walk *w) {
    hwp_json *j = &w->j;
    char key[64];
    if (!hwp_json_array(j)) return;
    while (hwp_json_next(j)) {
        rp_module m;
        memset(&m, 0, sizeof m);
        if (!hwp_json_object(j)) return;
        while (hwp_json_member(j, key, sizeof key)) {
            if (!strcmp(key, "path")) {
                hwp_json_str(j, m.path, sizeof m.path);
            } else if (!strcmp(key, "lo")) {
                hwp_json_u64(j, &m.lo);
            } else if (!strcmp(key, "hi")) {
                hwp_json_u64(j, &m.hi);
            } else if (!strcmp(key, "bias")) {
                m.have_bias = hwp_json_u64(j, &m.bias);

            } else {
                hwp_json_skip(j);
            }
        }
        if (w->f->nmod < RP_MAXMOD) w->f->mod[w->f->nmod++] = m;
    }
}

/* Room for one more of n items of size sz in *p (capacity *cap). */
static int rp__grow(rp__walk *w, void **p, size_t n, size_t *cap, size_t sz) {
    void *q;
    if (n < *cap) return 0;
    *cap = *cap ? 2 * *cap : 256;
    q = realloc(*p, *cap * sz);
    if (!q) {
        rp__fail(w, w->j.pos, "out of memory");
        return -1;
    }
    *p = q;
    return 0;
}

static void rp__hp_free(rp_hpath *p, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) free(p[i].blk);
    free(p);
}

/* "hot_blocks":{"paths":[{"start":"0x..","shape":"0x..","n":N,
 *   "blocks":["0x..",...]} or {...,"error":"block not in map"}],
 *   "capacity":N,"blocks":N,"overflow":N,"conflicts":N,"undecoded":N}
 * (examples/common/hwx_blocks.c; docs/report-format.md) */
static void rp__hot_blocks(rp__walk *w) {
    hwp_json *j = &w->j;
    rp__found *f = w->f;
    char key[32];
    size_t cap = f->nhp;
    if (!hwp_json_object(j)) return;
    while (!w->failed && hwp_json_member(j, key, sizeof key)) {
        if (!strcmp(key, "overflow")) {
            uint64_t v = 0;
            hwp_json_u64(j, &v);
            f->hp_overflow += v;
            continue;
        }
        if (strcmp(key, "paths") || !hwp_json_array(j)) {
            hwp_json_skip(j);
            continue;
        }
        while (!w->failed && hwp_json_next(j)) {
            rp_hpath p;
            size_t pcap = 0, at = j->pos;
            memset(&p, 0, sizeof p);
            if (!hwp_json_object(j)) return;
            while (hwp_json_member(j, key, sizeof key)) {
                if (!strcmp(key, "start")) {
                    hwp_json_u64(j, &p.start);
                } else if (!strcmp(key, "shape")) {
                    hwp_json_u64(j, &p.shape);
                } else if (!strcmp(key, "error")) {
                    hwp_json_str(j, p.why, sizeof p.why);
                } else if (!strcmp(key, "blocks") && hwp_json_array(j)) {
                    while (!w->failed && hwp_json_next(j)) {
                        uint64_t v = 0;
                        if (!hwp_json_u64(j, &v) ||
                            rp__grow(w, (void **)&p.blk, p.n, &pcap, sizeof *p.blk))
                            break;
                        p.blk[p.n++] = v;
                    }
                } else {
                    hwp_json_skip(j);
                }
            }
            if (!j->why && !w->failed && !p.n && !p.why[0])
                rp__fail(w, at, "hot_blocks: a path with neither blocks nor an error");
            if (j->why || w->failed ||
                rp__grow(w, (void **)&f->hp, f->nhp, &cap, sizeof *f->hp)) {
                free(p.blk);
                return;
            }
            f->hp[f->nhp++] = p;
        }
    }
}

/* "coproc_contexts":{"depth":4,"capacity":N,"stored":N,"overflow":N,
 *   "lost":N,"contexts":[{"key":"0x..","sites":["0x..",...],"callee":"0x..",
 *                "deeper":0,"stale":0}]} (examples/common/hwx_ctx.c) */
static void rp__contexts(rp__walk *w) {
    hwp_json *j = &w->j;
    rp_calls *c = &w->f->calls;
    char key[32];
    size_t cap = 0;
    uint64_t v;
    if (!hwp_json_object(j)) return;
    c->have_ctx = 1;
    while (!w->failed && hwp_json_member(j, key, sizeof key)) {
        if (!strcmp(key, "overflow")) {
            hwp_json_u64(j, &c->ctx_overflow);
        } else if (!strcmp(key, "lost")) {
            hwp_json_u64(j, &c->ctx_lost);
        } else if (!strcmp(key, "contexts") && hwp_json_array(j)) {
            while (!w->failed && hwp_json_next(j)) {
                rp_ctx x;
                memset(&x, 0, sizeof x);
                if (!hwp_json_object(j)) return;
                while (hwp_json_member(j, key, sizeof key)) {
                    size_t at = j->pos;
                    if (!strcmp(key, "key")) {
                        hwp_json_u64(j, &x.key);
                    } else if (!strcmp(key, "callee")) {
                        hwp_json_u64(j, &x.callee);
                    } else if (!strcmp(key, "deeper") && hwp_json_u64(j, &v)) {
                        x.deeper = v != 0;
                    } else if (!strcmp(key, "stale") && hwp_json_u64(j, &v)) {
                        x.stale = v != 0;
                    } else if (!strcmp(key, "sites") && hwp_json_array(j)) {
                        while (hwp_json_next(j)) {
                            if (x.n == RP_CTX_SITES) {
                                rp__fail(w, at, "a context with more than %d call sites",
                                         RP_CTX_SITES);
                                return;
                            }
                            if (!hwp_json_u64(j, &x.site[x.n++])) return;
                        }
                    } else {
                        hwp_json_skip(j);
                    }
                }
                if (j->why || rp__grow(w, (void **)&c->ctx, c->nctx, &cap, sizeof x)) return;
                c->ctx[c->nctx++] = x;
            }
        } else {
            hwp_json_skip(j);
        }
    }
}

/* "call_stacks":{"interval":N,"samples":N,"dropped":N,
 *   "stacks":[{"frames":["outer",...,"inner"],"count":N}]} (the Lua host) */
static void rp__stacks(rp__walk *w) {
    hwp_json *j = &w->j;
    rp_calls *c = &w->f->calls;
    char key[32], name[256];
    size_t cap = 0;
    if (!hwp_json_object(j)) return;
    c->have_stk = 1;
    while (!w->failed && hwp_json_member(j, key, sizeof key)) {
        if (!strcmp(key, "dropped")) {
            hwp_json_u64(j, &c->stk_dropped);
        } else if (!strcmp(key, "stacks") && hwp_json_array(j)) {
            while (!w->failed && hwp_json_next(j)) {
                rp_stack x;
                size_t len = 0, k;
                char *fr = NULL;
                x.count = 0;
                if (!hwp_json_object(j)) return;
                while (hwp_json_member(j, key, sizeof key)) {
                    if (!strcmp(key, "count")) {
                        hwp_json_u64(j, &x.count);
                    } else if (!strcmp(key, "frames") && hwp_json_array(j)) {
                        while (hwp_json_next(j)) {
                            char *q;
                            if (!hwp_json_str(j, name, sizeof name)) break;
                            q = (char *)realloc(fr, len + strlen(name) + 2);
                            if (!q) {
                                free(fr);
                                rp__fail(w, j->pos, "out of memory");
                                return;
                            }
                            fr = q;
                            if (len) fr[len++] = ';';
                            /* ';' separates frames in the folded format */
                            for (k = 0; name[k]; k++) fr[len++] = name[k] == ';' ? ':' : name[k];
                            fr[len] = '\0';
                        }
                    } else {
                        hwp_json_skip(j);
                    }
                }
                if (j->why || !fr || rp__grow(w, (void **)&c->stk, c->nstk, &cap, sizeof x)) {
                    if (!j->why && !fr) rp__fail(w, j->pos, "call_stacks: a stack without frames");
                    free(fr);
                    return;
                }
                x.frames = fr;
                c->stk[c->nstk++] = x;
            }
        } else {
            hwp_json_skip(j);
        }
    }
}

static void rp__calls_free(rp_calls *c) {
    size_t i;
    for (i = 0; i < c->nstk; i++) free(c->stk[i].frames);
    free(c->stk);
    free(c->ctx);
    memset(c, 0, sizeof *c);
}

/* k items of size sz from src after the n of *dst. */
static int rp__append(void **dst, size_t *n, const void *src, size_t k, size_t sz) {
    unsigned char *p;
    if (!k) return 0;
    p = (unsigned char *)realloc(*dst, (*n + k) * sz);
    if (!p) return -1;
    memcpy(p + *n * sz, src, k * sz);
    *dst = p;
    *n += k;
    return 0;
}

/* *p with room for n items of size sz (n 0: left as it is). */
static int rp__reserve(void **p, size_t n, size_t sz) {
    void *q;
    if (!n) return 0;
    q = realloc(*p, n * sz);
    if (!q) return -1;
    *p = q;
    return 0;
}

/* Where an entry of hash h sits in an open-addressing index of dst's
 * entries (slots hold index + 1; 0 is empty): the slot holding an entry
 * that same() says equals the one sought, or the empty slot ending the
 * probe. */
typedef int (*rp__same_fn)(const void *dst, size_t i, const void *want);

static size_t *rp__probe(size_t *slot, size_t mask, uint64_t h, const void *dst, rp__same_fn same,
                         const void *want) {
    size_t at = (size_t)h & mask;
    while (slot[at] && !same(dst, slot[at] - 1, want)) at = (at + 1) & mask;
    return &slot[at];
}

static uint64_t rp__hash(uint64_t h, const unsigned char *p, size_t n) {
    while (n--) h = (h ^ *p++) * 1099511628211ull; /* FNV-1a */
    return h;
}

static uint64_t rp__hash_ctx(const rp_ctx *c) {
    return rp__hash(14695981039346656037ull, (const unsigned char *)&c->key, sizeof c->key);
}

static uint64_t rp__hash_stk(const rp_stack *k) {
    return rp__hash(14695981039346656037ull, (const unsigned char *)k->frames, strlen(k->frames));
}

static int rp__same_ctx(const void *d, size_t i, const void *w) {
    return ((const rp_ctx *)d)[i].key == ((const rp_ctx *)w)->key;
}

static int rp__same_stk(const void *d, size_t i, const void *w) {
    return !strcmp(((const rp_stack *)d)[i].frames, ((const rp_stack *)w)->frames);
}

/* src's profiles folded into dst's, so the merged state grows with the
 * distinct contexts and stacks, not with the files: a context key dst's
 * dictionary has keeps dst's entry (a key names one context; the export
 * looks contexts up by key), a stack dst has adds its count, the others
 * are appended. src is left empty. */
static int rp__calls_add(rp_calls *dst, rp_calls *src) {
    size_t most = (dst->nctx + src->nctx > dst->nstk + src->nstk ? dst->nctx + src->nctx
                                                                   : dst->nstk + src->nstk),
           cap = 16, i, n;
    size_t *slot, *at;
    while (cap < 2 * most) cap *= 2;
    /* room for all of src at once: one realloc per file, not per entry */
    if (rp__reserve((void **)&dst->ctx, dst->nctx + src->nctx, sizeof *dst->ctx) ||
        rp__reserve((void **)&dst->stk, dst->nstk + src->nstk, sizeof *dst->stk))
        return -1;
    slot = (size_t *)calloc(cap, sizeof *slot);
    if (!slot) return -1;
    for (i = 0; i < dst->nctx; i++)
        *rp__probe(slot, cap - 1, rp__hash_ctx(&dst->ctx[i]), dst->ctx, rp__same_ctx,
                   &dst->ctx[i]) = i + 1;
    for (i = 0, n = dst->nctx; i < src->nctx; i++) {
        at = rp__probe(slot, cap - 1, rp__hash_ctx(&src->ctx[i]), dst->ctx, rp__same_ctx,
                       &src->ctx[i]);
        if (*at) continue;
        dst->ctx[dst->nctx++] = src->ctx[i];
        *at = ++n;
    }
    memset(slot, 0, cap * sizeof *slot);
    for (i = 0; i < dst->nstk; i++)
        *rp__probe(slot, cap - 1, rp__hash_stk(&dst->stk[i]), dst->stk, rp__same_stk,
                   &dst->stk[i]) = i + 1;
    for (i = 0, n = dst->nstk; i < src->nstk; i++) {
        at = rp__probe(slot, cap - 1, rp__hash_stk(&src->stk[i]), dst->stk, rp__same_stk,
                       &src->stk[i]);
        if (*at) {
            dst->stk[*at - 1].count += src->stk[i].count;
            continue;
        }
        dst->stk[dst->nstk++] = src->stk[i];
        src->stk[i].frames = NULL; /* dst's now */
        *at = ++n;
    }
    free(slot);
    dst->ctx_overflow += src->ctx_overflow;
    dst->ctx_lost += src->ctx_lost;
    dst->have_ctx |= src->have_ctx;
    dst->stk_dropped += src->stk_dropped;
    dst->have_stk |= src->have_stk;
    return 0;
}

static void rp__value(rp__walk *w, const char *name, char *path, size_t plen, unsigned depth);

/* name: the member whose value the object is ("" in an array, at the top). */
static void rp__object(rp__walk *w, const char *name, char *path, size_t plen, unsigned depth) {
    hwp_json *j = &w->j;
    char key[64];
    size_t at = j->pos, klen;
    int first = 1;
    if (!hwp_json_object(j)) return;
    while (!w->failed && hwp_json_member(j, key, sizeof key)) {
        if (first && !strcmp(key, "model")) {
            char name[40];
            size_t name_at;
            rp__peek(j);
            name_at = j->pos;
            if (!hwp_json_str(j, name, sizeof name)) return;
            while (hwp_json_member(j, key, sizeof key))
                if (!hwp_json_skip(j)) return;
            if (j->why) return;
            rp__envelope(w, name, name_at, at, j->pos, path);
            return;
        }
        first = 0;
        if (depth <= 2 && !strcmp(key, "instructions") && rp__peek(j) != '{') {
            hwp_json_u64(j, &w->f->insns);
            continue;
        }
        if ((!strcmp(key, "overhead") || !strcmp(key, "cost")) && rp__peek(j) == '{') {
            rp__overhead(w);
            continue;
        }
        if ((!strcmp(key, "phase_ids") || !strcmp(key, "bbv_ids")) && rp__peek(j) == '[') {
            rp__ids(w, key[0] == 'b');
            continue;
        }
        if (!strcmp(key, "modules") && rp__peek(j) == '[') {
            rp__modules(w);
            continue;
        }
        if (depth == 0 && !strcmp(key, "timeline") && rp__peek(j) == '{') {
            rp__timeline(w);
            continue;
        }
        /* pathprof's path_metric, where docs/report-format.md puts it: the
         * hosts' "pathprof" object, a merged report's top level */
        if (!strcmp(key, "metric") && rp__peek(j) == '"' &&
            (!strcmp(name, "pathprof") || depth == 0)) {
            hwp_json_str(j, w->f->path_metric, sizeof w->f->path_metric);
            /* execution counts, as in a report from before path_metric= */
            if (!strcmp(w->f->path_metric, "paths")) w->f->path_metric[0] = 0;
            continue;
        }
        if (!strcmp(key, "hot_blocks") && rp__peek(j) == '{') {
            rp__hot_blocks(w);
            continue;
        }
        if (!strcmp(key, "coproc_contexts") && rp__peek(j) == '{') {
            rp__contexts(w);
            continue;
        }
        if (!strcmp(key, "call_stacks") && rp__peek(j) == '{') {
            rp__stacks(w);
            continue;
        }
        klen = strlen(key);
        if (plen + klen + 2 < 96) {
            if (plen) path[plen] = '.';
            memcpy(path + plen + (plen ? 1 : 0), key, klen + 1);
            rp__value(w, key, path, plen + klen + (plen ? 1 : 0), depth + 1);
            path[plen] = '\0';
        } else {
            rp__value(w, key, path, plen, depth + 1);
        }
    }
}

static void rp__value(rp__walk *w, const char *name, char *path, size_t plen, unsigned depth) {
    char c = rp__peek(&w->j);
    if (w->failed) return;
    if (c == '{') {
        rp__object(w, name, path, plen, depth);
    } else if (c == '[') {
        if (!hwp_json_array(&w->j)) return;
        while (!w->failed && hwp_json_next(&w->j)) rp__value(w, "", path, plen, depth + 1);
    } else {
        hwp_json_skip(&w->j);
    }
}

static void rp__found_free(rp__found *f) {
    size_t i;
    for (i = 0; i < f->ncomp; i++) rp__free_comp(&f->comp[i]);
    free(f->ids[0]);
    free(f->ids[1]);
    free(f->tl_insns);
    for (i = 0; i < f->tl_cols; i++) free(f->tl_val[i]);
    rp__calls_free(&f->calls);
    rp__hp_free(f->hp, f->nhp);
    memset(f, 0, sizeof *f);
}

/* A file's counters over time into the set's when they are the same
 * counters as the files' before (the first file with any sets them);
 * tl_end gets the file's end either way. */
static int rp__tl_add(rp_set *s, const rp__found *f) {
    size_t k = s->files - 1, p;
    unsigned c;
    int ok = f->ntl > 0;
    for (c = 0; ok && c < f->tl_cols; c++) ok = f->tl_n[c] == f->ntl;
    if (ok && !s->tl_cols) {
        s->tl_cols = f->tl_cols;
        memcpy(s->tl_names, f->tl_name, sizeof s->tl_names);
    }
    ok = ok && f->tl_cols == s->tl_cols;
    for (c = 0; ok && c < f->tl_cols; c++) ok = !strcmp(f->tl_name[c], s->tl_names[c]);
    for (p = 0; ok && p < f->ntl; p++) {
        uint64_t row[1 + RP_TL_MAX];
        size_t n = s->ntl;
        row[0] = f->tl_insns[p];
        for (c = 0; c < f->tl_cols; c++) row[1 + c] = f->tl_val[c][p];
        if (rp__append((void **)&s->tl, &n, row, 1, (1 + s->tl_cols) * sizeof(uint64_t)))
            return -1;
        s->ntl = n;
    }
    return rp__append((void **)&s->tl_end, &k, &s->ntl, 1, sizeof(size_t));
}

void rp_set_init(rp_set *s) { memset(s, 0, sizeof *s); }

void rp_set_free(rp_set *s) {
    size_t i;
    for (i = 0; i < s->ncomp; i++) rp__free_comp(&s->comp[i]);
    free(s->phase_ids);
    free(s->bbv_ids);
    free(s->phase_end);
    free(s->bbv_end);
    free(s->tl);
    free(s->tl_end);
    rp__calls_free(&s->calls);
    rp__hp_free(s->hp, s->nhp);
    memset(s, 0, sizeof *s);
}

int rp_add_buf(rp_set *s, const char *file, const char *buf, size_t n) {
    rp__walk w;
    rp__found *f = (rp__found *)calloc(1, sizeof *f);
    char path[96] = "";
    size_t i, k, k2;
    if (!f) {
        snprintf(s->why, sizeof s->why, "%s: out of memory", file);
        return -1;
    }
    memset(&w, 0, sizeof w);
    hwp_json_init(&w.j, buf, n);
    w.file = file;
    w.f = f;
    w.why = s->why;
    w.cap = sizeof s->why;
    if (rp__peek(&w.j) != '{') {
        rp__fail(&w, w.j.pos, n ? "not a report: expected '{'" : "empty file");
    } else {
        rp__value(&w, "", path, 0, 0);
        if (!w.failed) hwp_json_end(&w.j);
        if (!w.failed && w.j.why)
            rp__fail(&w, w.j.err_pos, "%s", w.j.why);
        if (!w.failed && f->ncomp == 0)
            rp__fail(&w, 0, "no model report in it (an object beginning with \"model\")");
    }
    if (w.failed) goto fail;
    if (s->files) {
        /* Same configuration: the same models in the same places. */
        if (f->ncomp != s->ncomp) {
            snprintf(s->why, sizeof s->why,
                     "%s: holds %zu model reports, %s holds %zu: not the same configuration",
                     file, f->ncomp, s->first, s->ncomp);
            goto fail;
        }
        if (strcmp(f->path_metric, s->path_metric)) {
            snprintf(s->why, sizeof s->why, "%s: path_metric is %s, %s's is %s", file,
                     f->path_metric[0] ? f->path_metric : "paths", s->first,
                     s->path_metric[0] ? s->path_metric : "paths");
            goto fail;
        }
        for (i = 0; i < f->ncomp; i++)
            if (f->comp[i].m != s->comp[i].m) {
                snprintf(s->why, sizeof s->why,
                         "%s: model report %zu is %s (at %s), %s has %s there", file, i + 1,
                         f->comp[i].m->name, f->comp[i].path, s->first, s->comp[i].m->name);
                goto fail;
            }
        for (i = 0; i < f->ncomp; i++) {
            rp_comp *d = &s->comp[i];
            if (d->m->merge(d->x, f->comp[i].x) != HWP_OK) {
                /* the merge names the first differing field */
                snprintf(s->why, sizeof s->why, "%s: %s report at %s does not merge with %s's: %s",
                         file, d->m->name, f->comp[i].path, s->first,
                         d->m->why(d->x));
                goto fail;
            }
        }
    } else {
        for (i = 0; i < f->ncomp; i++) {
            s->comp[i] = f->comp[i];
            f->comp[i].x = NULL;
        }
        s->ncomp = f->ncomp;
        s->phase_interval = f->phase_interval;
        snprintf(s->first, sizeof s->first, "%s", file);
        memcpy(s->path_metric, f->path_metric, sizeof s->path_metric);
    }
    s->files++;
    s->insns += f->insns;
    s->host_clock += f->host_clock;
    s->total_cycles += f->total_cycles;
    for (i = 0; i < f->nov; i++) {
        for (k = 0; k < s->nov; k++)
            if (!strcmp(s->ov_name[k], f->ov_name[i])) break;
        if (k == s->nov) {
            if (s->nov >= 12) continue;
            memcpy(s->ov_name[s->nov++], f->ov_name[i], sizeof f->ov_name[i]);
        }
        s->ov_cycles[k] += f->ov_cycles[i];
    }
    for (i = 0; i < f->nmod && s->nmod < RP_MAXMOD; i++) {
        for (k = 0; k < s->nmod; k++)
            if (!strcmp(s->mod[k].path, f->mod[i].path) && s->mod[k].lo == f->mod[i].lo)
                break;
        if (k == s->nmod) s->mod[s->nmod++] = f->mod[i];
    }
    k = k2 = s->files - 1; /* the files before this one */
    if (rp__append((void **)&s->phase_ids, &s->nphase, f->ids[0], f->nids[0], sizeof(uint32_t)) ||
        rp__append((void **)&s->bbv_ids, &s->nbbv, f->ids[1], f->nids[1], sizeof(uint32_t)) ||
        rp__append((void **)&s->phase_end, &k, &s->nphase, 1, sizeof(size_t)) ||
        rp__append((void **)&s->bbv_end, &k2, &s->nbbv, 1, sizeof(size_t)) ||
        rp__tl_add(s, f) || rp__calls_add(&s->calls, &f->calls)) {
        snprintf(s->why, sizeof s->why, "%s: out of memory", file);
        rp__found_free(f);
        free(f);
        return -1;
    }
    /* decoded paths: a path another file already decoded keeps that list
     * (the same code decodes the same way); one it did not gets this one */
    s->hp_overflow += f->hp_overflow;
    for (i = 0; i < f->nhp; i++) {
        rp_hpath *old = (rp_hpath *)rp_hot_path(s, f->hp[i].start, f->hp[i].shape);
        if (old && (old->n || !f->hp[i].n)) continue;
        if (old) {
            free(old->blk);
            *old = f->hp[i];
        } else if (rp__append((void **)&s->hp, &s->nhp, &f->hp[i], 1, sizeof *s->hp)) {
            continue;
        }
        f->hp[i].blk = NULL;
    }
    rp__found_free(f);
    free(f);
    return 0;
fail:
    rp__found_free(f);
    free(f);
    return -1;
}

int rp_add_file(rp_set *s, const char *file) {
    FILE *fp = fopen(file, "rb");
    struct stat st;
    char *buf = NULL;
    size_t n = 0, cap = 0, got;
    int rc;
    if (!fp) {
        snprintf(s->why, sizeof s->why, "%s: cannot open: %s", file, strerror(errno));
        return -1;
    }
    /* A file's own size, so the text is read into one block of that
     * size: a doubling buffer would hold up to twice the report while a
     * merge of many files holds only one at a time. One byte more finds
     * the end without another block; the size is only a hint (stat, not
     * fstat: fileno is POSIX, and the fuzz build is plain C99). */
    if (stat(file, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
        (uint64_t)st.st_size < SIZE_MAX / 2)
        cap = (size_t)st.st_size + 1;
    for (;;) {
        if (n == cap || !buf) {
            char *p;
            cap = !buf ? (cap ? cap : 65536) : 2 * cap;
            p = (char *)realloc(buf, cap);
            if (!p) {
                free(buf);
                fclose(fp);
                snprintf(s->why, sizeof s->why, "%s: out of memory", file);
                return -1;
            }
            buf = p;
        }
        got = fread(buf + n, 1, cap - n, fp);
        n += got;
        if (got == 0) break;
    }
    if (ferror(fp)) {
        snprintf(s->why, sizeof s->why, "%s: byte %zu: read error", file, n);
        free(buf);
        fclose(fp);
        return -1;
    }
    fclose(fp);
    rc = rp_add_buf(s, file, buf, n);
    free(buf);
    return rc;
}

/* ---- tables of the whole set ------------------------------------------------ */

const rp_hpath *rp_hot_path(const rp_set *s, uint64_t start, uint64_t shape) {
    size_t i;
    for (i = 0; i < s->nhp; i++)
        if (s->hp[i].start == start && s->hp[i].shape == shape) return &s->hp[i];
    return NULL;
}

size_t rp_tables(const rp_set *s, rp_table *out, size_t cap) {
    size_t n = 0, i, k;
    rp_table *t;
    for (i = 0; i < s->ncomp; i++)
        for (k = 0; k < sizeof rp__tabled / sizeof rp__tabled[0]; k++)
            if (!strcmp(rp__tabled[k].name, s->comp[i].m->name))
                rp__tabled[k].tables(&s->comp[i], out, &n, cap);
    /* the HPT's accumulators hold the hosts' path_metric, when not counts */
    for (i = 0; i < n && s->path_metric[0]; i++)
        if (out[i].key2_name && !strcmp(out[i].key2_name, "shape")) out[i].col[0] = s->path_metric;
    /* hot path rows: the blocks the host decoded them to */
    for (i = 0; i < n && s->nhp; i++)
        for (k = 0; out[i].key2_name && !strcmp(out[i].key2_name, "shape") && k < out[i].n; k++)
            out[i].rows[k].path = rp_hot_path(s, out[i].rows[k].key, out[i].rows[k].key2);
    /* The modelled overhead per model (hwp_cost), when the host wrote it. */
    if (s->nov && n < cap) {
        t = &out[n];
        memset(t, 0, sizeof *t);
        t->rows = (rp_row *)calloc(s->nov, sizeof(rp_row));
        if (t->rows) {
            snprintf(t->name, sizeof t->name, "overhead");
            t->title = "modelled hardware overhead per model (cycles charged to the host)";
            t->key_name = "model";
            rp__col(t, "cycles", 0);
            rp__col(t, "pct_of_host", 3);
            for (i = 0; i < s->nov; i++) {
                t->rows[i].key = i;
                t->rows[i].label = s->ov_name[i];
                t->rows[i].v[0] = s->ov_cycles[i];
                t->rows[i].v[1] =
                    s->host_clock > 0 ? 100.0 * s->ov_cycles[i] / s->host_clock : 0.0;
            }
            t->n = s->nov;
            n++;
        }
    }
    if ((s->nphase || s->nbbv) && n < cap) {
        size_t k = s->nphase > s->nbbv ? s->nphase : s->nbbv;
        t = &out[n];
        memset(t, 0, sizeof *t);
        t->rows = (rp_row *)calloc(k, sizeof(rp_row));
        if (t->rows) {
            snprintf(t->name, sizeof t->name, "phases");
            t->title = "phase per interval: path detector and BBV detector";
            t->key_name = "interval";
            rp__col(t, "path_phase", 0);
            rp__col(t, "bbv_phase", 0);
            for (i = 0; i < k; i++) {
                t->rows[i].key = i;
                t->rows[i].v[0] = i < s->nphase ? s->phase_ids[i] : -1.0;
                t->rows[i].v[1] = i < s->nbbv ? s->bbv_ids[i] : -1.0;
            }
            t->n = k;
            t->sort = RP_MAXCOL; /* keep interval order */
            n++;
        }
    }
    return n;
}

void rp_tables_free(rp_table *t, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) {
        free(t[i].rows);
        t[i].rows = NULL;
    }
}

static unsigned rp__sort_col;

static int rp__cmp(const void *a, const void *b) {
    const rp_row *x = (const rp_row *)a, *y = (const rp_row *)b;
    if (rp__sort_col < RP_MAXCOL) {
        if (x->v[rp__sort_col] > y->v[rp__sort_col]) return -1;
        if (x->v[rp__sort_col] < y->v[rp__sort_col]) return 1;
    }
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    if (x->key2 != y->key2) return x->key2 < y->key2 ? -1 : 1;
    return 0;
}

void rp_table_sort(rp_table *t) {
    rp__sort_col = t->sort;
    if (t->n > 1) qsort(t->rows, t->n, sizeof *t->rows, rp__cmp);
}

size_t rp_cp_contexts(const rp_set *s, uint64_t **kv) {
    size_t i, n = 0, k, j;
    *kv = NULL;
    for (i = 0; i < s->ncomp; i++) {
        hwp_cp_ctx *c;
        uint64_t *p;
        if (strcmp(s->comp[i].m->name, "coproc")) continue;
        k = hwp_cp_callstack_contexts((const hwp_cp *)s->comp[i].x, NULL, 0);
        if (!k) continue;
        c = (hwp_cp_ctx *)calloc(k, sizeof *c);
        p = (uint64_t *)realloc(*kv, 2 * (n + k) * sizeof *p);
        if (!c || !p) {
            free(c);
            free(p ? p : *kv);
            *kv = NULL;
            return 0;
        }
        *kv = p;
        k = hwp_cp_callstack_contexts((const hwp_cp *)s->comp[i].x, c, k);
        for (j = 0; j < k; j++) {
            p[2 * (n + j)] = c[j].key;
            p[2 * (n + j) + 1] = c[j].events;
        }
        n += k;
        free(c);
    }
    return n;
}

/* ---- detail, JSON, SVG ------------------------------------------------------ */

static void rp__est(FILE *f, const char *what, const hwp_pm_est *e) {
    fprintf(f, "    %-10s estimate %.0f  95%% interval [%.0f, %.0f]  samples %llu  "
               "interval %.1f%s\n",
            what, e->value, e->lo, e->hi, (unsigned long long)e->samples, e->interval,
            e->enough ? "" : "  (below the advised minimum of samples)");
}

void rp_detail(const rp_set *s, uint64_t key, FILE *f) {
    size_t i;
    int said = 0;
    for (i = 0; i < s->ncomp; i++) {
        const rp_comp *c = &s->comp[i];
        const char *m = c->m->name;
        if (!strcmp(m, "pm_table")) {
            const hwp_pm_table *t = (const hwp_pm_table *)c->x;
            const hwp_pm_entry *e = hwp_pm_table_find(t, key);
            hwp_pm_est est;
            unsigned j;
            if (!e) continue;
            fprintf(f, "  %s (%s): ProfileMe samples of 0x%llx\n", m, c->path,
                    (unsigned long long)key);
            est = hwp_pm_table_estimate(t, e, HWP_PM_PROP_SAMPLES, 1.96);
            rp__est(f, "fetches", &est);
            est = hwp_pm_table_estimate(t, e, HWP_PM_PROP_RETIRED, 1.96);
            rp__est(f, "retired", &est);
            est = hwp_pm_latency_total(t, e, 1.96);
            rp__est(f, "latency", &est);
            est = hwp_pm_table_estimate(t, e, HWP_PM_PROP_EVENT(HWP_EV_DCMISS), 1.96);
            rp__est(f, "dcmiss", &est);
            fprintf(f, "    wasted issue slots %.1f, ipc near %.3f\n",
                    hwp_pm_wasted_slots(t, e), hwp_pm_ipc_near(t, e));
            fprintf(f, "    latency by stage (estimated cycles):");
            for (j = 0; j < HWP_PM_LAT_COUNT; j++)
                fprintf(f, " %s %.0f", rp__stage[j] + 4,
                        hwp_pm_table_interval(t) * (double)e->lat_sum[j]);
            fprintf(f, "\n");
            said = 1;
        } else if (!strcmp(m, "rap")) {
            const hwp_rap *r = (const hwp_rap *)c->x;
            uint64_t lo = 0, hi = 0;
            hwp_rap_stats st;
            if (hwp_rap_estimate(r, key, key, &lo, &hi) != HWP_OK) continue;
            hwp_rap_get_stats(r, &st);
            fprintf(f, "  %s (%s): key 0x%llx: between %llu and %llu of %llu events "
                       "(the tree's bound: %llu)\n",
                    m, c->path, (unsigned long long)key, (unsigned long long)lo,
                    (unsigned long long)hi, (unsigned long long)st.n,
                    (unsigned long long)hwp_rap_bound(r));
            said = 1;
        } else if (!strcmp(m, "strat_acc")) {
            const hwp_strat_acc *a = (const hwp_strat_acc *)c->x;
            hwp_strat_value v[4];
            uint32_t kind;
            for (kind = 0; kind <= HWP_STRAT_KIND_CALL; kind++) {
                size_t k = hwp_strat_acc_top_values(a, kind, key, v, 4), j;
                if (!k) continue;
                fprintf(f, "  %s (%s): kind %u at 0x%llx: %llu events, %zu values\n", m,
                        c->path, kind, (unsigned long long)key,
                        (unsigned long long)hwp_strat_acc_pc_count(a, kind, key), k);
                for (j = 0; j < k && j < 4; j++)
                    fprintf(f, "    value 0x%llx  count %llu  invariance %.3f  95%% "
                               "interval [%.3f, %.3f]  samples %llu\n",
                            (unsigned long long)v[j].w, (unsigned long long)v[j].count,
                            v[j].invariance, v[j].lo, v[j].hi,
                            (unsigned long long)v[j].samples);
                said = 1;
            }
        } else if (!strcmp(m, "coproc")) {
            hwp_cp_vprof p;
            unsigned j;
            if (!hwp_cp_lvp_value((const hwp_cp *)c->x, key, &p)) continue;
            fprintf(f, "  %s (%s): load 0x%llx: %llu samples%s\n", m, c->path,
                    (unsigned long long)key, (unsigned long long)p.samples,
                    p.characterised ? "" : " (not yet characterised)");
            for (j = 0; j < p.nvals && j < HWP_CP_TOP; j++)
                fprintf(f, "    value 0x%llx  invariance %.3f  95%% interval [%.3f, %.3f]\n",
                        (unsigned long long)p.value[j], p.inv[j], p.lo[j], p.hi[j]);
            said = 1;
        }
    }
    if (!said) fprintf(f, "  0x%llx: no model has anything on this key\n",
                       (unsigned long long)key);
}

void rp_json_str(FILE *f, const char *str) {
    hwp_writer w = hwp_writer_stdio(f);
    hwp_put_json_str(&w, str);
}

void rp_write_json(const rp_set *s, FILE *f) {
    hwp_writer w = hwp_writer_stdio(f);
    size_t i;
    fprintf(f, "{\"schema\":\"hwprof-merged-1\",\"files\":%u,\"instructions\":%llu,"
               "\"models\":{",
            s->files, (unsigned long long)s->insns);
    for (i = 0; i < s->ncomp; i++) {
        fprintf(f, "%s\"%s\":", i ? "," : "", s->comp[i].path);
        s->comp[i].m->write(s->comp[i].x, &w);
    }
    fprintf(f, "}");
    if (s->path_metric[0]) /* what the HPT's accumulators hold: read back the same way */
        fprintf(f, ",\"metric\":\"%s\"", s->path_metric);
    if (s->nhp) { /* host facts, as the hosts write them: read back the same way */
        size_t k;
        fprintf(f, ",\"hot_blocks\":{\"paths\":[");
        for (i = 0; i < s->nhp; i++) {
            const rp_hpath *p = &s->hp[i];
            fprintf(f, "%s{\"start\":\"0x%llx\",\"shape\":\"0x%llx\"", i ? "," : "",
                    (unsigned long long)p->start, (unsigned long long)p->shape);
            if (!p->n) {
                fprintf(f, ",\"error\":");
                hwp_put_json_str(&w, p->why);
                fprintf(f, "}");
                continue;
            }
            fprintf(f, ",\"n\":%u,\"blocks\":[", p->n);
            for (k = 0; k < p->n; k++)
                fprintf(f, "%s\"0x%llx\"", k ? "," : "", (unsigned long long)p->blk[k]);
            fprintf(f, "]}");
        }
        fprintf(f, "],\"overflow\":%llu}", (unsigned long long)s->hp_overflow);
    }
    fprintf(f, "}\n");
}

int rp_rap_svg(const rp_set *s, FILE *f) {
    hwp_writer w = hwp_writer_stdio(f);
    size_t i;
    for (i = 0; i < s->ncomp; i++)
        if (!strcmp(s->comp[i].m->name, "rap")) {
            hwp_rap_write_svg((const hwp_rap *)s->comp[i].x, &w);
            return 1;
        }
    return 0;
}
