package timers

import (
	"os"
	"path/filepath"
	"strings"
	"time"
)

// HostLocation returns the time zone schedules are computed in: name when
// given (IANA, e.g. "Europe/Berlin"), else the root's zone — the target of
// its etc/localtime link, etc/timezone (Debian), or the TZif data in
// etc/localtime — else UTC. cron and systemd both use the host's local
// zone (systemd.time(7), crontab(5)).
func HostLocation(root, name string) (*time.Location, error) {
	if name != "" {
		return time.LoadLocation(name)
	}
	lt := filepath.Join(root, "etc/localtime")
	if target, err := os.Readlink(lt); err == nil {
		if i := strings.Index(target, "zoneinfo/"); i >= 0 {
			if l, err := time.LoadLocation(target[i+len("zoneinfo/"):]); err == nil {
				return l, nil
			}
		}
	}
	if b, err := os.ReadFile(filepath.Join(root, "etc/timezone")); err == nil {
		if l, err := time.LoadLocation(strings.TrimSpace(string(b))); err == nil {
			return l, nil
		}
	}
	if b, err := os.ReadFile(lt); err == nil {
		if l, err := time.LoadLocationFromTZData("Local", b); err == nil {
			return l, nil
		}
	}
	return time.UTC, nil
}
