/* examples/common/hwx_impl.c: the one translation unit of hwx that
 * compiles the hwprof cold paths (HWPROF_IMPL) of base.h, cost.h and the
 * integrated models (hwx_int.h includes them). Hosts that link hwx must
 * not define HWPROF_IMPL themselves. */
#define HWPROF_IMPL
#include "hwx_int.h"
/* and the VM-facing layer, for the hosts that feed it directly
 * (lua-hwprof's layer=vm): one definition of its cold paths here too */
#include "hwprof/vm.h"
