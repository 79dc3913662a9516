// latethreads: grows its heap on one thread, then starts more threads
// that go on growing it: the program of issue 30 item 4, whose allocator
// evidence, read when it began growing, saw one thread. The heap grows at
// MIB_PER_S in 16 KiB blocks (below glibc's mmap threshold, so from the
// arenas), written and held: ALONE_S seconds on the main thread, then
// THREADS threads share the rate until TOTAL_S seconds; then it holds.
// Usage: latethreads ALONE_S THREADS TOTAL_S MIB_PER_S
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BLOCK (16 * 1024)

static double start, total_s, rate;
static int threads;

static double now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

// grow allocates share of the rate from from until until (seconds since
// start), writing and keeping every block.
static void grow(double from, double until, double share) {
	double done = 0;
	for (double t = now() - start; t < until; t = now() - start) {
		double want = (t - from) * share * rate * 1024 * 1024;
		while (done < want) {
			char *p = malloc(BLOCK);
			memset(p, 1, BLOCK);
			done += BLOCK;
		}
		usleep(50 * 1000);
	}
}

static double alone;

static void *worker(void *arg) {
	(void)arg;
	grow(alone, total_s, 1.0 / threads);
	pause();
	return NULL;
}

int main(int argc, char **argv) {
	if (argc != 5) {
		fprintf(stderr, "usage: latethreads ALONE_S THREADS TOTAL_S MIB_PER_S\n");
		return 2;
	}
	alone = atof(argv[1]);
	threads = atoi(argv[2]);
	total_s = atof(argv[3]);
	rate = atof(argv[4]);
	if (threads < 1 || threads > 256) {
		fprintf(stderr, "latethreads: THREADS must be 1 to 256\n");
		return 2;
	}
	start = now();
	grow(0, alone, 1.0);
	pthread_t t[256];
	for (int i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	pause();
	return 0;
}
