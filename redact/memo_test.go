package redact

import (
	"fmt"
	"testing"
)

func TestMemo(t *testing.T) {
	var m Memo
	for range 2 {
		if got, want := m.String("mysqldump -uroot -pS3cret app"), "mysqldump -uroot -p*** app"; got != want {
			t.Errorf("Memo.String = %q, want %q", got, want)
		}
		if got, want := m.String("sh -c  echo  a"), "sh -c  echo  a"; got != want {
			t.Errorf("Memo.String changed an ordinary line: %q", got)
		}
	}
	for i := range memoMax + 10 {
		s := fmt.Sprintf("app --token=t%d", i)
		if got := m.String(s); got != "app --token=***" {
			t.Fatalf("Memo.String(%q) = %q", s, got)
		}
	}
	if len(m.m) > memoMax {
		t.Errorf("Memo holds %d lines, more than %d", len(m.m), memoMax)
	}
}
