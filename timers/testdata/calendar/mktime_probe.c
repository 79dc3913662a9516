/* mktime_probe reads "year mon mday hour min sec isdst" lines (mon 1-12)
 * and prints, for each, what glibc's mktime(3) makes of it in $TZ:
 * "unix year mon mday hour min sec isdst", or "fail". The calls run in one
 * process so glibc's remembered UTC offset carries from one to the next,
 * as it does inside systemd. Used by TestMktimeMatchesGlibc. */
#include <stdio.h>
#include <time.h>

int main(void) {
	int y, mo, d, h, mi, s, dst;
	tzset();
	while (scanf("%d %d %d %d %d %d %d", &y, &mo, &d, &h, &mi, &s, &dst) == 7) {
		struct tm t = {0};
		t.tm_year = y - 1900; t.tm_mon = mo - 1; t.tm_mday = d;
		t.tm_hour = h; t.tm_min = mi; t.tm_sec = s; t.tm_isdst = dst;
		time_t r = mktime(&t);
		if (r == (time_t)-1) { printf("fail\n"); continue; }
		printf("%ld %d %d %d %d %d %d %d\n", (long)r, t.tm_year + 1900, t.tm_mon + 1,
		       t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec, t.tm_isdst);
	}
	return 0;
}
