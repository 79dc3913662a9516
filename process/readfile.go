package process

import "golang.org/x/sys/unix"

// ReadFile reads an open /proc file from offset 0 into buf until EOF or
// a full buf, retrying reads interrupted by a signal (EINTR), and returns
// how many bytes it read. With stopAtNewline it also stops at a short
// read that ends in a newline: seq_file files that one read generates
// whole (/proc/PID/stat, io, status) end there, which saves the read(2)
// that would only return EOF. A read at offset 0 makes seq_file
// regenerate the text, so a kept-open fd reads fresh values each time.
func ReadFile(fd int, buf []byte, stopAtNewline bool) (int, error) {
	total := 0
	for total < len(buf) {
		n, err := unix.Pread(fd, buf[total:], int64(total))
		if err == unix.EINTR { //nolint:errorlint // a bare Errno from a syscall
			continue
		}
		if err != nil {
			return total, err
		}
		if n == 0 {
			break
		}
		total += n
		if stopAtNewline && total < len(buf) && buf[total-1] == '\n' {
			break
		}
	}
	return total, nil
}
