/* examples/report/rp_html.c: hwprof-report --html (placeholder). */
#include "rp_out.h"

int rp_out_html(const rp_set *s, rp_table *t, size_t nt, const rp_syms *y, FILE *f) {
    (void)s; (void)t; (void)nt; (void)y;
    fprintf(f, "<!doctype html><title>hwprof</title>\n");
    return 0;
}
