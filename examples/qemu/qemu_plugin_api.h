/* examples/qemu/qemu_plugin_api.h: our own declarations of the part of the
 * QEMU TCG plugin API that hwprof's plugin uses.
 *
 * Describes QEMU 7.2 (Debian 12's qemu-user 1:7.2), plugin API version 1
 * (QEMU accepts plugins declaring versions 0..1; a plugin declaring 2 is
 * refused). Written from the documented API (QEMU's "TCG Plugins" manual,
 * docs/devel/tcg-plugins.rst, and the API reference generated from it),
 * not copied from QEMU's header, which no Debian package ships. Only what
 * the plugin calls is declared. The qemu_plugin_* functions are resolved
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
#define HWQ_PLUGIN_API_VERSION 1

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

enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };

/* Memory access description: size shift, sign extension, endianness,
 * store bit, packed in 32 bits; decode it with the accessors below. */
typedef uint32_t qemu_plugin_meminfo_t;

typedef void (*qemu_plugin_simple_cb_t)(qemu_plugin_id_t id);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_simple_cb_t)(qemu_plugin_id_t id,
                                             unsigned int vcpu_index);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index,
                                            void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id,
                                               struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_vcpu_mem_cb_t)(unsigned int vcpu_index,
                                          qemu_plugin_meminfo_t info,
                                          uint64_t vaddr, void *userdata);

/* The plugin defines these two. */
extern HWQ_PLUGIN_EXPORT int qemu_plugin_version;
HWQ_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
                                          const qemu_info_t *info, int argc,
                                          char **argv);

/* QEMU provides these. */
void qemu_plugin_register_vcpu_init_cb(qemu_plugin_id_t id,
                                       qemu_plugin_vcpu_simple_cb_t cb);
void qemu_plugin_register_vcpu_exit_cb(qemu_plugin_id_t id,
                                       qemu_plugin_vcpu_simple_cb_t cb);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
                                           qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb,
                                          qemu_plugin_vcpu_udata_cb_t cb,
                                          enum qemu_plugin_cb_flags flags,
                                          void *userdata);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb,
                                              enum qemu_plugin_op op,
                                              void *ptr, uint64_t imm);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
                                            qemu_plugin_vcpu_udata_cb_t cb,
                                            enum qemu_plugin_cb_flags flags,
                                            void *userdata);
void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *insn,
                                      qemu_plugin_vcpu_mem_cb_t cb,
                                      enum qemu_plugin_cb_flags flags,
                                      enum qemu_plugin_mem_rw rw,
                                      void *userdata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
                                    qemu_plugin_udata_cb_t cb,
                                    void *userdata);

size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb,
                                                 size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);

unsigned int qemu_plugin_mem_size_shift(qemu_plugin_meminfo_t info);
bool qemu_plugin_mem_is_store(qemu_plugin_meminfo_t info);

void qemu_plugin_outs(const char *string);

#ifdef __cplusplus
}
#endif

#endif /* HWPROF_QEMU_PLUGIN_API_H */
