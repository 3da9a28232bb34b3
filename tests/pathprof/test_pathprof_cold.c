/* SPDX-License-Identifier: MIT */
/* tests/pathprof/test_pathprof_cold.c: the path profiler's cold paths,
 * each against what the header and docs/ARCHITECTURE.md state: the path
 * stack, the Hot Path Table and the phase detector refuse an instance
 * that was never initialised (status EINVAL, queries answer 0, the JSON
 * writers write null) and a merge of an instance into itself (it would
 * double every count); an LRU table whose clock reaches 2^32 - 1
 * renumbers its stamps and keeps evicting the least recently used path. */
#define HWPROF_IMPL
#include "hwprof/hwprof.h"

#include "harness.h"

static size_t text_of(void (*wr)(const void *, const hwp_writer *), const void *x,
                      char *buf, size_t cap) {
    hwp_bufwriter b;
    hwp_writer w = hwp_writer_buf(&b, buf, cap - 1);
    wr(x, &w);
    buf[b.len] = 0;
    return b.len;
}

/* The writers take their own instance types; these adapt them. */
static void hpt_text(const void *x, const hwp_writer *w) { hwp_hpt_write_text(x, w); }
static void hpt_json(const void *x, const hwp_writer *w) { hwp_hpt_write_json(x, w); }
static void phase_text(const void *x, const hwp_writer *w) { hwp_phase_write_text(x, w); }
static void phase_json(const void *x, const hwp_writer *w) { hwp_phase_write_json(x, w); }
static void path_text(const void *x, const hwp_writer *w) { hwp_path_write_text(x, w); }
static void path_json(const void *x, const hwp_writer *w) { hwp_path_write_json(x, w); }

static bool no_block(void *ctx, uint64_t addr, hwp_path_block *b) {
    (void)ctx, (void)addr, (void)b;
    return false;
}

static void test_uninitialised_refused(void) {
    hwp_hpt h;
    hwp_phase ph;
    hwp_path p;
    hwp_hpt_stats hs;
    hwp_phase_stats ps;
    hwp_path_stats st;
    hwp_path_row rows[2];
    hwp_path_pd pd = {0x100, 3};
    hwp_phase_scores sc;
    uint32_t ids[2] = {0, 1};
    uint64_t out[2];
    char buf[64];
    memset(&h, 0, sizeof h);
    memset(&ph, 0, sizeof ph);
    memset(&p, 0, sizeof p);
    /* the Hot Path Table */
    CHECK_EQ(hwp_hpt_reset(&h), HWP_EINVAL);
    CHECK_EQ(hwp_hpt_reset(NULL), HWP_EINVAL);
    CHECK_EQ(hwp_hpt_flush(&h), HWP_EINVAL);
    CHECK_EQ(hwp_hpt_get_stats(&h, &hs), HWP_EINVAL);
    CHECK_EQ(hwp_hpt_merge(&h, &h), HWP_EINVAL);
    CHECK_EQ(hwp_hpt_merge(NULL, &h), HWP_EINVAL);
    CHECK_EQ(hwp_hpt_lookup(&h, &pd), 0);
    CHECK_EQ(hwp_hpt_lookup(NULL, &pd), 0);
    CHECK_EQ(hwp_hpt_export(&h, rows, 2), 0);
    CHECK_EQ(hwp_hpt_read_json(&h, "{}", 2, NULL), HWP_EINVAL);
    CHECK_EQ(hwp_hpt_read_desc(NULL, "{}", 2, NULL), HWP_EINVAL);
    CHECK_EQ(text_of(hpt_text, &h, buf, sizeof buf), 0);
    text_of(hpt_json, &h, buf, sizeof buf);
    CHECK_STR(buf, "null");
    /* the phase detector */
    CHECK_EQ(hwp_phase_reset(&ph), HWP_EINVAL);
    CHECK_EQ(hwp_phase_flush(&ph), HWP_EINVAL);
    CHECK_EQ(hwp_phase_flush(NULL), HWP_EINVAL);
    CHECK_EQ(hwp_phase_get_stats(&ph, &ps), HWP_EINVAL);
    CHECK_EQ(hwp_phase_merge(&ph, &ph), HWP_EINVAL);
    CHECK_EQ(hwp_phase_merge(&ph, NULL), HWP_EINVAL);
    CHECK_EQ(hwp_phase_read_json(&ph, "{}", 2, NULL), HWP_EINVAL);
    CHECK_EQ(hwp_phase_bbv_desc(NULL, NULL), HWP_EINVAL);
    CHECK_EQ(text_of(phase_text, &ph, buf, sizeof buf), 0);
    text_of(phase_json, &ph, buf, sizeof buf);
    CHECK_STR(buf, "null");
    /* the path stack */
    CHECK_EQ(hwp_path_attach(&p, NULL, NULL), HWP_EINVAL);
    CHECK_EQ(hwp_path_begin(&p, 0x100), HWP_EINVAL);
    CHECK_EQ(hwp_path_unwind(&p, 1, true), HWP_EINVAL);
    CHECK_EQ(hwp_path_flush(&p), HWP_EINVAL);
    CHECK_EQ(hwp_path_reset(&p), HWP_EINVAL);
    CHECK_EQ(hwp_path_get_stats(&p, &st), HWP_EINVAL);
    CHECK_EQ(hwp_path_merge(&p, &p), HWP_EINVAL);
    CHECK_EQ(hwp_path_merge(NULL, &p), HWP_EINVAL);
    CHECK_EQ(hwp_path_read_json(&p, "{}", 2, NULL), HWP_EINVAL);
    CHECK(hwp_path_overhead_pct(&p) == 0.0);
    CHECK(hwp_path_overhead_pct(NULL) == 0.0);
    CHECK_EQ(hwp_path_decode(&p, &pd, no_block, NULL, out, 2), 0);
    CHECK_EQ(text_of(path_text, &p, buf, sizeof buf), 0);
    text_of(path_json, &p, buf, sizeof buf);
    CHECK_STR(buf, "null");
    /* the metrics refuse missing inputs */
    CHECK(hwp_path_overlap(NULL, 1, rows, 1) == 0.0);
    CHECK(hwp_path_overlap(rows, 0, rows, 1) == 0.0);
    CHECK_EQ(hwp_phase_score(NULL, ids, 2, 0, &sc), HWP_EINVAL);
    CHECK_EQ(hwp_phase_score(ids, ids, 0, 0, &sc), HWP_EINVAL);
    CHECK_EQ(hwp_phase_score(ids, ids, 2, 0, NULL), HWP_EINVAL);
}

/* A stack attached to a table or detector that was never initialised
 * is refused naming which; a merge into itself is refused and leaves
 * every count as it was (it would double them). */
static void test_attach_and_self_merge(void) {
    static unsigned char mp[1 << 14], mh[1 << 14], mf[1 << 14];
    hwp_path p;
    hwp_hpt h, hz;
    hwp_phase ph, phz;
    hwp_path_stats st;
    hwp_hpt_stats hs;
    hwp_phase_stats ps;
    hwp_phase_desc fd;
    hwp_path_pd pd = {0x9000, 2};
    memset(&st, 0, sizeof st); /* gcc -O2 cannot see get_stats fill them */
    memset(&hs, 0, sizeof hs);
    memset(&ps, 0, sizeof ps);
    memset(&hz, 0, sizeof hz);
    memset(&phz, 0, sizeof phz);
    memset(&fd, 0, sizeof fd);
    fd.interval = 100;
    CHECK_EQ(hwp_path_init(&p, mp, sizeof mp, NULL, NULL), HWP_OK);
    CHECK_EQ(hwp_hpt_init(&h, mh, sizeof mh, NULL, NULL), HWP_OK);
    CHECK_EQ(hwp_phase_init(&ph, mf, sizeof mf, &fd, NULL), HWP_OK);
    CHECK_EQ(hwp_path_attach(&p, &hz, NULL), HWP_EINVAL);
    CHECK_HAS(hwp_why(&p), "hpt");
    CHECK_EQ(hwp_path_attach(&p, NULL, &phz), HWP_EINVAL);
    CHECK_HAS(hwp_why(&p), "phase");
    CHECK_EQ(hwp_path_attach(&p, &h, &ph), HWP_OK);
    CHECK_EQ(hwp_path_begin(&p, 0x100), HWP_OK);
    hwp_path_branch(&p, 0x104, 0x200, HWP_CLS_BR_COND, true, 2, 0);
    hwp_path_branch(&p, 0x204, 0x300, HWP_CLS_CALL, true, 2, 0);
    hwp_path_branch(&p, 0x304, 0x208, HWP_CLS_RET, true, 2, 0);
    CHECK_EQ(hwp_path_flush(&p), HWP_OK);
    CHECK_EQ(hwp_hpt_add(&h, &pd, 5), 0);
    CHECK_EQ(hwp_path_get_stats(&p, &st), HWP_OK);
    CHECK_EQ(hwp_hpt_get_stats(&h, &hs), HWP_OK);
    CHECK_EQ(hwp_phase_get_stats(&ph, &ps), HWP_OK);
    CHECK(st.events > 0 && hs.events > 1 && ps.events > 0); /* the stack fed both */
    CHECK_EQ(hwp_path_merge(&p, &p), HWP_EINVAL);
    CHECK_HAS(hwp_why(&p), "itself");
    CHECK_EQ(hwp_hpt_merge(&h, &h), HWP_EINVAL);
    CHECK_HAS(hwp_why(&h), "itself");
    CHECK_EQ(hwp_phase_merge(&ph, &ph), HWP_EINVAL);
    CHECK_HAS(hwp_why(&ph), "itself");
    {
        hwp_path_stats s2;
        hwp_hpt_stats h2;
        hwp_phase_stats p2;
        memset(&s2, 0, sizeof s2);
        memset(&h2, 0, sizeof h2);
        memset(&p2, 0, sizeof p2);
        CHECK_EQ(hwp_path_get_stats(&p, &s2), HWP_OK);
        CHECK_EQ(s2.events, st.events);
        CHECK_EQ(hwp_hpt_get_stats(&h, &h2), HWP_OK);
        CHECK(h2.events == hs.events && h2.total == hs.total);
        CHECK_EQ(hwp_hpt_lookup(&h, &pd), 5);
        CHECK_EQ(hwp_phase_get_stats(&ph, &p2), HWP_OK);
        CHECK_EQ(p2.events, ps.events);
    }
}

static hwp_path_pd mkpd(uint64_t start) {
    hwp_path_pd pd;
    pd.start = start;
    pd.shape = 2;
    return pd;
}

/* LRU in one set of 4 ways, with the table's clock (private, exposed for
 * static allocation) moved near 2^32 - 1: the stamps are renumbered when
 * it gets there, in the same order, so the victims stay the least
 * recently used paths. Without the renumbering the clock wraps to 0 and
 * the newest path becomes the first victim. */
static void test_lru_clock_wrap(void) {
    static unsigned char mh[1 << 12];
    hwp_hpt h;
    hwp_hpt_desc d;
    hwp_path_pd a = mkpd(0xA00), b = mkpd(0xB00), c = mkpd(0xC00), dd = mkpd(0xD00);
    hwp_path_pd e = mkpd(0xE00), f = mkpd(0xF00), g = mkpd(0x1000);
    memset(&d, 0, sizeof d);
    d.entries = 4, d.ways = 4, d.repl = HWP_HPT_LRU;
    CHECK_EQ(hwp_hpt_init(&h, mh, sizeof mh, &d, NULL), HWP_OK);
    hwp_hpt_add(&h, &a, 1);
    hwp_hpt_add(&h, &b, 1);
    hwp_hpt_add(&h, &c, 1);
    hwp_hpt_add(&h, &dd, 1);
    h.clock = 0xFFFFFFFCu;
    CHECK_EQ(hwp_hpt_add(&h, &a, 1), 1); /* hits: a, b, c newer than d */
    CHECK_EQ(hwp_hpt_add(&h, &b, 1), 1);
    CHECK_EQ(hwp_hpt_add(&h, &c, 1), 1); /* the clock reaches 2^32 - 1 */
    CHECK(h.clock < 0xFFFFFFFFu);
    CHECK_EQ(hwp_hpt_add(&h, &e, 1), 0); /* evicts d */
    CHECK_EQ(hwp_hpt_lookup(&h, &dd), 0);
    CHECK_EQ(hwp_hpt_add(&h, &f, 1), 0); /* evicts a, not the newer e */
    CHECK_EQ(hwp_hpt_lookup(&h, &a), 0);
    CHECK_EQ(hwp_hpt_lookup(&h, &e), 1);
    CHECK_EQ(hwp_hpt_lookup(&h, &b), 2);
    /* and the same on a miss that takes the clock to 2^32 - 1 */
    h.clock = 0xFFFFFFFEu;
    CHECK_EQ(hwp_hpt_add(&h, &g, 1), 0); /* evicts b */
    CHECK(h.clock < 0xFFFFFFFFu);
    CHECK_EQ(hwp_hpt_lookup(&h, &b), 0);
    CHECK_EQ(hwp_hpt_add(&h, &a, 1), 0); /* evicts c, not g */
    CHECK_EQ(hwp_hpt_lookup(&h, &c), 0);
    CHECK_EQ(hwp_hpt_lookup(&h, &g), 1);
}

/* A desc holding an enum name the reader does not know is refused with a
 * reason that lists every name it does know (white-box: the names come
 * from the header's own tables, so a name added to one and not to the
 * reason's list fails here). */
typedef hwp_status (*read_desc_fn)(void *d, const char *json, size_t n, hwp_json_err *err);
static hwp_status hpt_read(void *d, const char *s, size_t n, hwp_json_err *e) {
    return hwp_hpt_read_desc(d, s, n, e);
}
static hwp_status phase_read(void *d, const char *s, size_t n, hwp_json_err *e) {
    return hwp_phase_read_desc(d, s, n, e);
}
static hwp_status path_read(void *d, const char *s, size_t n, hwp_json_err *e) {
    return hwp_path_read_desc(d, s, n, e);
}

static void test_unknown_enum_lists_names(void) {
    static unsigned char mem[1 << 20];
    enum { HPT, PHASE, PATH };
    static const struct {
        unsigned model;
        const char *key;
        const char *const *names;
        size_t n;
    } rows[] = {
        {HPT, "index", hwp__hpt_index_names, HWP__N(hwp__hpt_index_names)},
        {HPT, "repl", hwp__hpt_repl_names, HWP__N(hwp__hpt_repl_names)},
        {HPT, "policy", hwp__hpt_policy_names, HWP__N(hwp__hpt_policy_names)},
        {PHASE, "kind", hwp__phase_kind_names, HWP__N(hwp__phase_kind_names)},
        {PATH, "mode", hwp__path_mode_names, HWP__N(hwp__path_mode_names)},
        {PATH, "metric", hwp__path_metric_names, HWP__N(hwp__path_metric_names)},
        {PATH, "overflow", hwp__path_overflow_names, HWP__N(hwp__path_overflow_names)},
    };
    static const read_desc_fn read[] = {hpt_read, phase_read, path_read};
    hwp_hpt h;
    hwp_phase ph;
    hwp_path p;
    char json[3][4096], bad[4096], key[32];
    const char *at, *end;
    union { hwp_hpt_desc h; hwp_phase_desc ph; hwp_path_desc p; } d;
    size_t i, k;
    CHECK_EQ(hwp_hpt_init(&h, mem, sizeof mem, NULL, NULL), HWP_OK);
    text_of(hpt_json, &h, json[HPT], sizeof json[HPT]);
    CHECK_EQ(hwp_phase_init(&ph, mem, sizeof mem, NULL, NULL), HWP_OK);
    text_of(phase_json, &ph, json[PHASE], sizeof json[PHASE]);
    CHECK_EQ(hwp_path_init(&p, mem, sizeof mem, NULL, NULL), HWP_OK);
    text_of(path_json, &p, json[PATH], sizeof json[PATH]);
    for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const char *src = json[rows[i].model];
        hwp_json_err err;
        snprintf(key, sizeof key, "\"%s\":\"", rows[i].key);
        at = strstr(src, key);
        if (!CHECK(at != NULL)) continue;
        at += strlen(key);
        end = strchr(at, '"');
        snprintf(bad, sizeof bad, "%.*snosuchname%s", (int)(at - src), src, end);
        memset(&err, 0, sizeof err);
        CHECK_EQ(read[rows[i].model](&d, bad, strlen(bad), &err), HWP_EFORMAT);
        if (!CHECK(err.why != NULL)) continue;
        CHECK_HAS(err.why, rows[i].key);
        CHECK(err.offset == (size_t)(at - src - 1));
        for (k = 0; k < rows[i].n; k++) CHECK_HAS(err.why, rows[i].names[k]);
    }
}

int main(int argc, char **argv) {
    hwt_begin(argc, argv);
    HWT_RUN(test_uninitialised_refused);
    HWT_RUN(test_attach_and_self_merge);
    HWT_RUN(test_lru_clock_wrap);
    HWT_RUN(test_unknown_enum_lists_names);
    return hwt_end();
}
