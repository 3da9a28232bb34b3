/* examples/common/hwx_arg.c: see hwx_arg.h. */
#include "hwx_arg.h"

size_t hwx_strlen(const char *s) {
    size_t n = 0;
    while (s[n]) n++;
    return n;
}

bool hwx_streq(const char *a, const char *b) {
    while (*a && *a == *b) a++, b++;
    return *a == *b;
}

bool hwx_parse_u64(const char *s, uint64_t *v) {
    uint64_t x = 0, base = 10, mul = 1;
    bool any = false;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) base = 16, s += 2;
    for (; *s; s++) {
        uint64_t d;
        char c = *s;
        if (c >= '0' && c <= '9') d = (uint64_t)(c - '0');
        else if (base == 16 && c >= 'a' && c <= 'f') d = (uint64_t)(c - 'a' + 10);
        else if (base == 16 && c >= 'A' && c <= 'F') d = (uint64_t)(c - 'A' + 10);
        else break;
        if (x > (~(uint64_t)0 - d) / base) return false;
        x = x * base + d;
        any = true;
    }
    if (*s == 'k' || *s == 'K') mul = 1024, s++;
    else if (*s == 'm' || *s == 'M') mul = 1024 * 1024, s++;
    else if (*s == 'g' || *s == 'G') mul = 1024 * 1024 * 1024, s++;
    if (!any || *s) return false;
    if (x > ~(uint64_t)0 / mul) return false;
    *v = x * mul;
    return true;
}

bool hwx_parse_f64(const char *s, double *v) {
    double x = 0, scale = 1;
    bool neg = false, any = false;
    if (*s == '-') neg = true, s++;
    for (; *s >= '0' && *s <= '9'; s++) x = x * 10 + (*s - '0'), any = true;
    if (*s == '.') {
        for (s++; *s >= '0' && *s <= '9'; s++) {
            scale *= 0.1;
            x += (*s - '0') * scale;
            any = true;
        }
    }
    if (!any) return false;
    if (*s == 'e' || *s == 'E') {
        int e = 0, i;
        bool eneg = false;
        s++;
        if (*s == '-') eneg = true, s++;
        else if (*s == '+') s++;
        if (!(*s >= '0' && *s <= '9')) return false;
        for (; *s >= '0' && *s <= '9' && e < 400; s++) e = e * 10 + (*s - '0');
        for (i = 0; i < e; i++) x = eneg ? x * 0.1 : x * 10;
    }
    if (*s == '%') x *= 0.01, s++;
    if (*s) return false;
    *v = neg ? -x : x;
    return true;
}

/* The refusal, built in one static buffer (see hwx_arg.h). */
static char hwx__msg[320];

static hwp_writer hwx__msg_start(hwp_bufwriter *b, const char *opt) {
    hwp_writer w = hwp_writer_buf(b, hwx__msg, sizeof hwx__msg);
    hwp_put_str(&w, opt);
    hwp_put_str(&w, ": ");
    return w;
}

/* ", got \"v\"" (cut short if long), then hand the message out. */
static hwp_status hwx__msg_end(const hwp_writer *w, const char *v, const char **why) {
    size_t n = hwx_strlen(v);
    hwp_put_str(w, ", got \"");
    hwp_put(w, v, n < 64 ? n : 64);
    hwp_put_str(w, n < 64 ? "\"" : "...\"");
    if (why) *why = hwx__msg;
    return HWP_EINVAL;
}

hwp_status hwx_arg_fail2(const char *opt, const char *reason, const char *more,
                         const char **why) {
    hwp_bufwriter b;
    hwp_writer w = hwx__msg_start(&b, opt);
    hwp_put_str(&w, reason);
    hwp_put_str(&w, more);
    if (why) *why = hwx__msg;
    return HWP_EINVAL;
}

hwp_status hwx_arg_fail(const char *opt, const char *reason, const char **why) {
    return hwx_arg_fail2(opt, reason, "", why);
}

hwp_status hwx_arg_u64(const char *opt, const char *v, uint64_t lo, uint64_t hi,
                       uint64_t *out, const char **why) {
    uint64_t x;
    hwp_bufwriter b;
    hwp_writer w;
    if (v && hwx_parse_u64(v, &x) && x >= lo && x <= hi) {
        *out = x;
        return HWP_OK;
    }
    w = hwx__msg_start(&b, opt);
    hwp_put_str(&w, "expected an integer in ");
    hwp_put_u64(&w, lo);
    hwp_put_str(&w, "..");
    hwp_put_u64(&w, hi);
    return hwx__msg_end(&w, v ? v : "", why);
}

hwp_status hwx_arg_u32(const char *opt, const char *v, uint32_t lo, uint32_t hi,
                       uint32_t *out, const char **why) {
    uint64_t x;
    if (hwx_arg_u64(opt, v, lo, hi, &x, why) != HWP_OK) return HWP_EINVAL;
    *out = (uint32_t)x;
    return HWP_OK;
}

/* A bound as people write it: 6 decimals at most, no trailing zeros. */
static void hwx__put_num(const hwp_writer *w, double x) {
    char buf[48];
    hwp_bufwriter b;
    hwp_writer t = hwp_writer_buf(&b, buf, sizeof buf);
    size_t n;
    hwp_put_f64(&t, x, 6);
    n = b.len;
    if (n && hwx_strlen(buf) == n) {
        size_t dot = 0;
        while (dot < n && buf[dot] != '.') dot++;
        if (dot < n) {
            while (n > dot + 1 && buf[n - 1] == '0') n--;
            if (n == dot + 1) n = dot;
        }
    }
    hwp_put(w, buf, n);
}

hwp_status hwx_arg_f64(const char *opt, const char *v, double lo, int lo_open, double hi,
                       int hi_open, double *out, const char **why) {
    double x;
    hwp_bufwriter b;
    hwp_writer w;
    if (v && hwx_parse_f64(v, &x) && (lo_open ? x > lo : x >= lo) &&
        (hi_open ? x < hi : x <= hi)) {
        *out = x;
        return HWP_OK;
    }
    w = hwx__msg_start(&b, opt);
    hwp_put_str(&w, "expected a number in ");
    hwp_put_str(&w, lo_open ? "(" : "[");
    hwx__put_num(&w, lo);
    hwp_put_str(&w, ", ");
    hwx__put_num(&w, hi);
    hwp_put_str(&w, hi_open ? ")" : "]");
    return hwx__msg_end(&w, v ? v : "", why);
}

hwp_status hwx_arg_field(const char *opt, void *base, const hwp_field *f, size_t n,
                         const char *name, const char *v, const char **why) {
    size_t off;
    uint64_t x;
    double d;
    uint32_t i, any = 0;
    hwp_bufwriter b;
    hwp_writer w;
    if (!(f = hwp_field_find(f, n, name, &off))) {
        if (why) *why = NULL;
        return HWP_EINVAL;
    }
    if (f->type == HWP_FIELD_F64) {
        if (!hwx_parse_f64(v, &d)) return hwx_arg_f64(opt, v, -1e300, 0, 1e300, 0, &d, why);
        hwp_field_set_f64(base, f, off, d);
        return HWP_OK;
    }
    for (i = 0; f->names && i <= f->hi; i++)
        if (f->names[i] && hwx_streq(v, f->names[i]) && hwp_field_set_u64(base, f, off, i))
            return HWP_OK;
    if (f->type != HWP_FIELD_ENUM && hwx_parse_u64(v, &x) && hwp_field_set_u64(base, f, off, x))
        return HWP_OK;
    w = hwx__msg_start(&b, opt);
    if (f->type == HWP_FIELD_SUB || f->type == HWP_FIELD_BYTES) {
        hwp_put_str(&w, "not a number: set its members (");
        hwp_put_str(&w, opt);
        hwp_put_str(&w, ".NAME)");
        return hwx__msg_end(&w, v, why);
    }
    hwp_put_str(&w, f->names ? "expected one of " : "expected an integer <= ");
    for (i = 0; f->names && i <= f->hi; i++)
        if (f->names[i]) { /* "a, b or c" */
            uint32_t k = i + 1;
            while (k <= f->hi && !f->names[k]) k++;
            hwp_put_str(&w, !any++ ? "" : k > f->hi ? " or " : ", ");
            hwp_put_str(&w, f->names[i]);
        }
    if (f->type != HWP_FIELD_ENUM) {
        if (f->names) hwp_put_str(&w, ", or an integer <= ");
        hwp_put_u64(&w, f->names ? f->hi : f->size < 8 ? (1ull << 8 * f->size) - 1 : ~0ull);
    }
    return hwx__msg_end(&w, v, why);
}

hwp_status hwx_arg_enum(const char *opt, const char *v, const char *const *names,
                        uint32_t *out, const char **why) {
    uint32_t i;
    hwp_bufwriter b;
    hwp_writer w;
    for (i = 0; v && names[i]; i++)
        if (hwx_streq(v, names[i])) {
            *out = i;
            return HWP_OK;
        }
    w = hwx__msg_start(&b, opt);
    hwp_put_str(&w, "expected one of ");
    for (i = 0; names[i]; i++) {
        if (i) hwp_put_str(&w, names[i + 1] ? ", " : " or ");
        hwp_put_str(&w, names[i]);
    }
    return hwx__msg_end(&w, v ? v : "", why);
}
