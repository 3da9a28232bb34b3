/* bench/harness/hwprof_bench.c: hwprof-bench, one benchmark harness for
 * every model and its peers on any stream (docs/benchmarks.md).
 *
 *   hwprof-bench [options] [TARGET...] [model.field=value...]
 *
 * The stream (generated, a key file, a pair file, a text file or a .hwpt
 * trace) is built or decoded into memory before anything is timed; a
 * timed run is the target's own work over the whole stream (passes of it)
 * from a reset instance, flush included. Runs of all targets are
 * interleaved, so a change in the machine's load falls on every target
 * alike. Each figure is the median, quartiles, minimum and maximum of
 * ns/event over the runs, with its ratio to the exact count of the same
 * stream measured in the same process.
 *
 * Descs: every model starts from the library's zero desc (the paper's
 * defaults) and takes any field of its JSON report's "desc" object from
 * the command line (rap.eps=0.1, strat.hash=cheap), set through the
 * model's field table (hwp_X_desc_fields); the model's init checks the
 * result, and the full desc each target ran with is printed. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hwx.h" /* the trace reader, hwx_parse_* */
#include "hwprof/hwprof.h"

#include "hwb.h"
#ifdef HWB_HAVE_BUILD_H /* meson generates it (bench/harness/meson.build) */
#include "hwb_build.h"   /* HWB_COMPILER, HWB_FLAGS, HWB_BUILDTYPE, HWB_COMMIT */
#else
#define HWB_COMPILER "unknown"
#define HWB_FLAGS "unknown"
#define HWB_BUILDTYPE "unknown"
#define HWB_COMMIT "unknown"
#endif
#include "rap/peers.h"
#include "stratified/ref.h"

#ifdef HWB_HAVE_CALLGRIND
#include <valgrind/callgrind.h>
#endif

#define MAX_TARGETS 16
#define MAX_SETS 64
#define MAX_REPS 1001

/* ---- failing ------------------------------------------------------------- */

static void die(const char *fmt, ...) {
    va_list ap;
    fputs("hwprof-bench: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(2);
}

static void *xcalloc(size_t n, size_t k) {
    void *p = calloc(n ? n : 1, k ? k : 1);
    if (!p) die("out of memory (%zu x %zu bytes)", n, k);
    return p;
}

/* ---- growable text, also an hwp_writer ----------------------------------- */

typedef struct text {
    char *s;
    size_t n, cap;
} text;

static void text_put(void *ctx, const char *s, size_t n) {
    text *t = (text *)ctx;
    if (t->n + n + 1 > t->cap) {
        t->cap = (t->n + n + 1) * 2;
        t->s = (char *)realloc(t->s, t->cap);
        if (!t->s) die("out of memory");
    }
    memcpy(t->s + t->n, s, n);
    t->n += n;
    t->s[t->n] = 0;
}

static hwp_writer text_writer(text *t) {
    hwp_writer w;
    w.write = text_put;
    w.ctx = t;
    return w;
}

/* ---- the stream ----------------------------------------------------------- */

enum { S_KEYS, S_PAIRS, S_TRACE, S_KINDS };
static const char *const kind_name[S_KINDS] = {"keys", "pairs", "trace"};

typedef struct stream {
    uint64_t *keys;  /* S_KEYS: n[S_KEYS] keys                        */
    uint64_t *pairs; /* S_PAIRS: (pc, value) x n[S_PAIRS], interleaved */
    hwp_insn *ins;   /* S_TRACE: n[S_TRACE] records                    */
    size_t n[S_KINDS];
    uint64_t distinct[S_KINDS];
    char source[600];
} stream;

/* Distinct keys (or pairs, or trace PCs: what the exact peer counts),
 * untimed: keys in a set of 8-byte slots (key 0 apart), pairs in the
 * pair reference map (it grows as it goes). */
static uint64_t count_distinct(const stream *s, int kind) {
    size_t i, n = s->n[kind], mask = 1023;
    uint64_t d = 0, *set;
    int zero = 0;
    if (kind == S_PAIRS) {
        ref_map m;
        ref_init(&m, 1024);
        for (i = 0; i < n; i++) ref_add(&m, 0, s->pairs[2 * i], s->pairs[2 * i + 1], 1);
        d = m.n;
        ref_free(&m);
        return d;
    }
    while (mask + 1 < 2 * n) mask = mask * 2 + 1;
    set = (uint64_t *)xcalloc(mask + 1, 8);
    for (i = 0; i < n; i++) {
        uint64_t k = kind == S_KEYS ? s->keys[i] : s->ins[i].pc, j;
        if (!k) {
            zero = 1;
            continue;
        }
        for (j = hwp_mix64(k) & mask; set[j] && set[j] != k; j = (j + 1) & mask) {
        }
        if (!set[j]) set[j] = k, d++;
    }
    free(set);
    return d + (uint64_t)zero;
}

/* The whole file in memory (empty files and I/O errors refused). */
static unsigned char *slurp(const char *path, size_t *len) {
    struct stat st;
    unsigned char *p;
    int fd = open(path, O_RDONLY);
    size_t got = 0;
    if (fd < 0 || fstat(fd, &st) != 0) die("%s: %s", path, strerror(errno));
    if (st.st_size == 0) die("%s: empty stream (0 bytes)", path);
    p = (unsigned char *)xcalloc((size_t)st.st_size, 1);
    while (got < (size_t)st.st_size) {
        ssize_t r = read(fd, p + got, (size_t)st.st_size - got);
        if (r <= 0) die("%s: read error at offset %zu: %s", path, got, r ? strerror(errno) : "short file");
        got += (size_t)r;
    }
    close(fd);
    *len = got;
    return p;
}

/* Raw little-endian u64s: a key file (width 8) or a pair file (16). */
static uint64_t *load_raw(const char *path, size_t width, size_t *count) {
    size_t len, i;
    unsigned char *p = slurp(path, &len);
    uint64_t *v;
    if (len % width)
        die("%s: size %zu is not a multiple of %zu (%s): %zu trailing bytes at offset %zu", path,
            len, width, width == 8 ? "one little-endian uint64 key each"
                                   : "one (pc, value) pair of little-endian uint64s each",
            len % width, len - len % width);
    v = (uint64_t *)xcalloc(len / 8, 8);
    for (i = 0; i < len / 8; i++) {
        uint64_t x = 0;
        int b;
        for (b = 7; b >= 0; b--) x = x << 8 | p[8 * i + (size_t)b];
        v[i] = x;
    }
    free(p);
    *count = len / width;
    return v;
}

/* A text file: one key or one "pc value" pair per line (decimal or 0x hex,
 * separated by spaces, a tab or a comma; # starts a comment). Every line
 * has the first data line's number of fields. */
static void load_text(const char *path, stream *s) {
    size_t len, at = 0, line = 0, n = 0, cap = 1024;
    unsigned char *p = slurp(path, &len);
    int fields = 0;
    uint64_t *v = (uint64_t *)xcalloc(cap, 8);
    while (at < len) {
        size_t end = at;
        int nf = 0;
        uint64_t x[3];
        line++;
        while (end < len && p[end] != '\n') end++;
        for (;;) {
            char tok[40];
            size_t k = 0;
            while (at < end && (p[at] == ' ' || p[at] == '\t' || p[at] == ',' || p[at] == '\r')) at++;
            if (at == end || p[at] == '#') break;
            while (at < end && !(p[at] == ' ' || p[at] == '\t' || p[at] == ',' || p[at] == '\r' ||
                                 p[at] == '#')) {
                if (k + 1 < sizeof tok) tok[k] = (char)p[at];
                k++, at++;
            }
            tok[k < sizeof tok ? k : sizeof tok - 1] = 0;
            if (nf == 3 || k >= sizeof tok || !hwx_parse_u64(tok, &x[nf]))
                die("%s:%zu: expected a key or a \"pc value\" pair (decimal or 0x hex), got \"%s\"",
                    path, line, tok);
            nf++;
        }
        at = end + 1;
        if (!nf) continue;
        if (!fields) {
            if (nf > 2) die("%s:%zu: %d numbers; expected a key or a \"pc value\" pair", path, line, nf);
            fields = nf;
        }
        if (nf != fields)
            die("%s:%zu: %d number%s where the first line had %d", path, line, nf,
                nf > 1 ? "s" : "", fields);
        if (n + 2 > cap) {
            cap *= 2;
            v = (uint64_t *)realloc(v, cap * 8);
            if (!v) die("out of memory");
        }
        v[n++] = x[0];
        if (nf == 2) v[n++] = x[1];
    }
    free(p);
    if (!n) die("%s: empty stream (no key or pair in %zu lines)", path, line);
    if (fields == 1) s->keys = v, s->n[S_KEYS] = n;
    else s->pairs = v, s->n[S_PAIRS] = n / 2;
}

/* A .hwpt trace (docs/trace-format.md), every record decoded before any
 * timing; all vCPUs' records in file order. */
static void load_trace(const char *path, stream *s) {
    size_t len, n = 0, cap = 1u << 16;
    unsigned char *p = slurp(path, &len);
    hwx_trace_reader r;
    hwp_insn in;
    int rc;
    if (hwx_trace_open(&r, p, len) != HWP_OK)
        die("%s: offset %zu: %s", path, r.err_off, r.why);
    s->ins = (hwp_insn *)xcalloc(cap, sizeof *s->ins);
    while ((rc = hwx_trace_next(&r, &in)) == 1) {
        if (n == cap) {
            cap *= 2;
            s->ins = (hwp_insn *)realloc(s->ins, cap * sizeof *s->ins);
            if (!s->ins) die("out of memory");
        }
        s->ins[n++] = in;
    }
    if (rc < 0) die("%s: offset %zu: %s", path, r.err_off, r.why);
    if (!n) die("%s: empty stream (a trace of 0 records)", path);
    free(p);
    s->n[S_TRACE] = n;
}

/* Keys and pairs from a trace: --key pc (every record), value (loads) or
 * addr (loads and stores); pairs are (load pc, loaded value), the tuples
 * of stratified sampling's value profile. */
static void derive(stream *s, int key) {
    size_t i, nk = 0, np = 0;
    if (s->ins && !s->keys) {
        s->keys = (uint64_t *)xcalloc(s->n[S_TRACE], 8);
        for (i = 0; i < s->n[S_TRACE]; i++) {
            const hwp_insn *in = &s->ins[i];
            if (key == 0) s->keys[nk++] = in->pc;
            else if (key == 1 && in->cls == HWP_CLS_LOAD) s->keys[nk++] = in->value;
            else if (key == 2 && (in->cls == HWP_CLS_LOAD || in->cls == HWP_CLS_STORE))
                s->keys[nk++] = in->addr;
        }
        s->n[S_KEYS] = nk;
    }
    if (s->ins && !s->pairs) {
        s->pairs = (uint64_t *)xcalloc(2 * s->n[S_TRACE], 8);
        for (i = 0; i < s->n[S_TRACE]; i++)
            if (s->ins[i].cls == HWP_CLS_LOAD) {
                s->pairs[2 * np] = s->ins[i].pc;
                s->pairs[2 * np++ + 1] = s->ins[i].value;
            }
        s->n[S_PAIRS] = np;
    }
    if (s->pairs && !s->keys) { /* a pair file's keys: its values, or pcs */
        s->keys = (uint64_t *)xcalloc(s->n[S_PAIRS], 8);
        for (i = 0; i < s->n[S_PAIRS]; i++) s->keys[i] = s->pairs[2 * i + (key == 0 ? 0 : 1)];
        s->n[S_KEYS] = s->n[S_PAIRS];
    }
}

/* ---- generated streams ------------------------------------------------------ */

enum { G_UNIFORM, G_ZIPF, G_CODE, G_STRIDE };

typedef struct gen {
    int kind;
    double param; /* zipf exponent, stride bytes, code functions        */
    uint64_t distinct, events, seed;
} gen;

/* Keys: uniform or Zipf over `distinct` keys (ranks through a bijection),
 * code PCs, or a strided scan of `distinct` addresses. Pairs: (one of 1024
 * load pcs, chosen by the key; the key), so a stream has as many distinct
 * pairs as keys. Trace: the code PCs with a load, a store and a
 * conditional branch in each 8 records, the data keys as the memory
 * addresses and values. */
static void generate(const gen *g, stream *s, int want_pairs, int want_trace) {
    size_t n = (size_t)g->events, i;
    uint64_t *data = (uint64_t *)xcalloc(n, 8);
    const char *names[] = {"uniform", "zipf", "code", "stride"};
    if (g->kind == G_CODE) {
        hwb_gen_code((uint32_t)g->param, g->seed, data, n);
    } else if (g->kind == G_STRIDE) {
        for (i = 0; i < n; i++) data[i] = 0x10000000ull + (i % g->distinct) * (uint64_t)g->param;
    } else {
        hwb_gen_ranks(g->kind == G_ZIPF, g->param, g->distinct, g->seed, data, n);
        for (i = 0; i < n; i++) data[i] = hwb_key(data[i]);
    }
    s->keys = data;
    s->n[S_KEYS] = n;
    if (want_pairs) {
        s->pairs = (uint64_t *)xcalloc(2 * n, 8);
        for (i = 0; i < n; i++) {
            s->pairs[2 * i] = 0x400000u + 4u * (hwp_mix64(data[i]) & 1023u);
            s->pairs[2 * i + 1] = data[i];
        }
        s->n[S_PAIRS] = n;
    }
    if (want_trace) {
        uint64_t *pcs = (uint64_t *)xcalloc(n + 1, 8);
        s->ins = (hwp_insn *)xcalloc(n, sizeof *s->ins);
        hwb_gen_code(3000, g->seed, pcs, n + 1);
        for (i = 0; i < n; i++) {
            hwp_insn *in = &s->ins[i];
            unsigned k = (unsigned)(i % 8);
            in->pc = pcs[i];
            in->next_pc = pcs[i + 1];
            in->cls = k == 7 ? HWP_CLS_BR_COND : k == 0 || k == 5 ? HWP_CLS_LOAD
                      : k == 3                                    ? HWP_CLS_STORE
                                                                  : HWP_CLS_OTHER;
            if (in->cls == HWP_CLS_LOAD || in->cls == HWP_CLS_STORE) {
                in->addr = data[i] & ~(uint64_t)7;
                in->value = data[i];
            }
            if (k == 7 && in->next_pc != in->pc + 4) in->events |= HWP_EV_TAKEN;
        }
        s->n[S_TRACE] = n;
        free(pcs);
    }
    snprintf(s->source, sizeof s->source, "gen %s%s%.6g distinct=%llu events=%llu seed=%llu",
             names[g->kind], g->kind == G_UNIFORM ? "" : ":",
             g->kind == G_UNIFORM ? 0.0 : g->param, (unsigned long long)g->distinct,
             (unsigned long long)g->events, (unsigned long long)g->seed);
    if (g->kind == G_UNIFORM) {
        char *c = strstr(s->source, "0 distinct");
        if (c) memmove(c, c + 1, strlen(c)); /* no parameter to show */
    }
}

/* ---- descs: the model's own JSON desc, edited from the command line ------ */

typedef struct setting {
    char prefix[16]; /* "rap", "hpt"                                   */
    char field[48];  /* "eps", "l1d.sets"                              */
    const char *value, *arg;
    int used;
} setting;

static setting sets[MAX_SETS];
static int nsets;

/* Past one JSON value at p (well-formed: the model wrote it). */
static const char *json_skip(const char *p) {
    int depth = 0;
    do {
        if (*p == '"') {
            for (p++; *p && *p != '"'; p++)
                if (*p == '\\' && p[1]) p++;
            if (*p) p++;
        } else if (*p == '{' || *p == '[') {
            depth++, p++;
        } else if (*p == '}' || *p == ']') {
            depth--, p++;
        } else {
            while (*p && *p != ',' && *p != '}' && *p != ']') p++;
        }
        while (depth > 0 && (*p == ',' || *p == ':' || *p == ' ')) p++;
    } while (depth > 0 && *p);
    return p;
}

/* The "desc" object of a report: its start, *end past it. */
static const char *desc_of(const char *report, const char **end) {
    const char *d = strstr(report, "\"desc\":{");
    if (!d) die("internal: a report without a desc: %.80s", report);
    d += 7;
    *end = json_skip(d);
    return d;
}

/* One component of a model (a model may have two: path and its HPT). */
typedef struct comp {
    const char *prefix;
    size_t handle, desc;
    size_t (*bytes)(const void *d);
    hwp_status (*init)(void *h, void *mem, size_t n, const void *d, hwp_cost *c);
    void (*write_json)(const void *h, const hwp_writer *w);
    const hwp_field *(*fields)(size_t *n);
    hwp_status (*reset)(void *h);
    const char *(*why)(const void *h);
} comp;

/* Every component through the contract's calls (HWP_COMPONENTS). */
#define COMP(X, header, envelope, kind, model)                                                         \
    static size_t X##_bytes_(const void *d) { return hwp_##X##_bytes((const hwp_##X##_desc *)d); } \
    static hwp_status X##_init_(void *h, void *m, size_t n, const void *d, hwp_cost *c) {   \
        return hwp_##X##_init((hwp_##X *)h, m, n, (const hwp_##X##_desc *)d, c);            \
    }                                                                                       \
    static void X##_json_(const void *h, const hwp_writer *w) {                             \
        hwp_##X##_write_json((const hwp_##X *)h, w);                                        \
    }                                                                                       \
    static hwp_status X##_reset_(void *h) { return hwp_##X##_reset((hwp_##X *)h); }         \
    static const char *X##_why_(const void *h) { return hwp_why((const hwp_##X *)h); }
HWP_COMPONENTS(COMP)
#undef COMP
#define COMP(X, header, envelope, kind, model)                                                \
    {#X, sizeof(hwp_##X), sizeof(hwp_##X##_desc), X##_bytes_, X##_init_, X##_json_, \
     hwp_##X##_desc_fields, X##_reset_, X##_why_},
static const comp comps[] = {HWP_COMPONENTS(COMP)};
#undef COMP
#define NCOMPS (sizeof comps / sizeof comps[0])

/* The component named by its C prefix ("rap", "hpt"), or NULL. */
static const comp *comp_of(const char *prefix, size_t n) {
    size_t i;
    for (i = 0; i < NCOMPS; i++)
        if (strlen(comps[i].prefix) == n && !strncmp(comps[i].prefix, prefix, n)) return &comps[i];
    return NULL;
}
#define COMP_OF(lit) comp_of(lit, sizeof lit - 1)

static hwp_cost *g_cost; /* --cost: every model charges one shim */

/* A fresh instance of c on the desc in d (the caller's callbacks set),
 * its report in *rep; exits with the model's reason when refused. */
/* The model refused a desc: name the command-line field its reason
 * names, if any. */
static void refused(const comp *c, const char *why) {
    int i;
    for (i = 0; i < nsets; i++)
        if (!strcmp(sets[i].prefix, c->prefix) && strstr(why, sets[i].field))
            die("%s: refused by the model: %s", sets[i].arg, why);
    die("%s: desc refused: %s", c->prefix, why);
}

static void *comp_init(const comp *c, const void *d, void **mem, text *rep) {
    void *h = xcalloc(1, c->handle);
    size_t n = c->bytes(d);
    if (!n) {
        unsigned char m[64];
        c->init(h, m, 0, d, NULL); /* the reason: init checks the desc first */
        refused(c, c->why(h));
    }
    *mem = xcalloc(1, n);
    if (c->init(h, *mem, n, d, g_cost) != HWP_OK) refused(c, c->why(h));
    rep->n = 0;
    {
        hwp_writer w = text_writer(rep);
        c->write_json(h, &w);
    }
    return h;
}

/* The names of the members of table f, nested ones dotted, into t. */
static void field_names(const hwp_field *f, size_t n, const char *prefix, text *t) {
    for (; n--; f++) {
        char sub[96];
        snprintf(sub, sizeof sub, "%s%s", prefix, f->key);
        if (f->type == HWP_FIELD_SUB) {
            strcat(sub, ".");
            field_names(f->sub, (size_t)f->hi + 1, sub, t);
            continue;
        }
        if (t->n) text_put(t, ", ", 2);
        text_put(t, sub, strlen(sub));
    }
}

/* Build component c: the zero desc with fix() applied and every
 * prefix.field=value of the command line set through the model's field
 * table (hwx_arg_field: numbers, fractions, names), which the model's
 * init then checks. *desc_out: the desc it runs, as its report says. */
static void *comp_make(const comp *c, void (*fix)(void *d, void *ctx), void *ctx,
                       void **mem, char **desc_out) {
    void *d = xcalloc(1, c->desc), *h;
    text rep = {0};
    const char *ds, *de, *why;
    size_t nf;
    const hwp_field *f = c->fields(&nf);
    int i;
    fix(d, ctx);
    for (i = 0; i < nsets; i++) {
        if (strcmp(sets[i].prefix, c->prefix)) continue;
        if (hwx_arg_field(sets[i].arg, d, f, nf, sets[i].field, sets[i].value, &why) != HWP_OK) {
            text names = {0};
            if (why) die("%s", why);
            field_names(f, nf, "", &names);
            die("%s: no desc field \"%s\" in %s (fields: %s)", sets[i].arg, sets[i].field,
                c->prefix, names.s);
        }
        sets[i].used = 1;
    }
    h = comp_init(c, d, mem, &rep);
    ds = desc_of(rep.s, &de);
    *desc_out = strndup(ds, (size_t)(de - ds));
    free(rep.s);
    free(d);
    return h;
}

/* ---- targets: the models and the peers -------------------------------------- */

typedef struct target target;
struct target {
    const char *name;
    int kind;   /* S_*: the stream it takes                           */
    int peer;   /* 1: a peer, no desc                                  */
    const char *about;
    void (*make)(target *t, const stream *s);
    void (*reset)(target *t);
    const comp *comp; /* a model's component, set by make (model_make)  */
    void (*run)(target *t, const stream *s); /* one pass, then flush     */
    uint64_t (*events)(const target *t);     /* since reset, 0 unknown   */
    void *h, *h2, *mem, *mem2;
    char *desc, *desc2;
    uint64_t sink;
    /* results */
    double *ns, *cpu_ns;
    uint64_t passes, model_events;
    int reps;
    double q[5]; /* min, q1, median, q3, max ns/event */
    int exact_ix;
};

/* Handlers that keep the model's output alive without work of their own. */
static void strat_sink(void *ctx, const hwp_strat_msg *m, uint32_t n) {
    ((target *)ctx)->sink += n ? m[0].count + n : 0;
}
static void pm_sink(void *ctx, const hwp_pm_record *r, uint32_t n) {
    ((target *)ctx)->sink += n ? r[0].pc + n : 0;
}

static void fix_none(void *d, void *ctx) { (void)d, (void)ctx; }
static void fix_strat(void *d, void *ctx) {
    ((hwp_strat_desc *)d)->on_interrupt = strat_sink;
    ((hwp_strat_desc *)d)->ctx = ctx;
}
static void fix_pm(void *d, void *ctx) {
    ((hwp_pm_desc *)d)->deliver = pm_sink;
    ((hwp_pm_desc *)d)->user = ctx;
}

/* A one-component model: its handle, and the component that resets it. */
static void model_make(target *t, const comp *c, void (*fix)(void *d, void *ctx)) {
    t->comp = c;
    t->h = comp_make(c, fix, t, &t->mem, &t->desc);
}
static void model_reset(target *t) {
    if (t->comp->reset(t->h) != HWP_OK) die("%s: reset failed: %s", t->name, t->comp->why(t->h));
}

/* rap: hwp_rap_add(key, 1) per key */
static void rap_make(target *t, const stream *s) {
    (void)s;
    model_make(t, COMP_OF("rap"), fix_none);
}
static void rap_run(target *t, const stream *s) {
    hwp_rap *r = (hwp_rap *)t->h;
    const uint64_t *k = s->keys;
    size_t i, n = s->n[S_KEYS];
    for (i = 0; i < n; i++) hwp_rap_add(r, k[i], 1);
    hwp_rap_flush(r);
}
static uint64_t rap_events(const target *t) {
    hwp_rap_stats st;
    return hwp_rap_get_stats((const hwp_rap *)t->h, &st) == HWP_OK ? st.events : 0;
}

/* strat: hwp_strat_push(value kind, pc, value) per pair */
static void strat_make(target *t, const stream *s) {
    (void)s;
    model_make(t, COMP_OF("strat"), fix_strat);
}
static void strat_run(target *t, const stream *s) {
    hwp_strat *x = (hwp_strat *)t->h;
    const uint64_t *p = s->pairs;
    size_t i, n = s->n[S_PAIRS];
    for (i = 0; i < n; i++) hwp_strat_push(x, HWP_STRAT_KIND_VALUE, p[2 * i], p[2 * i + 1]);
    hwp_strat_flush(x);
}
static uint64_t strat_events(const target *t) {
    hwp_strat_stats st;
    return hwp_strat_get_stats((const hwp_strat *)t->h, &st) == HWP_OK ? st.events : 0;
}

/* pm: hwp_pm_insn per record, the record index as the cycle */
static void pm_make(target *t, const stream *s) {
    (void)s;
    model_make(t, COMP_OF("pm"), fix_pm);
}
static void pm_run(target *t, const stream *s) {
    hwp_pm *p = (hwp_pm *)t->h;
    size_t i, n = s->n[S_TRACE];
    for (i = 0; i < n; i++) hwp_pm_insn(p, &s->ins[i], i);
    hwp_pm_flush(p);
}
static uint64_t pm_events(const target *t) {
    hwp_pm_stats st;
    return hwp_pm_get_stats((const hwp_pm *)t->h, &st) == HWP_OK ? st.events : 0;
}

/* path: the path stack with its Hot Path Table attached */
static void path_make(target *t, const stream *s) {
    (void)s;
    t->h = comp_make(COMP_OF("path"), fix_none, t, &t->mem, &t->desc);
    t->h2 = comp_make(COMP_OF("hpt"), fix_none, t, &t->mem2, &t->desc2);
    if (hwp_path_attach((hwp_path *)t->h, (hwp_hpt *)t->h2, NULL) != HWP_OK)
        die("path: attaching the HPT: %s", hwp_why((hwp_path *)t->h));
}
static void path_reset(target *t) {
    if (hwp_hpt_reset((hwp_hpt *)t->h2) != HWP_OK || hwp_path_reset((hwp_path *)t->h) != HWP_OK)
        die("path: reset failed");
}
static void path_run(target *t, const stream *s) {
    hwp_path *p = (hwp_path *)t->h;
    size_t i, n = s->n[S_TRACE];
    for (i = 0; i < n; i++) hwp_path_insn(p, &s->ins[i]);
    hwp_path_flush(p);
}
static uint64_t path_events(const target *t) {
    hwp_path_stats st;
    return hwp_path_get_stats((const hwp_path *)t->h, &st) == HWP_OK ? st.events : 0;
}

/* cp: the co-processor running the load-value program */
static void cp_start(target *t) {
    hwp_cp_lvp_desc ld;
    memset(&ld, 0, sizeof ld);
    if (hwp_cp_lvp_start((hwp_cp *)t->h, &ld) != HWP_OK)
        die("cp: starting the load-value program: %s", hwp_why((hwp_cp *)t->h));
}
static void cp_make(target *t, const stream *s) {
    (void)s;
    model_make(t, COMP_OF("cp"), fix_none);
    cp_start(t);
}
static void cp_reset(target *t) {
    model_reset(t);
    cp_start(t);
}
static void cp_run(target *t, const stream *s) {
    hwp_cp *x = (hwp_cp *)t->h;
    size_t i, n = s->n[S_TRACE];
    for (i = 0; i < n; i++) hwp_cp_insn(x, &s->ins[i]);
    hwp_cp_flush(x);
}
static uint64_t cp_events(const target *t) {
    hwp_cp_stats st;
    return hwp_cp_get_stats((const hwp_cp *)t->h, &st) == HWP_OK ? st.events : 0;
}

/* core: full timing of every record */
static void core_make(target *t, const stream *s) {
    (void)s;
    model_make(t, COMP_OF("core"), fix_none);
}
static void core_run(target *t, const stream *s) {
    hwp_core *c = (hwp_core *)t->h;
    size_t i, n = s->n[S_TRACE];
    for (i = 0; i < n; i++) hwp_core_insn(c, &s->ins[i], NULL);
    hwp_core_flush(c);
}
static uint64_t core_events(const target *t) {
    hwp_core_stats st;
    return hwp_core_get_stats((const hwp_core *)t->h, &st) == HWP_OK ? st.events : 0;
}

/* Peers. The exact count: open addressing sized for the stream (load at
 * most 1/2), so it never grows while timed. */
static unsigned log2_slots(uint64_t distinct) {
    unsigned b = 10;
    while (((uint64_t)1 << b) < 2 * distinct) b++;
    return b;
}
static void exact_make(target *t, const stream *s) {
    unsigned b = log2_slots(s->distinct[t->kind]);
    if (t->kind == S_PAIRS) {
        t->h = xcalloc(1, sizeof(ref_map));
        ref_init((ref_map *)t->h, (size_t)1 << b);
    } else {
        t->h = xcalloc(1, sizeof(exact_tab));
        exact_init((exact_tab *)t->h, b);
    }
}
static void exact_reset(target *t) {
    if (t->kind == S_PAIRS) {
        ref_map *m = (ref_map *)t->h;
        memset(m->e, 0, (m->mask + 1) * sizeof *m->e);
        m->n = 0;
    } else {
        exact_tab *x = (exact_tab *)t->h;
        memset(x->key, 0, (x->mask + 1) * 8);
        memset(x->count, 0, (x->mask + 1) * 8);
    }
}
static void exact_run(target *t, const stream *s) {
    size_t i, n = s->n[t->kind];
    if (t->kind == S_PAIRS) {
        ref_map *m = (ref_map *)t->h;
        for (i = 0; i < n; i++) ref_add(m, 0, s->pairs[2 * i], s->pairs[2 * i + 1], 1);
    } else if (t->kind == S_KEYS) {
        exact_tab *x = (exact_tab *)t->h;
        for (i = 0; i < n; i++) exact_add(x, s->keys[i]);
    } else {
        exact_tab *x = (exact_tab *)t->h;
        for (i = 0; i < n; i++) exact_add(x, s->ins[i].pc);
    }
}
/* The exact profile's distinct entries and largest count (untimed). */
static void exact_summary(const target *t, uint64_t *distinct, uint64_t *top, uint64_t *total) {
    size_t i;
    *distinct = *top = *total = 0;
    if (t->kind == S_PAIRS) {
        const ref_map *m = (const ref_map *)t->h;
        for (i = 0; i <= m->mask; i++)
            if (m->e[i].used) {
                (*distinct)++;
                *total += m->e[i].count;
                if (m->e[i].count > *top) *top = m->e[i].count;
            }
    } else {
        const exact_tab *x = (const exact_tab *)t->h;
        for (i = 0; i <= x->mask; i++)
            if (x->count[i]) {
                (*distinct)++;
                *total += x->count[i];
                if (x->count[i] > *top) *top = x->count[i];
            }
    }
}

static void ss_make(target *t, const stream *s) {
    (void)s;
    t->h = xcalloc(1, sizeof(ss_tab));
    ss_init((ss_tab *)t->h);
}
static void ss_reset(target *t) { ss_init((ss_tab *)t->h); }
static void ss_run(target *t, const stream *s) {
    ss_tab *x = (ss_tab *)t->h;
    size_t i, n = s->n[S_KEYS];
    for (i = 0; i < n; i++) ss_add(x, s->keys[i]);
}

static void cm_make(target *t, const stream *s) {
    (void)s;
    t->h = xcalloc(1, sizeof(cm_tab));
    cm_init((cm_tab *)t->h, 64, 8192);
}
static void cm_reset(target *t) {
    cm_tab *x = (cm_tab *)t->h;
    memset(x->c, 0, (size_t)x->bits * CM_D * x->width * 4);
}
static void cm_run(target *t, const stream *s) {
    cm_tab *x = (cm_tab *)t->h;
    size_t i, n = s->n[S_KEYS];
    for (i = 0; i < n; i++) cm_add(x, s->keys[i]);
}

/* Designated: the run-time members start zeroed. */
#define SPEC(n, k, p, a, mk, rs, rn, ev)                                              \
    { .name = n, .kind = k, .peer = p, .about = a, .make = mk, .reset = rs, .run = rn, \
      .events = ev }
static const target catalog[] = {
    SPEC("rap", S_KEYS, 0, "RAP tree (Mysore et al.), hwp_rap_add per key",
     rap_make, model_reset, rap_run, rap_events),
    SPEC("strat", S_PAIRS, 0, "stratified-sampling compressor (Sastry, Bodik & Smith), hwp_strat_push per pair",
     strat_make, model_reset, strat_run, strat_events),
    SPEC("pm", S_TRACE, 0, "ProfileMe sampler (Dean et al.), hwp_pm_insn per record",
     pm_make, model_reset, pm_run, pm_events),
    SPEC("path", S_TRACE, 0, "path profiler with its Hot Path Table (Vaswani, Jacob & Srikant), hwp_path_insn per record",
     path_make, path_reset, path_run, path_events),
    SPEC("cp", S_TRACE, 0, "profiling co-processor running the load-value program (Zilles & Sohi), hwp_cp_insn per record",
     cp_make, cp_reset, cp_run, cp_events),
    SPEC("core", S_TRACE, 0, "processor core timing model, hwp_core_insn per record",
     core_make, model_reset, core_run, core_events),
    SPEC("exact", -1, 1, "exact count: open addressing sized for the stream (2x its distinct keys, pairs or PCs)",
     exact_make, exact_reset, exact_run, NULL),
    SPEC("spacesaving", S_KEYS, 1, "Space-Saving top-k (Metwally et al.), 256 counters in 8 KB",
     ss_make, ss_reset, ss_run, NULL),
    SPEC("countmin", S_KEYS, 1, "count-min with dyadic ranges (Cormode & Muthukrishnan), 8 KB",
     cm_make, cm_reset, cm_run, NULL),
};
#define NCATALOG (sizeof catalog / sizeof catalog[0])

/* ---- machine and build ------------------------------------------------------- */

typedef struct machine {
    char cpu[128], governor[32];
    long cores;
    double load[3];
} machine;

static void read_line(const char *path, char *out, size_t n) {
    FILE *f = fopen(path, "r");
    out[0] = 0;
    if (f && fgets(out, (int)n, f)) out[strcspn(out, "\n")] = 0;
    if (f) fclose(f);
}

static void machine_read(machine *m) {
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[256], la[128];
    snprintf(m->cpu, sizeof m->cpu, "unknown");
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
            char *v = strchr(line, ':') + 1;
            while (*v == ' ') v++;
            v[strcspn(v, "\n")] = 0;
            snprintf(m->cpu, sizeof m->cpu, "%s", v);
            break;
        }
    if (f) fclose(f);
    m->cores = sysconf(_SC_NPROCESSORS_ONLN);
    read_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", m->governor,
              sizeof m->governor);
    read_line("/proc/loadavg", la, sizeof la);
    m->load[0] = m->load[1] = m->load[2] = -1;
    if (la[0] && sscanf(la, "%lf %lf %lf", &m->load[0], &m->load[1], &m->load[2]) != 3)
        m->load[0] = m->load[1] = m->load[2] = -1;
}

/* ---- timing ------------------------------------------------------------------ */

static double now_s(clockid_t c) {
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Quartiles by linear interpolation between order statistics. */
static double quantile(const double *sorted, int n, double q) {
    double pos = q * (n - 1);
    int i = (int)pos;
    return i + 1 < n ? sorted[i] + (pos - i) * (sorted[i + 1] - sorted[i]) : sorted[n - 1];
}

static int g_keep; /* --keep: no reset between runs (steady state) */

/* One timed run: reset (untimed), `passes` passes over the stream. */
static void timed_run(target *t, const stream *s, double *wall, double *cpu) {
    double w0, c0;
    uint64_t p;
    if (!g_keep) t->reset(t);
    w0 = now_s(CLOCK_MONOTONIC);
    c0 = now_s(CLOCK_THREAD_CPUTIME_ID);
    for (p = 0; p < t->passes; p++) t->run(t, s);
    *cpu = now_s(CLOCK_THREAD_CPUTIME_ID) - c0;
    *wall = now_s(CLOCK_MONOTONIC) - w0;
}

/* ---- output ------------------------------------------------------------------ */

static void json_str(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20) fprintf(f, "\\u%04x", *s);
        else fputc(*s, f);
    }
    fputc('"', f);
}

static void usage(FILE *f) {
    fputs(
        "usage: hwprof-bench [options] [TARGET...] [model.field=value...]\n"
        "\n"
        "Times models and peers on one stream, every run interleaved, and prints each\n"
        "figure's median, quartiles, minimum and maximum in ns/event with its ratio to\n"
        "the exact count of the same stream. docs/benchmarks.md is the guide.\n"
        "\n"
        "TARGET: a model (rap strat pm path cp core; also stratified profileme pathprof\n"
        "  coproc) or peer (exact spacesaving countmin);\n"
        "  default: every target the stream can feed. --list says what each takes.\n"
        "  The exact peer runs beside any targets, so every figure has its ratio to\n"
        "  it; noexact leaves it out.\n"
        "model.field=value: a field of that model's desc as its JSON report names it\n"
        "  (rap.eps=0.1 rap.buffer=1024 strat.rate=100 hpt.entries=256 core.l1d.sets=128);\n"
        "  numbers take k/m/g, 0x and %; unset fields keep the library's zero-desc default.\n"
        "  Enum fields take a name: strat.scheme sampled|tagged|assoc, strat.sampler\n"
        "  periodic|random|countdown, strat.hash paper|cheap, pm.dist uniform|geometric|\n"
        "  fixed, pm.unit insn|slot, core.mode timing|caches|sampled, core.order\n"
        "  ooo|inorder, core.bp tournament|gshare|gselect (or the number the report\n"
        "  writes); path.mode bl|wpp|ext_loop|ext_call|custom, path.metric paths|\n"
        "  branches|insns|events, path.overflow drop|spill, hpt.index plb|pb|p,\n"
        "  hpt.repl lfu|lru, hpt.policy plain|aging|decay (names only, as their reports\n"
        "  write).\n"
        "\n"
        "Input (one of; the default is --gen zipf:1):\n"
        "  --gen NAME[:P]    generated stream: uniform, zipf:S (exponent, default 1),\n"
        "                    code[:FUNCS] (code-like basic-block PCs, default 3000\n"
        "                    functions), stride:B (a scan of --distinct addresses B bytes apart)\n"
        "  --distinct N      distinct keys of a generated stream (default 2^20; 2^N allowed)\n"
        "  --events N        events of a generated stream (default 2^22)\n"
        "  --seed N          generator seed (default 1)\n"
        "  --keys FILE       raw little-endian uint64 keys (e.g. hwprof-replay --dump)\n"
        "  --pairs FILE      raw little-endian uint64 (pc, value) pairs\n"
        "  --text FILE       one key, or one \"pc value\" pair, per line (decimal or 0x hex)\n"
        "  --trace FILE      a .hwpt trace (docs/trace-format.md), decoded before timing\n"
        "  --key pc|value|addr  the keys of a trace or pair file (default pc for a trace,\n"
        "                    value for pairs)\n"
        "\n"
        "Runs:\n"
        "  --reps N          timed runs per target (default 11)\n"
        "  --min-time S      a run repeats the stream until it takes at least S seconds\n"
        "                    (default 0.05); events/run says how many events a run had\n"
        "  --passes N        passes over the stream per run (overrides --min-time)\n"
        "  --clock cpu|wall  thread CPU time (default) or monotonic wall time\n"
        "  --keep            no reset between runs: each run continues the state the\n"
        "                    last left (steady state; default: every run from empty)\n"
        "  --cost            attach a cost shim (hwp_cost), as the hosts do\n"
        "  --callgrind       no timing: one pass per target with callgrind collecting,\n"
        "                    dumped per target (bench/cliff.sh, bench/compare.sh)\n"
        "\n"
        "Output:\n"
        "  --json            JSON on stdout (machine, build, input, descs, figures)\n"
        "  --csv             CSV on stdout, one row per target\n"
        "  --quiet           no progress on stderr\n"
        "  --list            targets, the stream each takes, and each model's default desc\n"
        "  --help            this text\n"
        "Warnings (stderr, and in the JSON): an IQR above 5% of the median, a maximum\n"
        "above 1.5x the minimum, a load average at or above 3/4 of the cores, a CPU\n"
        "frequency governor other than performance.\n"
        "Bad input (a file whose size is not a whole number of keys or pairs, an empty\n"
        "stream, a trace that does not decode, an unknown target or desc field, a desc the\n"
        "model refuses) exits 2 with one line naming the file, offset or field.\n",
        f);
}

static void list_targets(void) {
    size_t i;
    printf("%-12s %-6s %s\n", "target", "stream", "what");
    for (i = 0; i < NCATALOG; i++)
        printf("%-12s %-6s %s\n", catalog[i].name,
               catalog[i].kind < 0 ? "any" : kind_name[catalog[i].kind], catalog[i].about);
    printf("\nModels' default descs (the library's zero desc, defaults filled):\n");
    for (i = 0; i < NCATALOG; i++) {
        target t = catalog[i];
        stream s;
        if (t.peer) continue;
        memset(&s, 0, sizeof s);
        t.make(&t, &s);
        printf("%-6s %s\n", t.name, t.desc);
        if (t.desc2) printf("%-6s %s  (path's Hot Path Table: hpt.FIELD)\n", "hpt", t.desc2);
    }
    printf("\nGenerators: uniform, zipf:S, code[:FUNCS], stride:BYTES\n");
}

/* "2^20", or hwx_parse_u64's forms. */
static uint64_t parse_count(const char *opt, const char *v, uint64_t lo, uint64_t hi) {
    uint64_t x;
    const char *why;
    if (v && v[0] == '2' && v[1] == '^') {
        uint64_t e;
        if (!hwx_parse_u64(v + 2, &e) || e > 62) die("%s: expected 2^N with N <= 62, got \"%s\"", opt, v);
        x = (uint64_t)1 << e;
        if (x < lo || x > hi) die("%s: expected a count in %llu..%llu, got \"%s\"", opt,
                                  (unsigned long long)lo, (unsigned long long)hi, v);
        return x;
    }
    if (hwx_arg_u64(opt, v, lo, hi, &x, &why) != HWP_OK) die("%s", why);
    return x;
}

static void need(int i, int argc, const char *opt) {
    if (i + 1 >= argc) die("%s: expected a value", opt);
}

int main(int argc, char **argv) {
    static target t[MAX_TARGETS];
    static stream s;
    const char *keys_file = NULL, *pairs_file = NULL, *text_file = NULL, *trace_file = NULL;
    const char *gen_spec = NULL, *clock_name = "cpu";
    int nt = 0, i, j, r, reps = 11, json = 0, csv = 0, quiet = 0, callgrind = 0, key = -1;
    int noexact = 0, explicit_exact;
    int ninputs = 0, want[S_KINDS] = {0, 0, 0};
    uint64_t passes_fixed = 0;
    double min_time = 0.05;
    gen g = {G_ZIPF, 1.0, 1u << 20, 1u << 22, 1};
    machine m;
    hwp_cost cost;
    char warn[MAX_TARGETS + 2][4][160];
    int nwarn[MAX_TARGETS + 2];
    memset(nwarn, 0, sizeof nwarn);

    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *eq = strchr(a, '=');
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--list")) {
            list_targets();
            return 0;
        } else if (!strcmp(a, "--gen")) {
            need(i, argc, a), gen_spec = argv[++i], ninputs++;
        } else if (!strcmp(a, "--distinct")) {
            need(i, argc, a), g.distinct = parse_count(a, argv[++i], 1, (uint64_t)1 << 32);
        } else if (!strcmp(a, "--events")) {
            need(i, argc, a), g.events = parse_count(a, argv[++i], 1, (uint64_t)1 << 32);
        } else if (!strcmp(a, "--seed")) {
            need(i, argc, a), g.seed = parse_count(a, argv[++i], 0, ~(uint64_t)0);
        } else if (!strcmp(a, "--keys")) {
            need(i, argc, a), keys_file = argv[++i], ninputs++;
        } else if (!strcmp(a, "--pairs")) {
            need(i, argc, a), pairs_file = argv[++i], ninputs++;
        } else if (!strcmp(a, "--text")) {
            need(i, argc, a), text_file = argv[++i], ninputs++;
        } else if (!strcmp(a, "--trace")) {
            need(i, argc, a), trace_file = argv[++i], ninputs++;
        } else if (!strcmp(a, "--key")) {
            static const char *const names[] = {"pc", "value", "addr", NULL};
            uint32_t k;
            const char *why;
            need(i, argc, a);
            if (hwx_arg_enum(a, argv[++i], names, &k, &why) != HWP_OK) die("%s", why);
            key = (int)k;
        } else if (!strcmp(a, "--reps")) {
            need(i, argc, a), reps = (int)parse_count(a, argv[++i], 1, MAX_REPS);
        } else if (!strcmp(a, "--passes")) {
            need(i, argc, a), passes_fixed = parse_count(a, argv[++i], 1, 1u << 20);
        } else if (!strcmp(a, "--min-time")) {
            const char *why;
            need(i, argc, a);
            if (hwx_arg_f64(a, argv[++i], 0, 0, 60, 0, &min_time, &why) != HWP_OK) die("%s", why);
        } else if (!strcmp(a, "--clock")) {
            need(i, argc, a), clock_name = argv[++i];
            if (strcmp(clock_name, "cpu") && strcmp(clock_name, "wall"))
                die("--clock: expected cpu or wall, got \"%s\"", clock_name);
        } else if (!strcmp(a, "--keep")) {
            g_keep = 1;
        } else if (!strcmp(a, "--cost")) {
            hwp_cost_init(&cost, NULL);
            g_cost = &cost;
        } else if (!strcmp(a, "--callgrind")) {
            callgrind = 1;
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--csv")) {
            csv = 1;
        } else if (!strcmp(a, "--quiet")) {
            quiet = 1;
        } else if (a[0] == '-') {
            die("unknown option \"%s\" (--help lists them)", a);
        } else if (eq) { /* model.field=value */
            const char *dot = strchr(a, '.');
            const comp *cp;
            if (!dot || dot > eq || dot == a || eq == dot + 1)
                die("\"%s\": expected model.field=value (e.g. rap.eps=0.1)", a);
            if (!(cp = comp_of(a, (size_t)(dot - a))))
                die("\"%s\": unknown model \"%.*s\" (rap, strat, pm, path, hpt, cp, core)", a,
                    (int)(dot - a), a);
            if (nsets == MAX_SETS) die("more than %d desc fields", MAX_SETS);
            if ((size_t)(eq - dot - 1) >= sizeof sets[0].field) die("\"%s\": field name too long", a);
            snprintf(sets[nsets].prefix, sizeof sets[0].prefix, "%s", cp->prefix);
            snprintf(sets[nsets].field, sizeof sets[0].field, "%.*s", (int)(eq - dot - 1), dot + 1);
            sets[nsets].value = eq + 1;
            sets[nsets].arg = a;
            nsets++;
        } else {
            /* the models' header names (stratified.h ...) name them too */
            static const char *const alias[][2] = {
                {"stratified", "strat"}, {"profileme", "pm"}, {"pathprof", "path"}, {"coproc", "cp"}};
            size_t c;
            for (c = 0; c < sizeof alias / sizeof alias[0]; c++)
                if (!strcmp(a, alias[c][0])) a = alias[c][1];
            if (!strcmp(a, "noexact")) {
                noexact = 1;
                continue;
            }
            for (c = 0; c < NCATALOG; c++)
                if (!strcmp(a, catalog[c].name)) break;
            if (c == NCATALOG)
                die("unknown target \"%s\" (models: rap strat pm path cp core; peers: exact spacesaving countmin)", a);
            for (j = 0; j < nt; j++)
                if (!strcmp(t[j].name, a)) die("target \"%s\" given twice", a);
            if (nt == MAX_TARGETS) die("too many targets");
            t[nt++] = catalog[c];
        }
    }
    if (!isatty(2)) quiet = 1; /* progress only for a person watching */
    if (ninputs > 1) die("one input at a time (--gen, --keys, --pairs, --text or --trace)");

    /* The stream. */
    if (keys_file) {
        s.keys = load_raw(keys_file, 8, &s.n[S_KEYS]);
        snprintf(s.source, sizeof s.source, "keys %s", keys_file);
    } else if (pairs_file) {
        s.pairs = load_raw(pairs_file, 16, &s.n[S_PAIRS]);
        snprintf(s.source, sizeof s.source, "pairs %s", pairs_file);
    } else if (text_file) {
        load_text(text_file, &s);
        snprintf(s.source, sizeof s.source, "text %s", text_file);
    } else if (trace_file) {
        load_trace(trace_file, &s);
        snprintf(s.source, sizeof s.source, "trace %s", trace_file);
    }
    if (!ninputs || gen_spec) {
        const char *sp = gen_spec ? gen_spec : "zipf:1";
        const char *colon = strchr(sp, ':');
        size_t nl = colon ? (size_t)(colon - sp) : strlen(sp);
        double v = 0;
        if (!strncmp(sp, "uniform", nl) && nl == 7) g.kind = G_UNIFORM, g.param = 0;
        else if (!strncmp(sp, "zipf", nl) && nl == 4) g.kind = G_ZIPF, g.param = 1.0;
        else if (!strncmp(sp, "code", nl) && nl == 4) g.kind = G_CODE, g.param = 3000;
        else if (!strncmp(sp, "stride", nl) && nl == 6) g.kind = G_STRIDE, g.param = 64;
        else die("--gen: unknown generator \"%.*s\" (uniform, zipf:S, code[:FUNCS], stride:BYTES)",
                 (int)nl, sp);
        if (colon) {
            if (g.kind == G_UNIFORM) die("--gen uniform takes no parameter, got \"%s\"", sp);
            if (!hwx_parse_f64(colon + 1, &v) || !(v > 0) || v > 1e9)
                die("--gen %.*s: expected a positive number after the colon, got \"%s\"", (int)nl,
                    sp, colon + 1);
            if (g.kind != G_ZIPF && v != (double)(uint64_t)v)
                die("--gen %.*s: expected a whole number, got \"%s\"", (int)nl, sp, colon + 1);
            g.param = v;
        }
    }

    /* Targets: the given ones, or all the stream can feed. */
    explicit_exact = 0;
    for (i = 0; i < nt; i++) explicit_exact |= !strcmp(t[i].name, "exact");
    if (!nt) {
        int gen_in = !ninputs || gen_spec != NULL;
        for (i = 0; i < (int)NCATALOG; i++) {
            int k = catalog[i].kind;
            if (k == S_TRACE && !trace_file && !gen_in) continue;
            if (k == S_PAIRS && !s.pairs && !trace_file && !gen_in) continue;
            /* A generated trace is no program for the core to time. */
            if (!strcmp(catalog[i].name, "core") && !trace_file) continue;
            t[nt++] = catalog[i];
        }
    }
    /* Every figure beside its ratio: the exact peer runs with any target
     * unless noexact says not to. */
    for (j = 0; j < nt && strcmp(t[j].name, "exact"); j++) {}
    if (noexact && j < nt) {
        if (explicit_exact) die("exact and noexact together");
        for (i = j; i + 1 < nt; i++) t[i] = t[i + 1];
        nt--;
    } else if (!noexact && j == nt) {
        for (i = 0; i < (int)NCATALOG && strcmp(catalog[i].name, "exact"); i++) {}
        if (nt == MAX_TARGETS) die("too many targets");
        t[nt++] = catalog[i];
    }
    for (i = 0; i < nt; i++)
        if (t[i].kind >= 0) want[t[i].kind] = 1;
    if (!ninputs || gen_spec) generate(&g, &s, want[S_PAIRS], want[S_TRACE]);
    derive(&s, key < 0 ? (pairs_file || (text_file && s.pairs) ? 1 : 0) : key);
    if (key >= 0 && !s.ins && !s.pairs)
        die("--key: a key file or a one-column text file has keys already");
    for (i = 0; i < nt; i++) {
        int k = t[i].kind;
        if (k < 0) continue;
        if (!s.n[k] && (k == S_TRACE ? !s.ins : k == S_PAIRS ? !s.pairs : !s.keys))
            die("%s takes %s; %s has none (give --%s, --trace%s)", t[i].name, kind_name[k],
                s.source, k == S_TRACE ? "trace" : k == S_PAIRS ? "pairs, a two-column --text" : "keys, --text",
                k == S_TRACE ? "" : " or --gen");
        if (!s.n[k]) die("%s: empty stream (no %s in %s)", t[i].name, kind_name[k], s.source);
    }
    /* The exact peer counts what the models count: one instance per kind. */
    {
        int base = nt, k;
        for (i = 0; i < base; i++) {
            if (strcmp(t[i].name, "exact")) continue;
            t[i].kind = -2; /* expanded below */
            for (k = 0; k < S_KINDS; k++) {
                int any = 0;
                for (j = 0; j < base; j++) any |= t[j].kind == k;
                if (!any && k != S_KEYS) continue;
                if (!s.n[k]) continue;
                if (nt == MAX_TARGETS) die("too many targets");
                t[nt] = t[i];
                t[nt].kind = k;
                nt++;
            }
        }
        for (i = j = 0; i < nt; i++)
            if (t[i].kind != -2) t[j++] = t[i];
        nt = j;
    }
    for (i = 0; i < S_KINDS; i++)
        if (s.n[i]) s.distinct[i] = count_distinct(&s, i);
    for (i = 0; i < nt; i++) {
        t[i].exact_ix = -1;
        for (j = 0; j < nt; j++)
            if (!strcmp(t[j].name, "exact") && t[j].kind == t[i].kind && j != i) t[i].exact_ix = j;
        t[i].make(&t[i], &s);
    }
    for (i = 0; i < nsets; i++)
        if (!sets[i].used) {
            const char *pf = !strcmp(sets[i].prefix, "hpt") ? "path" : sets[i].prefix;
            die("%s: no %s target runs (name it among the targets)", sets[i].arg, pf);
        }

    machine_read(&m);

    if (callgrind) {
        /* One pass each, collection on around it, one dump per target. */
        for (i = 0; i < nt; i++) {
            char name[64];
            snprintf(name, sizeof name, "%s/%s", t[i].name, kind_name[t[i].kind]);
            t[i].reset(&t[i]);
#ifdef HWB_HAVE_CALLGRIND
            CALLGRIND_TOGGLE_COLLECT;
#endif
            t[i].run(&t[i], &s);
#ifdef HWB_HAVE_CALLGRIND
            CALLGRIND_TOGGLE_COLLECT;
            CALLGRIND_DUMP_STATS_AT(name);
#endif
            printf("callgrind %s events %llu\n", name, (unsigned long long)s.n[t[i].kind]);
        }
        return 0;
    }

    /* Calibrate: one untimed run each (warms caches and code), then the
     * passes per run that fill --min-time. */
    for (i = 0; i < nt; i++) {
        double w, c, per;
        t[i].passes = 1;
        timed_run(&t[i], &s, &w, &c);
        per = strcmp(clock_name, "cpu") ? w : c;
        if (passes_fixed) t[i].passes = passes_fixed;
        else if (per < min_time) t[i].passes = (uint64_t)(min_time / (per > 1e-9 ? per : 1e-9)) + 1;
        if (t[i].passes > (1u << 20)) t[i].passes = 1u << 20;
        t[i].ns = (double *)xcalloc((size_t)reps, sizeof(double));
        t[i].cpu_ns = (double *)xcalloc((size_t)reps, sizeof(double));
        t[i].reps = reps;
    }
    /* Interleaved runs: run r of every target, then run r + 1. */
    for (r = 0; r < reps; r++) {
        if (!quiet) fprintf(stderr, "\rhwprof-bench: run %d/%d", r + 1, reps);
        for (i = 0; i < nt; i++) {
            double w, c, ev = (double)t[i].passes * (double)s.n[t[i].kind];
            timed_run(&t[i], &s, &w, &c);
            t[i].ns[r] = 1e9 * (strcmp(clock_name, "cpu") ? w : c) / ev;
            t[i].cpu_ns[r] = 1e9 * c / ev;
        }
    }
    if (!quiet) fprintf(stderr, "\r%40s\r", "");
    for (i = 0; i < nt; i++) {
        double *x = t[i].ns;
        qsort(x, (size_t)reps, sizeof *x, cmp_d);
        t[i].q[0] = x[0];
        t[i].q[1] = quantile(x, reps, 0.25);
        t[i].q[2] = quantile(x, reps, 0.5);
        t[i].q[3] = quantile(x, reps, 0.75);
        t[i].q[4] = x[reps - 1];
        t[i].model_events = t[i].events ? t[i].events(&t[i]) : 0;
        if (t[i].q[3] - t[i].q[1] > 0.05 * t[i].q[2])
            snprintf(warn[i][nwarn[i]++], 160, "spread: the IQR is %.1f%% of the median",
                     100 * (t[i].q[3] - t[i].q[1]) / t[i].q[2]);
        if (t[i].q[4] > 1.5 * t[i].q[0])
            snprintf(warn[i][nwarn[i]++], 160, "spread: the maximum is %.2fx the minimum",
                     t[i].q[4] / t[i].q[0]);
    }
    /* Machine warnings, read again after the runs. */
    {
        machine after;
        machine_read(&after);
        if (after.load[0] > m.load[0]) m.load[0] = after.load[0];
        if (m.load[0] >= 0.75 * (double)m.cores)
            snprintf(warn[MAX_TARGETS][nwarn[MAX_TARGETS]++], 160,
                     "machine loaded: load average %.2f on %ld cores", m.load[0], m.cores);
        if (m.governor[0] && strcmp(m.governor, "performance"))
            snprintf(warn[MAX_TARGETS][nwarn[MAX_TARGETS]++], 160,
                     "CPU frequency governor is %s, not performance", m.governor);
    }

    if (json) {
        FILE *f = stdout;
        printf("{\"tool\":\"hwprof-bench\",\"version\":1,\n \"machine\":{\"cpu\":");
        json_str(f, m.cpu);
        printf(",\"cores\":%ld,\"loadavg\":[%.2f,%.2f,%.2f],\"governor\":", m.cores, m.load[0],
               m.load[1], m.load[2]);
        if (m.governor[0]) json_str(f, m.governor);
        else printf("null");
        printf("},\n \"build\":{\"compiler\":");
        json_str(f, HWB_COMPILER);
        printf(",\"flags\":");
        json_str(f, HWB_FLAGS);
        printf(",\"buildtype\":");
        json_str(f, HWB_BUILDTYPE);
        printf(",\"commit\":");
        json_str(f, HWB_COMMIT);
        printf("},\n \"input\":{\"source\":");
        json_str(f, s.source);
        for (i = 0; i < S_KINDS; i++)
            printf(",\"%s\":%llu,\"%s_distinct\":%llu", kind_name[i], (unsigned long long)s.n[i],
                   kind_name[i], (unsigned long long)s.distinct[i]);
        printf("},\n \"clock\":\"%s\",\"reps\":%d,\"cost\":%s,\"keep\":%s,\n \"warnings\":[",
               clock_name, reps, g_cost ? "true" : "false", g_keep ? "true" : "false");
        for (j = 0; j < nwarn[MAX_TARGETS]; j++) {
            if (j) printf(",");
            json_str(f, warn[MAX_TARGETS][j]);
        }
        printf("],\n \"results\":[");
        for (i = 0; i < nt; i++) {
            const target *x = &t[i];
            printf("%s\n  {\"name\":\"%s\",\"peer\":%s,\"stream\":\"%s\",\"stream_events\":%llu,"
                   "\"passes\":%llu,\"events\":%llu",
                   i ? "," : "", x->name, x->peer ? "true" : "false", kind_name[x->kind],
                   (unsigned long long)s.n[x->kind], (unsigned long long)x->passes,
                   (unsigned long long)(x->passes * s.n[x->kind]));
            if (!x->peer) printf(",\"model_events\":%llu", (unsigned long long)x->model_events);
            if (x->desc) printf(",\"desc\":%s", x->desc);
            if (x->desc2) printf(",\"hpt_desc\":%s", x->desc2);
            if (!strcmp(x->name, "exact")) {
                uint64_t d, top, total;
                exact_summary(x, &d, &top, &total);
                printf(",\"distinct\":%llu,\"max_count\":%llu,\"total\":%llu", (unsigned long long)d,
                       (unsigned long long)top, (unsigned long long)total);
            }
            printf(",\"ns_per_event\":{\"median\":%.4f,\"q1\":%.4f,\"q3\":%.4f,\"iqr\":%.4f,"
                   "\"min\":%.4f,\"max\":%.4f,\"runs\":[",
                   x->q[2], x->q[1], x->q[3], x->q[3] - x->q[1], x->q[0], x->q[4]);
            for (r = 0; r < reps; r++) printf("%s%.4f", r ? "," : "", x->ns[r]);
            printf("]}");
            if (x->exact_ix >= 0) {
                const target *e = &t[x->exact_ix];
                printf(",\"vs_exact\":{\"ratio\":%.4f,\"lo\":%.4f,\"hi\":%.4f}", x->q[2] / e->q[2],
                       x->q[1] / e->q[3], x->q[3] / e->q[1]);
            }
            printf(",\"warnings\":[");
            for (j = 0; j < nwarn[i]; j++) {
                if (j) printf(",");
                json_str(f, warn[i][j]);
            }
            printf("]}");
        }
        printf("\n]}\n");
    } else if (csv) {
        printf("name,peer,stream,stream_events,passes,events,median_ns,q1_ns,q3_ns,min_ns,max_ns,"
               "vs_exact,vs_exact_lo,vs_exact_hi,warnings\n");
        for (i = 0; i < nt; i++) {
            const target *x = &t[i];
            printf("%s,%d,%s,%llu,%llu,%llu,%.4f,%.4f,%.4f,%.4f,%.4f,", x->name, x->peer,
                   kind_name[x->kind], (unsigned long long)s.n[x->kind],
                   (unsigned long long)x->passes, (unsigned long long)(x->passes * s.n[x->kind]),
                   x->q[2], x->q[1], x->q[3], x->q[0], x->q[4]);
            if (x->exact_ix >= 0) {
                const target *e = &t[x->exact_ix];
                printf("%.4f,%.4f,%.4f,", x->q[2] / e->q[2], x->q[1] / e->q[3], x->q[3] / e->q[1]);
            } else {
                printf(",,,");
            }
            printf("%d\n", nwarn[i]);
        }
    } else {
        printf("machine: %s, %ld cores, load %.2f %.2f %.2f, governor %s\n", m.cpu, m.cores,
               m.load[0], m.load[1], m.load[2], m.governor[0] ? m.governor : "unreadable");
        printf("build:   %s %s (%s), commit %s\n", HWB_COMPILER, HWB_FLAGS, HWB_BUILDTYPE, HWB_COMMIT);
        printf("input:   %s:", s.source);
        for (i = 0; i < S_KINDS; i++)
            if (s.n[i])
                printf(" %s %llu (%llu distinct)", kind_name[i], (unsigned long long)s.n[i],
                       (unsigned long long)s.distinct[i]);
        printf("\nclock:   %s time, %d interleaved runs per target, %s%s\n\n",
               strcmp(clock_name, "cpu") ? "wall" : "thread CPU", reps,
               g_keep ? "state kept between runs" : "each from a reset instance",
               g_cost ? ", cost shim attached" : "");
        printf("%-12s %-6s %11s %9s %9s %9s %9s %9s  %-22s\n", "target", "stream", "events/run",
               "median", "q1", "q3", "min", "max", "vs exact [q1..q3]");
        printf("%-12s %-6s %11s %9s %9s %9s %9s %9s\n", "", "", "", "ns/event", "", "", "", "");
        for (i = 0; i < nt; i++) {
            const target *x = &t[i];
            printf("%-12s %-6s %11llu %9.3f %9.3f %9.3f %9.3f %9.3f", x->name, kind_name[x->kind],
                   (unsigned long long)(x->passes * s.n[x->kind]), x->q[2], x->q[1], x->q[3],
                   x->q[0], x->q[4]);
            if (x->exact_ix >= 0) {
                const target *e = &t[x->exact_ix];
                printf("  %.3fx [%.3f..%.3f]", x->q[2] / e->q[2], x->q[1] / e->q[3],
                       x->q[3] / e->q[1]);
            }
            printf("%s\n", nwarn[i] ? "  (!)" : "");
        }
        printf("\n");
        for (i = 0; i < nt; i++) {
            if (t[i].desc) printf("desc %-5s %s\n", t[i].name, t[i].desc);
            if (t[i].desc2) printf("desc %-5s %s\n", "hpt", t[i].desc2);
        }
    }
    fflush(stdout);
    for (i = 0; i <= MAX_TARGETS; i++)
        for (j = 0; j < nwarn[i]; j++)
            fprintf(stderr, "warning: %s%s%s\n", i < MAX_TARGETS ? t[i].name : "",
                    i < MAX_TARGETS ? ": " : "", warn[i][j]);
    for (i = 0; i < nt; i++)
        if (t[i].sink == 42) printf("\n"); /* keeps the handlers' work alive */
    return 0;
}
