package timers

import (
	"os"
	"path/filepath"
	"strings"
	"time"
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
	if b, err := os.ReadFile(filepath.Join(root, "etc/timezone")); err == nil {
		name := strings.TrimSpace(string(b))
		if _, err := time.LoadLocation(name); err == nil && name != "" {
			return name
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
	if b, err := os.ReadFile(filepath.Join(root, "etc/localtime")); err == nil {
		if l, err := time.LoadLocationFromTZData("Local", b); err == nil {
			return l, nil
		}
	}
	return time.UTC, nil
}
