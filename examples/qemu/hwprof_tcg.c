/* examples/qemu/hwprof_tcg.c: libhwprof-tcg.so, a QEMU 7.2 TCG plugin
 * (API v1) that runs the hwprof models on an unmodified Linux program.
 *
 *   qemu-x86_64 -plugin ./libhwprof-tcg.so,rap=on,exact=on,report=r.txt prog
 *
 * How the event stream is made (docs/qemu.md has the long version):
 *   translation  for every TB we keep its instruction PCs and classify its
 *                last instruction from its bytes (hwx_x86_decode);
 *   execution    one TB-exec callback per executed TB. When TB k starts,
 *                TB k-1 is known to have finished and the start address of
 *                TB k is its successor, so TB k-1's instructions are
 *                emitted then, in program order, its last branch marked
 *                taken or not from that successor;
 *   memory       (only when a model or exact needs it) a memory callback
 *                per access appends (or completes) the record of its
 *                instruction: address and, for loads, the value read back
 *                from guest memory; the emit step picks the records up.
 * Without exact= or record=, a TB goes to the session as one block
 * (hwx_session_block); otherwise instruction by instruction.
 * Every vCPU (guest thread) has its own hwx_session; at exit they are
 * merged and the report is written to report= (text) and json= files.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HWPROF_STDIO
#include "hwx.h"
#include "qemu_plugin_api.h"

HWQ_PLUGIN_EXPORT int qemu_plugin_version = HWQ_PLUGIN_API_VERSION;

#define HWQ_MAX_VCPUS 1024
#define HWQ_MAX_TB_INSNS 512 /* TCG_MAX_INSNS in 7.2 */

/* What translation learnt about one TB. Kept for the life of the process
 * (a retranslated TB gets a new one): QEMU has no TB-free callback. */
typedef struct hwq_tb {
    hwp_insn last;        /* the last instruction's record as far as it is
                             known before execution: pc, branch class,
                             direct target, HWP_EV_INDIRECT              */
    uint32_t n;           /* instructions                                 */
    uint16_t to_next;     /* last.addr is the successor (ret, indirect)   */
    uint16_t cut;         /* the last instruction may be a cut copy (see
                             hwq_tb_trans)                                */
    uint64_t pc[];        /* pc of every instruction, then the address
                             after the last one (n + 1 entries): a memory
                             callback's userdata is &pc[i], so pc[i + 1] is
                             that instruction's next_pc                   */
} hwq_tb;

typedef struct hwq_vcpu {
    hwx_session s;
    void *mem;
    const hwq_tb *pend;   /* executed, not yet emitted                    */
    const uint64_t *mcur; /* instruction of memrec[nmem - 1]              */
    uint32_t nmem;        /* memory records of the running TB             */
    uint32_t pad_;
    uint64_t since_flush;
    hwx_trace_writer *tw; /* record=                                      */
    /* The running TB's memory instructions, one record each, in program
     * order, appended by the memory callback (7.2 calls it after each
     * access, in order) and consumed when the TB's successor is known. */
    hwp_insn memrec[HWQ_MAX_TB_INSNS];
} hwq_vcpu;

static struct {
    hwx_opts opts;
    int need_mem, need_values;
    int block;                      /* sessions take whole blocks        */
    uint64_t guest_base;
    pid_t pid;                      /* the process that loaded us        */
    pthread_mutex_t lock;
    hwq_vcpu *vcpu[HWQ_MAX_VCPUS];
    unsigned nvcpu;                 /* highest index + 1                 */
    FILE *trace;
    uint64_t dropped_vcpus;         /* vCPU indices beyond the table     */
    uint64_t tbs, tb_bytes;         /* translation statistics            */
} hwq = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* ---- output ---------------------------------------------------------------- */

static void hwq_trace_write(void *ctx, const char *s, size_t n) {
    (void)ctx;
    /* Chunks arrive whole (hwx_trace_flush); the lock keeps vCPUs apart. A
     * forked child would interleave with its parent: it records nothing. */
    if (getpid() != hwq.pid || !hwq.trace) return;
    pthread_mutex_lock(&hwq.lock);
    fwrite(s, 1, n, hwq.trace);
    pthread_mutex_unlock(&hwq.lock);
}

/* Open `name`, or name.PID in a forked child so it does not overwrite its
 * parent's file. */
static FILE *hwq_open(const char *name) {
    char buf[HWX_PATH_MAX + 24];
    if (getpid() != hwq.pid) {
        snprintf(buf, sizeof buf, "%s.%ld", name, (long)getpid());
        name = buf;
    }
    return fopen(name, "w");
}

/* ---- the event stream ------------------------------------------------------ */

/* TB `tb` has finished and `next` (0: unknown, at exit) is its successor:
 * how many of its instructions retired (returned), and the last one's
 * record in *last. The memory records of the TB are v->memrec[0..*nmem);
 * the last instruction's own record, if it accessed memory, is taken out
 * of them (*nmem shrinks). */
HWP_INLINE uint32_t hwq_finish_tb(const hwq_vcpu *v, const hwq_tb *tb, uint64_t next,
                                  hwp_insn *last, uint32_t *nmem) {
    uint32_t n = tb->n, k = v->nmem;
    if (!next) next = tb->pc[n];
    /* A TB can end with a cut copy of a page-crossing instruction that
     * then runs again at the head of the next TB: if the successor is the
     * last instruction's own pc, it did not retire here. A rep string op
     * also jumps to itself, after one iteration that did retire: only an
     * instruction that can cross a page (tb->cut) is taken for a copy. */
    if (tb->cut && next == tb->pc[n - 1]) {
        if (k && v->memrec[k - 1].pc == tb->pc[n - 1]) k--;
        n--;
    }
    if (n == tb->n && tb->last.cls != HWP_CLS_OTHER) {
        /* A branch: its class and target win over its own access (the
         * stack of call and ret); a loaded value stays (ret: the return
         * address). */
        uint64_t value = 0;
        if (k && v->memrec[k - 1].pc == tb->pc[n - 1]) value = v->memrec[--k].value;
        *last = tb->last;
        last->value = value;
        if (tb->to_next) last->addr = next;
        if (tb->last.cls != HWP_CLS_BR_COND || next != tb->pc[n])
            last->events |= HWP_EV_TAKEN;
    } else if (k && v->memrec[k - 1].pc == tb->pc[n - 1]) {
        *last = v->memrec[--k];
    } else {
        hwp__zero(last, sizeof *last);
        last->pc = tb->pc[n - 1];
    }
    last->next_pc = next;
    *nmem = k;
    return n;
}

/* Block mode (no exact profile, no recording): the TB goes to the session
 * at once (hwx_session_block). */
HWP_INLINE void hwq_emit_block(hwq_vcpu *v, const hwq_tb *tb, uint64_t next) {
    hwp_insn last;
    uint32_t nmem, n = hwq_finish_tb(v, tb, next, &last, &nmem);
    hwx_session_block(&v->s, tb->pc, n, &last, v->memrec, nmem);
}

/* Per-instruction mode (exact=on or record=): every instruction in program
 * order, the memory ones with their records. */
static void hwq_emit_insns(hwq_vcpu *v, const hwq_tb *tb, uint64_t next) {
    hwp_insn last, in;
    uint32_t nmem, i, j = 0, n = hwq_finish_tb(v, tb, next, &last, &nmem);
    for (i = 0; i < n; i++) {
        const hwp_insn *r = &in;
        if (i + 1 == n) {
            r = &last;
        } else if (j < nmem && v->memrec[j].pc == tb->pc[i]) {
            r = &v->memrec[j++];
        } else {
            hwp__zero(&in, sizeof in);
            in.pc = tb->pc[i];
            in.next_pc = tb->pc[i + 1];
        }
        hwx_session_insn(&v->s, r);
        if (v->tw) hwx_trace_put(v->tw, r);
    }
    v->since_flush += n;
    if (hwq.opts.flush && v->since_flush >= hwq.opts.flush) {
        v->since_flush = 0;
        if (v->tw) {
            hwx_trace_flush(v->tw);
            pthread_mutex_lock(&hwq.lock);
            if (hwq.trace) fflush(hwq.trace);
            pthread_mutex_unlock(&hwq.lock);
        }
    }
}

/* The pending TB, if any, with successor `next` (0 at a thread's end). */
static void hwq_emit(hwq_vcpu *v, uint64_t next) {
    if (!v->pend) return;
    if (hwq.block) hwq_emit_block(v, v->pend, next);
    else hwq_emit_insns(v, v->pend, next);
    v->pend = NULL;
    v->nmem = 0;
}

static hwq_vcpu *hwq_get(unsigned idx) {
    return idx < HWQ_MAX_VCPUS ? hwq.vcpu[idx] : NULL;
}

/* TB `udata` starts: the vCPU's pending TB has finished with it as its
 * successor. */
HWP_INLINE void hwq_tb_start(unsigned int vcpu_index, void *udata,
                             void (*emit)(hwq_vcpu *, const hwq_tb *, uint64_t)) {
    hwq_vcpu *v = hwq_get(vcpu_index);
    const hwq_tb *tb = (const hwq_tb *)udata;
    if (!v) return;
    if (v->pend) emit(v, v->pend, tb->pc[0]);
    v->pend = tb;
    v->nmem = 0;
}

/* Two callbacks, chosen at translation, so the per-TB path carries no
 * mode test: the block one is what every run without exact= or record=
 * pays per executed TB. */
static void hwq_tb_exec_block(unsigned int vcpu_index, void *udata) {
    hwq_tb_start(vcpu_index, udata, hwq_emit_block);
}

static void hwq_tb_exec_insns(unsigned int vcpu_index, void *udata) {
    hwq_tb_start(vcpu_index, udata, hwq_emit_insns);
}

/* The loaded value, read back from guest memory right after the access
 * (user mode: host address = guest address + guest_base); fixed-size
 * reads, the first 8 bytes of a wider access. */
static uint64_t hwq_value(uint64_t vaddr, unsigned shift) {
    const void *p = (const void *)(uintptr_t)(vaddr + hwq.guest_base);
    uint8_t b;
    uint16_t h;
    uint32_t w;
    uint64_t d;
    switch (shift) {
    case 0: memcpy(&b, p, 1); return b;
    case 1: memcpy(&h, p, 2); return h;
    case 2: memcpy(&w, p, 4); return w;
    default: memcpy(&d, p, 8); return d;
    }
}

/* One record per memory instruction: its first access gives the address,
 * its first load (if any) the class LOAD, that load's address and value;
 * an instruction that only stores is a STORE. `udata` is &tb->pc[i]. */
static void hwq_mem(unsigned int vcpu_index, qemu_plugin_meminfo_t info,
                    uint64_t vaddr, void *udata) {
    hwq_vcpu *v = hwq_get(vcpu_index);
    const uint64_t *pc = (const uint64_t *)udata;
    hwp_insn *r;
    if (!v) return;
    if (v->nmem && v->mcur == pc) {
        r = &v->memrec[v->nmem - 1];
    } else {
        if (v->nmem == HWQ_MAX_TB_INSNS) return; /* one per insn: cannot fill */
        r = &v->memrec[v->nmem++];
        v->mcur = pc;
        r->pc = pc[0];
        r->next_pc = pc[1];
        r->addr = vaddr;
        r->value = 0;
        r->cls = HWP_CLS_STORE;
        r->events = 0;
    }
    if (r->cls == HWP_CLS_LOAD || qemu_plugin_mem_is_store(info)) return;
    r->cls = HWP_CLS_LOAD;
    r->addr = vaddr;
    if (hwq.need_values) r->value = hwq_value(vaddr, qemu_plugin_mem_size_shift(info));
}

static void hwq_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
    size_t n = qemu_plugin_tb_n_insns(tb), i, bytes;
    hwq_tb *t;
    struct qemu_plugin_insn *last;
    hwx_x86_info info;
    (void)id;
    if (n == 0 || n > HWQ_MAX_TB_INSNS) return;
    bytes = sizeof *t + (n + 1) * sizeof t->pc[0];
    t = (hwq_tb *)calloc(1, bytes);
    if (!t) return;
    t->n = (uint32_t)n;
    for (i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        t->pc[i] = qemu_plugin_insn_vaddr(insn);
        if (hwq.need_mem)
            qemu_plugin_register_vcpu_mem_cb(insn, hwq_mem, QEMU_PLUGIN_CB_NO_REGS,
                                             QEMU_PLUGIN_MEM_RW, &t->pc[i]);
    }
    last = qemu_plugin_tb_get_insn(tb, n - 1);
    t->pc[n] = t->pc[n - 1] + qemu_plugin_insn_size(last);
    hwx_x86_decode((const uint8_t *)qemu_plugin_insn_data(last),
                   qemu_plugin_insn_size(last), t->pc[n - 1], &info);
    t->last.pc = t->pc[n - 1];
    t->last.cls = info.cls;
    /* Branch target: the decoded one for direct branches, else the
     * successor (known at execution). */
    t->to_next = !info.has_target;
    t->last.addr = info.has_target ? info.target : 0;
    if (info.cls == HWP_CLS_CALL && info.indirect) t->last.events = HWP_EV_INDIRECT;
    /* QEMU 7.2's x86 translator (advance_pc) cuts an instruction other
     * than a TB's first whose bytes reach past the TB's first page, and
     * translates it again at the head of the next TB; the plugin still
     * lists the cut copy. Only an instruction that starts within the
     * 15-byte maximum length (Intel SDM vol. 2, 2.3.11) of a page end can
     * be one (x86 TARGET_PAGE_SIZE is 4 KiB); as before, only a
     * non-branch is taken for one. */
    t->cut = n > 1 && info.cls == HWP_CLS_OTHER &&
             ((t->pc[n - 1] ^ (t->pc[n - 1] + 14)) & ~(uint64_t)4095) != 0;
    qemu_plugin_register_vcpu_tb_exec_cb(tb, hwq.block ? hwq_tb_exec_block : hwq_tb_exec_insns,
                                         QEMU_PLUGIN_CB_NO_REGS, t);
    __atomic_add_fetch(&hwq.tbs, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&hwq.tb_bytes, bytes, __ATOMIC_RELAXED);
}

/* ---- vCPUs ----------------------------------------------------------------- */

static void hwq_vcpu_init(qemu_plugin_id_t id, unsigned int idx) {
    hwq_vcpu *v;
    size_t bytes;
    hwp_writer w;
    (void)id;
    if (idx >= HWQ_MAX_VCPUS) {
        __atomic_add_fetch(&hwq.dropped_vcpus, 1, __ATOMIC_RELAXED);
        return;
    }
    pthread_mutex_lock(&hwq.lock);
    v = hwq.vcpu[idx];
    if (v) { /* index reused by a new thread: keep accumulating */
        v->pend = NULL;
        v->nmem = 0;
        pthread_mutex_unlock(&hwq.lock);
        return;
    }
    pthread_mutex_unlock(&hwq.lock);
    v = (hwq_vcpu *)calloc(1, sizeof *v);
    bytes = hwx_session_bytes(&hwq.opts);
    if (!v || !(v->mem = malloc(bytes)) ||
        hwx_session_init(&v->s, v->mem, bytes, &hwq.opts) != HWP_OK) {
        fprintf(stderr, "hwprof: vCPU %u: %s\n", idx,
                v && v->mem ? hwp_why(&v->s) : "out of memory");
        if (v) free(v->mem);
        free(v);
        return;
    }
    if (hwq.trace) {
        v->tw = (hwx_trace_writer *)malloc(sizeof *v->tw);
        w.write = hwq_trace_write;
        w.ctx = NULL;
        if (v->tw) hwx_trace_writer_init(v->tw, &w, idx);
    }
    pthread_mutex_lock(&hwq.lock);
    hwq.vcpu[idx] = v;
    if (idx + 1 > hwq.nvcpu) hwq.nvcpu = idx + 1;
    pthread_mutex_unlock(&hwq.lock);
}

/* A thread ends: its last TB is complete, successor unknown. */
static void hwq_vcpu_exit(qemu_plugin_id_t id, unsigned int idx) {
    hwq_vcpu *v = hwq_get(idx);
    (void)id;
    if (!v) return;
    hwq_emit(v, 0);
    if (v->tw) hwx_trace_flush(v->tw);
}

/* ---- exit: merge and report -------------------------------------------------- */

static void hwq_report(hwx_session *all) {
    FILE *f = stderr;
    hwp_writer w;
    if (hwq.opts.report[0]) {
        f = hwq_open(hwq.opts.report);
        if (!f) {
            fprintf(stderr, "hwprof: cannot open %s: %s\n", hwq.opts.report,
                    strerror(errno));
            f = stderr;
        }
    }
    w = hwp_writer_stdio(f);
    hwx_session_report_text(all, &w);
    fprintf(f, "plugin: %llu TBs translated (%llu bytes of TB info), %u vCPU(s)%s\n",
            (unsigned long long)hwq.tbs, (unsigned long long)hwq.tb_bytes,
            hwq.nvcpu, hwq.dropped_vcpus ? ", some vCPUs beyond the table were not profiled" : "");
    if (f != stderr) fclose(f);
    if (hwq.opts.json[0]) {
        f = hwq_open(hwq.opts.json);
        if (f) {
            w = hwp_writer_stdio(f);
            hwx_session_report_json(all, &w);
            fclose(f);
        } else {
            fprintf(stderr, "hwprof: cannot open %s: %s\n", hwq.opts.json,
                    strerror(errno));
        }
    }
}

static void hwq_atexit(qemu_plugin_id_t id, void *p) {
    hwx_session *all = NULL;
    uint64_t total = 0;
    unsigned i;
    (void)id;
    (void)p;
    for (i = 0; i < hwq.nvcpu; i++) {
        hwq_vcpu *v = hwq.vcpu[i];
        if (!v) continue;
        hwq_emit(v, 0);
        hwx_session_finish(&v->s);
        if (v->tw) {
            hwx_trace_flush(v->tw);
            total += v->tw->total;
        }
        if (!all) all = &v->s;
        else hwx_session_merge(all, &v->s);
    }
    if (hwq.trace && getpid() == hwq.pid) {
        hwp_writer w;
        w.write = hwq_trace_write;
        w.ctx = NULL;
        hwx_trace_write_end(&w, total);
        fclose(hwq.trace);
        hwq.trace = NULL;
    }
    if (!all) return;
    if (all->exact) {
        size_t n = hwx_session_eval_bytes(all);
        void *scratch = malloc(n);
        if (!scratch || hwx_session_evaluate(all, scratch, n) != HWP_OK)
            fprintf(stderr, "hwprof: accuracy not computed: %s\n",
                    scratch ? hwp_why(all) : "out of memory");
        free(scratch);
    }
    hwq_report(all);
}

/* ---- install ----------------------------------------------------------------- */

/* QEMU's -B / QEMU_GUEST_BASE; 0 otherwise (the x86-64-on-x86-64 default).
 * An automatically chosen non-zero base (rare: only when the guest's
 * layout collides with QEMU's own mappings) is invisible to plugins: pass
 * guest_base= or values=off then. */
static uint64_t hwq_find_guest_base(void) {
    uint64_t b = 0;
    const char *e = getenv("QEMU_GUEST_BASE");
    char buf[8192];
    ssize_t n;
    int fd = open("/proc/self/cmdline", O_RDONLY);
    if (e) hwx_parse_u64(e, &b);
    if (fd >= 0) {
        n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n > 0) {
            char *p = buf, *end = buf + n;
            buf[n] = 0;
            while (p < end) {
                char *nx = p + strlen(p) + 1;
                if (!strcmp(p, "-B") && nx < end) {
                    hwx_parse_u64(nx, &b);
                    break;
                }
                if (!strcmp(p, "-plugin")) break; /* guest args follow later */
                p = nx;
            }
        }
    }
    return b;
}

HWQ_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
                                          const qemu_info_t *info, int argc,
                                          char **argv) {
    int i;
    const char *why = "";
    if (info->system_emulation) {
        fprintf(stderr, "hwprof: only user-mode emulation is supported\n");
        return -1;
    }
    hwx_opts_default(&hwq.opts);
    for (i = 0; i < argc; i++) {
        char key[64];
        const char *a = argv[i], *eq;
        size_t k;
        if (!strncmp(a, "arg=", 4)) a += 4; /* pre-6.0 "arg=k=v" syntax */
        eq = strchr(a, '=');
        k = eq ? (size_t)(eq - a) : 0;
        if (!eq || k >= sizeof key) {
            fprintf(stderr, "hwprof: expected key=value, got '%s'\n", argv[i]);
            return -1;
        }
        memcpy(key, a, k);
        key[k] = 0;
        if (hwx_opts_set(&hwq.opts, key, eq + 1, &why) != HWP_OK) {
            fprintf(stderr, "hwprof: %s: %s\n", argv[i], why);
            return -1;
        }
    }
    hwq.pid = getpid();
    hwq.need_mem = hwx_opts_need_memory(&hwq.opts);
    hwq.need_values = hwx_opts_need_values(&hwq.opts);
    /* Whole blocks unless something needs every instruction: the exact
     * profile counts each one (hwx_session_block_ok), the core times each
     * one, a recording stores each one. */
    hwq.block = !hwq.opts.exact && !(hwq.opts.models & HWX_M_CORE) &&
                !hwq.opts.record[0];
    hwq.guest_base = hwq.opts.guest_base_set ? hwq.opts.guest_base
                                             : hwq_find_guest_base();
    if (hwq.opts.record[0]) {
        hwp_writer w;
        hwq.trace = fopen(hwq.opts.record, "wb");
        if (!hwq.trace) {
            fprintf(stderr, "hwprof: cannot open %s: %s\n", hwq.opts.record,
                    strerror(errno));
            return -1;
        }
        setvbuf(hwq.trace, NULL, _IOFBF, 1 << 20);
        w = hwp_writer_stdio(hwq.trace);
        hwx_trace_write_header(&w);
    }
    qemu_plugin_register_vcpu_init_cb(id, hwq_vcpu_init);
    qemu_plugin_register_vcpu_exit_cb(id, hwq_vcpu_exit);
    qemu_plugin_register_vcpu_tb_trans_cb(id, hwq_tb_trans);
    qemu_plugin_register_atexit_cb(id, hwq_atexit, NULL);
    return 0;
}
