// Command peakrss runs a command and writes its peak resident set size
// (KiB, the ru_maxrss of wait4(2)) to a file, for tests that bound how
// much memory memdiag uses.
//
//	peakrss OUTFILE PROGRAM [ARG...]
//
// A test cannot read that figure from its own wait: Go starts a child
// with clone(CLONE_VM|CLONE_VFORK), and at execve(2) Linux carries the
// shared memory's high-water mark into the child's ru_maxrss
// (exec_mmap → setmax_mm_hiwater_rss), so a child of a 200 MiB test
// binary reports at least 200 MiB whatever it used. peakrss is small, so
// what its child inherits is small. SIGINT and SIGTERM are passed on to
// the child; peakrss exits with the child's status.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: peakrss OUTFILE PROGRAM [ARG...]")
		os.Exit(2)
	}
	c := exec.Command(os.Args[2], os.Args[3:]...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	if err := c.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "peakrss:", err)
		os.Exit(127)
	}
	go func() {
		for s := range sigs {
			_ = c.Process.Signal(s)
		}
	}()
	_ = c.Wait()
	ru, _ := c.ProcessState.SysUsage().(*syscall.Rusage)
	if ru == nil {
		fmt.Fprintln(os.Stderr, "peakrss: no rusage")
		os.Exit(125)
	}
	if err := os.WriteFile(os.Args[1], []byte(fmt.Sprintf("%d\n", ru.Maxrss)), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "peakrss:", err)
		os.Exit(125)
	}
	if ws, ok := c.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		os.Exit(128 + int(ws.Signal()))
	}
	os.Exit(c.ProcessState.ExitCode())
}
