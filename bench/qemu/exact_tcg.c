/* bench/qemu/exact_tcg.c: libexact-tcg.so, the exact-counting peer of the
 * hwprof plugin for the hyperfine comparison (bench/qemu/hyperfine.sh).
 *
 * It keeps, completely and exactly, the information hwprof summarises:
 * a hash table of every TB executed (its count; per-PC counts and code
 * range counts follow from it), every acyclic path (start, direction bits:
 * the Table 1 rules of Vaswani, Jacob & Srikant, as in hwx_exact.c) and, with values=on,
 * every (load pc, loaded value) pair. Like QEMU's contrib hotblocks plugin
 * but complete: tables grow (rehash) instead of dropping. Written for this
 * benchmark; built by examples/qemu/meson.build.
 *
 *   qemu-x86_64 -plugin ./libexact-tcg.so,values=on,out=FILE prog ...
 *
 * tbs=FILE writes the TB table, one line per TB start and length: "pc n
 * executions" (hex pc, all vCPUs), the exact weight of each key RAP on
 * code sees at TB granularity (examples/qemu/tests/check_rap_tally.py
 * loads this plugin beside hwprof's in one run).
 *
 * floor=tb|mem|inline measures what any plugin pays before doing any work
 * (docs/qemu.md, Speed): `tb` registers a TB-exec callback that returns at
 * once, `mem` adds an empty memory callback on every instruction, `inline`
 * only an inline ADD_U64 per TB (execution counts, no callback, no order):
 * into that TB's counter on API 1 (7.2's inline adds are not atomic, so
 * with several guest threads the counts are approximate), into the vCPU's
 * scoreboard entry on API 4 and 7.
 *
 * Three builds, as the hwprof plugin, the API differences in hwq_api.h:
 * libexact-tcg.so (HWQ_API=1, QEMU 7.2), libexact-tcg-v4.so (HWQ_API=4,
 * QEMU 9.1 .. 10.x) and libexact-tcg-v7.so (HWQ_API=7, QEMU 11.1 and
 * later), where loaded values come from the access
 * (qemu_plugin_mem_get_value), not from a re-read of guest memory.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwx.h" /* only the x86 branch classifier */
#define HWQ_PLUGIN_NAME "exact-tcg"
#include "hwq_api.h"

HWQ_PLUGIN_EXPORT int qemu_plugin_version = HWQ_PLUGIN_API_VERSION;

#define PEER_MAX_VCPUS 1024
#define PEER_DEPTH 1024
#define PEER_MAXLEN 32

typedef struct ent {
    uint64_t k1, k2, count;
} ent;

typedef struct table {
    ent *e;
    size_t mask, used;
} table;

typedef struct tbinfo {
    uint64_t pc, fallthrough;
    uint64_t inline_count; /* floor=inline: executions, added by TCG code */
    uint32_t n, cls;
    struct tbinfo *next; /* floor=inline: list of all TBs */
} tbinfo;

typedef struct frame {
    uint64_t start, shape;
} frame;

typedef struct vcpu {
    table tbs, paths, values;
    const tbinfo *pend;
    frame stack[PEER_DEPTH];
    uint32_t depth;
    int started;
} vcpu;

enum { FLOOR_OFF, FLOOR_TB, FLOOR_MEM, FLOOR_INLINE };

static struct {
    int values;
    int floor;
    tbinfo *all; /* floor=inline: every translated TB, to sum at exit */
    struct qemu_plugin_scoreboard *sb; /* floor=inline: TB executions
                                          (HWQ_SCOREBOARD)               */
    char out[256], tbs[256];
    vcpu *v[PEER_MAX_VCPUS];
    unsigned nv;
    pthread_mutex_t lock;
} peer = {.lock = PTHREAD_MUTEX_INITIALIZER};

static uint64_t mix(uint64_t a, uint64_t b) {
    uint64_t x = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull);
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    return x ^ (x >> 29);
}

static void tab_init(table *t, size_t n) {
    t->e = calloc(n, sizeof *t->e);
    t->mask = n - 1;
    t->used = 0;
}

static void tab_add(table *t, uint64_t k1, uint64_t k2, uint64_t n);

static void tab_grow(table *t) {
    table b;
    size_t i;
    tab_init(&b, (t->mask + 1) * 2);
    for (i = 0; i <= t->mask; i++)
        if (t->e[i].count) tab_add(&b, t->e[i].k1, t->e[i].k2, t->e[i].count);
    free(t->e);
    *t = b;
}

static void tab_add(table *t, uint64_t k1, uint64_t k2, uint64_t n) {
    size_t i = mix(k1, k2) & t->mask;
    for (;;) {
        ent *e = &t->e[i];
        if (!e->count) {
            e->k1 = k1;
            e->k2 = k2;
            e->count = n;
            if (++t->used * 4 > (t->mask + 1) * 3) tab_grow(t);
            return;
        }
        if (e->k1 == k1 && e->k2 == k2) {
            e->count += n;
            return;
        }
        i = (i + 1) & t->mask;
    }
}

/* ---- paths (Vaswani et al., Table 1, as hwx_exact.c) ----------------------------- */

static void pop(vcpu *v) {
    if (!v->depth) return;
    v->depth--;
    tab_add(&v->paths, v->stack[v->depth].start, v->stack[v->depth].shape, 1);
}

static void push(vcpu *v, uint64_t start) {
    if (v->depth == PEER_DEPTH) { /* drop the outermost frame */
        memmove(v->stack, v->stack + 1, (PEER_DEPTH - 1) * sizeof(frame));
        v->depth--;
    }
    v->stack[v->depth].start = start;
    v->stack[v->depth].shape = 1;
    v->depth++;
}

static void branch(vcpu *v, const tbinfo *tb, uint64_t next) {
    uint64_t pc = tb->fallthrough - 1; /* inside the branch: for "backward" */
    int taken = tb->cls != HWP_CLS_BR_COND || next != tb->fallthrough;
    frame *f;
    if (!v->depth) push(v, tb->pc); /* (the hwprof side ignores these) */
    f = &v->stack[v->depth - 1];
    switch (tb->cls) {
    case HWP_CLS_CALL: push(v, next); return;
    case HWP_CLS_RET: pop(v); return;
    case HWP_CLS_BR_COND:
    case HWP_CLS_JUMP:
    case HWP_CLS_INDIRECT:
        f->shape = f->shape << 1 | (uint64_t)taken;
        if (f->shape >> PEER_MAXLEN) {
            pop(v);
            push(v, next);
        } else if (tb->cls == HWP_CLS_INDIRECT || (taken && next <= pc)) {
            pop(v);
            push(v, next);
        }
        return;
    default:
        return;
    }
}

/* ---- callbacks ------------------------------------------------------------ */

static void tb_exec(unsigned int idx, void *udata) {
    const tbinfo *tb = udata;
    vcpu *v = idx < PEER_MAX_VCPUS ? peer.v[idx] : NULL;
    if (!v) return;
    if (!v->started) {
        v->started = 1;
        push(v, tb->pc);
    }
    if (v->pend) branch(v, v->pend, tb->pc);
    v->pend = tb;
    tab_add(&v->tbs, tb->pc, tb->n, 1);
}

static void mem_cb(unsigned int idx, qemu_plugin_meminfo_t info, uint64_t vaddr,
                   void *udata) {
    vcpu *v = idx < PEER_MAX_VCPUS ? peer.v[idx] : NULL;
    uint64_t value = 0;
    if (!v || qemu_plugin_mem_is_store(info)) return;
    /* API 1 reads it back: guest_base 0 (x86-64 guests on x86-64 hosts). */
    hwq_load_value(info, vaddr, 0, &value);
    tab_add(&v->values, (uint64_t)(uintptr_t)udata, value, 1);
}

/* The floor: callbacks that do nothing. */
static void empty_tb(unsigned int idx, void *udata) {
    (void)idx;
    (void)udata;
}

static void empty_mem(unsigned int idx, qemu_plugin_meminfo_t info, uint64_t vaddr,
                      void *udata) {
    (void)idx;
    (void)info;
    (void)vaddr;
    (void)udata;
}

static void floor_trans(struct qemu_plugin_tb *tb, tbinfo *t, size_t n) {
    size_t i;
    if (peer.floor == FLOOR_INLINE) {
        pthread_mutex_lock(&peer.lock);
        t->next = peer.all; /* translation can run on several vCPUs */
        peer.all = t;
        pthread_mutex_unlock(&peer.lock);
        hwq_inline_add(tb, (qemu_plugin_u64){peer.sb, 0}, &t->inline_count, 1);
        return;
    }
    if (peer.floor == FLOOR_MEM)
        for (i = 0; i < n; i++)
            qemu_plugin_register_vcpu_mem_cb(qemu_plugin_tb_get_insn(tb, i), empty_mem,
                                             QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW,
                                             NULL);
    qemu_plugin_register_vcpu_tb_exec_cb(tb, empty_tb, QEMU_PLUGIN_CB_NO_REGS, t);
}

static void tb_trans(struct qemu_plugin_tb *tb) {
    size_t n = qemu_plugin_tb_n_insns(tb), i, len;
    struct qemu_plugin_insn *last;
    uint8_t code[16];
    tbinfo *t;
    if (!n) return;
    t = calloc(1, sizeof *t);
    t->pc = qemu_plugin_tb_vaddr(tb);
    t->n = (uint32_t)n;
    last = qemu_plugin_tb_get_insn(tb, n - 1);
    t->fallthrough = qemu_plugin_insn_vaddr(last) + qemu_plugin_insn_size(last);
    len = qemu_plugin_insn_size(last);
    t->cls = hwx_x86_classify(hwq_insn_bytes(last, code), len < 16 ? len : 16, NULL);
    if (peer.floor) {
        floor_trans(tb, t, n);
        return;
    }
    if (peer.values)
        for (i = 0; i < n; i++) {
            struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
            qemu_plugin_register_vcpu_mem_cb(insn, mem_cb, QEMU_PLUGIN_CB_NO_REGS,
                                             QEMU_PLUGIN_MEM_RW,
                                             (void *)(uintptr_t)qemu_plugin_insn_vaddr(insn));
        }
    qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec, QEMU_PLUGIN_CB_NO_REGS, t);
}

static void vcpu_init(unsigned int idx) {
    vcpu *v;
    if (idx >= PEER_MAX_VCPUS || peer.v[idx]) return;
    v = calloc(1, sizeof *v);
    tab_init(&v->tbs, 1 << 12);
    tab_init(&v->paths, 1 << 12);
    tab_init(&v->values, 1 << 16);
    pthread_mutex_lock(&peer.lock);
    peer.v[idx] = v;
    if (idx + 1 > peer.nv) peer.nv = idx + 1;
    pthread_mutex_unlock(&peer.lock);
}

/* tbs=: every vCPU's TB counts, a line per (pc, n) and vCPU. */
static void write_tbs(void) {
    FILE *f = fopen(peer.tbs, "w");
    unsigned i;
    size_t k;
    if (!f) {
        fprintf(stderr, "exact-tcg: cannot write %s\n", peer.tbs);
        return;
    }
    for (i = 0; i < peer.nv; i++)
        for (k = 0; peer.v[i] && k <= peer.v[i]->tbs.mask; k++) {
            const ent *e = &peer.v[i]->tbs.e[k];
            if (e->count)
                fprintf(f, "%llx %llu %llu\n", (unsigned long long)e->k1,
                        (unsigned long long)e->k2, (unsigned long long)e->count);
        }
    fclose(f);
}

static void at_exit(void) {
    FILE *f = peer.out[0] ? fopen(peer.out, "w") : stderr;
    uint64_t paths = 0;
    unsigned i;
    if (!f) return;
    for (i = 0; i < peer.nv; i++) {
        vcpu *v = peer.v[i];
        size_t k;
        if (!v) continue;
        while (v->depth) pop(v);
        fprintf(f, "vcpu %u: %zu TBs, %zu paths, %zu (pc, value) pairs\n", i,
                v->tbs.used, v->paths.used, v->values.used);
        for (k = 0; k <= v->paths.mask; k++) paths += v->paths.e[k].count;
    }
    if (peer.floor == FLOOR_INLINE) {
        const tbinfo *t;
        uint64_t execs = 0;
        if (!HWQ_SCOREBOARD)
            for (t = peer.all; t; t = t->next) execs += t->inline_count;
        else
            for (i = 0; i < (unsigned)qemu_plugin_num_vcpus(); i++)
                execs += qemu_plugin_u64_get((qemu_plugin_u64){peer.sb, 0}, i);
        fprintf(f, "TB executions (inline counters): %llu\n", (unsigned long long)execs);
    }
    fprintf(f, "paths completed: %llu\n", (unsigned long long)paths);
    if (f != stderr) fclose(f);
    if (peer.tbs[0]) write_tbs();
}

HWQ_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
                                          int argc, char **argv) {
    static const hwq_hooks hooks = {vcpu_init, NULL, tb_trans, NULL, at_exit, NULL};
    int i;
    if (hwq_api_check(info)) return -1;
    for (i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "values=on")) peer.values = 1;
        else if (!strcmp(argv[i], "values=off")) peer.values = 0;
        else if (!strcmp(argv[i], "floor=tb")) peer.floor = FLOOR_TB;
        else if (!strcmp(argv[i], "floor=mem")) peer.floor = FLOOR_MEM;
        else if (!strcmp(argv[i], "floor=inline")) peer.floor = FLOOR_INLINE;
        else if (!strncmp(argv[i], "out=", 4))
            snprintf(peer.out, sizeof peer.out, "%s", argv[i] + 4);
        else if (!strncmp(argv[i], "tbs=", 4))
            snprintf(peer.tbs, sizeof peer.tbs, "%s", argv[i] + 4);
        else {
            fprintf(stderr, "exact-tcg: unknown argument %s\n", argv[i]);
            return -1;
        }
    }
    if (HWQ_SCOREBOARD) peer.sb = qemu_plugin_scoreboard_new(sizeof(uint64_t));
    hwq_api_register(id, &hooks);
    return 0;
}
