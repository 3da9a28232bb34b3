/* examples/common/hwx_opts.c: option parsing shared by every host, and
 * the small freestanding string helpers it needs. */
#include "hwx_int.h"

size_t hwx_strlen(const char *s) {
    size_t n = 0;
    while (s[n]) n++;
    return n;
}

bool hwx_streq(const char *a, const char *b) {
    while (*a && *a == *b) a++, b++;
    return *a == *b;
}

/* Does s start with prefix p? */
static bool hwx__starts(const char *s, const char *p) {
    while (*p && *s == *p) s++, p++;
    return *p == 0;
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

/* The model a name or "name_param" key refers to (an adapter's name or
 * alias); *rest points past the name and its '_' (at "" for a bare
 * name). -1 if none. The longest name wins ("path" vs "pathprof"). */
static int hwx__model_of(const char *key, const char **rest) {
    unsigned i, j;
    int best = -1;
    size_t best_len = 0;
    for (i = 0; i < hwx__nadapters; i++)
        for (j = 0; j < 2; j++) {
            const char *name = j ? hwx__registry[i]->alias : hwx__registry[i]->name;
            size_t n;
            if (!name) continue;
            n = hwx_strlen(name);
            if (hwx__starts(key, name) && (key[n] == 0 || key[n] == '_') && n > best_len) {
                best = (int)hwx__registry[i]->model;
                best_len = n;
                *rest = key + n + (key[n] == '_');
            }
        }
    return best;
}

static hwp_status hwx__onoff(const char *v, uint32_t *out, const char **why) {
    if (hwx_streq(v, "on") || hwx_streq(v, "1") || hwx_streq(v, "yes") ||
        hwx_streq(v, "true"))
        *out = 1;
    else if (hwx_streq(v, "off") || hwx_streq(v, "0") || hwx_streq(v, "no") ||
             hwx_streq(v, "false"))
        *out = 0;
    else
        return hwx__bad(why, "hwx: expected on or off");
    return HWP_OK;
}

static hwp_status hwx__copy_str(char *dst, const char *src, const char **why) {
    size_t n = hwx_strlen(src);
    if (n == 0) return hwx__bad(why, "hwx: empty file name");
    if (n >= HWX_PATH_MAX) return hwx__bad(why, "hwx: file name too long");
    hwp__copy(dst, src, n + 1);
    return HWP_OK;
}

void hwx_opts_default(hwx_opts *o) {
    hwp__zero(o, sizeof *o);
    o->values = 1;
    o->rap_key = HWX_KEY_PC;
    o->top = 10;
    o->seed = 1;
    o->exact_bytes = 256u << 20;
}

/* Store a model parameter (replacing an earlier value of the same key). */
static hwp_status hwx__param(hwx_opts *o, uint32_t model, const char *key,
                             const char *val, const char **why) {
    uint32_t i;
    hwp_status st;
    size_t kn = hwx_strlen(key), vn = hwx_strlen(val);
    if (kn == 0 || kn >= HWX_PARAM_KEY || vn >= HWX_PARAM_VAL)
        return hwx__bad(why, "hwx: model parameter name or value too long");
    st = hwx__model_param(model, key, val, why);
    if (st != HWP_OK) return st;
    for (i = 0; i < o->nparam; i++)
        if (o->param[i].model == model && hwx_streq(o->param[i].key, key))
            break;
    if (i == o->nparam) {
        if (o->nparam == HWX_MAX_PARAMS)
            return hwx__bad(why, "hwx: too many model parameters");
        o->nparam++;
    }
    o->param[i].model = model;
    hwp__copy(o->param[i].key, key, kn + 1);
    hwp__copy(o->param[i].val, val, vn + 1);
    return HWP_OK;
}

/* models=all|none|rap+path... */
static hwp_status hwx__models_list(hwx_opts *o, const char *v,
                                   const char **why) {
    uint32_t set = 0;
    if (hwx_streq(v, "all")) {
        o->models = HWX_M_ALL;
        return HWP_OK;
    }
    if (hwx_streq(v, "none")) {
        o->models = 0;
        return HWP_OK;
    }
    while (*v) {
        char name[16];
        size_t n = 0;
        const char *rest;
        int m;
        while (v[n] && v[n] != '+' && v[n] != ':') n++;
        if (n == 0 || n >= sizeof name)
            return hwx__bad(why, "hwx: models= expects all, none or names joined by +");
        hwp__copy(name, v, n);
        name[n] = 0;
        m = hwx__model_of(name, &rest);
        if (m < 0 || *rest) return hwx__bad(why, "hwx: unknown model name in models=");
        set |= 1u << m;
        v += n;
        if (*v) v++;
    }
    o->models = set;
    return HWP_OK;
}

hwp_status hwx_opts_set(hwx_opts *o, const char *key, const char *v,
                        const char **why) {
    const char *rest = "";
    uint32_t b;
    int m;
    if (why) *why = "";
    if (!o || !key || !v) return hwx__bad(why, "hwx: NULL option");
    if (hwx_streq(key, "exact")) return hwx__onoff(v, &o->exact, why);
    if (hwx_streq(key, "values")) return hwx__onoff(v, &o->values, why);
    if (hwx_streq(key, "models")) return hwx__models_list(o, v, why);
    if (hwx_streq(key, "report")) return hwx__copy_str(o->report, v, why);
    if (hwx_streq(key, "json")) return hwx__copy_str(o->json, v, why);
    if (hwx_streq(key, "record")) return hwx__copy_str(o->record, v, why);
    if (hwx_streq(key, "seed")) {
        if (!hwx_parse_u64(v, &o->seed)) return hwx__bad(why, "hwx: seed must be an integer");
        return HWP_OK;
    }
    if (hwx_streq(key, "flush")) {
        if (!hwx_parse_u64(v, &o->flush)) return hwx__bad(why, "hwx: flush must be an integer");
        return HWP_OK;
    }
    if (hwx_streq(key, "guest_base")) {
        if (!hwx_parse_u64(v, &o->guest_base))
            return hwx__bad(why, "hwx: guest_base must be an integer");
        o->guest_base_set = 1;
        return HWP_OK;
    }
    if (hwx_streq(key, "top")) {
        uint64_t t;
        if (!hwx_parse_u64(v, &t) || t == 0 || t > 1000)
            return hwx__bad(why, "hwx: top must be in 1..1000");
        o->top = (uint32_t)t;
        return HWP_OK;
    }
    if (hwx_streq(key, "exact_mb")) {
        uint64_t mb;
        if (!hwx_parse_u64(v, &mb) || mb == 0 || mb > 65536)
            return hwx__bad(why, "hwx: exact_mb must be in 1..65536");
        o->exact_bytes = mb << 20;
        return HWP_OK;
    }
    /* RAP shorthand key=pc|value|addr (also rap_key=). */
    if (hwx_streq(key, "key") || hwx_streq(key, "rap_key")) {
        if (hwx_streq(v, "pc")) o->rap_key = HWX_KEY_PC;
        else if (hwx_streq(v, "value")) o->rap_key = HWX_KEY_VALUE;
        else if (hwx_streq(v, "addr")) o->rap_key = HWX_KEY_ADDR;
        else return hwx__bad(why, "hwx: key must be pc, value or addr");
        return HWP_OK;
    }
    /* Path profiler shorthand hpt=ENTRIESxWAYS. */
    if (hwx_streq(key, "hpt"))
        return hwx__param(o, HWP_MODEL_PATH, "hpt", v, why);
    m = hwx__model_of(key, &rest);
    if (m < 0) return hwx__bad(why, "hwx: unknown option");
    if (*rest) return hwx__param(o, (uint32_t)m, rest, v, why);
    if (hwx__onoff(v, &b, why) != HWP_OK) return HWP_EINVAL;
    if (b) o->models |= 1u << m;
    else o->models &= ~(1u << m);
    return HWP_OK;
}

hwp_status hwx_opts_parse(hwx_opts *o, const char *list, const char **why) {
    char key[64], val[HWX_PATH_MAX];
    if (why) *why = "";
    while (list && *list) {
        size_t k = 0, n = 0;
        hwp_status st;
        while (list[k] && list[k] != '=' && list[k] != ',') k++;
        if (list[k] != '=' || k == 0 || k >= sizeof key)
            return hwx__bad(why, "hwx: expected key=value");
        hwp__copy(key, list, k);
        key[k] = 0;
        list += k + 1;
        while (list[n] && list[n] != ',') n++;
        if (n >= sizeof val) return hwx__bad(why, "hwx: option value too long");
        hwp__copy(val, list, n);
        val[n] = 0;
        list += n;
        if (*list) list++;
        st = hwx_opts_set(o, key, val, why);
        if (st != HWP_OK) return st;
    }
    return HWP_OK;
}

/* What the enabled adapters want from the stream. */
static uint32_t hwx__wants(const hwx_opts *o) {
    uint32_t i, w = 0;
    for (i = 0; i < hwx__nadapters; i++)
        if (o->models & (1u << hwx__registry[i]->model)) w |= hwx__registry[i]->wants(o);
    return w;
}

bool hwx_opts_need_values(const hwx_opts *o) {
    if (!o->values) return false;
    return o->exact || o->record[0] || (hwx__wants(o) & HWX_WANT_VALUES);
}

bool hwx_opts_need_memory(const hwx_opts *o) {
    return hwx_opts_need_values(o) || o->record[0] || (hwx__wants(o) & HWX_WANT_MEMORY);
}
