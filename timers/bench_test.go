package timers

import (
	"testing"
	"time"
)

// BenchmarkInventoryDebian reads the Debian fixture root (timer units of
// ten packages, crontabs and an anacrontab) and computes each period.
func BenchmarkInventoryDebian(b *testing.B) {
	root := fixture(b, "debian")
	for b.Loop() {
		if _, err := Inventory(root, InventoryOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkProjectDay projects one day of firings of every job of
// the Debian fixture.
func BenchmarkProjectDay(b *testing.B) {
	jobs, err := Inventory(fixture(b, "debian"), InventoryOptions{})
	if err != nil {
		b.Fatal(err)
	}
	from := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	for b.Loop() {
		Project(jobs, from, from.Add(24*time.Hour), time.UTC)
	}
}
