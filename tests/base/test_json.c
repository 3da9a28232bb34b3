/* SPDX-License-Identifier: MIT */
/* tests/base/test_json.c: base.h's report writer and JSON reader at their
 * edges. Every malformed text is refused with the reason base.h names and
 * the byte offset of the first error (worked out by hand from the text,
 * not read off the reader); what the writer puts out reads back to the
 * same value. */
#define HWPROF_IMPL
#include "hwprof/hwprof.h"

#include "harness.h"

/* One value of a kind, then the end of the text. */
enum { U64, I64, F64, BOOL, STR, SKIP };

typedef struct jcase {
    const char *text;
    int kind;
    const char *why; /* NULL: read */
    size_t offset;
} jcase;

static const char *read_one(const char *text, size_t n, int kind,
                            size_t *offset, char *str, size_t cap) {
    hwp_json j;
    hwp_json_err e;
    uint64_t u;
    int64_t i;
    double d;
    bool b;
    hwp_json_init(&j, text, n);
    switch (kind) {
    case U64: hwp_json_u64(&j, &u); break;
    case I64: hwp_json_i64(&j, &i); break;
    case F64: hwp_json_f64(&j, &d); break;
    case BOOL: hwp_json_bool(&j, &b); break;
    case STR: hwp_json_str(&j, str, cap); break;
    default: hwp_json_skip(&j); break;
    }
    hwp_json_end(&j);
    if (hwp_json_status(&j, &e) == HWP_OK) {
        CHECK(e.why == NULL && e.offset == 0);
        return NULL;
    }
    *offset = e.offset;
    return e.why;
}

static void check_cases(const jcase *c, size_t count) {
    size_t k;
    for (k = 0; k < count; k++) {
        char str[8];
        size_t off = (size_t)-1;
        const char *why = read_one(c[k].text, strlen(c[k].text), c[k].kind,
                                   &off, str, sizeof str);
        if (!c[k].why) {
            if (!CHECK(why == NULL)) printf("      \"%s\": %s at %zu\n", c[k].text, why, off);
            continue;
        }
        if (!CHECK(why && !strcmp(why, c[k].why) && off == c[k].offset))
            printf("      \"%s\": want \"%s\" at %zu, got \"%s\" at %zu\n", c[k].text,
                   c[k].why, c[k].offset, why ? why : "(read)", off);
    }
}

static void test_numbers_refused(void) {
    static const jcase c[] = {
        {"18446744073709551615", U64, NULL, 0},
        {"\"0X1F\"", U64, NULL, 0},
        {"\"0xffffffffffffffff\"", U64, NULL, 0},
        {"18446744073709551616", U64, "json: integer over 64 bits", 19},
        {"\"0x10000000000000000\"", U64, "json: hex number over 64 bits", 19},
        {"\"0x1g\"", U64, "json: bad hex digit", 4},
        {"\"0x\"", U64, "json: bad hex string", 0},
        {"\"0x12", U64, "json: bad hex string", 0},
        {"\"12\"", U64, "json: expected a number or a \"0x\" string", 0},
        {"\"0", U64, "json: expected a number or a \"0x\" string", 0},
        {" -1", U64, "json: expected an unsigned integer", 1},
        {"1.5", U64, "json: expected an integer", 1},
        {"7e2", U64, "json: expected an integer", 1},
        {"-9223372036854775808", I64, NULL, 0},
        {"9223372036854775807", I64, NULL, 0},
        {"-9223372036854775809", I64, "json: integer out of range", 20},
        {"9223372036854775808", I64, "json: integer out of range", 19},
        {"-x", I64, "json: expected a digit after '-'", 1},
        {"- 5", I64, "json: expected a digit after '-'", 1},
        {"-\"0x5\"", I64, "json: expected a digit after '-'", 1},
        {"-0", I64, NULL, 0},
        {"0", U64, NULL, 0},
        {"007", U64, "json: leading zero", 1},
        {"-05", I64, "json: leading zero", 2},
        {"null", F64, NULL, 0},
        {"nul", F64, "json: expected a number", 0},
        {"nulx", F64, "json: expected a number", 0},
        {"-", F64, "json: expected a number", 1},
        {"-.5", F64, "json: expected a number", 1},
        {"99999999999999999999", F64, "json: number too long", 19},
        {"1.", F64, "json: bad fraction", 2},
        {"1.x", F64, "json: bad fraction", 2},
        {"0.12345678901234567890", F64, "json: bad fraction", 22},
        {"1e", F64, "json: bad exponent", 2},
        {"1e+", F64, "json: bad exponent", 3},
        {"1e401", F64, "json: bad exponent", 5},
        {"1.5e3x", F64, "json: text after the report", 5},
        {"true", BOOL, NULL, 0},
        {"false", BOOL, NULL, 0},
        {"tru", BOOL, "json: expected true or false", 0},
        {"fals", BOOL, "json: expected true or false", 0},
        {"truE", BOOL, "json: expected true or false", 0},
        {"falsy", BOOL, "json: expected true or false", 0},
        {"1", BOOL, "json: expected true or false", 0},
    };
    check_cases(c, sizeof c / sizeof c[0]);
}

static void test_strings_refused(void) {
    static const jcase c[] = {
        {"\"abcdefg\"", STR, NULL, 0},                         /* 7 + NUL fit */
        {"\"abcdefgh\"", STR, "json: string too long", 8},     /* the 8th char */
        {"\"abc", STR, "json: unterminated string", 4},
        {"\"a\\", STR, "json: unterminated string", 3},
        {"\"\\x\"", STR, "json: bad escape", 2},
        {"\"\\u00g0\"", STR, "json: bad \\u escape", 5},
        {"\"\\u00", STR, "json: bad \\u escape", 5},
        {"\"\\u0080\"", STR, "json: \\u escape outside ASCII", 6},
        {"\"a\tb\"", STR, "json: control character in a string", 2},
        {"12", STR, "json: expected a string", 0},
    };
    check_cases(c, sizeof c / sizeof c[0]);
}

static void test_structure_refused(void) {
    static const jcase c[] = {
        {"{\"a\":[1,{\"b\":true}],\"c\":\"x\\\"\",\"d\":null,\"e\":-2.5e-1}", SKIP, NULL, 0},
        {"[]", SKIP, NULL, 0},
        {"{}", SKIP, NULL, 0},
        {" \t\r\n[ 1 , 2 ] \n", SKIP, NULL, 0},
        {"{\"a\":1 \"b\":2}", SKIP, "json: expected ',' or '}'", 7},
        {"[1 2]", SKIP, "json: expected ',' or ']'", 3},
        {"[1", SKIP, "json: expected ',' or ']'", 2},
        {"[1,]", SKIP, "json: trailing comma", 3},
        {"{\"a\":1,}", SKIP, "json: trailing comma", 7},
        {"{\"a\" 1}", SKIP, "json: expected ':'", 5},
        {"{1:2}", SKIP, "json: expected a string", 1},
        {"{\"a\":}", SKIP, "json: expected a number", 5},
        {"[1]x", SKIP, "json: text after the report", 3},
        {"1 2", SKIP, "json: text after the report", 2},
        {"", SKIP, "json: expected a number", 0},
        {"[tx]", SKIP, "json: expected true or false", 1},
        {"[\"\\q\"]", SKIP, "json: bad escape", 3},
    };
    check_cases(c, sizeof c / sizeof c[0]);
}

/* A NUL inside the text is not its end: hwp_json_end refuses it. */
static void test_nul_in_text(void) {
    size_t off = 0;
    const char *why = read_one("[1]\0", 4, SKIP, &off, NULL, 0);
    CHECK(why && !strcmp(why, "json: text after the report"));
    CHECK_EQ(off, 3);
    why = read_one("\"a\0\"", 4, STR, &off, NULL, 0);
    CHECK(why && !strcmp(why, "json: control character in a string"));
    CHECK_EQ(off, 2);
}

/* HWP_JSON_MAX_DEPTH nested arrays read; one more is refused where it
 * opens, before the reader recurses any deeper. */
static void test_depth_bound(void) {
    char text[2 * HWP_JSON_MAX_DEPTH + 3];
    size_t d, off = 0;
    const char *why;
    for (d = 0; d < HWP_JSON_MAX_DEPTH; d++) {
        text[d] = '[';
        text[HWP_JSON_MAX_DEPTH + d] = ']';
    }
    CHECK(read_one(text, 2 * HWP_JSON_MAX_DEPTH, SKIP, &off, NULL, 0) == NULL);
    text[0] = '{';
    text[1] = '"';
    text[2] = 'k';
    text[3] = '"';
    text[4] = ':';
    for (d = 5; d < HWP_JSON_MAX_DEPTH + 5; d++) text[d] = '[';
    why = read_one(text, HWP_JSON_MAX_DEPTH + 5, SKIP, &off, NULL, 0);
    CHECK(why && !strcmp(why, "json: nested too deeply"));
    CHECK_EQ(off, 5 + HWP_JSON_MAX_DEPTH - 1); /* the 65th opening bracket */
}

/* An object left open when the caller ends the text, and the first
 * error sticking: later calls fail without moving it. */
static void test_unclosed_and_sticky(void) {
    hwp_json j;
    hwp_json_err e;
    char key[8];
    uint64_t u = 7;
    const char *t = "{\"a\":1";
    hwp_json_init(&j, t, strlen(t));
    CHECK(hwp_json_object(&j));
    CHECK(hwp_json_member(&j, key, sizeof key));
    CHECK_STR(key, "a");
    CHECK(hwp_json_u64(&j, &u) && u == 1);
    CHECK(!hwp_json_end(&j));
    CHECK_EQ(hwp_json_status(&j, &e), HWP_EFORMAT);
    CHECK_STR(e.why, "json: unclosed object or array");
    CHECK_EQ(e.offset, 6);

    t = "[x, 2]";
    hwp_json_init(&j, t, strlen(t));
    CHECK(hwp_json_array(&j) && hwp_json_next(&j));
    CHECK(!hwp_json_u64(&j, &u));
    j.pos = 4; /* even with the cursor on a good number */
    CHECK(!hwp_json_u64(&j, &u) && u == 1);
    CHECK(!hwp_json_next(&j) && !hwp_json_array(&j) && !hwp_json_object(&j));
    CHECK(!hwp_json_member(&j, key, sizeof key) && !hwp_json_skip(&j));
    CHECK(!hwp_json_str(&j, key, sizeof key) && !hwp_json_bool(&j, &(bool){0}));
    CHECK(!hwp_json_f64(&j, &(double){0}) && !hwp_json_i64(&j, &(int64_t){0}));
    CHECK(!hwp_json_end(&j));
    CHECK_EQ(hwp_json_status(&j, NULL), HWP_EFORMAT);
    CHECK_EQ(hwp_json_status(&j, &e), HWP_EFORMAT);
    CHECK_STR(e.why, "json: expected an unsigned integer");
    CHECK_EQ(e.offset, 1);

    hwp_json_init(&j, NULL, 5); /* no text: nothing to read */
    CHECK(!hwp_json_object(&j));
    CHECK_EQ(hwp_json_status(&j, &e), HWP_EFORMAT);
    CHECK_EQ(e.offset, 0);
}

static void test_envelope(void) {
    static const jcase c[] = {
        {"{\"model\":\"rap\",\"version\":1}", 0, NULL, 0},
        {"{\"model\":\"rap\",\"version\":2,\"x\":[]}", 0, "json: report version newer than this reader", 25},
        {"{\"model\":\"rap\",\"version\":0}", 0, "json: report version 0", 25},
        {"{\"model\":\"pm\",\"version\":1}", 0, "json: report of another model", 9},
        {"{\"model\":\"rapx\",\"version\":1}", 0, "json: report of another model", 9},
        {"{\"version\":1,\"model\":\"rap\"}", 0, "json: a report begins with \"model\"", 11},
        {"{}", 0, "json: a report begins with \"model\"", 2},
        {"{\"model\":\"rap\"}", 0, "json: \"version\" must follow \"model\"", 15},
        {"{\"model\":\"rap\",\"v\":1}", 0, "json: \"version\" must follow \"model\"", 19},
        {"{\"model\":1}", 0, "json: expected a string", 9},
        {"[]", 0, "json: expected '{'", 0},
    };
    size_t k;
    for (k = 0; k < sizeof c / sizeof c[0]; k++) {
        hwp_json j;
        hwp_json_err e;
        bool ok;
        hwp_json_init(&j, c[k].text, strlen(c[k].text));
        ok = hwp_json_envelope(&j, "rap", 1);
        CHECK_EQ(ok, c[k].why == NULL);
        hwp_json_status(&j, &e);
        if (!c[k].why) {
            CHECK(e.why == NULL);
            continue;
        }
        if (!CHECK(e.why && !strcmp(e.why, c[k].why) && e.offset == c[k].offset))
            printf("      \"%s\": want \"%s\" at %zu, got \"%s\" at %zu\n", c[k].text,
                   c[k].why, c[k].offset, e.why ? e.why : "(read)", e.offset);
    }
}

/* hwp_json_read_desc: the first "desc" is read, later ones skipped; a
 * report without one is refused at its end. */
static bool read_a(hwp_json *j, void *d) {
    char key[8];
    if (!hwp_json_object(j)) return false;
    while (hwp_json_member(j, key, sizeof key)) {
        if (hwp_json_key_is(key, "a")) hwp_json_u64(j, (uint64_t *)d);
        else hwp_json_skip(j);
    }
    return !j->why;
}

static void test_read_desc(void) {
    hwp_json_err e;
    uint64_t a = 0;
    const char *t = "{\"model\":\"m\",\"version\":1,\"stats\":{\"a\":9},"
                    "\"desc\":{\"a\":3,\"b\":[1]},\"desc\":{\"a\":4}}";
    CHECK_EQ(hwp_json_read_desc(t, strlen(t), "m", read_a, &a, &e), HWP_OK);
    CHECK_EQ(a, 3);
    CHECK(e.why == NULL);
    t = "{\"model\":\"m\",\"version\":1,\"stats\":{}}";
    CHECK_EQ(hwp_json_read_desc(t, strlen(t), "m", read_a, &a, &e), HWP_EFORMAT);
    CHECK_STR(e.why, "json: report without a \"desc\"");
    CHECK_EQ(e.offset, strlen(t));
    t = "{\"model\":\"m\",\"version\":1,\"desc\":{\"a\":-1}}";
    CHECK_EQ(hwp_json_read_desc(t, strlen(t), "m", read_a, &a, &e), HWP_EFORMAT);
    CHECK_STR(e.why, "json: expected an unsigned integer");
    CHECK_EQ(e.offset, 37);
    t = "{\"model\":\"m\",\"version\":1,\"desc\":{}} {}";
    CHECK_EQ(hwp_json_read_desc(t, strlen(t), "m", read_a, &a, &e), HWP_EFORMAT);
    CHECK_STR(e.why, "json: text after the report");
    CHECK_EQ(e.offset, 36);
}

/* What the writer puts out, the reader reads back to the same value. */
static void test_round_trip(void) {
    static const uint64_t us[] = {0, 1, 9, 10, 4294967296ull, UINT64_MAX};
    static const int64_t is[] = {0, -1, 1, INT64_MIN, INT64_MAX};
    static const double fs[] = {0.0, 0.5, -0.25, 123456.789012345, 1e-9, -7.0};
    static const char *const ss[] = {"", "a\"b", "\\", "\x01\x1f", "tab\there", "/"};
    char buf[1024], str[16];
    hwp_bufwriter b;
    hwp_writer w = hwp_writer_buf(&b, buf, sizeof buf);
    hwp_json j;
    size_t k;
    hwp_put_json_envelope(&w, "rt", 1);
    for (k = 0; k < 6; k++) {
        char key[4] = {'u', (char)('0' + k), 0, 0};
        hwp_put_json_u64(&w, key, us[k]);
        key[0] = 'h';
        hwp_put_json_hex(&w, key, us[k]);
        key[0] = 'f';
        hwp_put_json_f64(&w, key, fs[k], 9);
        key[0] = 's';
        hwp_put(&w, ",", 1);
        hwp_put_json_str(&w, key);
        hwp_put(&w, ":", 1);
        hwp_put_json_str(&w, ss[k]);
        if (k < 5) {
            key[0] = 'i';
            hwp_put(&w, ",", 1);
            hwp_put_json_str(&w, key);
            hwp_put(&w, ":", 1);
            hwp_put_i64(&w, is[k]);
        }
    }
    hwp_put(&w, "}", 1);
    CHECK_EQ(b.dropped, 0);

    hwp_json_init(&j, buf, b.len);
    CHECK(hwp_json_envelope(&j, "rt", 1));
    for (k = 0; k < 6; k++) {
        char key[8];
        uint64_t u = 1, h = 1;
        double f = 1;
        int64_t i = 1;
        CHECK(hwp_json_member(&j, key, sizeof key) && key[0] == 'u' && hwp_json_u64(&j, &u));
        CHECK_EQ(u, us[k]);
        CHECK(hwp_json_member(&j, key, sizeof key) && key[0] == 'h' && hwp_json_u64(&j, &h));
        CHECK_EQ(h, us[k]);
        CHECK(hwp_json_member(&j, key, sizeof key) && key[0] == 'f' && hwp_json_f64(&j, &f));
        CHECK_NEAR(f, fs[k], 5e-10 * (1.0 + fabs(fs[k])));
        CHECK(hwp_json_member(&j, key, sizeof key) && key[0] == 's' &&
              hwp_json_str(&j, str, sizeof str));
        CHECK_STR(str, ss[k]);
        if (k < 5) {
            CHECK(hwp_json_member(&j, key, sizeof key) && key[0] == 'i' && hwp_json_i64(&j, &i));
            CHECK_EQ((uint64_t)i, (uint64_t)is[k]);
        }
    }
    CHECK(!hwp_json_member(&j, str, sizeof str));
    CHECK(hwp_json_end(&j));
    if (j.why) printf("      %s at %zu\n", j.why, j.err_pos);
}

/* Every escape the reader knows, including the ones hwprof never writes. */
static void test_escapes_read(void) {
    const char *t = "\"\\u0041\\u00e9\\n\\t\\r\\b\\f\\/\\\\\\\"\"";
    char str[16];
    hwp_json j;
    hwp_json_init(&j, t, strlen(t));
    CHECK(!hwp_json_str(&j, str, sizeof str)); /* \u00e9 is outside ASCII */
    t = "\"\\u0041\\u004A\\u006a\\n\\t\\r\\b\\f\\/\\\\\\\"\"";
    hwp_json_init(&j, t, strlen(t));
    CHECK(hwp_json_str(&j, str, sizeof str) && hwp_json_end(&j));
    CHECK_STR(str, "AJj\n\t\r\b\f/\\\"");
}

static void test_f64_values(void) {
    static const struct { const char *t; double v; } c[] = {
        {"2.5E+2", 250.0}, {"-1e-3", -0.001}, {"0e400", 0.0}, {"12", 12.0},
        {"1.25e1", 12.5}, {"-0.0", 0.0}, {"3e0", 3.0},
    };
    size_t k;
    for (k = 0; k < sizeof c / sizeof c[0]; k++) {
        hwp_json j;
        double v = -99;
        hwp_json_init(&j, c[k].t, strlen(c[k].t));
        CHECK(hwp_json_f64(&j, &v) && hwp_json_end(&j));
        CHECK_NEAR(v, c[k].v, 1e-12);
    }
    {
        hwp_json j;
        double v = 0;
        hwp_json_init(&j, "null", 4);
        CHECK(hwp_json_f64(&j, &v) && v != v); /* null reads as NaN */
    }
}

/* The writer's edges: NaN and out-of-range as null, decimals clamped to
 * 9, rounding half up at the last digit, a buffer that counts drops and
 * a zero-capacity one that writes nothing. */
static void test_writer_edges(void) {
    char buf[256];
    hwp_bufwriter b, z;
    hwp_writer w = hwp_writer_buf(&b, buf, sizeof buf), wz;
    hwp_put_f64(&w, 1.0 / 0.0, 2);
    hwp_put(&w, " ", 1);
    hwp_put_f64(&w, -1.0 / 0.0, 2);
    hwp_put(&w, " ", 1);
    hwp_put_f64(&w, 1.7e19, 1); /* in range, but not once scaled */
    hwp_put(&w, " ", 1);
    hwp_put_f64(&w, 0.125, 12); /* clamped to 9 decimals */
    hwp_put(&w, " ", 1);
    hwp_put_f64(&w, 0.0625, 3);
    hwp_put(&w, " ", 1);
    hwp_put_f64(&w, 2.5, 0);
    hwp_put(&w, " ", 1);
    hwp_put_hex(&w, 0);
    hwp_put(&w, " ", 1);
    hwp_put_hex(&w, UINT64_MAX);
    hwp_put(&w, " ", 1);
    hwp_put_i64(&w, 42);
    hwp_put(&w, " ", 1);
    hwp_put(&w, "x", 0); /* nothing */
    hwp_put_json_f64(&w, "f", 0.5, 1);
    hwp_put_json_hex(&w, "h", 255);
    CHECK_STR(buf, "null null null 0.125000000 0.063 3 0x0 0xffffffffffffffff 42 "
                   ",\"f\":0.5,\"h\":\"0xff\"");
    CHECK_EQ(b.dropped, 0);

    wz = hwp_writer_buf(&z, NULL, 0);
    hwp_put_str(&wz, "abc");
    CHECK_EQ(z.len, 0);
    CHECK_EQ(z.dropped, 3);
    {
        hwp_writer none = {NULL, NULL}; /* a writer without a callback */
        hwp_put_str(&none, "ignored");
    }
}

/* Every model's desc table (hwp_<model>_desc_fields, what hosts set
 * fields through): keys distinct, a default inside its own range, an
 * enum with its names, and a reason naming its field wherever a row
 * refuses values. */
static void test_desc_fields(void) {
    typedef const hwp_field *(*fields_fn)(size_t *n);
    static const fields_fn tables[] = {
        hwp_hpt_desc_fields, hwp_phase_desc_fields, hwp_path_desc_fields,
        hwp_rap_desc_fields, hwp_rap2_desc_fields, hwp_cp_desc_fields,
        hwp_cp_lvp_desc_fields, hwp_cp_simple_desc_fields,
        hwp_strat_desc_fields, hwp_strat_acc_desc_fields, hwp_pm_desc_fields,
        hwp_pm_table_desc_fields, hwp_core_desc_fields, hwp_vm_desc_fields};
    size_t t, i, k, n;
    for (t = 0; t < sizeof tables / sizeof tables[0]; t++) {
        const hwp_field *f = tables[t](&n);
        CHECK(f != NULL && n > 0 && n <= 64);
        for (i = 0; i < n; i++) {
            const hwp_field *r = &f[i];
            for (k = 0; k < i; k++) CHECK(strcmp(f[k].key, r->key) != 0);
            CHECK(r->why && strstr(r->why, r->key));
            CHECK(r->lo <= r->hi);
            if (r->type == HWP_FIELD_ENUM) CHECK(r->names && r->names[r->hi]);
            if (r->type == HWP_FIELD_SUB) CHECK(r->sub != NULL);
            if (r->type == HWP_FIELD_UINT && r->def)
                CHECK(r->def >= r->lo && r->def <= r->hi);
            if (r->type == HWP_FIELD_F64) CHECK(r->def >= r->lo && r->def <= r->hi);
            if (r->bad && !strstr(r->bad, r->key))
                printf("      %s: %s\n", r->key, r->bad);
            if (r->bad) CHECK(strstr(r->bad, r->key) != NULL);
            /* a row that refuses values says why */
            if (r->type != HWP_FIELD_SUB && (r->lo > 0 || r->flags & HWP_FIELD_POW2 ||
                                             (r->size < 8 && r->hi < hwp_mask64(8 * r->size))))
                CHECK(r->bad != NULL);
        }
    }
}

int main(int argc, char **argv) {
    hwt_begin(argc, argv);
    HWT_RUN(test_numbers_refused);
    HWT_RUN(test_strings_refused);
    HWT_RUN(test_structure_refused);
    HWT_RUN(test_nul_in_text);
    HWT_RUN(test_depth_bound);
    HWT_RUN(test_unclosed_and_sticky);
    HWT_RUN(test_envelope);
    HWT_RUN(test_read_desc);
    HWT_RUN(test_round_trip);
    HWT_RUN(test_escapes_read);
    HWT_RUN(test_f64_values);
    HWT_RUN(test_writer_edges);
    HWT_RUN(test_desc_fields);
    return hwt_end();
}
