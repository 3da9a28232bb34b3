/* examples/qemu/hwprof_tcg.c: a QEMU TCG plugin that runs the hwprof
 * models on an unmodified Linux program (user mode) or a whole machine
 * (system mode, API 4 and 7 builds). One source, three builds, where
 * hwq_api.h holds what differs between the APIs:
 *   libhwprof-tcg.so     plugin API 1, QEMU 7.2 (Debian 12's qemu-user)
 *   libhwprof-tcg-v4.so  plugin API 4, QEMU 9.1 .. 10.x
 *   libhwprof-tcg-v7.so  plugin API 7, QEMU 11.1 and later
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
 * (hwx_session_block); otherwise instruction by instruction. With
 * ProfileMe alone the plugin keeps its fetch countdown (an inline
 * scoreboard decrement and a conditional callback where the API has
 * scoreboards, a counting TB callback on API 1) and calls the session
 * only at a selection (hwq_cd_*). With RAP on code the only model, each
 * TB's instructions are counted in a counter of its own (inline where
 * the API has scoreboards) and handed to RAP in bulk (hwq_tally_*).
 * System mode: the per-TB callback also reads CR3 (user-half code only)
 * and hands the models every user address tagged with its address space,
 * the flow broken where the address space or privilege changes (hwq_as.h).
 * Every vCPU (guest thread) has its own hwx_session; at exit they are
 * merged and the report is written to report= (text) and json= files.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HWPROF_STDIO
#include "hwx_host.h"
#include "hwq_as.h"
#include "hwprof/core.h"
#define HWQ_PLUGIN_NAME "hwprof-tcg"
#include "hwq_api.h"

HWQ_PLUGIN_EXPORT int qemu_plugin_version = HWQ_PLUGIN_API_VERSION;

#define HWQ_MAX_VCPUS 1024
#define HWQ_MAX_TB_INSNS 512 /* TCG_MAX_INSNS in 7.2 and 10.0 */
/* Tally mode's counter slots (hwq_tally_*). */
#define HWQ_TALLY_CHUNK 4096u /* slots per chunk: one scoreboard each      */
#define HWQ_TALLY_CHUNKS 64u  /* chunks: 262144 TBs, then one call per TB   */
#define HWQ_NO_SLOT UINT32_MAX

/* The core's translation of a TB (hwq_core_tb_make), with what it was
 * made from: which instructions load or store. */
typedef struct hwq_core_tb {
    hwp_core_block *blk;
    uint32_t nmem;        /* memory records of the first n - 1 insns    */
    uint32_t last_cls;    /* the last instruction's record's class      */
    uint32_t *midx;       /* their instructions' indices, nmem of them  */
    uint8_t *cls;         /* every instruction's class, n of them       */
} hwq_core_tb;

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
    uint32_t slot;        /* tally mode: its counter (HWQ_NO_SLOT: none)  */
    uint16_t inl;         /* counted between bursts with no callback, in
                             q_left and its slot (hwq_quiet_*)            */
    uint16_t flat;        /* system mode: translated in protected or long
                             mode, where its pc is rip (hwq_tb_start)     */
    uint16_t kern;        /* counted as kernel code (hwq_tb_kernel)       */
    uint16_t unpaged;     /* system mode: translated without paging (16-
                             or 32-bit code: hwq_tb_cr0)                  */
    const hwp_core_ops *ops; /* core=on: each instruction's length and,
                             with regs=on, its registers from the x86
                             decoder, decoded at translation (stored
                             after pc[]); else NULL                     */
    hwq_core_tb *core;    /* core blocks (hwq_emit_core): made at the
                             first execution, then shared (atomic)    */
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
    hwx_out *bbv;         /* bbv=: this vCPU's vectors                    */
    /* Countdown mode (hwq_cd_*): the TB whose last instruction is the
     * selected one (or may be a cut copy) waits here for its successor;
     * instructions before cd_pos are already accounted. API 1 keeps the
     * countdown itself in cd_left (API 4 and 7: a scoreboard entry). */
    const hwq_tb *cd_pend;
    uint32_t cd_pos;
    uint32_t idx;         /* vcpu_index                                   */
    uint32_t retired;     /* hwq_retire's ranges this session has taken   */
    uint64_t cd_left;
    uint64_t cd_last;     /* the count hwq_cd_tb left: minus the count
                             now, the instructions passed since          */
    uint64_t hush;        /* burst_period=: TBs' instructions between
                             bursts not yet handed to the session        */
    uint64_t quiet;       /* hwx_session_quiet when hush was last 0       */
    uint64_t q_mark;      /* q_left as the last callback left it, after its
                             own TB (hwq_quiet_*)                         */
    const hwq_tb *hush_cut; /* the last TB counted in hush, when its last
                             instruction may be a cut copy (hwq_hush_cut) */
    /* Tally mode and TBs counted between bursts (hwq_tally_*): the
     * counter chunks a callback counts in (not hwq_tally_inline),
     * allocated as the slots are met; the instructions handed on since
     * the full drain. */
    uint64_t *tally[HWQ_TALLY_CHUNKS];
    uint64_t tally_since;
    /* System mode (hwq_as.h): the pending TB's address-space tag, its
     * successor's, the last CR3 read and its tag, where CR3 is read
     * (NULL: not readable, every tag 0), where CS and CR0 are read (the
     * privilege of the code translated on this vCPU's thread; NULL: not
     * readable, the address decides) and the tagged pcs handed on. */
    uint64_t tag, next_tag, cr3, cr3_tag;
    uint64_t brk[HWQ_BRK_KINDS]; /* TBs ended by each kind of break      */
    uint64_t delta;       /* the pending TB's distance from its translated
                             pcs (hwq_as_rebase)                          */
    uint64_t aliased;     /* TBs run at a distance from them             */
    uint64_t told[3];     /* discontinuity callbacks (API 7): interrupts,
                             exceptions, host calls (hwq_discon)          */
    int brk_told;         /* one came since the pending TB started        */
    int pad2_;
    uint64_t told_brk;    /* TBs ended by a break so told                 */
    uint64_t early;       /* TBs left early (hwq_finish_tb)               */
    uint64_t unretired;   /* their instructions that did not run, and cut
                             copies: out of the counts by privilege too   */
    struct qemu_plugin_register *cr3_reg, *cs_reg, *cr0_reg, *rip_reg;
    hwq_gbytes *regs;     /* read buffer (API 4 and 7)                    */
    uint64_t tpc[HWQ_MAX_TB_INSNS + 1];
    /* The running TB's memory instructions, one record each, in program
     * order, appended by the memory callback (7.2 calls it after each
     * access, in order) and consumed when the TB's successor is known. */
    hwp_insn memrec[HWQ_MAX_TB_INSNS];
} hwq_vcpu;

static struct {
    hwx_opts opts;
    int need_mem, need_values;
    int block;                      /* sessions take whole blocks        */
    int core_blocks;                /* and the core takes them through its
                                       translations (hwq_emit_core)      */
    int no_core_blocks;             /* blocks=off                        */
    int countdown;                  /* only ProfileMe: hwq_cd_*          */
    int tally;                      /* only RAP on code: hwq_tally_*
                                       (hwx_session_tally_ok)            */
    int quiet;                      /* burst_period=: the sessions can go
                                       without records between bursts
                                       (hwx_session_quiet)               */
    int quiet_tally;                /* and have RAP on code:
                                       TBs between bursts counted in
                                       hwq_tally_* slots (hwq_tb_start)  */
    int quiet_inline;               /* or not, on API 4 and 7: TBs between
                                       bursts counted inline (hwq_quiet_*) */
    uint64_t drain;                 /* drain=: a TB's counter is handed
                                       on at this many instructions (0:
                                       RAP fed every TB)                 */
    int no_countdown;               /* cd=off                            */
    int no_inline;                  /* inline=off                        */
    int no_regs;                    /* regs=off                          */
    int regs;                       /* the core takes registers from the
                                       x86 decoder (core=on, not regs=off) */
    uint64_t regs_insns, regs_unknown; /* translated instructions, those the
                                       decoder gave no registers         */
    uint64_t regs_src_over, regs_dst_over; /* with sources or destinations
                                       beyond the core's three and two   */
    uint64_t guest_base;
    pid_t pid;                      /* the process that loaded us        */
    pthread_mutex_t lock;
    hwq_vcpu *vcpu[HWQ_MAX_VCPUS];
    unsigned nvcpu;                 /* highest index + 1                 */
    FILE *trace;
    uint64_t dropped_vcpus;         /* vCPU indices beyond the table     */
    uint64_t tbs, tb_bytes;         /* translation statistics            */
    uint64_t bad_reads;             /* loaded values that could not be read
                                       safely (skipped, value 0)          */
    int system;                     /* system emulation (API 4 build)    */
    int floor;                      /* HWQ_FLOOR_*: bench/qemu's floors  */
    int exiting;                    /* 0, 1 report being written, 2 done */
    int live;                       /* guest threads running (user mode) */
    hwq_as_table *as;               /* system mode: CR3 -> tag (lock)    */
    uint64_t priv_by_addr;          /* system-mode TBs whose privilege was
                                       told by address (no CS/CR0 read)  */
    /* Per-vCPU instruction counts kept by inline ops (no callback):
     * user and kernel code apart; ProfileMe's countdown (HWQ_SCOREBOARD). */
    struct qemu_plugin_scoreboard *sb;
} hwq = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* floor=: what the API itself costs, for bench/qemu: no model runs, the
 * plugin only registers the named kind of callback, which returns at once. */
enum { HWQ_FLOOR_OFF, HWQ_FLOOR_TB, HWQ_FLOOR_MEM, HWQ_FLOOR_COND };

typedef struct hwq_slot {
    uint64_t user, kernel; /* instructions executed, by privilege      */
    uint64_t countdown;    /* floor=cond: decremented inline per TB     */
    uint64_t pm_left;      /* ProfileMe's countdown (hwq_cd_*)          */
    uint64_t q_left;       /* burst_period=: instructions the TBs may
                              still pass without a callback (hwq_quiet_*) */
} hwq_slot;
#define HWQ_U64(member) \
    ((qemu_plugin_u64){hwq.sb, offsetof(hwq_slot, member)})

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

/* ---- modules: the guest's code images (user mode) -------------------------- */

/* The plugin API names only the guest binary, so the other images the
 * guest runs (ld.so, libc, libpython...) are found in QEMU's own
 * /proc/self/maps, where linux-user maps every guest file mapping at host
 * address guest address + guest_base, with the file's path and offset:
 *   - which mappings are the guest's: QEMU loads plugins before the guest
 *     image (linux-user/main.c, 7.2 and 10.0), so every file mapping that
 *     exists at install is QEMU's own and is remembered by its start;
 *   - which hold code: QEMU maps guest code readable but not executable
 *     on the host (10.0: target_to_host_prot), so the file's program
 *     headers say: the mapping must cover part of an executable PT_LOAD;
 *   - guest_base: learnt from the first translated instruction (host
 *     address minus guest address, qemu_plugin_insn_haddr), which also
 *     sees a base QEMU chose itself; guest_base= or -B when not available.
 * An image unmapped before exit (dlclose) is not listed. */
#define HWQ_MAX_MODULES 256
#define HWQ_MAX_HOST_MAPS 1024
static struct {
    uint64_t host[HWQ_MAX_HOST_MAPS]; /* QEMU's file mappings at install  */
    unsigned nhost, have_base, took_signals;
    uint64_t base;                    /* guest_base seen by translation   */
    size_t n;
    hwx_module mod[HWQ_MAX_MODULES];
    char path[HWQ_MAX_MODULES][PATH_MAX];
} hwq_img;

/* One line of /proc/self/maps: 0 unless file-backed. */
static int hwq_img_line(const char *l, uint64_t *lo, uint64_t *hi, uint64_t *off,
                         const char **path) {
    int at = 0;
    unsigned long long a, b, o;
    if (sscanf(l, "%llx-%llx %*s %llx %*s %*s %n", &a, &b, &o, &at) != 3 || !at ||
        l[at] != '/')
        return 0;
    *lo = a;
    *hi = b;
    *off = o;
    *path = l + at;
    return 1;
}

static void hwq_img_snapshot(void) {
    char l[PATH_MAX + 128];
    const char *path;
    uint64_t lo, hi, off;
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return;
    while (fgets(l, sizeof l, f) && hwq_img.nhost < HWQ_MAX_HOST_MAPS)
        if (hwq_img_line(l, &lo, &hi, &off, &path)) hwq_img.host[hwq_img.nhost++] = lo;
    fclose(f);
}

/* The executable PT_LOAD of ELF-64 file `path` whose file bytes overlap
 * [off, off + len): its p_vaddr, p_offset, p_memsz. 0 if none. */
static int hwq_elf_code(const char *path, uint64_t off, uint64_t len, uint64_t seg[3]) {
    unsigned char h[64], ph[56];
    uint64_t phoff;
    unsigned i, n, sz;
    int ok = 0, fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    if (pread(fd, h, 64, 0) == 64 && !memcmp(h, "\177ELF", 4) && h[4] == 2 && h[5] == 1) {
        memcpy(&phoff, h + 32, 8);
        sz = (unsigned)h[54] | (unsigned)h[55] << 8;
        n = (unsigned)h[56] | (unsigned)h[57] << 8;
        for (i = 0; i < n && sz >= 56 && !ok; i++) {
            uint32_t type, flags;
            uint64_t filesz;
            if (pread(fd, ph, 56, (off_t)(phoff + (uint64_t)i * sz)) != 56) break;
            memcpy(&type, ph, 4);
            memcpy(&flags, ph + 4, 4);
            memcpy(&seg[1], ph + 8, 8);
            memcpy(&seg[0], ph + 16, 8);
            memcpy(&filesz, ph + 32, 8);
            memcpy(&seg[2], ph + 40, 8);
            ok = type == 1 /* PT_LOAD */ && (flags & 1u) /* PF_X */ && filesz &&
                 seg[1] < off + len && off < seg[1] + filesz;
        }
    }
    close(fd);
    return ok;
}

/* Every guest code image but the binary (`skip`), into hwq_img.mod. */
static void hwq_img_collect(const char *skip) {
    char l[PATH_MAX + 128];
    const char *path;
    uint64_t lo, hi, off, seg[3];
    uint64_t base = hwq_img.have_base ? hwq_img.base : hwq.guest_base;
    unsigned i;
    size_t k;
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return;
    while (fgets(l, sizeof l, f) && hwq_img.n < HWQ_MAX_MODULES) {
        hwx_module *m = &hwq_img.mod[hwq_img.n];
        uint64_t bias;
        l[strcspn(l, "\n")] = 0;
        if (!hwq_img_line(l, &lo, &hi, &off, &path) || lo < base ||
            (skip && !strcmp(path, skip)))
            continue;
        for (i = 0; i < hwq_img.nhost && hwq_img.host[i] != lo; i++) {}
        if (i < hwq_img.nhost || !hwq_elf_code(path, off, hi - lo, seg)) continue;
        /* file offset x sits at guest address lo - base + (x - off) */
        bias = lo - base + (seg[1] - off) - seg[0];
        for (k = 0; k < hwq_img.n && (strcmp(hwq_img.path[k], path) ||
                                       hwq_img.mod[k].bias != bias); k++) {}
        if (k < hwq_img.n) continue; /* another piece of the same segment */
        snprintf(hwq_img.path[hwq_img.n], PATH_MAX, "%s", path);
        m->path = hwq_img.path[hwq_img.n];
        m->lo = bias + seg[0];
        m->hi = bias + seg[0] + seg[2] - 1;
        m->bias = bias;
        m->have_bias = 1;
        hwq_img.n++;
    }
    fclose(f);
}

/* User mode: the guest binary (its path and code range from the API), then
 * the other images; hwprof-report names functions from them. */
static void hwq_modules(void) {
    static char bin[PATH_MAX];
    const char *p;
    if (hwq.system) return;
    p = qemu_plugin_path_to_binary && qemu_plugin_start_code ? qemu_plugin_path_to_binary()
                                                             : NULL;
    if (p) {
        hwx_module *m = &hwq_img.mod[hwq_img.n++];
        /* absolute: the report is read from another directory */
        m->path = realpath(p, bin) ? bin : p;
        m->lo = qemu_plugin_start_code();
        m->hi = qemu_plugin_end_code ? qemu_plugin_end_code() : 0;
    }
    hwq_img_collect(p ? hwq_img.mod[0].path : NULL);
}

/* QEMU 10 gives its host signal handler (which hands a signal to the
 * guest and, when the guest's action is the default one, ends the process
 * through the plugins' exit callbacks: dump_core_and_abort, then
 * preexit_cleanup) only to the signals that dump core (signal_init in
 * linux-user/signal.c); SIGTERM, SIGINT, SIGHUP... keep the host default
 * and kill QEMU with no callback and no report. Called at the first
 * translation, after signal_init: each of those whose host action is still
 * the default gets QEMU's own handler, read back from SIGSEGV's, so a
 * signal from outside ends the guest as before (its action is the default,
 * its status the signal) but through the exit callback. A guest that sets
 * its own action for one of them gets QEMU's usual handling of it. */
static void hwq_take_signals(void) {
    static const int sig[] = {SIGHUP,  SIGINT,  SIGPIPE, SIGALRM,  SIGTERM,
                              SIGUSR1, SIGUSR2, SIGPROF, SIGVTALRM};
    struct sigaction qemu, cur;
    unsigned i;
    if (sigaction(SIGSEGV, NULL, &qemu) != 0 || !(qemu.sa_flags & SA_SIGINFO)) return;
    for (i = 0; i < sizeof sig / sizeof sig[0]; i++)
        if (sigaction(sig[i], NULL, &cur) == 0 && cur.sa_handler == SIG_DFL)
            sigaction(sig[i], &qemu, NULL);
}

/* ---- the event stream ------------------------------------------------------ */

static hwq_vcpu *hwq_get(unsigned idx) {
    return idx < HWQ_MAX_VCPUS ? hwq.vcpu[idx] : NULL;
}

/* TB `tb` has finished and `next` (0: unknown, at exit) is its successor:
 * how many of its instructions retired (returned), and the last one's
 * record in *last. The memory records of the TB are v->memrec[0..*nmem);
 * the last instruction's own record, if it accessed memory, is taken out
 * of them (*nmem shrinks). */
HWP_INLINE uint32_t hwq_finish_tb(hwq_vcpu *v, const hwq_tb *tb, uint64_t next,
                                  hwp_insn *last, uint32_t *nmem) {
    uint32_t n = tb->n, k = v->nmem, at;
    if (!next) next = tb->pc[n];
    /* Left early: QEMU ends a TB before its end without an exception the
     * guest sees (a store into the page of the code running, which
     * retranslates it; I/O under icount) and starts the next TB at the
     * first instruction that did not run. Those did not retire, and the
     * memory records are of the ones before them. The countdown has fed
     * the session before the successor is known, so it takes TBs whole,
     * as its TBs between selections are. A TB whose last instruction is a
     * branch to a run-time address (ret, an indirect jump or call) may go
     * back into itself, and one translated without paging has no decoded
     * targets: neither has a successor known from its code. */
    if (HWP_UNLIKELY(n > 2 && !hwq.countdown && !tb->unpaged &&
                     (tb->last.cls == HWP_CLS_OTHER || !tb->to_next) &&
                     (at = hwq_left_at(tb->pc, n, next,
                                       tb->last.cls == HWP_CLS_OTHER ? 0 : tb->last.addr)) != 0)) {
        while (k && v->memrec[k - 1].pc >= next) k--;
        n = at;
        v->early++;
    }
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
        hwp_zero(last, sizeof *last);
        last->pc = tb->pc[n - 1];
    }
    last->next_pc = next;
    *nmem = k;
    if (HWP_UNLIKELY(n < tb->n)) {
        /* The inline count by privilege took the whole TB. */
        v->unretired += tb->n - n;
        if (HWQ_SCOREBOARD) {
            uint64_t *c = (uint64_t *)((char *)qemu_plugin_scoreboard_find(hwq.sb, v->idx) +
                                       (tb->kern ? offsetof(hwq_slot, kernel)
                                                 : offsetof(hwq_slot, user)));
            *c -= tb->n - n;
        }
    }
    return n;
}

/* System mode (sys, a constant at every call site): the finished TB's
 * records in their address spaces, the flow broken where the address
 * space or the privilege changes (hwq_as.h, v->tag and v->next_tag); the
 * pcs to hand on. User mode: tb->pc as it is, at no cost. */
HWP_INLINE const uint64_t *hwq_as_fix(hwq_vcpu *v, const hwq_tb *tb, uint32_t n,
                                      hwp_insn *last, uint32_t nmem, const int sys) {
    if (!sys) return tb->pc;
    hwq_as_rebase(v->tpc, tb->pc, n, last, v->memrec, nmem, v->delta);
    v->told_brk += v->brk_told != 0;
    v->brk[hwq_as_block(v->tpc, v->tpc, n, last, v->memrec, nmem, v->tag, v->next_tag,
                        (v->brk_told ? HWQ_AS_TOLD : 0u) |
                            (tb->unpaged ? HWQ_AS_NO_INFER : 0u))]++;
    return v->tpc;
}

/* Block mode (no exact profile, no recording): the TB goes to the session
 * at once (hwx_session_block). */
HWP_INLINE void hwq_emit_block_in(hwq_vcpu *v, const hwq_tb *tb, uint64_t next,
                                  const int sys) {
    hwp_insn last;
    uint32_t nmem, n = hwq_finish_tb(v, tb, next, &last, &nmem);
    const uint64_t *pcs = hwq_as_fix(v, tb, n, &last, nmem, sys);
    hwx_session_block(&v->s, pcs, n, &last, v->memrec, nmem);
}

/* Per-instruction mode (exact=on or record=): every instruction in program
 * order, the memory ones with their records. */
HWP_INLINE void hwq_emit_insns_in(hwq_vcpu *v, const hwq_tb *tb, uint64_t next,
                                  const int sys) {
    hwp_insn last, in;
    uint32_t nmem, i, j = 0, n = hwq_finish_tb(v, tb, next, &last, &nmem);
    const uint64_t *pcs = hwq_as_fix(v, tb, n, &last, nmem, sys);
    for (i = 0; i < n; i++) {
        const hwp_insn *r = &in;
        if (i + 1 == n) {
            r = &last;
        } else if (j < nmem && v->memrec[j].pc == pcs[i]) {
            r = &v->memrec[j++];
        } else {
            hwp_zero(&in, sizeof in);
            in.pc = pcs[i];
            in.next_pc = pcs[i + 1];
        }
        if (tb->ops) hwx_core_regs(&v->s, &tb->ops[i], "the x86 decoder");
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

HWP_INLINE void hwq_emit_block(hwq_vcpu *v, const hwq_tb *tb, uint64_t next) {
    hwq_emit_block_in(v, tb, next, 0);
}

/* What a TB the core cannot take through a translation publishes, so
 * that it is not tried again: its executions go one instruction at a
 * time. */
static hwq_core_tb hwq_core_none;

/* The core's translation of a TB whose n instructions all retired, from
 * this execution's records: which of them load or store is known only
 * from the memory callbacks. Published for every vCPU; hwq_core_none
 * when the records do not follow the TB's instructions or the core
 * refuses the block; NULL when out of memory (tried again). */
static hwq_core_tb *hwq_core_tb_make(hwq_vcpu *v, const hwq_tb *tb, const hwp_insn *last,
                                     uint32_t nmem) {
    uint32_t n = tb->n, i, j = 0;
    size_t bytes = hwp_core_block_bytes(n);
    hwq_core_tb *c = (hwq_core_tb *)calloc(1, sizeof *c + nmem * sizeof(uint32_t) + n + bytes);
    hwq_core_tb *was = NULL;
    if (!c) return NULL;
    c->midx = (uint32_t *)(void *)(c + 1);
    c->cls = (uint8_t *)(c->midx + nmem);
    for (i = 0; i + 1 < n; i++) {
        c->cls[i] = HWP_CLS_OTHER;
        if (j < nmem && v->memrec[j].pc == tb->pc[i]) {
            c->cls[i] = (uint8_t)v->memrec[j].cls;
            c->midx[j++] = i;
        }
    }
    c->cls[n - 1] = (uint8_t)last->cls;
    c->nmem = nmem;
    c->last_cls = last->cls;
    c->blk = j == nmem ? hwx_core_block_init(&v->s, c->cls + n, bytes, tb->pc[0], c->cls,
                                             tb->ops, n)
                       : NULL;
    if (!c->blk) {
        free(c);
        c = &hwq_core_none;
    }
    if (!__atomic_compare_exchange_n(&((hwq_tb *)(uintptr_t)tb)->core, &was, c, false,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        if (c != &hwq_core_none) free(c); /* another vCPU's made it first */
        return was;
    }
    return c;
}

/* Does this execution's records match the translation's? */
HWP_INLINE int hwq_core_tb_match(const hwq_core_tb *c, const hwq_vcpu *v, const hwq_tb *tb,
                                 const hwp_insn *last, uint32_t nmem) {
    uint32_t j;
    if (nmem != c->nmem || last->cls != c->last_cls) return 0;
    for (j = 0; j < nmem; j++)
        if (v->memrec[j].pc != tb->pc[c->midx[j]] || v->memrec[j].cls != c->cls[c->midx[j]])
            return 0;
    return 1;
}

/* Block mode with the core (hwx_session_core_blocks_ok): the core runs
 * the TB through its translation. An execution whose accesses differ
 * from the first one's (a rep op that ran no iteration, a cut copy that
 * did not retire) goes one instruction at a time, as does one in which
 * ProfileMe selects (the session decides that). */
static void hwq_emit_core(hwq_vcpu *v, const hwq_tb *tb, uint64_t next) {
    hwp_insn last;
    uint32_t nmem, n = hwq_finish_tb(v, tb, next, &last, &nmem);
    const hwp_core_block *blk = NULL;
    if (n == tb->n) { /* a cut copy that did not retire: one at a time */
        hwq_core_tb *c = __atomic_load_n(&((hwq_tb *)(uintptr_t)tb)->core, __ATOMIC_ACQUIRE);
        if (!c) c = hwq_core_tb_make(v, tb, &last, nmem);
        if (c && c->blk && hwq_core_tb_match(c, v, tb, &last, nmem)) blk = c->blk;
    }
    hwx_core_block(&v->s, blk, tb->ops);
    hwx_session_block(&v->s, tb->pc, n, &last, v->memrec, nmem);
}
static void hwq_emit_insns(hwq_vcpu *v, const hwq_tb *tb, uint64_t next) {
    hwq_emit_insns_in(v, tb, next, 0);
}
/* System mode: the successor as seen from where tb was translated (its
 * pcs are moved to where it ran afterwards: hwq_as_fix). */
static void hwq_emit_block_sys(hwq_vcpu *v, const hwq_tb *tb, uint64_t next) {
    hwq_emit_block_in(v, tb, next ? next - v->delta : 0, 1);
}
static void hwq_emit_insns_sys(hwq_vcpu *v, const hwq_tb *tb, uint64_t next) {
    hwq_emit_insns_in(v, tb, next ? next - v->delta : 0, 1);
}

/* ---- ProfileMe alone: the fetch countdown outside the session ------------ */
/* With ProfileMe the only model (no exact profile, no recording) the
 * session needs only the instructions ProfileMe selects whole
 * (hwx_session_until); the others pass in bulk (hwx_session_skip). So the
 * plugin keeps the Fetched Instruction Counter per vCPU (Dean et al.,
 * sec. 4.1.1): API 4 in a scoreboard entry that an inline op lowers by
 * each TB's length, with a conditional callback on the TB that holds the
 * selection; API 1 in a TB callback that only subtracts. When it runs out,
 * hwq_cd_tb feeds the session and says where the countdown stands. The
 * selected instruction gets the record the per-instruction path gives it;
 * the last one of a TB needs its successor (taken or not, a cut copy that
 * did not retire), so it waits and the countdown is set to run out at the
 * next TB. What the session does not see: unselected branches' directions
 * (the sampler's path register; the table does not use it) and the
 * classes of skipped instructions (counted as "other"). */

/* Account tb's instructions [pos, end): skip to each selection and feed
 * it whole, the last instruction's record being *last. With last NULL
 * (successor unknown) the walk stops at a selection of the last
 * instruction. Returns where it stopped. */
static uint32_t hwq_cd_walk(hwq_vcpu *v, const hwq_tb *tb, uint32_t pos, uint32_t end,
                            const hwp_insn *last) {
    while (pos < end) {
        uint64_t u = hwx_session_until(&v->s);
        uint32_t idx;
        hwp_insn in;
        if (u == 0 || u > end - pos) {
            hwx_session_skip(&v->s, end - pos);
            return end;
        }
        idx = pos + (uint32_t)u - 1;
        if (u > 1) hwx_session_skip(&v->s, u - 1);
        if (idx + 1 == tb->n) {
            if (!last) return idx;
            in = *last;
        } else {
            hwp_zero(&in, sizeof in);
            in.pc = tb->pc[idx];
            in.next_pc = tb->pc[idx + 1];
        }
        hwx_session_insn(&v->s, &in);
        pos = idx + 1;
    }
    return pos;
}

/* The waiting TB, if any, with successor `next` (0: at a thread's end). */
static void hwq_cd_finish(hwq_vcpu *v, uint64_t next) {
    const hwq_tb *tb = v->cd_pend;
    hwp_insn last;
    uint32_t nmem, n;
    if (!tb) return;
    v->nmem = 0; /* no memory callbacks in this mode */
    n = hwq_finish_tb(v, tb, next, &last, &nmem);
    if (v->cd_pos < n) hwq_cd_walk(v, tb, v->cd_pos, n, &last);
    v->cd_pend = NULL;
}

/* TB `tb` starts and the countdown has run out in it (or a TB waits):
 * returns the instructions left before the next selection, counted from
 * the end of `tb` (0: tb waits, so the next TB must call back). */
static uint64_t hwq_cd_tb(hwq_vcpu *v, const hwq_tb *tb, uint64_t now) {
    uint32_t pos;
    hwq_cd_finish(v, tb->pc[0]);
    /* The TBs that passed without a call, in one bulk skip. */
    if (v->cd_last > now) hwx_session_skip(&v->s, v->cd_last - now);
    /* A possible cut copy is accounted only when the successor says
     * whether it retired. */
    pos = hwq_cd_walk(v, tb, 0, tb->cut ? tb->n - 1 : tb->n, NULL);
    if (pos < tb->n) {
        v->cd_pend = tb;
        v->cd_pos = pos;
        return v->cd_last = 0;
    }
    return v->cd_last = hwx_session_until(&v->s);
}

/* The count as the inline ops (HWQ_SCOREBOARD) or the TB callback (API 1)
 * left it. */
static uint64_t hwq_cd_now(const hwq_vcpu *v) {
    return HWQ_SCOREBOARD ? qemu_plugin_u64_get(HWQ_U64(pm_left), v->idx) : v->cd_left;
}

/* The thread ends (next 0) or the process: the waiting TB, then the
 * instructions passed since the last call. */
static void hwq_cd_end(hwq_vcpu *v, uint64_t next) {
    uint64_t now = hwq_cd_now(v);
    hwq_cd_finish(v, next);
    if (v->cd_last > now) hwx_session_skip(&v->s, v->cd_last - now);
    v->cd_last = now;
}

/* ---- RAP on code alone: the blocks counted inline, handed on in bulk ------ */
/* With RAP keyed on pcs the only model (hwx_session_tally_ok; no
 * recording, user mode), a TB's whole event is "n instructions at its
 * first pc": no order within a TB, no record. So the plugin counts them
 * where the API counts without a call and hands RAP the sums: the
 * event-combining buffer of Mysore et al. ("Profiling over Adaptive
 * Ranges", sec. 3.3, stage 0) moved into the translated code. Every TB
 * gets a counter slot at translation. With scoreboards an inline add puts
 * the TB's length into the executing vCPU's slot, and a conditional
 * callback on the same slot hands it to the session (hwx_session_tally)
 * when it holds drain= instructions; API 1 does both in one short TB
 * callback. So no update RAP sees weighs more than drain= + a TB, which
 * is what its error bound needs (docs/qemu.md, "RAP fed in bulk"); and
 * after every hwq_tally_interval() instructions handed on so, all the
 * vCPU's slots are drained, so colder code reaches RAP in time order at
 * that granularity. */
/* A full drain reads every slot given out so far: at least this many
 * handed-on instructions per slot between two keep the scan's share of
 * the run small (a compare per slot against 32 emulated instructions). */
#define HWQ_TALLY_PER_SLOT 32u
static struct {
    uint32_t used;                                   /* slots given out   */
    uint64_t overflow;                               /* TBs without one   */
    struct qemu_plugin_scoreboard *sb[HWQ_TALLY_CHUNKS]; /* hwq_tally_inline */
    uint64_t pc[HWQ_TALLY_CHUNKS * HWQ_TALLY_CHUNK]; /* each slot's TB pc */
} hwq_tally;

/* Instructions handed on between two full drains. */
static uint64_t hwq_tally_interval(void) {
    uint64_t per = (uint64_t)__atomic_load_n(&hwq_tally.used, __ATOMIC_ACQUIRE) *
                   HWQ_TALLY_PER_SLOT;
    return per > hwq.drain ? per : hwq.drain;
}

/* The slots live in scoreboards, counted by inline adds: tally mode on
 * API 4 and 7. Otherwise (API 1; TBs counted between bursts, in a
 * callback anyway) in the vCPU's own chunks, where a count costs no
 * scoreboard lookup. */
static int hwq_tally_inline(void) {
    return HWQ_SCOREBOARD && (hwq.tally || (hwq.quiet_inline && hwq.quiet_tally));
}

/* Chunk c of vCPU v's counters; NULL if it has none (own chunks: none
 * yet, and `make` allocates it). */
static uint64_t *hwq_tally_chunk(hwq_vcpu *v, uint32_t c, int make) {
    if (hwq_tally_inline())
        return hwq_tally.sb[c] ? (uint64_t *)qemu_plugin_scoreboard_find(hwq_tally.sb[c], v->idx)
                               : NULL;
    if (!v->tally[c] && make) v->tally[c] = (uint64_t *)calloc(HWQ_TALLY_CHUNK, 8);
    return v->tally[c];
}

/* n instructions of TBs at pc to RAP. In tally mode they reach the
 * session's clock and counts here; between bursts, the gap's skip took
 * them there already (hwq_tb_start). */
static void hwq_tally_give(hwq_vcpu *v, uint64_t pc, uint64_t n) {
    hwx_session_tally(&v->s, pc, n);
    if (hwq.tally) hwx_session_skip(&v->s, n);
}

/* Every counted slot of vCPU v into its session, the slots cleared. */
static void hwq_tally_drain(hwq_vcpu *v) {
    uint32_t used = __atomic_load_n(&hwq_tally.used, __ATOMIC_ACQUIRE), c, i;
    for (c = 0; c * HWQ_TALLY_CHUNK < used; c++) {
        uint64_t *k = hwq_tally_chunk(v, c, 0);
        uint32_t end = used - c * HWQ_TALLY_CHUNK;
        if (!k) continue;
        if (end > HWQ_TALLY_CHUNK) end = HWQ_TALLY_CHUNK;
        for (i = 0; i < end; i++)
            if (k[i]) {
                hwq_tally_give(v, hwq_tally.pc[c * HWQ_TALLY_CHUNK + i], k[i]);
                k[i] = 0;
            }
    }
    v->tally_since = 0;
}

/* Slot `slot` of vCPU v, whose count *k has reached drain=, into the
 * session; then a full drain if its time has come. */
static void hwq_tally_hand(hwq_vcpu *v, uint64_t *k, uint32_t slot) {
    hwq_tally_give(v, hwq_tally.pc[slot], *k);
    v->tally_since += *k;
    *k = 0;
    if (v->tally_since >= hwq_tally_interval()) hwq_tally_drain(v);
}

/* With scoreboards: this TB's slot holds drain= instructions or more. */
static void hwq_tb_tally_full(unsigned int vcpu_index, void *udata) {
    const hwq_tb *tb = (const hwq_tb *)udata;
    hwq_vcpu *v = hwq_get(vcpu_index);
    uint64_t *k = (uint64_t *)qemu_plugin_scoreboard_find(hwq_tally.sb[tb->slot / HWQ_TALLY_CHUNK],
                                                          vcpu_index) +
                  tb->slot % HWQ_TALLY_CHUNK;
    if (v) hwq_tally_hand(v, k, tb->slot);
    else *k = 0; /* no session: nothing to count for */
}

/* n instructions of TB tb counted in its slot, handed on at drain=; a TB
 * without a slot (or drain=0 between bursts) goes straight to RAP. */
static void hwq_tally_count(hwq_vcpu *v, const hwq_tb *tb, uint64_t n) {
    uint64_t *k;
    if (tb->slot == HWQ_NO_SLOT || !hwq.drain ||
        !(k = hwq_tally_chunk(v, tb->slot / HWQ_TALLY_CHUNK, 1))) {
        hwq_tally_give(v, tb->pc[0], n);
        return;
    }
    k += tb->slot % HWQ_TALLY_CHUNK;
    if ((*k += n) >= hwq.drain) hwq_tally_hand(v, k, tb->slot);
}

/* API 1's count, and every TB without a slot. */
static void hwq_tb_exec_tally(unsigned int vcpu_index, void *udata) {
    hwq_vcpu *v = hwq_get(vcpu_index);
    if (v) hwq_tally_count(v, (const hwq_tb *)udata, ((const hwq_tb *)udata)->n);
}

/* A counter slot for a TB at `pc` (HWQ_NO_SLOT when all are taken).
 * Translation may run on several threads: a slot's pc and chunk exist
 * before it is published. */
static uint32_t hwq_tally_slot(uint64_t pc) {
    uint32_t s;
    pthread_mutex_lock(&hwq.lock);
    s = hwq_tally.used;
    if (s == HWQ_TALLY_CHUNKS * HWQ_TALLY_CHUNK ||
        (hwq_tally_inline() && s % HWQ_TALLY_CHUNK == 0 &&
         !(hwq_tally.sb[s / HWQ_TALLY_CHUNK] =
               qemu_plugin_scoreboard_new(HWQ_TALLY_CHUNK * sizeof(uint64_t))))) {
        hwq_tally.overflow++;
        pthread_mutex_unlock(&hwq.lock);
        return HWQ_NO_SLOT;
    }
    hwq_tally.pc[s] = pc;
    __atomic_store_n(&hwq_tally.used, s + 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&hwq.lock);
    return s;
}

/* With scoreboards: TB t's length added to its slot inline, and the slot
 * handed on when it holds drain= instructions. */
static void hwq_tally_ops(struct qemu_plugin_tb *tb, hwq_tb *t) {
    qemu_plugin_u64 k;
    k.score = hwq_tally.sb[t->slot / HWQ_TALLY_CHUNK];
    k.offset = (t->slot % HWQ_TALLY_CHUNK) * sizeof(uint64_t);
    /* Registered in this order, QEMU adds first: the test sees this TB. */
    hwq_inline_add(tb, k, NULL, t->n);
    qemu_plugin_register_vcpu_tb_exec_cond_cb(tb, hwq_tb_tally_full, QEMU_PLUGIN_CB_NO_REGS,
                                              QEMU_PLUGIN_COND_GE, k, hwq.drain, t);
}

/* Tally mode's TB: its first pc, length and slot are all it needs. The
 * bytes of TB info kept (0: none). */
static size_t hwq_tally_trans(struct qemu_plugin_tb *tb, size_t n) {
    size_t bytes = sizeof(hwq_tb) + sizeof(uint64_t);
    hwq_tb *t = (hwq_tb *)calloc(1, bytes);
    if (!t) return 0;
    t->n = (uint32_t)n;
    t->pc[0] = qemu_plugin_tb_vaddr(tb);
    t->slot = hwq_tally_slot(t->pc[0]);
    if (!HWQ_SCOREBOARD || t->slot == HWQ_NO_SLOT)
        qemu_plugin_register_vcpu_tb_exec_cb(tb, hwq_tb_exec_tally, QEMU_PLUGIN_CB_NO_REGS, t);
    else
        hwq_tally_ops(tb, t);
    return bytes;
}

/* The TB last counted between bursts left its possible cut copy out of
 * hush (hwq_tb_start): it did retire there unless the successor `next`
 * (0: unknown) starts with it. QEMU 7.2 runs such a copy again at the
 * head of the next TB; QEMU 10 translates most page-crossing
 * instructions whole. */
static void hwq_hush_cut(hwq_vcpu *v, uint64_t next) {
    const hwq_tb *t = v->hush_cut;
    if (!t) return;
    v->hush_cut = NULL;
    if (next == t->pc[t->n - 1]) return;
    v->hush++;
    if (hwq.quiet_tally) hwq_tally_count(v, t, 1);
}

/* burst_period= on API 4 and 7 (hwq.quiet_inline): a TB between bursts
 * costs an inline subtraction of its length from the vCPU's q_left (and
 * with RAP, an inline add into its slot) and no callback. Its conditional
 * callback runs when q_left no longer covers it: the gap ends there, or
 * ProfileMe's selection comes (hwx_session_quiet), and then hwq_tb_start
 * takes it as the callback path would. q_left is 0, so every TB calls
 * back, in a burst and after a TB that may end with a cut copy. Such a TB
 * (the next TB settles the copy, hwq_hush_cut) and one without a slot
 * always call back and count in their callback. The memory callbacks of
 * the TBs counted find no pending TB and return. */
static uint64_t *hwq_quiet_left(const hwq_vcpu *v) {
    return &((hwq_slot *)qemu_plugin_scoreboard_find(hwq.sb, v->idx))->q_left;
}

/* The instructions subtracted since the last callback, into hush. */
static void hwq_quiet_sync(hwq_vcpu *v) {
    uint64_t *left;
    if (!hwq.quiet_inline) return;
    left = hwq_quiet_left(v);
    v->hush += v->q_mark - *left;
    v->q_mark = *left;
}

/* At the end of TB tb's callback (NULL: outside one): the next TBs pass
 * `until` instructions without a callback. */
static void hwq_quiet_arm(hwq_vcpu *v, const hwq_tb *tb, uint64_t until) {
    v->q_mark = until;
    /* an inline TB's own subtraction comes after its callback; the others
     * (a possible cut copy, no slot) subtract nothing */
    *hwq_quiet_left(v) = until + (tb && tb->inl ? tb->n : 0);
}

/* The pending TB, if any, with successor `next` (0 at a thread's end). */
static void hwq_emit(hwq_vcpu *v, uint64_t next) {
    hwq_quiet_sync(v);
    hwq_hush_cut(v, next);
    if (v->hush) { /* the TBs counted since the last burst (hwq_tb_start) */
        hwx_session_skip(&v->s, v->hush);
        v->hush = 0;
    }
    if (hwq.countdown) {
        hwq_cd_end(v, next);
        return;
    }
    if (hwq.tally) {
        hwq_tally_drain(v);
        return;
    }
    if (hwq.quiet_tally) hwq_tally_drain(v);
    if (hwq.quiet_inline) hwq_quiet_arm(v, NULL, 0);
    if (!v->pend) return;
    v->next_tag = v->tag; /* no successor: the address space stays */
    if (hwq.system) (hwq.block ? hwq_emit_block_sys : hwq_emit_insns_sys)(v, v->pend, next);
    else if (hwq.core_blocks) hwq_emit_core(v, v->pend, next);
    else if (hwq.block) hwq_emit_block(v, v->pend, next);
    else hwq_emit_insns(v, v->pend, next);
    v->pend = NULL;
    v->nmem = 0;
}

/* The vCPU whose thread this is (system mode: QEMU translates a vCPU's
 * code on that vCPU's thread), for reads at translation time. */
static __thread hwq_vcpu *hwq_self;

/* 1 when a TB at `pc` runs privileged (hwq_as_kernel), told once, at
 * translation: QEMU's x86 TB lookup key holds the privilege level and
 * CR0.PE (hflags), so the state of the vCPU translating a TB is the
 * state it runs in every time. User mode, or CS and CR0 unreadable (a
 * QEMU that refuses register reads outside R_REGS callbacks): the
 * address decides, counted for the report in system mode. */
static int hwq_tb_kernel(uint64_t pc) {
    hwq_vcpu *v = hwq_self;
    uint64_t cs = 0, cr0 = 0;
    int regs = hwq.system && v && v->cs_reg && v->cr0_reg &&
               hwq_reg_read(v->cr0_reg, v->regs, &cr0) && hwq_reg_read(v->cs_reg, v->regs, &cs);
    if (hwq.system && !regs) __atomic_add_fetch(&hwq.priv_by_addr, 1, __ATOMIC_RELAXED);
    return hwq_as_kernel(pc, regs, cr0, cs);
}

/* System mode, at translation: CR0 of the vCPU translating. QEMU's TB
 * key holds its PE and PG bits (hflags), so the TB runs in that mode
 * every time. PE: protected or long mode, whose linear pc is rip, so that
 * hwq_tb_start can read where the TB runs (in real mode the pc is CS base
 * + IP). PG clear: 16- or 32-bit code (long mode needs paging), where the
 * x86-64 decoder's targets do not hold. Where CR0 cannot be read: PG
 * alone, so the decoder is trusted and rip is not read, as before either
 * was known. */
static uint64_t hwq_tb_cr0(void) {
    hwq_vcpu *v = hwq_self;
    uint64_t cr0 = 0;
    return v && v->cr0_reg && hwq_reg_read(v->cr0_reg, v->regs, &cr0) ? cr0 : (uint64_t)1 << 31;
}

/* System mode: the tag of the address space that code at `pc` runs in
 * now (hwq_as.h). Kernel code is shared: tag 0, no read. User code: CR3,
 * which only the kernel changes (a mov to CR3 ends QEMU's TB, and user
 * code cannot write it), read at every user TB's start, where it costs a
 * register read and no more (the callback is registered with
 * QEMU_PLUGIN_CB_R_REGS; at a TB's start TCG holds no guest register
 * outside memory, so there is nothing to store first). Reading only after
 * kernel code would miss a CR3 change in low-address privileged code
 * (the boot). The table is consulted only when CR3 changed. CR3 is
 * read as 4 bytes outside 64-bit code (gdb's view). */
static uint64_t hwq_as_now(hwq_vcpu *v, uint64_t pc) {
    uint64_t cr3;
    uint32_t id;
    if (pc >= HWQ_KERNEL_BASE || !v->cr3_reg || !hwq_reg_read(v->cr3_reg, v->regs, &cr3)) return 0;
    if (cr3 == v->cr3 && v->cr3_tag) return v->cr3_tag;
    pthread_mutex_lock(&hwq.lock);
    id = hwq_as_id(hwq.as, hwq_as_key(cr3));
    pthread_mutex_unlock(&hwq.lock);
    v->cr3 = cr3;
    v->cr3_tag = (uint64_t)id << HWQ_AS_SHIFT;
    return v->cr3_tag;
}

/* TB `udata` starts: the vCPU's pending TB has finished with it as its
 * successor (in system mode, sys: in the address space read now). */
HWP_INLINE void hwq_tb_start(unsigned int vcpu_index, void *udata,
                             void (*emit)(hwq_vcpu *, const hwq_tb *, uint64_t),
                             const int sys) {
    hwq_vcpu *v = hwq_get(vcpu_index);
    const hwq_tb *tb = (const hwq_tb *)udata;
    uint64_t pc = tb->pc[0], rip;
    if (!v) return;
    /* System mode: where the TB runs (hwq_as_rebase), read as its tag is
     * (with QEMU_PLUGIN_CB_R_REGS, at a TB's start). Code translated in
     * the kernel's half runs nowhere else (its text and modules are
     * mapped once, there), so only the user half's is read: a library in
     * several processes, or the kernel's text run first through the
     * boot's identity map. */
    if (sys && tb->flat && pc < HWQ_KERNEL_BASE && v->rip_reg &&
        hwq_reg_read(v->rip_reg, v->regs, &rip) && rip != pc && ((rip - pc) & 4095) == 0)
        pc = rip;
    if (sys) v->next_tag = hwq_as_now(v, pc);
    if (v->pend) emit(v, v->pend, pc);
    if (sys) {
        v->brk_told = 0;
        v->tag = v->next_tag;
        v->delta = pc - tb->pc[0];
        v->aliased += v->delta != 0;
    }
    v->nmem = 0;
    /* burst_period=: a TB between bursts that needs no record is only
     * counted (without a possible cut copy: when it is one, the next TB
     * counts it at its head), and with RAP counted in its slot too. The
     * session is told in one skip when the gap is about to end or
     * ProfileMe's selection comes, and the TB that reaches either is
     * given whole. The memory callbacks of the TBs counted, finding no
     * pending TB, return at once. A recording (record=) takes every TB. */
    if (!sys && !v->tw) {
        uint64_t n = tb->n - tb->cut;
        hwq_quiet_sync(v);
        hwq_hush_cut(v, tb->pc[0]);
        if (!v->hush) v->quiet = hwx_session_quiet(&v->s); /* 0 in a burst */
        /* tb->n, not n: a copy that did retire joins hush at the next TB
         * (hwq_hush_cut), and hush must stay below quiet, or its skip
         * would pass over ProfileMe's selection */
        if (v->hush + tb->n < v->quiet) {
            v->pend = NULL;
            v->hush += n;
            if (tb->cut) v->hush_cut = tb;
            if (hwq.quiet_tally && !tb->inl) hwq_tally_count(v, tb, n);
            if (hwq.quiet_inline) hwq_quiet_arm(v, tb, tb->cut ? 0 : v->quiet - v->hush);
            return;
        }
        if (v->hush) {
            hwx_session_skip(&v->s, v->hush);
            v->hush = 0;
        }
        if (hwq.quiet_inline) hwq_quiet_arm(v, tb, 0);
        if (hwq.quiet_tally && tb->inl) /* RAP sees it whole: its add follows */
            hwq_tally_chunk(v, tb->slot / HWQ_TALLY_CHUNK, 0)[tb->slot % HWQ_TALLY_CHUNK] -= tb->n;
    }
    v->pend = tb;
}

/* One callback per mode, chosen at translation, so the per-TB path
 * carries no mode test: the block one is what every user-mode run
 * without exact= or record= pays per executed TB. */
static void hwq_tb_exec_block(unsigned int vcpu_index, void *udata) {
    hwq_tb_start(vcpu_index, udata, hwq_emit_block, 0);
}

static void hwq_tb_exec_core(unsigned int vcpu_index, void *udata) {
    hwq_tb_start(vcpu_index, udata, hwq_emit_core, 0);
}

static void hwq_tb_exec_insns(unsigned int vcpu_index, void *udata) {
    hwq_tb_start(vcpu_index, udata, hwq_emit_insns, 0);
}

static void hwq_tb_exec_block_sys(unsigned int vcpu_index, void *udata) {
    hwq_tb_start(vcpu_index, udata, hwq_emit_block_sys, 1);
}

static void hwq_tb_exec_insns_sys(unsigned int vcpu_index, void *udata) {
    hwq_tb_start(vcpu_index, udata, hwq_emit_insns_sys, 1);
}

/* System mode, the API 7 build (HWQ_DISCON; QEMU 10.2 has the callbacks
 * too, but the API 4 build does not ask): an interrupt, exception or host
 * call, told after the vCPU's pc moved to the handler. The
 * pending TB's successor is then a break in the flow (hwq_as_block), also
 * where the inference alone would miss it (after an indirect branch).
 * QEMU 11.1's x86 calls back twice for an exception: "exception" when it
 * is raised, then "interrupt" when it is delivered, as for an interrupt;
 * and its from_pc is where the TB started more often than the faulting
 * instruction, so the TB is not cut there: its instructions after the
 * fault count as retired. */
static void hwq_discon(unsigned int vcpu_index, int kind, uint64_t from_pc, uint64_t to_pc) {
    hwq_vcpu *v = hwq_get(vcpu_index);
    (void)from_pc, (void)to_pc;
    if (!v) return;
    v->told[kind]++;
    v->brk_told = 1;
}

/* Countdown mode. API 1: one callback per TB that only subtracts until
 * the countdown runs out in this TB. With scoreboards: called only when
 * this vCPU's count is at most the TB's length, before the inline op
 * subtracts that length (a TB that may end with a cut copy has no inline
 * op: it always calls back and subtracts nothing). */
static void hwq_tb_exec_cd(unsigned int vcpu_index, void *udata) {
    hwq_vcpu *v = hwq_get(vcpu_index);
    const hwq_tb *tb = (const hwq_tb *)udata;
    uint64_t *left;
    if (!HWQ_SCOREBOARD) {
        if (!v) return;
        left = &v->cd_left;
    } else {
        left = &((hwq_slot *)qemu_plugin_scoreboard_find(hwq.sb, vcpu_index))->pm_left;
        if (!v) {
            *left = UINT64_MAX; /* no session: never call back */
            return;
        }
    }
    /* A TB that may end with a cut copy is accounted by hwq_cd_tb. */
    if (HWP_LIKELY(*left > tb->n && !tb->cut)) {
        *left -= tb->n; /* API 1 only: the inline op's condition excludes it */
        return;
    }
    *left = hwq_cd_tb(v, tb, *left);
    if (HWQ_SCOREBOARD && !tb->cut) *left = *left > UINT64_MAX - tb->n ? UINT64_MAX : *left + tb->n;
}

/* One record per memory instruction: its first access gives the address,
 * its first load (if any) the class LOAD, that load's address and value;
 * an instruction that only stores is a STORE. `udata` is &tb->pc[i]. */
static void hwq_mem(unsigned int vcpu_index, qemu_plugin_meminfo_t info,
                    uint64_t vaddr, void *udata) {
    hwq_vcpu *v = hwq_get(vcpu_index);
    const uint64_t *pc = (const uint64_t *)udata;
    hwp_insn *r;
    if (!v || !v->pend) return; /* no TB to record for (hwq_tb_start) */
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
    /* API 1 reads the value back (hwq_load_value): an address not readable
     * there (a wrong guest_base=) is counted and its value left 0. */
    if (hwq.need_values && !hwq_load_value(info, vaddr, hwq.guest_base, &r->value))
        __atomic_add_fetch(&hwq.bad_reads, 1, __ATOMIC_RELAXED);
}

static void hwq_floor_tb(unsigned int vcpu_index, void *udata) {
    (void)vcpu_index;
    (void)udata;
}

static void hwq_floor_mem(unsigned int vcpu_index, qemu_plugin_meminfo_t info,
                          uint64_t vaddr, void *udata) {
    (void)vcpu_index;
    (void)info;
    (void)vaddr;
    (void)udata;
}

static void hwq_floor_trans(struct qemu_plugin_tb *tb, size_t n) {
    size_t i;
    switch (hwq.floor) {
    case HWQ_FLOOR_TB:
        qemu_plugin_register_vcpu_tb_exec_cb(tb, hwq_floor_tb, QEMU_PLUGIN_CB_NO_REGS, NULL);
        break;
    case HWQ_FLOOR_MEM:
        qemu_plugin_register_vcpu_tb_exec_cb(tb, hwq_floor_tb, QEMU_PLUGIN_CB_NO_REGS, NULL);
        for (i = 0; i < n; i++)
            qemu_plugin_register_vcpu_mem_cb(qemu_plugin_tb_get_insn(tb, i), hwq_floor_mem,
                                             QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW, NULL);
        break;
    case HWQ_FLOOR_COND: /* HWQ_SCOREBOARD only: refused at install else */
        /* ProfileMe's fetch countdown as the API allows it: an inline
         * subtract per TB and a callback only when the count has run out
         * (which would re-arm it; starting from 0 the count wraps to
         * 2^64 - n, so in a floor run it never reaches 0 again). */
        qemu_plugin_register_vcpu_tb_exec_inline_per_vcpu(tb, QEMU_PLUGIN_INLINE_ADD_U64,
                                                          HWQ_U64(countdown), -(uint64_t)n);
        qemu_plugin_register_vcpu_tb_exec_cond_cb(tb, hwq_floor_tb, QEMU_PLUGIN_CB_NO_REGS,
                                                  QEMU_PLUGIN_COND_EQ, HWQ_U64(countdown), 0,
                                                  NULL);
        break;
    default: break;
    }
}

/* regs=on: the registers of the TB's instructions into ops[], once per
 * translation, counted for the report. */
static void hwq_tb_regs(struct qemu_plugin_tb *tb, size_t n, hwp_core_ops *ops) {
    uint64_t unknown = 0, src_over = 0, dst_over = 0;
    size_t i;
    for (i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        uint8_t copy[16];
        size_t len = qemu_plugin_insn_size(insn);
        uint32_t r = hwx_x86_ops(hwq_insn_bytes(insn, copy), len < 16 ? len : 16, &ops[i]);
        unknown += !(r & HWX_X86_OPS_OK);
        src_over += !!(r & HWX_X86_SRC_OVER);
        dst_over += !!(r & HWX_X86_DST_OVER);
    }
    __atomic_add_fetch(&hwq.regs_insns, n, __ATOMIC_RELAXED);
    __atomic_add_fetch(&hwq.regs_unknown, unknown, __ATOMIC_RELAXED);
    __atomic_add_fetch(&hwq.regs_src_over, src_over, __ATOMIC_RELAXED);
    __atomic_add_fetch(&hwq.regs_dst_over, dst_over, __ATOMIC_RELAXED);
}

/* Translation statistics for the report. */
static void hwq_tb_counted(size_t bytes) {
    if (!bytes) return;
    __atomic_add_fetch(&hwq.tbs, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&hwq.tb_bytes, bytes, __ATOMIC_RELAXED);
}

/* Anything that takes TBs' records: a model, the exact profile, a
 * recording or basic-block vectors. */
static int hwq_wants_tbs(void) {
    return hwq.opts.models || hwq.opts.exact || hwq.opts.record[0] || hwq.opts.bbv[0];
}

static void hwq_tb_trans(struct qemu_plugin_tb *tb) {
    size_t n = qemu_plugin_tb_n_insns(tb), i, bytes;
    int core, kern = 0;
    uint64_t cr0;
    hwq_tb *t;
    struct qemu_plugin_insn *last;
    hwx_x86_info info;
    const uint8_t *code;
    uint8_t copy[16];
    if (HWQ_TAKE_SIGNALS && !hwq_img.took_signals && !hwq.system) {
        hwq_img.took_signals = 1; /* translation is serialised in user mode */
        hwq_take_signals();
    }
    if (!hwq_img.have_base && !hwq.system && n) {
        struct qemu_plugin_insn *first = qemu_plugin_tb_get_insn(tb, 0);
        void *h = qemu_plugin_insn_haddr ? qemu_plugin_insn_haddr(first) : NULL;
        if (h) {
            hwq_img.base = (uint64_t)(uintptr_t)h - qemu_plugin_insn_vaddr(first);
            hwq_img.have_base = 1; /* translation is serialised in user mode */
        }
    }
    /* Instruction counts by privilege: one inline add per TB, no call.
     * Tally mode counts user code in its slots (hwq_report). */
    if (HWQ_SCOREBOARD && n && ((kern = hwq_tb_kernel(qemu_plugin_tb_vaddr(tb))) || !hwq.tally))
        hwq_inline_add(tb, kern ? HWQ_U64(kernel) : HWQ_U64(user), NULL, n);
    if (hwq.floor) {
        hwq_floor_trans(tb, n);
        return;
    }
    /* No model and no exact profile (models=none): nothing per TB. */
    if (!hwq_wants_tbs()) return;
    if (n == 0 || n > HWQ_MAX_TB_INSNS) return;
    if (hwq.tally) {
        hwq_tb_counted(hwq_tally_trans(tb, n));
        return;
    }
    core = (hwq.opts.models & HWX_M_CORE) != 0;
    bytes = sizeof *t + (n + 1) * sizeof t->pc[0] + (core ? n * sizeof(hwp_core_ops) : 0);
    t = (hwq_tb *)calloc(1, bytes);
    if (!t) return;
    t->n = (uint32_t)n;
    cr0 = hwq.system ? hwq_tb_cr0() : 0;
    t->flat = (uint16_t)(cr0 & 1);
    t->unpaged = (uint16_t)(hwq.system && !(cr0 >> 31 & 1));
    t->kern = (uint16_t)kern;
    t->slot = hwq.quiet_tally ? hwq_tally_slot(qemu_plugin_tb_vaddr(tb)) : HWQ_NO_SLOT;
    if (core) { /* the lengths lay out the core's fetches */
        hwp_core_ops *ops = (hwp_core_ops *)(void *)&t->pc[n + 1];
        if (hwq.regs) hwq_tb_regs(tb, n, ops);
        for (i = 0; i < n; i++) {
            size_t len = qemu_plugin_insn_size(qemu_plugin_tb_get_insn(tb, i));
            ops[i].len = (uint8_t)(len < 15 ? len : 15);
        }
        t->ops = ops;
    }
    for (i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        t->pc[i] = qemu_plugin_insn_vaddr(insn);
        if (hwq.need_mem)
            qemu_plugin_register_vcpu_mem_cb(insn, hwq_mem, QEMU_PLUGIN_CB_NO_REGS,
                                             QEMU_PLUGIN_MEM_RW, &t->pc[i]);
    }
    last = qemu_plugin_tb_get_insn(tb, n - 1);
    t->pc[n] = t->pc[n - 1] + qemu_plugin_insn_size(last);
    code = hwq_insn_bytes(last, copy);
    hwx_x86_decode(code, qemu_plugin_insn_size(last), t->pc[n - 1], &info);
    t->last.pc = t->pc[n - 1];
    t->last.cls = info.cls;
    /* Branch target: the decoded one for direct branches, else the
     * successor (known at execution), as in code run without paging
     * (hwq_tb_cr0). */
    t->to_next = !info.has_target || t->unpaged;
    t->last.addr = t->to_next ? 0 : info.target;
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
    if (hwq.countdown) {
        if (HWQ_SCOREBOARD && !t->cut) {
            /* Registered in this order, QEMU runs the test before the
             * subtraction: the callback sees the count the TB starts with. */
            qemu_plugin_register_vcpu_tb_exec_cond_cb(tb, hwq_tb_exec_cd, QEMU_PLUGIN_CB_NO_REGS,
                                                      QEMU_PLUGIN_COND_LE, HWQ_U64(pm_left),
                                                      n, t);
            hwq_inline_add(tb, HWQ_U64(pm_left), NULL, -(uint64_t)n);
        } else
            qemu_plugin_register_vcpu_tb_exec_cb(tb, hwq_tb_exec_cd, QEMU_PLUGIN_CB_NO_REGS, t);
    } else if (hwq.system) {
        qemu_plugin_register_vcpu_tb_exec_cb(
            tb, hwq.block ? hwq_tb_exec_block_sys : hwq_tb_exec_insns_sys,
            QEMU_PLUGIN_CB_R_REGS, t); /* hwq_as_now reads CR3 */
    } else {
        void (*cb)(unsigned int, void *) = hwq.core_blocks ? hwq_tb_exec_core
                                           : hwq.block     ? hwq_tb_exec_block
                                                           : hwq_tb_exec_insns;
        t->inl = hwq.quiet_inline && !t->cut && (!hwq.quiet_tally || t->slot != HWQ_NO_SLOT);
        if (t->inl) {
            /* In this order: the test sees the count the TB starts with,
             * and the callback can take back the slot's add. */
            qemu_plugin_register_vcpu_tb_exec_cond_cb(tb, cb, QEMU_PLUGIN_CB_NO_REGS,
                                                      QEMU_PLUGIN_COND_LE, HWQ_U64(q_left),
                                                      n, t);
            hwq_inline_add(tb, HWQ_U64(q_left), NULL, -(uint64_t)n);
            if (hwq.quiet_tally) hwq_tally_ops(tb, t);
        } else
            qemu_plugin_register_vcpu_tb_exec_cb(tb, cb, QEMU_PLUGIN_CB_NO_REGS, t);
    }
    hwq_tb_counted(bytes);
}

/* ---- bbv= ------------------------------------------------------------------ */

/* A forked child writes nothing into its parent's vectors. */
static void hwq_bbv_write(void *ctx, const char *s, size_t n) {
    hwx_out *o = (hwx_out *)ctx;
    if (getpid() == hwq.pid) o->w.write(o->w.ctx, s, n);
}

/* vCPU idx's vectors: bbv=FILE for vCPU 0, FILE.<idx> for the others
 * (one exp-bbv stream per thread), complete or absent (hwx_out). */
static void hwq_bbv_open(hwq_vcpu *v, unsigned idx) {
    char name[HWX_PATH_MAX + 16];
    const char *why = "";
    hwp_writer w;
    if (!hwq.opts.bbv[0]) return;
    snprintf(name, sizeof name, idx ? "%s.%u" : "%s", hwq.opts.bbv, idx);
    v->bbv = (hwx_out *)malloc(sizeof *v->bbv);
    if (!v->bbv || hwx_out_open(v->bbv, name, &why) != HWP_OK) {
        fprintf(stderr, "hwprof: vCPU %u: bbv: %s\n", idx, v->bbv ? why : "out of memory");
        free(v->bbv);
        v->bbv = NULL;
        return;
    }
    w.write = hwq_bbv_write;
    w.ctx = v->bbv;
    hwx_session_bbv_out(&v->s, &w);
}

/* After the session's finish wrote the last line; -1 if a write failed. */
static int hwq_bbv_close(hwq_vcpu *v) {
    const char *why = "";
    if (!v->bbv || getpid() != hwq.pid) return 0;
    if (hwx_out_close(v->bbv, &why) != HWP_OK) {
        fprintf(stderr, "hwprof: %s\n", why);
        return -1;
    }
    return 0;
}

/* ---- vCPUs ----------------------------------------------------------------- */

/* System mode: where this vCPU's CR3 is read (QEMU's register list, built
 * from its gdb description: x86-64 lists "cr3" in 9.1 and 10), and a
 * buffer to read it into. Runs in the vCPU's context, as
 * qemu_plugin_get_registers asks. Without it (API 1: no register
 * functions) every tag is 0 (the report says so). */
static void hwq_as_vcpu(hwq_vcpu *v) {
    hwq_garray *r;
    unsigned i, size;
    if (!qemu_plugin_get_registers || !qemu_plugin_read_register || !g_array_free ||
        !g_array_get_element_size || !g_byte_array_new || !g_byte_array_set_size ||
        !(r = qemu_plugin_get_registers()))
        return;
    size = g_array_get_element_size(r);
    for (i = 0; i < r->len; i++) {
        const qemu_plugin_reg_descriptor *d =
            (const qemu_plugin_reg_descriptor *)(const void *)(r->data + (size_t)i * size);
        if (!d->name) continue;
        if (!strcmp(d->name, "cr3")) v->cr3_reg = d->handle;
        if (!strcmp(d->name, "cs")) v->cs_reg = d->handle;
        if (!strcmp(d->name, "cr0")) v->cr0_reg = d->handle;
        if (!strcmp(d->name, "rip")) v->rip_reg = d->handle;
    }
    g_array_free(r, 1);
    if (!(v->regs = g_byte_array_new()))
        v->cr3_reg = v->cs_reg = v->cr0_reg = v->rip_reg = NULL;
    hwq_self = v;
}

static void hwq_vcpu_init(unsigned int idx) {
    hwq_vcpu *v;
    size_t bytes;
    hwp_writer w;
    __atomic_add_fetch(&hwq.live, 1, __ATOMIC_ACQ_REL);
    if (idx >= HWQ_MAX_VCPUS) {
        __atomic_add_fetch(&hwq.dropped_vcpus, 1, __ATOMIC_RELAXED);
        return;
    }
    pthread_mutex_lock(&hwq.lock);
    v = hwq.vcpu[idx];
    if (v) { /* index reused by a new thread: keep accumulating */
        v->pend = NULL;
        v->cd_pend = NULL;
        v->hush_cut = NULL;
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
    hwq_bbv_open(v, idx);
    /* core blocks: the instructions fed one at a time carry their ops */
    if (hwq.regs) hwx_core_regs(&v->s, NULL, "the x86 decoder");
    if (hwq.system) hwq_as_vcpu(v);
    pthread_mutex_lock(&hwq.lock);
    v->idx = idx;
    hwq.vcpu[idx] = v;
    if (idx + 1 > hwq.nvcpu) hwq.nvcpu = idx + 1;
    pthread_mutex_unlock(&hwq.lock);
}

/* A thread ends: its last TB is complete, successor unknown. */
static void hwq_vcpu_exit(unsigned int idx) {
    hwq_vcpu *v = hwq_get(idx);
    __atomic_sub_fetch(&hwq.live, 1, __ATOMIC_ACQ_REL);
    if (!v) return;
    hwq_emit(v, 0);
    if (v->tw) hwx_trace_flush(v->tw);
}

/* ---- exit: merge and report -------------------------------------------------- */

/* A report file. A regular file (or a new name) is written to name.tmp.PID
 * and renamed over `name` once complete, so a reader never sees half a
 * report; anything else (a device, a pipe) is written in place. Every
 * write is checked: hwq_close returns -1 (and says why) when any failed. */
typedef struct hwq_out {
    FILE *f;
    char final[HWX_PATH_MAX + 24], tmp[HWX_PATH_MAX + 48];
} hwq_out;

static int hwq_is_special(const char *name) {
    struct stat st;
    return stat(name, &st) == 0 && !S_ISREG(st.st_mode);
}

/* `name`, with `suffix`, and .PID in a forked child so it does not
 * overwrite its parent's file. */
static FILE *hwq_create(hwq_out *o, const char *name, const char *suffix) {
    if (getpid() != hwq.pid)
        snprintf(o->final, sizeof o->final, "%s%s.%ld", name, suffix, (long)getpid());
    else
        snprintf(o->final, sizeof o->final, "%s%s", name, suffix);
    o->tmp[0] = 0;
    if (!hwq_is_special(o->final))
        snprintf(o->tmp, sizeof o->tmp, "%s.tmp.%ld", o->final, (long)getpid());
    o->f = fopen(o->tmp[0] ? o->tmp : o->final, "w");
    if (!o->f)
        fprintf(stderr, "hwprof: cannot write %s: %s\n", o->tmp[0] ? o->tmp : o->final,
                strerror(errno));
    return o->f;
}

static int hwq_close(hwq_out *o) {
    int bad = ferror(o->f) != 0;
    int err = bad ? EIO : 0;
    if (fflush(o->f) != 0 && !bad) { bad = 1; err = errno; }
    if (fclose(o->f) != 0 && !bad) { bad = 1; err = errno; }
    o->f = NULL;
    if (!bad && o->tmp[0] && rename(o->tmp, o->final) != 0) { bad = 1; err = errno; }
    if (bad) {
        fprintf(stderr, "hwprof: writing %s failed: %s\n", o->final, strerror(err));
        if (o->tmp[0]) unlink(o->tmp);
        return -1;
    }
    return 0;
}

/* System mode: how to read an address in the report (hwq_as.h), and which
 * CR3 each address space is. */
static void hwq_as_legend(FILE *f) {
    uint32_t i, n = hwq.as->n, shown = n < 64 ? n : 64;
    int cr3 = 0;
    for (i = 0; i < hwq.nvcpu; i++) cr3 |= hwq.vcpu[i] && hwq.vcpu[i]->cr3_reg;
    if (!cr3) {
        fprintf(f, "plugin: CR3 not readable: user code of all processes shares one "
                   "address space\n");
        return;
    }
    fprintf(f, "plugin: %u address spaces (CR3 values): a user-mode pc or data address A "
               "of address space N reads N << %d | A; kernel addresses (>= 0x%llx) are "
               "shared, untagged; a change of address space or privilege ends the path\n",
            n, HWQ_AS_SHIFT, (unsigned long long)HWQ_KERNEL_BASE);
    for (i = 0; i < shown; i++)
        fprintf(f, "plugin:   address space %u: cr3 0x%llx, user code at 0x%llx..0x%llx\n",
                i + 1, (unsigned long long)hwq.as->key[i],
                (unsigned long long)(i + 1) << HWQ_AS_SHIFT,
                ((unsigned long long)(i + 1) << HWQ_AS_SHIFT) | (HWQ_AS_USER_END - 1));
    if (shown < n) fprintf(f, "plugin:   ... and %u more\n", n - shown);
    if (hwq.as->over)
        fprintf(f, "plugin:   address spaces beyond %u share address space %u (%llu "
                   "switches)\n",
                HWQ_AS_MAX - 1, HWQ_AS_MAX, (unsigned long long)hwq.as->over);
}

/* Ranges the guest unmapped (user mode): the code there is gone, and
 * each vCPU's session lets go of it (hwx_session_retire: RAP folds its
 * code ranges) on its own thread, at its next syscall or at exit, since
 * another vCPU's session may be running. Folding later loses nothing:
 * the counts stay, only the nodes come back later. */
#define HWQ_RETIRE_MAX 65536u
static struct {
    uint64_t lo[HWQ_RETIRE_MAX], hi[HWQ_RETIRE_MAX];
    uint32_t n;            /* recorded (release-stored, under hwq.lock)  */
    uint64_t bytes, lost;  /* past HWQ_RETIRE_MAX: not retired           */
} hwq_retire;

static void hwq_retire_add(uint64_t lo, uint64_t len) {
    pthread_mutex_lock(&hwq.lock);
    if (hwq_retire.n < HWQ_RETIRE_MAX) {
        hwq_retire.lo[hwq_retire.n] = lo;
        hwq_retire.hi[hwq_retire.n] = lo + (len - 1u);
        hwq_retire.bytes += len;
        __atomic_store_n(&hwq_retire.n, hwq_retire.n + 1u, __ATOMIC_RELEASE);
    } else {
        hwq_retire.lost++;
    }
    pthread_mutex_unlock(&hwq.lock);
}

static void hwq_retire_take(hwq_vcpu *v) {
    uint32_t n = __atomic_load_n(&hwq_retire.n, __ATOMIC_ACQUIRE);
    if (!v || v->retired == n) return;
    /* What the TB counters still hold for the code reaches RAP first: a
     * count handed on after the fold would split the range again. */
    if (hwq.tally || hwq.quiet_tally) hwq_tally_drain(v);
    for (; v->retired < n; v->retired++) {
        hwx_session_retire(&v->s, hwq_retire.lo[v->retired], hwq_retire.hi[v->retired]);
        /* record=: the trace retires it at the same point of the stream */
        if (v->tw) hwx_trace_put_retire(v->tw, hwq_retire.lo[v->retired], hwq_retire.hi[v->retired]);
    }
}

/* The TBs left early (hwq_finish_tb) and, in system mode, the breaks in
 * the flow (hwq_as_block) of every vCPU, or of the one whose report this
 * is. Before QEMU 10.2 (and in the API 1 and 4 builds) there are no
 * discontinuity callbacks, and each break is inferred from where the next
 * TB starts. */
static void hwq_breaks(FILE *f, const char *suffix, int merged) {
    uint64_t b[HWQ_BRK_KINDS] = {0}, aliased = 0, told[3] = {0}, early = 0, unretired = 0,
             told_brk = 0;
    unsigned i, k;
    for (i = 0; i < hwq.nvcpu; i++) {
        char want[24];
        snprintf(want, sizeof want, ".vcpu%u", i);
        if (!hwq.vcpu[i] || (!merged && strcmp(suffix, want))) continue;
        for (k = 0; k < HWQ_BRK_KINDS; k++) b[k] += hwq.vcpu[i]->brk[k];
        for (k = 0; k < 3; k++) told[k] += hwq.vcpu[i]->told[k];
        told_brk += hwq.vcpu[i]->told_brk;
        aliased += hwq.vcpu[i]->aliased;
        early += hwq.vcpu[i]->early;
        unretired += hwq.vcpu[i]->unretired;
    }
    /* Only the paths that see each TB's successor can tell (hwq_finish_tb) */
    if ((hwq.system || unretired) && !hwq.floor && !hwq.tally && !hwq.countdown &&
        hwq_wants_tbs())
        fprintf(f, "plugin: %llu TBs left early (QEMU ended them without an exception and went "
                   "on at an instruction of theirs: a store into the page of the code running "
                   "retranslates it)%s; with the copies of page-crossing instructions cut at a "
                   "TB's end, %llu instructions that did not retire, out of the counts\n",
                (unsigned long long)early,
                hwq.quiet && !hwq.system ? " in and next to the bursts (the TBs between them "
                                           "are counted whole)"
                                         : "",
                (unsigned long long)unretired);
    if (!hwq.system) return;
    if (HWQ_DISCON)
        fprintf(f, "plugin: QEMU's discontinuity callbacks: %llu interrupts (on x86, each "
                   "exception's delivery too), %llu exceptions, %llu host calls; %llu TBs "
                   "ended by a break they told\n",
                (unsigned long long)told[0], (unsigned long long)told[1],
                (unsigned long long)told[2], (unsigned long long)told_brk);
    fprintf(f, "plugin: %llu TB executions at another virtual address than the one they "
               "were translated at (QEMU shares a translated block among the virtual "
               "addresses of its physical code): their pcs moved to where they ran (rip, "
               "read at each TB's start)\n",
            (unsigned long long)aliased);
    fprintf(f, "plugin: %llu breaks in the flow, each ending a path (%s the next TB "
               "started neither where the last instruction leads nor in the same address "
               "space): %llu from user code into the kernel (interrupts, exceptions, system "
               "calls), %llu from the kernel back to user code, %llu between address spaces, "
               "%llu with no change of privilege (interrupts or exceptions%s)\n",
            (unsigned long long)(b[HWQ_BRK_ENTER] + b[HWQ_BRK_LEAVE] + b[HWQ_BRK_SPACE] +
                                 b[HWQ_BRK_SAME]),
            HWQ_DISCON ? "after each interrupt or exception QEMU told, and where"
                       : "inferred: where",
            (unsigned long long)b[HWQ_BRK_ENTER], (unsigned long long)b[HWQ_BRK_LEAVE],
            (unsigned long long)b[HWQ_BRK_SPACE], (unsigned long long)b[HWQ_BRK_SAME],
            HWQ_DISCON ? "" : "; after an indirect branch they go unseen");
}

/* The text report (report=, else stderr) and the JSON one (json=) of
 * session `s`; `suffix` names a per-vCPU file. 0, or -1 if a write failed. */
static int hwq_report(hwx_session *s, const char *suffix, int merged) {
    hwq_out o;
    hwp_writer w;
    int rc = 0;
    FILE *f = stderr;
    if (hwq.opts.report[0]) {
        if (!hwq_create(&o, hwq.opts.report, suffix)) return -1;
        f = o.f;
    }
    w = hwp_writer_stdio(f);
    hwx_session_report_text(s, &w);
    if (merged) {
        fprintf(f, "plugin: QEMU plugin API %d, %llu TBs translated (%llu bytes of TB info), %u vCPU(s)%s\n",
                HWQ_API, (unsigned long long)hwq.tbs, (unsigned long long)hwq.tb_bytes,
                hwq.nvcpu, hwq.dropped_vcpus ? ", some vCPUs beyond the table were not profiled" : "");
        if (hwq.countdown)
            fprintf(f, "plugin: ProfileMe's countdown ran in the plugin: the session saw only "
                       "the selected instructions whole (class counts above cover those; "
                       "cd=off feeds every TB)\n");
        if (hwq.tally)
            fprintf(f, "plugin: RAP took each TB's instructions from a counter of its own, "
                       "handed on at %llu instructions, every counter drained after %llu "
                       "handed on (%u counters, %llu TBs without one fed one by one); class "
                       "counts above are not known (drain=0 feeds every TB)\n",
                    (unsigned long long)hwq.drain, (unsigned long long)hwq_tally_interval(),
                    hwq_tally.used,
                    (unsigned long long)hwq_tally.overflow);
        if (hwq.quiet && !hwq.system)
            fprintf(f, "plugin: between bursts the TBs were counted, not recorded: the "
                       "models fed in bursts did not see them, ProfileMe saw only its "
                       "selections whole%s%s\n",
                    hwq.quiet_inline ? ", counted inline with no callback" : "",
                    hwq.quiet_tally ? ", RAP took each TB's count from a counter of its own "
                                      "(handed on as in tally mode)" : "");
        if (hwq.regs)
            fprintf(f, "plugin: registers from the x86 decoder (core=on): %llu instructions "
                       "translated, %llu with no registers for the instruction (opcodes "
                       "not decoded), %llu with sources left out, %llu with destinations "
                       "left out\n",
                    (unsigned long long)hwq.regs_insns, (unsigned long long)hwq.regs_unknown,
                    (unsigned long long)hwq.regs_src_over, (unsigned long long)hwq.regs_dst_over);
        if (hwq_retire.n)
            fprintf(f, "plugin: %u ranges unmapped (%llu bytes): RAP's code ranges there "
                       "retired%s\n",
                    hwq_retire.n, (unsigned long long)hwq_retire.bytes,
                    hwq_retire.lost ? " (more were not: the list was full)" : "");
        if (hwq.bad_reads)
            fprintf(f, "plugin: %llu loaded values not readable at guest address + guest_base "
                       "(0x%llx): skipped, check guest_base=\n",
                    (unsigned long long)hwq.bad_reads, (unsigned long long)hwq.guest_base);
    }
    if (HWQ_SCOREBOARD) {
        /* Executed instructions by privilege (inline counts, all vCPUs or
         * the one this report is for). */
        uint64_t u = 0, k = 0;
        int i, n = qemu_plugin_num_vcpus();
        for (i = 0; i < n; i++) {
            char want[24];
            snprintf(want, sizeof want, ".vcpu%d", i);
            if (!merged && strcmp(suffix, want)) continue;
            u += qemu_plugin_u64_get(HWQ_U64(user), (unsigned)i);
            k += qemu_plugin_u64_get(HWQ_U64(kernel), (unsigned)i);
        }
        if (hwq.tally) u = s->insns - k; /* user code counted in the slots */
        fprintf(f, "plugin: executed %llu user-mode and %llu kernel-mode instructions ",
                (unsigned long long)u, (unsigned long long)k);
        if (!hwq.system)
            fprintf(f, "(kernel = pc >= 0x%llx)\n", (unsigned long long)HWQ_KERNEL_BASE);
        else if (!hwq.priv_by_addr)
            fprintf(f, "(kernel = privilege level 0 or real mode, from CS and CR0)\n");
        else
            fprintf(f, "(kernel = privilege level 0 or real mode, from CS and CR0; %llu "
                       "translated blocks by pc >= 0x%llx: CS or CR0 not readable)\n",
                    (unsigned long long)hwq.priv_by_addr, (unsigned long long)HWQ_KERNEL_BASE);
    }
    if (hwq.system) hwq_as_legend(f);
    hwq_breaks(f, suffix, merged);
    if (f != stderr && hwq_close(&o) != 0) rc = -1;
    if (hwq.opts.json[0]) {
        if (!hwq_create(&o, hwq.opts.json, suffix)) return -1;
        w = hwp_writer_stdio(o.f);
        hwx_session_report_json_mods(s, &w, hwq_img.mod, hwq_img.n);
        if (hwq_close(&o) != 0) rc = -1;
    }
    return rc;
}

/* Runs once per process. In user mode every guest thread that calls
 * exit()/exit_group() reaches here (QEMU has stopped the callbacks of all
 * vCPUs first): the first one merges and writes, the others wait for it,
 * so the process does not end under a half-written report and no session
 * is merged twice. A failed write ends the process with status 1. */
static void hwq_atexit(void) {
    hwx_session *all = NULL;
    uint64_t total = 0;
    unsigned i;
    int expect = 0, bad = 0;
    if (!__atomic_compare_exchange_n(&hwq.exiting, &expect, 1, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        while (__atomic_load_n(&hwq.exiting, __ATOMIC_ACQUIRE) != 2) usleep(1000);
        return;
    }
    for (i = 0; i < hwq.nvcpu; i++) {
        hwq_vcpu *v = hwq.vcpu[i];
        if (!v) continue;
        hwq_emit(v, 0);
        hwq_retire_take(v);
        hwx_session_finish(&v->s);
        if (hwq_bbv_close(v)) bad = 1;
        if (v->tw) {
            hwx_trace_flush(v->tw);
            total += v->tw->total;
        }
    }
    hwq_modules();
    /* System mode: one report per vCPU before they are merged. */
    for (i = 0; hwq.system && hwq.nvcpu > 1 && i < hwq.nvcpu; i++) {
        char suffix[24];
        if (!hwq.vcpu[i]) continue;
        snprintf(suffix, sizeof suffix, ".vcpu%u", i);
        if (hwq.opts.report[0] && hwq_report(&hwq.vcpu[i]->s, suffix, 0) != 0) bad = 1;
    }
    for (i = 0; i < hwq.nvcpu; i++) {
        hwq_vcpu *v = hwq.vcpu[i];
        if (!v) continue;
        if (!all) all = &v->s;
        else hwx_session_merge(all, &v->s);
    }
    if (hwq.trace && getpid() == hwq.pid) {
        hwp_writer w;
        w.write = hwq_trace_write;
        w.ctx = NULL;
        hwx_trace_write_end(&w, total);
        if (ferror(hwq.trace) | fclose(hwq.trace)) {
            fprintf(stderr, "hwprof: writing %s failed\n", hwq.opts.record);
            bad = 1;
        }
        hwq.trace = NULL;
    }
    if (all) {
        if (all->exact) {
            size_t n = hwx_session_eval_bytes(all);
            void *scratch = malloc(n);
            if (!scratch || hwx_session_evaluate(all, scratch, n) != HWP_OK)
                fprintf(stderr, "hwprof: accuracy not computed: %s\n",
                        scratch ? hwp_why(all) : "out of memory");
            free(scratch);
        }
        if (hwq_report(all, "", 1) != 0) bad = 1;
    }
    __atomic_store_n(&hwq.exiting, 2, __ATOMIC_RELEASE);
    if (bad) _exit(1);
}

/* A guest that sends itself SIGKILL (kill, tkill or tgkill of its own
 * process, x86-64 syscall numbers) dies in the host kernel the moment the
 * syscall runs: no exit callback can follow, so the report is written
 * now. Only while this is the one running guest thread: the others would
 * go on feeding the sessions being merged. Every other fatal signal of the
 * guest reaches QEMU first (docs/qemu.md, "Exit paths"). */
static void hwq_syscall(unsigned int idx, int64_t num, uint64_t a1, uint64_t a2, uint64_t a3) {
    char task[64];
    int self;
    if (num == 11 /* munmap */ && a2 && a1 + (a2 - 1u) >= a1)
        hwq_retire_add(a1, a2);
    hwq_retire_take(hwq_get(idx));
    snprintf(task, sizeof task, "/proc/self/task/%llu", (unsigned long long)a1);
    self = num == 62 /* kill */ ? (a2 == 9 && (a1 == 0 || a1 == (uint64_t)getpid()))
         : num == 200 /* tkill */ ? (a2 == 9 && access(task, F_OK) == 0)
         : num == 234 /* tgkill */ ? (a3 == 9 && a1 == (uint64_t)getpid())
         : 0;
    if (!self) return;
    if (__atomic_load_n(&hwq.live, __ATOMIC_ACQUIRE) > 1) {
        fprintf(stderr, "hwprof: the guest sent itself SIGKILL while other threads ran: "
                        "no report\n");
        return;
    }
    hwq_atexit();
}

/* key=on|off, the plugin's own switches: *off is 1 for off; -1, said
 * why, for anything else. */
static int hwq_off(const char *key, const char *v, int *off) {
    if (strcmp(v, "on") && strcmp(v, "off")) {
        fprintf(stderr, "hwprof: %s= expects on or off\n", key);
        return -1;
    }
    *off = !strcmp(v, "off");
    return 0;
}

/* report=/json= at start: the file must be creatable (its directory
 * writable) or, for a device or pipe, openable for writing now. */
static int hwq_check_out(const char *opt, const char *name) {
    char tmp[HWX_PATH_MAX + 24];
    int fd;
    if (!name[0]) return 0;
    if (hwq_is_special(name)) {
        fd = open(name, O_WRONLY | O_NONBLOCK);
        if (fd < 0) goto bad;
        close(fd);
        return 0;
    }
    if (access(name, F_OK) == 0 && access(name, W_OK) != 0) goto bad;
    /* Create and remove the temporary the report will be written to (access()
     * says yes to root for any directory, writable or not). */
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", name, (long)getpid());
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0) goto bad;
    close(fd);
    unlink(tmp);
    return 0;
bad:
    fprintf(stderr, "hwprof: %s=%s: not writable: %s\n", opt, name, strerror(errno));
    return -1;
}

/* Build one session from the options and let every model check its own
 * desc, so options valid one by one but impossible together (a slot count
 * a model cannot use, a table larger than memory) stop QEMU before the
 * guest runs instead of failing in every vCPU later. */
static int hwq_check_session(void) {
    size_t bytes = hwx_session_bytes(&hwq.opts);
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    void *mem;
    hwx_session *s;
    int rc = 0;
    if (pages > 0 && psz > 0 && bytes / (size_t)psz >= (size_t)pages) {
        fprintf(stderr, "hwprof: a session needs %zu bytes per vCPU, more than this "
                        "machine's memory: lower exact_mb= or the table sizes\n", bytes);
        return -1;
    }
    s = (hwx_session *)calloc(1, sizeof *s);
    mem = malloc(bytes ? bytes : 1);
    if (!s || !mem) {
        fprintf(stderr, "hwprof: cannot allocate a session of %zu bytes\n", bytes);
        rc = -1;
    } else if (hwx_session_init(s, mem, bytes, &hwq.opts) != HWP_OK) {
        fprintf(stderr, "hwprof: %s\n", hwp_why(s));
        rc = -1;
    } else {
        hwq.tally = hwx_session_tally_ok(s); /* the models take tallies */
        hwq.quiet = s->quiet; /* and between bursts, need no record */
    }
    free(mem);
    free(s);
    return rc;
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
    static hwq_hooks hooks = {hwq_vcpu_init, hwq_vcpu_exit, hwq_tb_trans, hwq_syscall, hwq_atexit,
                              NULL};
    int i;
    const char *why = "";
    if (hwq_api_check(info)) return -1;
    /* System mode reads registers (CR3, CS, CR0), which API 1 lacks. */
    if (!HWQ_SCOREBOARD && info->system_emulation) {
        fprintf(stderr, "hwprof: system emulation needs libhwprof-tcg-v4.so (QEMU 9.1 .. 10.x) "
                        "or libhwprof-tcg-v7.so (QEMU 11.1 and later)\n");
        return -1;
    }
    hwq.system = info->system_emulation;
    hwx_opts_default(&hwq.opts);
    hwq.drain = 4096;
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
        if (!strcmp(key, "cd")) {
            if (hwq_off(key, eq + 1, &hwq.no_countdown)) return -1;
            continue;
        }
        if (!strcmp(key, "drain")) {
            if (hwx_arg_u64("drain", eq + 1, 0, (uint64_t)1 << 40, &hwq.drain, &why) != HWP_OK) {
                fprintf(stderr, "hwprof: %s: %s\n", argv[i], why);
                return -1;
            }
            continue;
        }
        if (!strcmp(key, "regs")) { /* the Valgrind tool's --hwprof-regs */
            if (hwq_off(key, eq + 1, &hwq.no_regs)) return -1;
            continue;
        }
        if (!strcmp(key, "inline")) { /* off: a callback counts each quiet TB */
            if (hwq_off(key, eq + 1, &hwq.no_inline)) return -1;
            continue;
        }
        if (!strcmp(key, "blocks")) { /* off: the core takes each instruction */
            if (hwq_off(key, eq + 1, &hwq.no_core_blocks)) return -1;
            continue;
        }
        if (!strcmp(key, "floor")) {
            const char *f = eq + 1;
            hwq.floor = !strcmp(f, "tb") ? HWQ_FLOOR_TB : !strcmp(f, "mem") ? HWQ_FLOOR_MEM
                      : !strcmp(f, "cond") && HWQ_SCOREBOARD ? HWQ_FLOOR_COND : -1;
            if (hwq.floor < 0) {
                fprintf(stderr, "hwprof: floor= expects tb, mem%s\n",
                        HWQ_SCOREBOARD ? " or cond" : " (cond needs the API 4 or 7 build)");
                return -1;
            }
            continue;
        }
        if (hwx_opts_set(&hwq.opts, key, eq + 1, &why) != HWP_OK) {
            fprintf(stderr, "hwprof: %s: %s\n", argv[i], why);
            return -1;
        }
    }
    if (hwq_check_out("report", hwq.opts.report) || hwq_check_out("json", hwq.opts.json) ||
        hwq_check_out("bbv", hwq.opts.bbv) || hwq_check_session())
        return -1;
    hwq.pid = getpid();
    if (!hwq.system) hwq_img_snapshot(); /* before QEMU loads the guest */
    hwq.need_mem = hwx_opts_need_memory(&hwq.opts);
    hwq.need_values = hwx_opts_need_values(&hwq.opts);
    /* Whole blocks unless something needs every instruction: the exact
     * profile counts each one (hwx_session_block_ok), a recording stores
     * each one, and the core times each one unless it runs alone or with
     * ProfileMe only (hwx_session_core_blocks_ok): then it takes the TBs
     * through its translations of them (user mode; blocks=off feeds it
     * one instruction at a time, as the tests compare). */
    hwq.core_blocks = hwx_opts_core_blocks(&hwq.opts) && !hwq.no_core_blocks && !hwq.system;
    hwq.block = !hwq.opts.exact && !hwq.opts.record[0] &&
                (!(hwq.opts.models & HWX_M_CORE) || hwq.core_blocks);
    hwq.core_blocks = hwq.core_blocks && hwq.block;
    /* The core's registers, from the instructions' bytes at translation. */
    hwq.regs = (hwq.opts.models & HWX_M_CORE) && !hwq.no_regs;
    /* ProfileMe alone: only its selections reach the session (hwq_cd_*);
     * cd=off keeps the per-TB block path (the tests compare the two). */
    hwq.countdown = hwq.block && hwq.opts.models == HWX_M_PM && !hwq.no_countdown &&
                    !hwq.opts.bbv[0] && /* the vectors count every TB */
                    !hwq.system; /* the address space is read per TB */
    /* RAP on code alone: the TBs counted inline, handed on in bulk
     * (hwq_tally_*); drain=0 keeps the per-TB block path (the tests
     * compare the two). */
    hwq.tally = hwq.tally && hwq.block && hwq.drain && !hwq.system;
    /* In bursts, RAP on code beside other models: the TBs between bursts
     * counted in the same slots (hwq_tb_start). */
    hwq.quiet_tally = hwq.quiet && (hwq.opts.models & HWX_M_RAP) &&
                      hwq.opts.rap_key == HWX_KEY_PC && !hwq.tally && !hwq.system &&
                      !hwq.opts.record[0];
    /* With scoreboards, counted inline (hwq_quiet_*); RAP's slots then
     * hand on at drain=, so drain=0 keeps the callbacks; so does inline=off
     * (the tests compare the two). */
    hwq.quiet_inline = HWQ_SCOREBOARD && hwq.quiet && !hwq.no_inline && !hwq.countdown &&
                       !hwq.tally &&
                       !hwq.system && !hwq.opts.record[0] && (!hwq.quiet_tally || hwq.drain);
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
    if (HWQ_SCOREBOARD) hwq.sb = qemu_plugin_scoreboard_new(sizeof(hwq_slot));
    if (hwq.system && !(hwq.as = (hwq_as_table *)calloc(1, sizeof *hwq.as))) {
        fprintf(stderr, "hwprof: cannot allocate the address-space table\n");
        return -1;
    }
    if (hwq.system) hooks.syscall = NULL; /* user mode's guest SIGKILL */
    if (hwq.system) hooks.discon = hwq_discon;
    hwq_api_register(id, &hooks);
    return 0;
}
