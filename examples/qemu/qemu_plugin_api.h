/* examples/qemu/qemu_plugin_api.h: our own declarations of the part of the
 * QEMU TCG plugin API that hwprof's plugins use.
 *
 * Three ABIs, chosen by HWQ_API when compiling (meson builds each plugin
 * once for each; hwq_api.h adapts the plugins to them):
 *   HWQ_API=1  QEMU 7.2 (Debian 12's qemu-user 1:7.2): plugin API 1;
 *              QEMU 7.2 accepts plugins declaring 0..1.
 *   HWQ_API=4  QEMU 9.1 .. 10.x (bookworm-backports' 10.0): API 4. Version
 *              2 replaced the shared-counter inline ops with per-vCPU
 *              scoreboards, 3 made qemu_plugin_insn_data copy into a
 *              caller's buffer, 4 added guest memory reads; conditional
 *              callbacks and qemu_plugin_mem_get_value are also there.
 *              QEMU 10.1 (API 5) still accepts it.
 *   HWQ_API=7  QEMU 11.1 and later: API 7. Version 6 (QEMU 11.0, which
 *              refuses older plugins) made qemu_plugin_read_register
 *              return a bool; 7 gave every callback a userdata pointer
 *              (registered beside it, passed last) and took the plugin id
 *              out of the callbacks that had it: vCPU init/exit, TB
 *              translation, syscall, atexit.
 * Written from the documented API (QEMU's "TCG Plugins" manual,
 * docs/devel/tcg-plugins.rst, and the per-version API reference), not
 * copied from QEMU's header, which no Debian package ships. Only what the
 * plugins call is declared. The qemu_plugin_* functions are resolved
 * from the QEMU binary when the plugin is loaded: link the plugin with
 * -shared and without -z defs.
 *
 * Facts this relies on (7.2): translation-time callback per TB; per-TB and
 * per-instruction exec callbacks run before the TB / instruction; memory
 * callbacks run after the access with the guest virtual address; the
 * atexit callback does not run on fatal signals.
 */
#ifndef HWPROF_QEMU_PLUGIN_API_H
#define HWPROF_QEMU_PLUGIN_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HWQ_PLUGIN_EXPORT __attribute__((visibility("default")))
#ifndef HWQ_API
#define HWQ_API 1
#endif
#if HWQ_API != 1 && HWQ_API != 4 && HWQ_API != 7
#error "HWQ_API must be 1 (QEMU 7.2), 4 (QEMU 9.1 .. 10.x) or 7 (QEMU 11.1 and later)"
#endif
#define HWQ_PLUGIN_API_VERSION HWQ_API
/* Functions that not every QEMU has are weak references, so that a build
 * loaded into a QEMU of another API still loads far enough to say which
 * plugin to use (hwq_api.h) instead of failing on an unresolved symbol. */
#define HWQ_WEAK __attribute__((weak))

typedef uint64_t qemu_plugin_id_t;

/* Passed to qemu_plugin_install. QEMU's own definition has an anonymous
 * union for the system-mode fields; a named one has the same layout. */
typedef struct qemu_info_t {
    const char *target_name;
    struct {
        int min;
        int cur;
    } version;
    bool system_emulation;
    union {
        struct {
            int smp_vcpus;
            int max_vcpus;
        } system;
    } u;
} qemu_info_t;

struct qemu_plugin_tb;
struct qemu_plugin_insn;

enum qemu_plugin_cb_flags {
    QEMU_PLUGIN_CB_NO_REGS,
    QEMU_PLUGIN_CB_R_REGS,
    QEMU_PLUGIN_CB_RW_REGS
};

enum qemu_plugin_mem_rw {
    QEMU_PLUGIN_MEM_R = 1,
    QEMU_PLUGIN_MEM_W,
    QEMU_PLUGIN_MEM_RW
};

enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64, QEMU_PLUGIN_INLINE_STORE_U64 };

/* API 2 and later: a per-vCPU array of entries QEMU grows as vCPUs appear
 * (so entries move: keep no pointer into it across callbacks); a
 * qemu_plugin_u64 names one uint64_t of every entry by its byte offset. */
struct qemu_plugin_scoreboard;
typedef struct {
    struct qemu_plugin_scoreboard *score;
    size_t offset;
} qemu_plugin_u64;

enum qemu_plugin_cond {
    QEMU_PLUGIN_COND_NEVER,
    QEMU_PLUGIN_COND_ALWAYS,
    QEMU_PLUGIN_COND_EQ,
    QEMU_PLUGIN_COND_NE,
    QEMU_PLUGIN_COND_LT,
    QEMU_PLUGIN_COND_LE,
    QEMU_PLUGIN_COND_GT,
    QEMU_PLUGIN_COND_GE
};

/* API 2 and later: the value a load or store moved, as the memory
 * callback sees it. */
enum qemu_plugin_mem_value_type {
    QEMU_PLUGIN_MEM_VALUE_U8,
    QEMU_PLUGIN_MEM_VALUE_U16,
    QEMU_PLUGIN_MEM_VALUE_U32,
    QEMU_PLUGIN_MEM_VALUE_U64,
    QEMU_PLUGIN_MEM_VALUE_U128
};
typedef struct {
    enum qemu_plugin_mem_value_type type;
    union {
        uint8_t u8;
        uint16_t u16;
        uint32_t u32;
        uint64_t u64;
        struct {
            uint64_t low, high;
        } u128;
    } data;
} qemu_plugin_mem_value;

/* Memory access description: size shift, sign extension, endianness,
 * store bit, packed in 32 bits; decode it with the accessors below. */
typedef uint32_t qemu_plugin_meminfo_t;

/* Callbacks of the same shape in every API. */
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index,
                                            void *userdata);
typedef void (*qemu_plugin_vcpu_mem_cb_t)(unsigned int vcpu_index,
                                          qemu_plugin_meminfo_t info,
                                          uint64_t vaddr, void *userdata);

/* The lifetime callbacks: API 7 passes no plugin id and a userdata
 * pointer last, given when the callback is registered. */
#if HWQ_API < 7
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_simple_cb_t)(qemu_plugin_id_t id,
                                             unsigned int vcpu_index);
typedef void (*qemu_plugin_vcpu_syscall_cb_t)(qemu_plugin_id_t id, unsigned int vcpu_index,
                                              int64_t num, uint64_t a1, uint64_t a2,
                                              uint64_t a3, uint64_t a4, uint64_t a5,
                                              uint64_t a6, uint64_t a7, uint64_t a8);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id,
                                               struct qemu_plugin_tb *tb);
void qemu_plugin_register_vcpu_init_cb(qemu_plugin_id_t id,
                                       qemu_plugin_vcpu_simple_cb_t cb);
void qemu_plugin_register_vcpu_exit_cb(qemu_plugin_id_t id,
                                       qemu_plugin_vcpu_simple_cb_t cb);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
                                           qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_syscall_cb(qemu_plugin_id_t id,
                                          qemu_plugin_vcpu_syscall_cb_t cb);
#else
typedef void (*qemu_plugin_udata_cb_t)(void *userdata);
typedef void (*qemu_plugin_vcpu_syscall_cb_t)(unsigned int vcpu_index, int64_t num,
                                              uint64_t a1, uint64_t a2, uint64_t a3,
                                              uint64_t a4, uint64_t a5, uint64_t a6,
                                              uint64_t a7, uint64_t a8, void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(struct qemu_plugin_tb *tb,
                                               void *userdata);
void qemu_plugin_register_vcpu_init_cb(qemu_plugin_id_t id,
                                       qemu_plugin_vcpu_udata_cb_t cb, void *userdata);
void qemu_plugin_register_vcpu_exit_cb(qemu_plugin_id_t id,
                                       qemu_plugin_vcpu_udata_cb_t cb, void *userdata);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
                                           qemu_plugin_vcpu_tb_trans_cb_t cb,
                                           void *userdata);
void qemu_plugin_register_vcpu_syscall_cb(qemu_plugin_id_t id,
                                          qemu_plugin_vcpu_syscall_cb_t cb,
                                          void *userdata);
#endif
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
                                    qemu_plugin_udata_cb_t cb,
                                    void *userdata);

#if HWQ_API >= 7
/* Discontinuities (QEMU 10.2 and later; the API 7 shapes): called on the
 * vCPU after its pc moved to `to_pc`. Weak: QEMU 10.0 has none, and the
 * build must load far enough there to say which one to use. */
enum qemu_plugin_discon_type {
    QEMU_PLUGIN_DISCON_INTERRUPT = 1,
    QEMU_PLUGIN_DISCON_EXCEPTION = 2,
    QEMU_PLUGIN_DISCON_HOSTCALL = 4,
    QEMU_PLUGIN_DISCON_ALL = -1
};
typedef void (*qemu_plugin_vcpu_discon_cb_t)(unsigned int vcpu_index,
                                             enum qemu_plugin_discon_type type,
                                             uint64_t from_pc, uint64_t to_pc,
                                             void *userdata);
HWQ_WEAK void qemu_plugin_register_vcpu_discon_cb(qemu_plugin_id_t id,
                                                  enum qemu_plugin_discon_type type,
                                                  qemu_plugin_vcpu_discon_cb_t cb,
                                                  void *userdata);
#endif

/* The plugin defines these two. */
extern HWQ_PLUGIN_EXPORT int qemu_plugin_version;
HWQ_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
                                          const qemu_info_t *info, int argc,
                                          char **argv);

/* QEMU provides these. */
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb,
                                          qemu_plugin_vcpu_udata_cb_t cb,
                                          enum qemu_plugin_cb_flags flags,
                                          void *userdata);
/* API 1 only (a counter shared by all vCPUs, not atomic). */
HWQ_WEAK void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb,
                                                     enum qemu_plugin_op op,
                                                     void *ptr, uint64_t imm);
/* API 2 and later. */
HWQ_WEAK void qemu_plugin_register_vcpu_tb_exec_inline_per_vcpu(struct qemu_plugin_tb *tb,
                                                       enum qemu_plugin_op op,
                                                       qemu_plugin_u64 entry,
                                                       uint64_t imm);
/* cb runs only when (entry cond imm) holds for the executing vCPU. */
HWQ_WEAK void qemu_plugin_register_vcpu_tb_exec_cond_cb(struct qemu_plugin_tb *tb,
                                               qemu_plugin_vcpu_udata_cb_t cb,
                                               enum qemu_plugin_cb_flags flags,
                                               enum qemu_plugin_cond cond,
                                               qemu_plugin_u64 entry,
                                               uint64_t imm, void *userdata);
HWQ_WEAK struct qemu_plugin_scoreboard *qemu_plugin_scoreboard_new(size_t element_size);
HWQ_WEAK void qemu_plugin_scoreboard_free(struct qemu_plugin_scoreboard *score);
HWQ_WEAK void *qemu_plugin_scoreboard_find(struct qemu_plugin_scoreboard *score,
                                  unsigned int vcpu_index);
HWQ_WEAK uint64_t qemu_plugin_u64_get(qemu_plugin_u64 entry, unsigned int vcpu_index);
HWQ_WEAK int qemu_plugin_num_vcpus(void);
HWQ_WEAK qemu_plugin_mem_value qemu_plugin_mem_get_value(qemu_plugin_meminfo_t info);

/* Registers (system mode reads CR3), API 2 and later. The list and the
 * buffer are glib's GArray and GByteArray, whose public part is a data
 * pointer and a length (glib's documented layout); their functions come
 * from the glib QEMU is linked with. The list's element is a
 * qemu_plugin_reg_descriptor, to which API 5 appended a field: step
 * through it by g_array_get_element_size. qemu_plugin_get_registers runs
 * in a vCPU's context (its init callback); qemu_plugin_read_register
 * inside a callback registered with QEMU_PLUGIN_CB_R_REGS (10.1 and later
 * refuse it elsewhere) appends the value in target byte order and
 * returns its size or -1 (API 6 and later: true or false). */
struct qemu_plugin_register;
typedef struct {
    struct qemu_plugin_register *handle;
    const char *name;
    const char *feature;
} qemu_plugin_reg_descriptor;
typedef struct hwq_garray {
    char *data;
    unsigned len;
} hwq_garray;
typedef struct hwq_gbytes {
    uint8_t *data;
    unsigned len;
} hwq_gbytes;
HWQ_WEAK hwq_garray *qemu_plugin_get_registers(void);
#if HWQ_API < 6
HWQ_WEAK int qemu_plugin_read_register(struct qemu_plugin_register *handle, hwq_gbytes *buf);
#else
HWQ_WEAK bool qemu_plugin_read_register(struct qemu_plugin_register *handle, hwq_gbytes *buf);
#endif
HWQ_WEAK char *g_array_free(hwq_garray *array, int free_segment);
HWQ_WEAK unsigned g_array_get_element_size(hwq_garray *array);
HWQ_WEAK hwq_gbytes *g_byte_array_new(void);
HWQ_WEAK hwq_gbytes *g_byte_array_set_size(hwq_gbytes *array, unsigned length);

/* Added by API 4, 5 and 6 in turn: looked up only to tell which API the
 * loading QEMU has (hwq_api.h). */
HWQ_WEAK bool qemu_plugin_read_memory_vaddr(uint64_t addr, hwq_gbytes *data, size_t len);
HWQ_WEAK bool qemu_plugin_write_memory_vaddr(uint64_t addr, hwq_gbytes *data);
HWQ_WEAK void qemu_plugin_set_pc(uint64_t vaddr);

/* Where the instruction's bytes are. System mode: their physical address
 * (tells apart two address spaces that map the same virtual address);
 * user mode: the host address, guest address + guest_base (7.2 and 10.0).
 * Weak: NULL-checked before use. */
__attribute__((weak)) void *qemu_plugin_insn_haddr(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
                                            qemu_plugin_vcpu_udata_cb_t cb,
                                            enum qemu_plugin_cb_flags flags,
                                            void *userdata);
void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *insn,
                                      qemu_plugin_vcpu_mem_cb_t cb,
                                      enum qemu_plugin_cb_flags flags,
                                      enum qemu_plugin_mem_rw rw,
                                      void *userdata);

size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb,
                                                 size_t idx);
#if HWQ_API == 1
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
#else
/* Copies min(len, size) bytes of the instruction into dest. */
size_t qemu_plugin_insn_data(const struct qemu_plugin_insn *insn, void *dest,
                             size_t len);
#endif
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);

unsigned int qemu_plugin_mem_size_shift(qemu_plugin_meminfo_t info);
bool qemu_plugin_mem_is_store(qemu_plugin_meminfo_t info);

void qemu_plugin_outs(const char *string);

/* The guest binary of a user-mode run and where its code sits (start:
 * its lowest executable segment, after the load bias): recorded in the
 * JSON report's "modules" member so hwprof-report can name functions.
 * Weak: a QEMU without them leaves the member
 * out. */
__attribute__((weak)) const char *qemu_plugin_path_to_binary(void);
__attribute__((weak)) uint64_t qemu_plugin_start_code(void);
__attribute__((weak)) uint64_t qemu_plugin_end_code(void);

#ifdef __cplusplus
}
#endif

#endif /* HWPROF_QEMU_PLUGIN_API_H */
