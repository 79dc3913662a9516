/*
 * keepfd — the floor a per-process sampler can reach, in C: every interval
 * it reads the files `memdiag watch` reads (/proc/pressure/{memory,io,cpu},
 * meminfo, vmstat, diskstats, the /proc listing, each process's stat and
 * io) and parses nothing, keeping every file open between intervals and
 * re-reading it with one pread(2), as memdiag's sampler does
 * (diskio/procscan.go). A process's files are opened the first interval its
 * PID is listed and closed when a read fails (the process was reaped: ESRCH)
 * or the PID is no longer listed. No runtime, no allocation per interval:
 * bench/fixedcost.sh reports watch's CPU as a ratio to this.
 *
 *   cc -O2 -o keepfd bench/floorc/keepfd.c
 *   ./keepfd [interval_ms] [proc]     (default 1000 /proc; runs until SIGINT)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define MAXPID (1 << 22) /* pid_max's upper bound on 64-bit kernels */

static int *fd_stat, *fd_io;    /* per PID: open fd + 1, 0 when none */
static unsigned *seen;          /* per PID: last interval it was listed */
static int *open_pids, nopen;   /* the PIDs with files open */
static char buf[64 << 10];
static volatile sig_atomic_t stop;

static void on_signal(int sig) { (void)sig; stop = 1; }

static int pread_all(int fd) {
    ssize_t n = pread(fd, buf, sizeof buf, 0);
    return n < 0 ? -1 : 0;
}

static void drop(int pid) {
    if (fd_stat[pid]) close(fd_stat[pid] - 1);
    if (fd_io[pid]) close(fd_io[pid] - 1);
    fd_stat[pid] = fd_io[pid] = 0;
}

int main(int argc, char **argv) {
    long interval_ms = argc > 1 ? atol(argv[1]) : 1000;
    const char *proc = argc > 2 ? argv[2] : "/proc";
    static const char *global[] = {"pressure/memory", "pressure/io", "pressure/cpu",
                                   "meminfo", "vmstat", "diskstats"};
    int gfd[6];
    char path[256];
    unsigned tick = 0;
    long files = 0;

    fd_stat = calloc(MAXPID, sizeof *fd_stat);
    fd_io = calloc(MAXPID, sizeof *fd_io);
    seen = calloc(MAXPID, sizeof *seen);
    open_pids = calloc(MAXPID, sizeof *open_pids);
    if (!fd_stat || !fd_io || !seen || !open_pids) { perror("calloc"); return 1; }
    for (int i = 0; i < 6; i++) {
        snprintf(path, sizeof path, "%s/%s", proc, global[i]);
        gfd[i] = open(path, O_RDONLY | O_CLOEXEC);
    }
    struct rlimit rl; /* two descriptors a process: raise the soft limit, as Go's runtime does */
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) { rl.rlim_cur = rl.rlim_max; setrlimit(RLIMIT_NOFILE, &rl); }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    int dfd = open(proc, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) { perror(proc); return 1; }
    DIR *dir = fdopendir(dfd);
    while (!stop) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        tick++;
        files = 0;
        for (int i = 0; i < 6; i++)
            if (gfd[i] >= 0 && pread_all(gfd[i]) == 0) files++;
        rewinddir(dir);
        struct dirent *de;
        while ((de = readdir(dir)) != NULL) {
            char *end;
            long pid = strtol(de->d_name, &end, 10);
            if (*end != '\0' || pid <= 0 || pid >= MAXPID) continue;
            seen[pid] = tick;
            if (!fd_stat[pid] && !fd_io[pid]) {
                open_pids[nopen++] = (int)pid;
                snprintf(path, sizeof path, "%s/%ld/stat", proc, pid);
                fd_stat[pid] = open(path, O_RDONLY | O_CLOEXEC) + 1;
                snprintf(path, sizeof path, "%s/%ld/io", proc, pid);
                fd_io[pid] = open(path, O_RDONLY | O_CLOEXEC) + 1;
            }
            int ok = fd_stat[pid] && pread_all(fd_stat[pid] - 1) == 0;
            ok = ok && fd_io[pid] && pread_all(fd_io[pid] - 1) == 0;
            if (!ok) { drop((int)pid); continue; }
            files += 2;
        }
        int kept = 0;
        for (int i = 0; i < nopen; i++) {
            int pid = open_pids[i];
            if (seen[pid] != tick) drop(pid);
            if (fd_stat[pid] || fd_io[pid]) open_pids[kept++] = pid;
        }
        nopen = kept;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        long spent_ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
        if (spent_ms < interval_ms) {
            struct timespec d = {(interval_ms - spent_ms) / 1000, ((interval_ms - spent_ms) % 1000) * 1000000};
            nanosleep(&d, NULL);
        }
    }
    fprintf(stderr, "keepfd: files per interval: %ld, intervals: %u\n", files, tick);
    return 0;
}
