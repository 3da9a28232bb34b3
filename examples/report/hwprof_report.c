/* examples/report/hwprof_report.c: hwprof-report, one reader for every
 * saved hwprof report (docs/report-format.md): merges, queries, exports.
 * `hwprof-report --help` says what it does. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rp.h"
#include "rp_out.h"

static const char rp__usage[] =
    "usage: hwprof-report [OPTIONS] REPORT.json...\n"
    "\n"
    "Reads saved hwprof reports of any host (QEMU plugin, Valgrind tool,\n"
    "replayer, bytecode VM, Lua) and any model, checks each model's envelope\n"
    "(model, version, desc) with the model's own reader, and merges reports of\n"
    "the same configuration (per vCPU, per process, per run) with the models'\n"
    "merge. Bad input is one line naming the file and byte offset, exit 1;\n"
    "reports that do not merge name the first differing field, exit 1.\n"
    "\n"
    "Queries (the same for every model; every model's profile is one or more\n"
    "tables of rows keyed by an address):\n"
    "  (none)            every table's top rows (--top) and each model's counters\n"
    "  --top K           rows per table, ranked by the table's cost column (10)\n"
    "  --table NAME      only this table (a name or its unique prefix)\n"
    "  --tables          list the tables and their columns\n"
    "  --key ADDR        one key or PC in detail: every model's estimate, bounds,\n"
    "                    sample count and interval where it has them\n"
    "  --functions       per-function totals of every per-PC table's counts\n"
    "                    (samples, estimates, events), ranked like the table\n"
    "  --quiet           no text listing (exports only)\n"
    "\n";

/* Two strings: C99 promises string literals of 4095 bytes, not more. */
static const char rp__usage_exports[] =
    "Exports (FILE '-' is standard output):\n"
    "  --csv FILE        the table of --table (default: the first) as CSV, every row\n"
    "  --callgrind FILE  callgrind's profile format: per-PC ProfileMe samples,\n"
    "                    estimated fetches, latency, D-cache misses, wasted issue\n"
    "                    slots; RAP's own range counts at each range's start;\n"
    "                    stratified and co-processor per-PC events and invariant\n"
    "                    events, on source lines where the module has DWARF line\n"
    "                    tables. Read it with callgrind_annotate (--auto=yes\n"
    "                    annotates the source) or KCachegrind\n"
    "  --folded FILE     folded stacks (\"outer;...;inner count\", flamegraph.pl,\n"
    "                    speedscope) of the report's first call-stack profile;\n"
    "                    identical stacks fold, so the counts sum to its total\n"
    "  --stacks WHICH    which profile --folded writes (auto: the first there is,\n"
    "                    in this order):\n"
    "                      samples   the host's sampled call stacks (Lua host:\n"
    "                                function names; samples it could not\n"
    "                                keep are one [dropped] line)\n"
    "                      contexts  the co-processor's call-stack program\n"
    "                                (coproc_app=callstack): taken branches\n"
    "                                per calling context, its call sites named\n"
    "                                through the host's dictionary; a context\n"
    "                                the dictionary lacks is [context 0xKEY],\n"
    "                                one counted while the co-processor's stack\n"
    "                                was off (it dropped a call or return\n"
    "                                sample) starts with [stale]\n"
    "                      pm        no call stack: module;function;pc weighted\n"
    "                                by ProfileMe's estimated fetches (or the\n"
    "                                first per-PC table's cost column)\n"
    "  --bbv FILE --trace TRACE [--interval N]\n"
    "                    basic-block vectors of a recorded trace\n"
    "                    (docs/trace-format.md), one line per interval of N\n"
    "                    instructions (100000000) in Valgrind exp-bbv's format\n"
    "                    \"T:id:count :id:count ...\" for SimPoint\n"
    "  --pprof FILE      a gzipped pprof profile (go tool pprof, Pyroscope, ...):\n"
    "                    every per-PC event of --callgrind as a sample type\n"
    "                    (pm_samples, pm_fetches, pm_latency, the per-stage\n"
    "                    latencies, rap_events, strat_events, coproc_samples, ...),\n"
    "                    one sample per PC, functions and lines where names are\n"
    "                    known, the report's modules as mappings; no file and exit\n"
    "                    1 when the report has no per-PC table\n"
    "  --chrome-trace FILE\n"
    "                    the report's timelines as Chrome trace-event JSON (Perfetto,\n"
    "                    chrome://tracing, speedscope): a track per phase detector\n"
    "                    (the path profiler's, and the BBV reference with exact=on)\n"
    "                    with its phases, changes and a phase counter; timestamps\n"
    "                    count guest instructions. No file and exit 1 when the\n"
    "                    report has no phase timeline\n"
    "  --json FILE       the merged report: each model's JSON report, readable by\n"
    "                    this tool and the models' readers again\n"
    "  --html FILE       one self-contained page (inline SVG, no network)\n"
    "\n"
    "Names:\n"
    "  --elf PATH[@BIAS] read function symbols from PATH (loaded at BIAS, 0 by\n"
    "                    default), besides the modules the report names;\n"
    "                    repeatable. Symbols are read with binutils' nm, source\n"
    "                    lines (callgrind export) with addr2line; a PC without a\n"
    "                    symbol inside a known module shows as [module+offset]\n"
    "  -h, --help        this text\n";

static int rp__fail_usage(const char *why, const char *what) {
    fprintf(stderr, "hwprof-report: %s%s%s (see --help)\n", why, what ? ": " : "",
            what ? what : "");
    return 2;
}

static int rp__u64(const char *s, uint64_t *v) {
    char *end;
    unsigned long long x;
    errno = 0;
    x = strtoull(s, &end, 0);
    if (errno || end == s || *end || s[0] == '-') return -1;
    *v = x;
    return 0;
}

/* The arguments, the reports, the queries and exports; files and o->elf
 * have room for every argument and are freed by main. */
static int rp__run(int argc, char **argv, char **files, rp_opts *o_) {
    rp_opts o = *o_;
    rp_set *s;
    unsigned nfiles = 0;
    int i, rc = 0;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define RP__ARG(name, dst)                                                    \
    if (!strcmp(a, name)) {                                                   \
        if (!v) return rp__fail_usage("missing value after", name);           \
        dst = argv[++i];                                                      \
        continue;                                                             \
    }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(rp__usage, stdout);
            fputs(rp__usage_exports, stdout);
            return 0;
        }
        if (!strcmp(a, "--top") || !strcmp(a, "--key") || !strcmp(a, "--interval")) {
            uint64_t x;
            if (!v || rp__u64(v, &x)) return rp__fail_usage("needs a number", a);
            if (a[2] == 't') o.top = x;
            else if (a[2] == 'k') o.key = x, o.have_key = 1;
            else if (x == 0) return rp__fail_usage("needs a positive number", a);
            else o.interval = x;
            i++;
            continue;
        }
        RP__ARG("--table", o.table)
        RP__ARG("--csv", o.csv)
        RP__ARG("--callgrind", o.callgrind)
        RP__ARG("--folded", o.folded)
        RP__ARG("--stacks", o.stacks)
        RP__ARG("--bbv", o.bbv)
        RP__ARG("--trace", o.trace)
        RP__ARG("--json", o.json)
        RP__ARG("--pprof", o.pprof)
        RP__ARG("--chrome-trace", o.chrome)
        RP__ARG("--html", o.html)
        if (!strcmp(a, "--elf")) {
            if (!v) return rp__fail_usage("missing value after", a);
            o.elf[o.nelf++] = argv[++i];
            continue;
        }
        if (!strcmp(a, "--tables")) {
            o.list = 1;
            continue;
        }
        if (!strcmp(a, "--functions")) {
            o.functions = 1;
            continue;
        }
        if (!strcmp(a, "--quiet")) {
            o.quiet = 1;
            continue;
        }
        if (a[0] == '-' && a[1]) return rp__fail_usage("unknown option", a);
        files[nfiles++] = argv[i];
#undef RP__ARG
    }
    if (o.bbv && !o.trace) return rp__fail_usage("--bbv needs --trace TRACE", NULL);
    if (o.bbv && !nfiles) return rp_out_bbv(&o);
    if (!nfiles) return rp__fail_usage("no report given", NULL);
    s = (rp_set *)malloc(sizeof *s);
    if (!s) return 1;
    rp_set_init(s);
    for (i = 0; i < (int)nfiles; i++)
        if (rp_add_file(s, files[i]) != 0) {
            fprintf(stderr, "hwprof-report: %s\n", s->why);
            rc = 1;
            break;
        }
    if (!rc) rc = rp_out(s, &o);
    if (!rc && o.bbv) rc = rp_out_bbv(&o);
    rp_set_free(s);
    free(s);
    return rc;
}

int main(int argc, char **argv) {
    rp_opts o;
    char **files = (char **)calloc((size_t)argc + 1, sizeof *files);
    int rc;
    memset(&o, 0, sizeof o);
    o.top = 10;
    o.interval = 100000000;
    o.elf = (char **)calloc((size_t)argc + 1, sizeof *o.elf);
    rc = files && o.elf ? rp__run(argc, argv, files, &o) : 1;
    free(files);
    free(o.elf);
    return rc;
}
