package cmd

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/memdiag/memdiag/internal/iostreams"
)

// TestAnalyzeEndsOnSignalWhileReading: analyze reading a recording from a
// FIFO whose writer stalls (a zcat that hangs, a pipe never closed) ends
// when its context is cancelled — what Ctrl-C and SIGTERM do — with exit
// 130, instead of waiting for the writer forever.
func TestAnalyzeEndsOnSignalWhileReading(t *testing.T) {
	rec, err := os.ReadFile(writeRecording(t))
	if err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(t.TempDir(), "rec.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	defer close(release)
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer w.Close()
		w.Write(rec[:len(rec)/2]) // the header and some samples, then a stall
		<-release
	}()
	ctx, cancel := context.WithCancel(context.Background())
	ios, _, _, errOut := iostreams.Test()
	done := make(chan int)
	go func() { done <- execute(ctx, &factory{IO: ios, Now: time.Now, Root: "/"}, []string{"analyze", fifo}) }()
	time.Sleep(300 * time.Millisecond) // let analyze block on the FIFO
	cancel()
	select {
	case code := <-done:
		if code != exitInterrupt {
			t.Errorf("exit %d, want %d; stderr %s", code, exitInterrupt, errOut)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("analyze did not end after its context was cancelled")
	}
}
