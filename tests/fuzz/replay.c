/* SPDX-License-Identifier: MIT */
/* tests/fuzz/replay.c: a plain driver for a fuzz entry, without libFuzzer:
 * runs LLVMFuzzerTestOneInput once on each file named (a directory: on
 * each file in it), so a finding replays as an ordinary test under gcc,
 * ASan or valgrind. A violated property traps; exit 0 means all passed.
 *
 *   replay FILE|DIR...   */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path) {
    FILE *f = fopen(path, "rb");
    uint8_t *buf;
    long n;
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return 1;
    }
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 ||
        fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return 1;
    }
    /* An exact-size copy, so ASan sees a read past the input's end. */
    buf = (uint8_t *)malloc(n ? (size_t)n : 1u);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        free(buf);
        return 1;
    }
    fclose(f);
    LLVMFuzzerTestOneInput(buf, (size_t)n);
    free(buf);
    return 0;
}

int main(int argc, char **argv) {
    int i, bad = 0, runs = 0;
    for (i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            DIR *d = opendir(argv[i]);
            struct dirent *e;
            if (!d) return 1;
            while ((e = readdir(d)) != NULL) {
                char path[4096];
                if (e->d_name[0] == '.') continue;
                snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
                bad |= run_file(path);
                runs++;
            }
            closedir(d);
        } else {
            bad |= run_file(argv[i]);
            runs++;
        }
    }
    printf("replay: %d inputs, %s\n", runs, bad ? "unreadable input" : "ok");
    return bad;
}
