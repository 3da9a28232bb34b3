/* examples/common/hwx_opts.c: the options every binary-translation host
 * takes (hwx.h), parsed with hwx_arg.h's rules: a value is taken whole or
 * refused with a message naming the option and its accepted range, and
 * zero means the default wherever a number has one. */
#include "hwx_int.h"

/* Does s start with prefix p? */
static bool hwx__starts(const char *s, const char *p) {
    while (*p && *s == *p) s++, p++;
    return *p == 0;
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

static hwp_status hwx__onoff(const char *opt, const char *v, uint32_t *out,
                             const char **why) {
    static const char *const names[] = {"off", "on", "0", "1", "no", "yes", "false", "true", NULL};
    uint32_t i;
    if (hwx_arg_enum(opt, v, names, &i, why) != HWP_OK) return HWP_EINVAL;
    *out = i & 1u;
    return HWP_OK;
}

static hwp_status hwx__copy_str(const char *opt, char *dst, const char *src,
                                const char **why) {
    size_t n = hwx_strlen(src);
    if (n == 0) return hwx_arg_fail(opt, "expected a file name, got an empty one", why);
    if (n >= HWX_PATH_MAX) return hwx_arg_fail(opt, "file name longer than 255 bytes", why);
    hwp_copy(dst, src, n + 1);
    return HWP_OK;
}

void hwx_opts_default(hwx_opts *o) {
    hwp_zero(o, sizeof *o);
    o->values = 1;
    o->rap_key = HWX_KEY_PC;
    o->top = 10;
    o->seed = 1;
    o->exact_bytes = 256u << 20;
    o->bbv_interval = HWX__BBV_INTERVAL;
    o->bbv_blocks = HWX__BBV_BLOCKS;
    o->retire = 1;
}

/* Store a model parameter (replacing an earlier value of the same key). */
static hwp_status hwx__param(hwx_opts *o, uint32_t model, const char *key,
                             const char *val, const char **why) {
    uint32_t i;
    hwp_status st;
    size_t kn = hwx_strlen(key), vn = hwx_strlen(val);
    if (kn == 0 || kn >= HWX_PARAM_KEY || vn >= HWX_PARAM_VAL)
        return hwx_arg_fail(key, "model parameter name or value too long", why);
    st = hwx__model_param(model, key, val, why);
    if (st != HWP_OK) return st;
    for (i = 0; i < o->nparam; i++)
        if (o->param[i].model == model && hwx_streq(o->param[i].key, key))
            break;
    if (i == o->nparam) {
        if (o->nparam == HWX_MAX_PARAMS)
            return hwx_arg_fail(key, "more than 32 model parameters", why);
        o->nparam++;
    }
    o->param[i].model = model;
    hwp_copy(o->param[i].key, key, kn + 1);
    hwp_copy(o->param[i].val, val, vn + 1);
    return HWP_OK;
}

/* models=all|none|rap+path... (an empty list is refused: "none" says
 * that on purpose). */
static hwp_status hwx__models_list(hwx_opts *o, const char *v, const char **why) {
    uint32_t set = 0;
    if (hwx_streq(v, "all")) {
        o->models = HWX_M_ALL;
        return HWP_OK;
    }
    if (hwx_streq(v, "none")) {
        o->models = 0;
        return HWP_OK;
    }
    if (!*v) return hwx_arg_fail("models", "expected all, none or model names joined by +, got \"\"", why);
    while (*v) {
        char name[16];
        size_t n = 0;
        const char *rest;
        int m;
        while (v[n] && v[n] != '+' && v[n] != ':') n++;
        if (n == 0 || n >= sizeof name)
            return hwx_arg_fail("models", "expected all, none or model names joined by +", why);
        hwp_copy(name, v, n);
        name[n] = 0;
        m = hwx__model_of(name, &rest);
        if (m < 0 || *rest)
            return hwx_arg_fail("models", "unknown model name (pm, strat, rap, path, coproc, core)", why);
        set |= 1u << m;
        v += n;
        if (*v && !*++v) /* a separator with no name after it */
            return hwx_arg_fail("models", "expected a model name after the last +", why);
    }
    o->models = set;
    return HWP_OK;
}

hwp_status hwx_opts_set(hwx_opts *o, const char *key, const char *v,
                        const char **why) {
    static const char *const keys[] = {"pc", "value", "addr", "target", "pcaddr", "dmiss",
                                       NULL};
    const char *rest = "";
    uint32_t b;
    uint64_t x;
    int m;
    if (why) *why = "";
    if (!o || !key || !v) return hwx__bad(why, "hwx: NULL option");
    if (hwx_streq(key, "exact")) return hwx__onoff(key, v, &o->exact, why);
    if (hwx_streq(key, "values")) return hwx__onoff(key, v, &o->values, why);
    if (hwx_streq(key, "retire")) return hwx__onoff(key, v, &o->retire, why);
    if (hwx_streq(key, "models")) return hwx__models_list(o, v, why);
    if (hwx_streq(key, "report")) return hwx__copy_str(key, o->report, v, why);
    if (hwx_streq(key, "json")) return hwx__copy_str(key, o->json, v, why);
    if (hwx_streq(key, "record")) return hwx__copy_str(key, o->record, v, why);
    if (hwx_streq(key, "bbv")) return hwx__copy_str(key, o->bbv, v, why);
    if (hwx_streq(key, "bbv_interval")) /* 0 is refused: no vector would close */
        return hwx_arg_u64(key, v, 1, ~(uint64_t)0, &o->bbv_interval, why);
    if (hwx_streq(key, "bbv_blocks")) { /* 0: the default */
        if (hwx_arg_u32(key, v, 0, HWX_BBV_MAX_BLOCKS, &o->bbv_blocks, why) != HWP_OK)
            return HWP_EINVAL;
        if (!o->bbv_blocks) o->bbv_blocks = HWX__BBV_BLOCKS;
        return HWP_OK;
    }
    if (hwx_streq(key, "seed")) { /* 0: the default, 1 */
        if (hwx_arg_u64(key, v, 0, ~(uint64_t)0, &x, why) != HWP_OK) return HWP_EINVAL;
        o->seed = x ? x : 1;
        return HWP_OK;
    }
    if (hwx_streq(key, "timeline")) /* 0: off, the default */
        return hwx_arg_u64(key, v, 0, ~(uint64_t)0, &o->timeline, why);
    if (hwx_streq(key, "burst_period")) /* 0: off, the default */
        return hwx_arg_u32(key, v, 0, 1u << 30, &o->burst_period, why);
    if (hwx_streq(key, "burst_len")) /* 0: min(1024, burst_period) */
        return hwx_arg_u32(key, v, 0, 1u << 30, &o->burst_len, why);
    if (hwx_streq(key, "flush")) /* 0: off, the default */
        return hwx_arg_u64(key, v, 0, ~(uint64_t)0, &o->flush, why);
    if (hwx_streq(key, "guest_base")) { /* 0: found by the host, the default */
        if (hwx_arg_u64(key, v, 0, ~(uint64_t)0, &o->guest_base, why) != HWP_OK)
            return HWP_EINVAL;
        o->guest_base_set = o->guest_base != 0;
        return HWP_OK;
    }
    if (hwx_streq(key, "top")) { /* 0: the default, 10 */
        if (hwx_arg_u32(key, v, 0, 1000, &o->top, why) != HWP_OK) return HWP_EINVAL;
        if (!o->top) o->top = 10;
        return HWP_OK;
    }
    if (hwx_streq(key, "exact_mb")) { /* 0: the default, 256 */
        if (hwx_arg_u64(key, v, 0, 65536, &x, why) != HWP_OK) return HWP_EINVAL;
        o->exact_bytes = (x ? x : 256) << 20;
        return HWP_OK;
    }
    /* RAP shorthand key=pc|value|addr|target|pcaddr|dmiss (also rap_key=);
     * dmiss without core=on is refused when the RAP model is sized
     * (hwx_rap.c), whatever the order of the two options. */
    if (hwx_streq(key, "key") || hwx_streq(key, "rap_key")) /* HWX_KEY_* in order */
        return hwx_arg_enum(key, v, keys, &o->rap_key, why);
    /* Path profiler shorthands hpt=ENTRIESxWAYS, hpt_policy=lfu|aging|decay. */
    if (hwx_streq(key, "hpt")) return hwx__param(o, HWP_MODEL_PATH, "hpt", v, why);
    if (hwx_streq(key, "hpt_policy")) return hwx__param(o, HWP_MODEL_PATH, "policy", v, why);
    m = hwx__model_of(key, &rest);
    if (m < 0) return hwx_arg_fail(key, "unknown option (docs/qemu.md lists them)", why);
    if (*rest) return hwx__param(o, (uint32_t)m, rest, v, why);
    if (hwx__onoff(key, v, &b, why) != HWP_OK) return HWP_EINVAL;
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
            return hwx__bad(why, "hwx: expected key=value[,key=value...]");
        hwp_copy(key, list, k);
        key[k] = 0;
        list += k + 1;
        while (list[n] && list[n] != ',') n++;
        if (n >= sizeof val) return hwx_arg_fail(key, "value longer than 255 bytes", why);
        hwp_copy(val, list, n);
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

uint32_t hwx_opts_burst_len(const hwx_opts *o) {
    if (!o->burst_period) return 0;
    if (o->burst_len) return o->burst_len;
    return o->burst_period < 1024u ? o->burst_period : 1024u;
}

bool hwx_opts_need_memory(const hwx_opts *o) {
    return hwx_opts_need_values(o) || o->record[0] || (hwx__wants(o) & HWX_WANT_MEMORY);
}
