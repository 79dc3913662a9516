package timers

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/memdiag/memdiag/internal/rootfs"
)

// HostZone returns the IANA name of the root's time zone — the target of
// its etc/localtime link below zoneinfo/, else the content of
// etc/timezone (Debian) — or "" when neither names a zone this program
// can load. cron and systemd compute schedules in this zone
// (systemd.time(7), crontab(5)).
func HostZone(root string) string {
	if target, err := os.Readlink(filepath.Join(root, "etc/localtime")); err == nil {
		if i := strings.Index(target, "zoneinfo/"); i >= 0 {
			name := target[i+len("zoneinfo/"):]
			if _, err := time.LoadLocation(name); err == nil {
				return name
			}
		}
	}
	if b, err := rootfs.ReadFile(context.Background(), root, "etc/timezone", 256); err == nil {
		name := strings.TrimSpace(string(b))
		if validZoneName(name) {
			if _, err := time.LoadLocation(name); err == nil {
				return name
			}
		}
	}
	return ""
}

// HostLocation returns the zone to show times in: name when given (IANA,
// e.g. "Europe/Berlin"), else the root's zone ([HostZone], or the TZif
// data in its etc/localtime), else UTC.
func HostLocation(root, name string) (*time.Location, error) {
	if name != "" {
		return time.LoadLocation(name)
	}
	if z := HostZone(root); z != "" {
		return time.LoadLocation(z)
	}
	// TZif files are a few KiB; 1 MiB bounds a hostile one.
	if b, err := rootfs.ReadFile(context.Background(), root, "etc/localtime", 1<<20); err == nil {
		if l, err := time.LoadLocationFromTZData("Local", b); err == nil {
			return l, nil
		}
	}
	return time.UTC, nil
}

// validZoneName reports whether name looks like an IANA zone name
// ("Europe/Berlin", "Etc/GMT+5", "UTC"): letters, digits and "/_+-",
// no ".." or leading "/", so that it cannot name a file outside the zone
// database.
func validZoneName(name string) bool {
	if name == "" || len(name) > 64 || strings.HasPrefix(name, "/") || strings.Contains(name, "..") {
		return false
	}
	for _, r := range name {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("/_+-", r)) {
			return false
		}
	}
	return true
}
