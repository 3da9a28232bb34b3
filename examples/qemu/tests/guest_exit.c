/* guest_exit.c: main and 8 threads each run a loop, thread i (main is 0)
 * i + 1 times as long. Mode "exit": every one of them calls exit() when
 * its loop ends, so several threads are inside exit() while the others
 * still run (the first exit_group ends the process). Mode "join": main
 * joins the threads and returns. Prints "guest ran" first, so a test can
 * tell whether the guest started at all. The signal modes run main's loop
 * alone, then die by a signal: "segv" (a store to address 0), "abort"
 * (abort(): SIGABRT), "kill9" (kill(getpid(), SIGKILL)), "wait" (prints
 * "guest waits" and spins until killed from outside).
 * usage: guest_exit exit|join|segv|abort|kill9|wait ITERATIONS */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NTHREADS 8

static long iters;
static int by_exit;
static volatile unsigned long sink[NTHREADS + 1];

static void work(int id) {
    unsigned long x = (unsigned long)id + 1;
    long i;
    for (i = 0; i < iters * (id + 1); i++) x = x * 6364136223846793005ul + 1442695040888963407ul;
    sink[id] = x;
    if (by_exit) exit(0);
}

static void *thread(void *arg) {
    work((int)(long)arg);
    return NULL;
}

int main(int argc, char **argv) {
    pthread_t t[NTHREADS];
    long i;
    if (argc != 3) return 2;
    by_exit = !strcmp(argv[1], "exit");
    iters = atol(argv[2]);
    printf("guest ran\n");
    fflush(stdout);
    if (strcmp(argv[1], "exit") && strcmp(argv[1], "join")) {
        work(0);
        if (!strcmp(argv[1], "segv")) *(volatile int *)sink[NTHREADS] = 1; /* sink: 0 */
        if (!strcmp(argv[1], "abort")) abort();
        if (!strcmp(argv[1], "kill9")) kill(getpid(), SIGKILL);
        printf("guest waits\n");
        fflush(stdout);
        for (;;) work(0);
    }
    for (i = 0; i < NTHREADS; i++) pthread_create(&t[i], NULL, thread, (void *)(i + 1));
    work(0);
    for (i = 0; i < NTHREADS; i++) pthread_join(t[i], NULL);
    return 0;
}
