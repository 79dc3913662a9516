// leak: one thread allocates small blocks every round and never frees
// them: the live heap and RSS grow together.
// Usage: leak MIB_PER_ROUND ROUNDS ROUND_MS
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
	if (argc != 4) {
		fprintf(stderr, "usage: leak MIB_PER_ROUND ROUNDS ROUND_MS\n");
		return 2;
	}
	int mib = atoi(argv[1]), rounds = atoi(argv[2]), ms = atoi(argv[3]);
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < mib * 1024; i++)
			memset(malloc(1000), 1, 1000);
		usleep(ms * 1000);
	}
	pause();
	return 0;
}
