package timers

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memdiag/memdiag/internal/testenv"
)

// localtimeRoot is a root whose etc/localtime is this host's TZif file of
// zone, linked or copied; with ownDB, the root has its own zone database
// holding only UTC, so a copy matches no named zone.
func localtimeRoot(t *testing.T, zone string, copied, ownDB bool) string {
	t.Helper()
	src := "/usr/share/zoneinfo/" + zone
	b, err := os.ReadFile(src)
	if err != nil {
		t.Skip("no tzdata:", err)
	}
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if copied {
		err = os.WriteFile(filepath.Join(root, "etc/localtime"), b, 0o644)
	} else {
		err = os.Symlink(src, filepath.Join(root, "etc/localtime"))
	}
	if err != nil {
		t.Fatal(err)
	}
	if ownDB {
		utc, err := os.ReadFile("/usr/share/zoneinfo/UTC")
		if err != nil {
			t.Skip("no tzdata:", err)
		}
		if err := os.MkdirAll(filepath.Join(root, "usr/share/zoneinfo"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "usr/share/zoneinfo/UTC"), utc, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestRootZone: a linked etc/localtime is named by its target, a copied
// one by the zone database file with the same bytes (Asia/Shanghai, not
// its aliases PRC or Asia/Chongqing), and a copy that matches nothing is
// still the zone's rules. An unreadable one is an error, never UTC.
func TestRootZone(t *testing.T) {
	monday := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC) // 00:00 UTC = 08:00 CST
	for _, tc := range []struct {
		name          string
		copied, ownDB bool
		wantName      string
		wantHow       string
	}{
		{"linked", false, false, "Asia/Shanghai", "link"},
		{"copied", true, false, "Asia/Shanghai", "copy"},
		{"copied, unnamed", true, true, "", "unnamed copy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			z, err := RootZone(localtimeRoot(t, "Asia/Shanghai", tc.copied, tc.ownDB))
			if err != nil {
				t.Fatal(err)
			}
			if z.Name != tc.wantName || z.How != tc.wantHow {
				t.Errorf("RootZone = %q (%s), want %q (%s)", z.Name, z.How, tc.wantName, tc.wantHow)
			}
			if got := monday.In(z.Loc).Format("15:04 MST"); got != "08:00 CST" {
				t.Errorf("00:00 UTC in the root's zone = %s, want 08:00 CST", got)
			}
			if tc.wantName == "" && z.Loc.String() != UnnamedZone {
				t.Errorf("unnamed zone called %q, want %q", z.Loc, UnnamedZone)
			}
		})
	}
	t.Run("missing", func(t *testing.T) {
		z, err := RootZone(t.TempDir())
		if err != nil || z.Loc != time.UTC || z.How != "none" {
			t.Errorf("RootZone of a root without etc/localtime = %+v, %v; want UTC as glibc assumes", z, err)
		}
	})
	for name, data := range map[string]string{"garbage": "not a zone\n", "empty": ""} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, "etc/localtime"), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
			if z, err := RootZone(root); !errors.Is(err, ErrZoneUnknown) {
				t.Errorf("RootZone = %+v, %v; want ErrZoneUnknown", z, err)
			}
		})
	}
}

// TestCalendarOracleCopiedZone compares projections in the zone of a
// copied etc/localtime with systemd-analyze given the same file (TZ=/path
// makes glibc read it, as it reads /etc/localtime): Asia/Shanghai, and
// Europe/Berlin across its daylight saving changes, both named from the
// zone database and unnamed (read from the TZif data alone), ten elapses
// each (--next 10), leap days included.
func TestCalendarOracleCopiedZone(t *testing.T) {
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		testenv.Unmet(t, "systemd-analyze not installed (Debian package systemd): "+err.Error())
	}
	exprs := []string{"weekly", "daily", "*-*-* 6,18:00", "Sun *-*-* 03:10:00", "02:30", "*-*-* *:58:00", "monthly", "*-02-29"}
	for _, zone := range []string{"Asia/Shanghai", "Europe/Berlin"} {
		for _, ownDB := range []bool{false, true} {
			root := localtimeRoot(t, zone, true, ownDB)
			z, err := RootZone(root)
			if err != nil {
				t.Fatal(err)
			}
			tzPath := filepath.Join(root, "etc/localtime")
			for _, e := range exprs {
				c, err := parseCalendar(e)
				if err != nil {
					t.Fatal(err)
				}
				for _, base := range oracleBases {
					// --next 10 (issue 30.1, 30.2): ten elapses, so *-02-29
					// spans 2028 to 2064 in the copied zone.
					want := oracleElapsesN(t, tzPath, base, e, 10)
					got := iterate(c, time.Unix(base, 0), z.Loc, 10)
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("%q in a copy of %s (named %q) from @%d: (-systemd +ours)\n%s", e, zone, z.Name, base, diff)
					}
				}
			}
		}
	}
}

// TestRootZoneStaysInRoot: a root whose etc is a link to a host folder
// holding a localtime link (Asia/Shanghai) is a root without
// etc/localtime (UTC, "none"), not the host folder's zone; and a root's
// own zone database holding a FIFO and a link to /dev/zero beside the
// copied zone's file names that file, without blocking or reading the
// device. Before, the linked etc gave the host folder's zone.
func TestRootZoneStaysInRoot(t *testing.T) {
	if _, err := os.Stat("/usr/share/zoneinfo/Asia/Shanghai"); err != nil {
		t.Skip("no tzdata:", err)
	}
	top := t.TempDir()
	host := filepath.Join(top, "host-etc")
	root := filepath.Join(top, "root")
	for _, d := range []string{host, root} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/usr/share/zoneinfo/Asia/Shanghai", filepath.Join(host, "localtime")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(host, filepath.Join(root, "etc")); err != nil {
		t.Fatal(err)
	}
	z, err := RootZone(root)
	if err != nil || z.How != "none" || z.Loc != time.UTC {
		t.Errorf("RootZone(etc linked out) = %+v, %v; want UTC (none): the link leads out of the root", z, err)
	}

	root = localtimeRoot(t, "Asia/Shanghai", true, true)
	db := filepath.Join(root, "usr/share/zoneinfo")
	b, err := os.ReadFile("/usr/share/zoneinfo/Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(db, "Asia"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(db, "Asia/Fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(db, "Asia/Zero")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(db, "Asia/Shanghai"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	z, err = RootZone(root)
	if err != nil || z.Name != "Asia/Shanghai" || z.How != "copy" {
		t.Errorf("RootZone(own database with a FIFO and /dev/zero) = %q (%s), %v; want Asia/Shanghai (copy)", z.Name, z.How, err)
	}
}
