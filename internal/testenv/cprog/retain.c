// retain: many threads allocate and free small blocks; the program's live
// heap stays flat (one block per thread) while glibc keeps the freed memory
// in its per-thread arenas: RSS grows, nothing leaks. Each round a thread
// allocates a little more than the last, frees all but its last block (at
// the top of its arena's heap, so the arena cannot trim), and sleeps.
// Usage: retain THREADS ROUNDS ROUND_MS
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rounds, round_ms;

static void *worker(void *arg) {
	(void)arg;
	void *keep = NULL;
	for (int r = 1; r <= rounds; r++) {
		size_t n = (size_t)r * 1024; /* r MiB of 1 KiB blocks */
		void **b = malloc(n * sizeof(void *));
		for (size_t i = 0; i < n; i++) {
			b[i] = malloc(1000);
			memset(b[i], 1, 1000);
		}
		free(keep);
		for (size_t i = 0; i + 1 < n; i++)
			free(b[i]);
		keep = b[n - 1]; /* live: one block */
		free(b);
		usleep(round_ms * 1000);
	}
	pause();
	return NULL;
}

int main(int argc, char **argv) {
	if (argc != 4) {
		fprintf(stderr, "usage: retain THREADS ROUNDS ROUND_MS\n");
		return 2;
	}
	int threads = atoi(argv[1]);
	rounds = atoi(argv[2]);
	round_ms = atoi(argv[3]);
	pthread_t t[256];
	for (int i = 0; i < threads && i < 256; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	pause();
	return 0;
}
