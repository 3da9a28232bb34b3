/* examples/qemu/hwq_api.h: where QEMU's plugin APIs 1, 4 and 7 differ, kept
 * behind one small interface so that hwprof's plugins (hwprof_tcg.c and
 * bench/qemu/exact_tcg.c) are one source each. Include it once, after
 * defining HWQ_PLUGIN_NAME (the module's name without "lib" and the API
 * suffix, e.g. "hwprof-tcg"); HWQ_API picks the section (meson builds
 * every plugin once per API: lib<name>.so, lib<name>-v4.so,
 * lib<name>-v7.so).
 *
 *   hwq_api_register  the lifetime callbacks (vCPU init and exit, TB
 *                     translation, syscall, exit), whose shapes API 7
 *                     changed, and from API 7 the discontinuities, from
 *                     one hwq_hooks table
 *   HWQ_DISCON        1 where the discontinuity callbacks are registered
 *                     (API 7; QEMU 10.2's API 5 has them too, but the
 *                     API 4 build does not ask)
 *   hwq_insn_bytes    an instruction's bytes (API 1 lends QEMU's copy,
 *                     later APIs copy into ours)
 *   hwq_load_value    the value a load moved (API 1: read back from guest
 *                     memory; later APIs: from the access itself)
 *   hwq_reg_read      a register of the running vCPU (API 2 and later)
 *   hwq_api_refuse    the one line a QEMU of another API gets, naming the
 *                     module to use
 *   HWQ_SCOREBOARD    1 where per-vCPU counters, inline adds into them and
 *                     conditional callbacks exist (API 2 and later)
 *   HWQ_TAKE_SIGNALS  1 where QEMU leaves the signals that do not dump
 *                     core to the host's default action (hwprof_tcg.c,
 *                     hwq_take_signals: seen in 10.0, kept for 11.1)
 */
#ifndef HWPROF_HWQ_API_H
#define HWPROF_HWQ_API_H

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "qemu_plugin_api.h"

#ifndef HWQ_PLUGIN_NAME
#error "define HWQ_PLUGIN_NAME before including hwq_api.h"
#endif

/* The plugin's lifetime callbacks, the same for every API. vcpu_exit,
 * syscall and discon may be NULL; syscall gets the first three arguments;
 * discon (HWQ_DISCON only) gets the kind as an index: 0 interrupt, 1
 * exception, 2 host call. */
typedef struct hwq_hooks {
    void (*vcpu_init)(unsigned int vcpu);
    void (*vcpu_exit)(unsigned int vcpu);
    void (*tb_trans)(struct qemu_plugin_tb *tb);
    void (*syscall)(unsigned int vcpu, int64_t num, uint64_t a1, uint64_t a2, uint64_t a3);
    void (*at_exit)(void);
    void (*discon)(unsigned int vcpu, int kind, uint64_t from_pc, uint64_t to_pc);
} hwq_hooks;

#define HWQ_SCOREBOARD (HWQ_API >= 2)
#define HWQ_DISCON (HWQ_API >= 7)
#define HWQ_TAKE_SIGNALS (HWQ_API >= 2)

/* ---- which module fits which QEMU ------------------------------------------ */

/* The module for a QEMU of plugin API `api`, and the QEMUs it is for. */
static inline const char *hwq_api_module(int api) {
    if (api >= 7) return "lib" HWQ_PLUGIN_NAME "-v7.so (plugin API 7: QEMU 11.1 and later)";
    if (api == 6) return "a QEMU of plugin API 4, 5 or 7 (QEMU 11.0's API 6 has no build)";
    if (api >= 4) return "lib" HWQ_PLUGIN_NAME "-v4.so (plugin API 4: QEMU 9.1 .. 10.x)";
    if (api >= 2) return "a QEMU of plugin API 1, 4 or 7 (QEMU 9.0's API 2..3 has no build)";
    return "lib" HWQ_PLUGIN_NAME ".so (plugin API 1: QEMU 7.2)";
}

/* Does this build fit a QEMU whose current plugin API is `api`? A QEMU
 * also runs plugins of older APIs down to its minimum, but only the same
 * shapes: API 4's build runs on API 4 and 5. */
static inline int hwq_api_fits(int api) {
    return HWQ_API == 1 ? api <= 1 : HWQ_API == 4 ? api == 4 || api == 5 : api >= 7;
}

/* One line: this module's API, the QEMU's (`api`, said as `label`), the
 * module to use. Said once. */
static inline void hwq_api_refuse(int api, const char *label) {
    static int said;
    if (said++) return;
    fprintf(stderr,
            "hwprof: lib%s%s.so is built for QEMU plugin API %d, this QEMU has plugin API %s: "
            "use %s\n",
            HWQ_PLUGIN_NAME, HWQ_API == 1 ? "" : HWQ_API == 4 ? "-v4" : "-v7", HWQ_API, label,
            hwq_api_module(api));
}

/* QEMU checks a plugin's qemu_plugin_version before it calls
 * qemu_plugin_install and refuses a version outside its range with a line
 * that names no module. This runs when the module is loaded, before that
 * check, and tells the loading QEMU's API from the functions it exports
 * (API 7 changed only shapes, so 6 and 7 look alike here; QEMU 11.0 then
 * refuses the API 7 build itself). The functions it looks for are weak
 * references: every build loads into every QEMU far enough to get here. */
__attribute__((constructor)) static void hwq_api_probe(void) {
    int api = qemu_plugin_set_pc ? 6 : qemu_plugin_write_memory_vaddr ? 5
            : qemu_plugin_read_memory_vaddr ? 4 : qemu_plugin_scoreboard_new ? 2 : 1;
    if (api == 6 && HWQ_API == 7) return;
    if (!hwq_api_fits(api))
        hwq_api_refuse(api == 6 ? 7 : api, api == 6 ? "6 or later" : api == 2 ? "2 or 3"
                                         : api == 5 ? "5" : api == 4 ? "4" : "1");
}

/* At qemu_plugin_install, with QEMU's own numbers: 0, or -1 after the
 * line (a QEMU whose range holds this API but whose shapes differ). */
static inline int hwq_api_check(const qemu_info_t *info) {
    char label[16];
    if (hwq_api_fits(info->version.cur)) return 0;
    snprintf(label, sizeof label, "%d", info->version.cur);
    hwq_api_refuse(info->version.cur, label);
    return -1;
}

/* ---- the lifetime callbacks ------------------------------------------------ */

#if HWQ_API < 7
/* APIs 1 and 4 pass the plugin id and no userdata: the table stays here. */
static const hwq_hooks *hwq_api_hooks;

static void hwq_api_vcpu_init(qemu_plugin_id_t id, unsigned int vcpu) {
    (void)id;
    hwq_api_hooks->vcpu_init(vcpu);
}

static void hwq_api_vcpu_exit(qemu_plugin_id_t id, unsigned int vcpu) {
    (void)id;
    hwq_api_hooks->vcpu_exit(vcpu);
}

static void hwq_api_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
    (void)id;
    hwq_api_hooks->tb_trans(tb);
}

static void hwq_api_syscall(qemu_plugin_id_t id, unsigned int vcpu, int64_t num, uint64_t a1,
                            uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5, uint64_t a6,
                            uint64_t a7, uint64_t a8) {
    (void)id, (void)a4, (void)a5, (void)a6, (void)a7, (void)a8;
    hwq_api_hooks->syscall(vcpu, num, a1, a2, a3);
}

static void hwq_api_at_exit(qemu_plugin_id_t id, void *unused) {
    (void)id, (void)unused;
    hwq_api_hooks->at_exit();
}

static void hwq_api_register(qemu_plugin_id_t id, const hwq_hooks *h) {
    hwq_api_hooks = h;
    qemu_plugin_register_vcpu_init_cb(id, hwq_api_vcpu_init);
    if (h->vcpu_exit) qemu_plugin_register_vcpu_exit_cb(id, hwq_api_vcpu_exit);
    qemu_plugin_register_vcpu_tb_trans_cb(id, hwq_api_tb_trans);
    if (h->syscall) qemu_plugin_register_vcpu_syscall_cb(id, hwq_api_syscall);
    qemu_plugin_register_atexit_cb(id, hwq_api_at_exit, NULL);
}
#else
/* API 7: no plugin id; the table rides along as every callback's
 * userdata. */
static void hwq_api_vcpu_init(unsigned int vcpu, void *h) {
    ((const hwq_hooks *)h)->vcpu_init(vcpu);
}

static void hwq_api_vcpu_exit(unsigned int vcpu, void *h) {
    ((const hwq_hooks *)h)->vcpu_exit(vcpu);
}

static void hwq_api_tb_trans(struct qemu_plugin_tb *tb, void *h) {
    ((const hwq_hooks *)h)->tb_trans(tb);
}

static void hwq_api_syscall(unsigned int vcpu, int64_t num, uint64_t a1, uint64_t a2,
                            uint64_t a3, uint64_t a4, uint64_t a5, uint64_t a6, uint64_t a7,
                            uint64_t a8, void *h) {
    (void)a4, (void)a5, (void)a6, (void)a7, (void)a8;
    ((const hwq_hooks *)h)->syscall(vcpu, num, a1, a2, a3);
}

static void hwq_api_at_exit(void *h) {
    ((const hwq_hooks *)h)->at_exit();
}

static void hwq_api_discon(unsigned int vcpu, enum qemu_plugin_discon_type type,
                           uint64_t from_pc, uint64_t to_pc, void *h) {
    int kind = type == QEMU_PLUGIN_DISCON_EXCEPTION ? 1 : type == QEMU_PLUGIN_DISCON_HOSTCALL ? 2 : 0;
    ((const hwq_hooks *)h)->discon(vcpu, kind, from_pc, to_pc);
}

static void hwq_api_register(qemu_plugin_id_t id, const hwq_hooks *h) {
    void *u = (void *)(uintptr_t)h; /* QEMU's userdata is not const */
    qemu_plugin_register_vcpu_init_cb(id, hwq_api_vcpu_init, u);
    if (h->vcpu_exit) qemu_plugin_register_vcpu_exit_cb(id, hwq_api_vcpu_exit, u);
    qemu_plugin_register_vcpu_tb_trans_cb(id, hwq_api_tb_trans, u);
    if (h->syscall) qemu_plugin_register_vcpu_syscall_cb(id, hwq_api_syscall, u);
    if (h->discon && qemu_plugin_register_vcpu_discon_cb)
        qemu_plugin_register_vcpu_discon_cb(id, QEMU_PLUGIN_DISCON_ALL, hwq_api_discon, u);
    qemu_plugin_register_atexit_cb(id, hwq_api_at_exit, u);
}
#endif

/* ---- instructions, loaded values, inline counts ------------------------------ */

#if HWQ_API == 1
/* Host ranges known readable, from /proc/self/maps, re-read when an
 * address falls outside all of them. A wrong guest_base= would otherwise
 * send the read to an unmapped address and QEMU would blame the guest for
 * the SIGSEGV. With the right base the access just succeeded, so the page
 * is mapped and the check only costs a compare against the last range. */
#define HWQ_MAX_RANGES 4096
static struct {
    pthread_mutex_t lock;
    uint32_t n;
    uint64_t lo[HWQ_MAX_RANGES], hi[HWQ_MAX_RANGES];
} hwq_maps = {.lock = PTHREAD_MUTEX_INITIALIZER};
static __thread uint64_t hwq_ok_lo, hwq_ok_hi; /* last range that held */

static inline void hwq_maps_reload(void) {
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    uint32_t n = 0;
    if (!f) return;
    while (n < HWQ_MAX_RANGES && fgets(line, sizeof line, f)) {
        unsigned long long lo, hi;
        char perm[8];
        if (sscanf(line, "%llx-%llx %7s", &lo, &hi, perm) == 3 && perm[0] == 'r') {
            hwq_maps.lo[n] = lo;
            hwq_maps.hi[n++] = hi;
        }
    }
    fclose(f);
    hwq_maps.n = n;
}

/* Is [a, a + len) inside one readable host mapping? */
static inline int hwq_readable(uint64_t a, unsigned len) {
    uint32_t i;
    int pass, ok = 0;
    if (a >= hwq_ok_lo && a + len <= hwq_ok_hi && a + len > a) return 1;
    pthread_mutex_lock(&hwq_maps.lock);
    for (pass = 0; pass < 2 && !ok; pass++) {
        if (pass) hwq_maps_reload();
        for (i = 0; i < hwq_maps.n; i++) {
            if (a >= hwq_maps.lo[i] && a + len <= hwq_maps.hi[i] && a + len > a) {
                hwq_ok_lo = hwq_maps.lo[i];
                hwq_ok_hi = hwq_maps.hi[i];
                ok = 1;
                break;
            }
        }
    }
    pthread_mutex_unlock(&hwq_maps.lock);
    return ok;
}

/* The value of the load just done at guest address `vaddr`, read back
 * from guest memory (user mode: host address = guest address +
 * guest_base); fixed-size reads, the first 8 bytes of a wider access.
 * 0 when that host address is not readable (a wrong guest_base). */
static inline int hwq_load_value(qemu_plugin_meminfo_t info, uint64_t vaddr,
                                 uint64_t guest_base, uint64_t *value) {
    unsigned shift = qemu_plugin_mem_size_shift(info);
    const void *p = (const void *)(uintptr_t)(vaddr + guest_base);
    uint8_t b;
    uint16_t h;
    uint32_t w;
    if (!hwq_readable(vaddr + guest_base, 1u << (shift > 3 ? 3 : shift))) return 0;
    switch (shift) {
    case 0: memcpy(&b, p, 1); *value = b; break;
    case 1: memcpy(&h, p, 2); *value = h; break;
    case 2: memcpy(&w, p, 4); *value = w; break;
    default: memcpy(value, p, 8); break;
    }
    return 1;
}

/* The instruction's bytes: API 1 lends QEMU's. */
static inline const uint8_t *hwq_insn_bytes(const struct qemu_plugin_insn *insn,
                                            uint8_t copy[16]) {
    (void)copy;
    return (const uint8_t *)qemu_plugin_insn_data(insn);
}

/* `imm` added to *shared at every execution of `tb`, no callback: API 1
 * has one counter for all vCPUs, and its adds are not atomic. */
static inline void hwq_inline_add(struct qemu_plugin_tb *tb, qemu_plugin_u64 entry,
                                  uint64_t *shared, uint64_t imm) {
    (void)entry;
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, shared, imm);
}
#else
/* The value the access moved, zero-extended (the low 64 bits of a wider
 * one): no guest memory is read again. */
static inline int hwq_load_value(qemu_plugin_meminfo_t info, uint64_t vaddr,
                                 uint64_t guest_base, uint64_t *value) {
    qemu_plugin_mem_value m = qemu_plugin_mem_get_value(info);
    (void)vaddr, (void)guest_base;
    switch (m.type) {
    case QEMU_PLUGIN_MEM_VALUE_U8: *value = m.data.u8; break;
    case QEMU_PLUGIN_MEM_VALUE_U16: *value = m.data.u16; break;
    case QEMU_PLUGIN_MEM_VALUE_U32: *value = m.data.u32; break;
    case QEMU_PLUGIN_MEM_VALUE_U64: *value = m.data.u64; break;
    default: *value = m.data.u128.low; break;
    }
    return 1;
}

/* The instruction's bytes (at most 16), copied into `copy`. */
static inline const uint8_t *hwq_insn_bytes(const struct qemu_plugin_insn *insn,
                                            uint8_t copy[16]) {
    memset(copy, 0, 16);
    qemu_plugin_insn_data(insn, copy, 16);
    return copy;
}

/* `imm` added to the executing vCPU's `entry` at every execution of `tb`,
 * no callback. */
static inline void hwq_inline_add(struct qemu_plugin_tb *tb, qemu_plugin_u64 entry,
                                  uint64_t *shared, uint64_t imm) {
    (void)shared;
    qemu_plugin_register_vcpu_tb_exec_inline_per_vcpu(tb, QEMU_PLUGIN_INLINE_ADD_U64, entry, imm);
}
#endif

/* ---- registers --------------------------------------------------------------- */

/* Register `reg` of the vCPU running now into *val (little-endian, at
 * most 8 bytes), read through `buf`. 0: unread. API 2 and later only
 * (the functions are NULL on API 1's QEMU: check them first). */
static inline int hwq_reg_read(struct qemu_plugin_register *reg, hwq_gbytes *buf,
                               uint64_t *val) {
    *val = 0;
    g_byte_array_set_size(buf, 0);
#if HWQ_API < 6
    if (qemu_plugin_read_register(reg, buf) <= 0) return 0;
#else
    if (!qemu_plugin_read_register(reg, buf)) return 0;
#endif
    memcpy(val, buf->data, buf->len < 8 ? buf->len : 8);
    return buf->len > 0;
}

#endif /* HWPROF_HWQ_API_H */
