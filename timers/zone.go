package timers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/memdiag/memdiag/internal/rootfs"
)

// ErrZoneUnknown is wrapped when the root's etc/localtime exists but
// cannot be read or is not a TZif file: the zone cron and systemd compute
// schedules in is unknown, and no other zone is assumed in its place.
var ErrZoneUnknown = errors.New("the zone periodic jobs run in is unknown")

// UnnamedZone is the name of a zone read from a copied etc/localtime
// whose bytes match no file of the zone database.
const UnnamedZone = "unnamed zone (copied /etc/localtime)"

// Zone is the time zone a root's periodic jobs run in: cron and systemd
// compute schedules in the zone of etc/localtime (systemd.time(7),
// crontab(5), tzset(3)).
type Zone struct {
	// Name is the IANA name ("Asia/Shanghai"), or "" when etc/localtime is
	// a copy that matches no zone in the zone database.
	Name string
	// Loc is the zone's rules: from the root's own TZif data where it has
	// them, so an image with older or newer tzdata than this host projects
	// with its own rules.
	Loc *time.Location
	// How says where the zone came from: "link", "copy", "etc/timezone",
	// "unnamed copy" or "none" (no etc/localtime: UTC, as glibc assumes).
	How string
}

// RootZone returns the zone of root's etc/localtime:
//   - a symbolic link names the zone (its target below zoneinfo/);
//   - a copied TZif file is named by comparing its bytes with the zone
//     database (usr/share/zoneinfo under root, else this host's), the
//     name in etc/timezone first; when none matches, the copy itself is
//     the zone's rules, named [UnnamedZone];
//   - no etc/localtime: the name in etc/timezone (Debian), else UTC, as
//     glibc assumes (tzset(3)).
//
// An etc/localtime that exists but cannot be read or parsed is an
// [ErrZoneUnknown] error naming the file.
func RootZone(root string) (Zone, error) {
	const rel = "etc/localtime"
	fi, err := rootfs.Lstat(root, rel)
	if errors.Is(err, fs.ErrNotExist) {
		if name := etcTimezone(root); name != "" {
			if l, err := time.LoadLocation(name); err == nil {
				return Zone{Name: name, Loc: l, How: "etc/timezone"}, nil
			}
		}
		return Zone{Name: "UTC", Loc: time.UTC, How: "none"}, nil
	}
	if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if target, err := rootfs.Readlink(root, rel); err == nil {
			if i := strings.Index(target, "zoneinfo/"); i >= 0 {
				name := target[i+len("zoneinfo/"):]
				if validZoneName(name) {
					if l, err := loadRootZone(root, name); err == nil {
						return Zone{Name: name, Loc: l, How: "link"}, nil
					}
				}
			}
		}
	}
	b, err := rootfs.ReadFile(context.Background(), root, rel, zoneFileLimit)
	if err != nil {
		return Zone{}, fmt.Errorf("%w: %w", ErrZoneUnknown, err)
	}
	if _, err := time.LoadLocationFromTZData(UnnamedZone, b); err != nil {
		return Zone{}, fmt.Errorf("%w: %s: not a TZif zone file: %w", ErrZoneUnknown, filepath.Join(root, rel), err)
	}
	if name := matchZone(root, b); name != "" {
		l, _ := time.LoadLocationFromTZData(name, b)
		return Zone{Name: name, Loc: l, How: "copy"}, nil
	}
	l, _ := time.LoadLocationFromTZData(UnnamedZone, b)
	return Zone{Loc: l, How: "unnamed copy"}, nil
}

// HostZone returns the IANA name of the root's time zone ([RootZone]), or
// "" when the root has no zone of its own (no etc/localtime or
// etc/timezone), when etc/localtime is unreadable, or when it is a copy
// that matches no named zone.
func HostZone(root string) string {
	z, err := RootZone(root)
	if err != nil || z.How == "none" {
		return ""
	}
	return z.Name
}

// etcTimezone is the valid zone name in root's etc/timezone, or "".
func etcTimezone(root string) string {
	b, err := rootfs.ReadFile(context.Background(), root, "etc/timezone", 256)
	if err != nil {
		return ""
	}
	name := strings.TrimSpace(string(b))
	if !validZoneName(name) {
		return ""
	}
	return name
}

// zoneinfoDir is the zone database to name zones from, as a jail and the
// folder inside it: root's own usr/share/zoneinfo (read inside root),
// else this host's.
func zoneinfoDir(root string) (jail, rel string) {
	const db = "usr/share/zoneinfo"
	if fi, err := rootfs.Stat(root, db); err == nil && fi.IsDir() {
		return root, db
	}
	return "/", db
}

// zoneFileLimit bounds one zone file: TZif files are a few KiB (the
// largest of Debian's tzdata under 4 KiB); 1 MiB bounds a hostile one.
const zoneFileLimit = 1 << 20

// maxZoneFiles bounds how many files matchZone compares: tzdata has
// about 1,200 outside posix/ and right/.
const maxZoneFiles = 10000

// loadRootZone loads the zone name from root's zone database, else this
// host's (time.LoadLocation).
func loadRootZone(root, name string) (*time.Location, error) {
	if b, err := rootfs.ReadFile(context.Background(), root, "usr/share/zoneinfo/"+name, zoneFileLimit); err == nil {
		if l, err := time.LoadLocationFromTZData(name, b); err == nil {
			return l, nil
		}
	}
	return time.LoadLocation(name)
}

// matchZone names the TZif data b: the name in etc/timezone when that
// zone's file has the same bytes, else the canonical name (one listed in
// zone1970.tab or zone.tab, else the first in sorted order) among the
// zone database's files with the same bytes; "" when none has them.
// posix/ and right/ (leap-second) copies are skipped. Every file and
// folder is read inside the database's root (package rootfs), files of
// another size are not read, and at most maxZoneFiles are looked at.
func matchZone(root string, b []byte) string {
	jail, db := zoneinfoDir(root)
	same := func(name string) bool {
		c, err := rootfs.ReadFile(context.Background(), jail, db+"/"+name, zoneFileLimit)
		return err == nil && bytes.Equal(c, b)
	}
	if name := etcTimezone(root); name != "" && same(name) {
		return name
	}
	var names []string
	seen := 0
	var walk func(sub string)
	walk = func(sub string) {
		des, err := rootfs.ReadDir(jail, path.Join(db, sub))
		if err != nil {
			return // an unreadable folder names no zone; look on
		}
		for _, d := range des {
			if seen++; seen > maxZoneFiles {
				return
			}
			rel := path.Join(sub, d.Name())
			switch {
			case d.IsDir():
				if rel != "posix" && rel != "right" {
					walk(rel)
				}
			case !validZoneName(rel):
			case d.Type().IsRegular():
				if fi, err := d.Info(); err == nil && fi.Size() == int64(len(b)) && same(rel) {
					names = append(names, rel)
				}
			case d.Type()&fs.ModeSymlink != 0:
				if same(rel) {
					names = append(names, rel)
				}
			}
		}
	}
	walk("")
	if len(names) == 0 {
		return ""
	}
	slices.Sort(names)
	listed := map[string]bool{}
	for _, tab := range []string{"zone1970.tab", "zone.tab"} {
		t, err := rootfs.ReadFile(context.Background(), jail, db+"/"+tab, zoneFileLimit)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(t), "\n") {
			if f := strings.Fields(line); len(f) >= 3 && !strings.HasPrefix(line, "#") {
				listed[f[2]] = true
			}
		}
	}
	for _, n := range names {
		if listed[n] {
			return n
		}
	}
	for _, n := range names {
		if strings.Contains(n, "/") {
			return n
		}
	}
	return names[0]
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
