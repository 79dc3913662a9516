package timers

// Unit files: search paths, precedence, masking, aliases, templates and
// drop-ins, as systemd.unit(5) describes them. The syntax of one file is
// parsed by github.com/coreos/go-systemd/v22/unit; this file adds what that
// parser leaves out (where a unit comes from, drop-ins, line numbers, the
// empty-assignment reset, specifiers).

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"

	"github.com/coreos/go-systemd/v22/unit"

	"github.com/memdiag/memdiag/internal/rootfs"
)

// ErrUnitParse is wrapped by errors about malformed unit files.
var ErrUnitParse = errors.New("malformed unit file")

// systemUnitDirs are the system manager's unit search paths, highest
// priority first, relative to the root (systemd.unit(5), "System Unit
// Search Path"). /lib/systemd/system is Debian's pre-usrmerge location; on
// merged-/usr hosts it is the same directory as /usr/lib/systemd/system and
// is read once.
var systemUnitDirs = []string{
	"etc/systemd/system.control",
	"run/systemd/system.control",
	"run/systemd/transient",
	"run/systemd/generator.early",
	"etc/systemd/system",
	"etc/systemd/system.attached",
	"run/systemd/system",
	"run/systemd/system.attached",
	"run/systemd/generator",
	"usr/local/lib/systemd/system",
	"usr/lib/systemd/system",
	"lib/systemd/system",
	"run/systemd/generator.late",
}

// globalUserUnitDirs are the user manager's global unit search paths, highest
// priority first (systemd.unit(5), "User Unit Search Path"). Per-user
// ~/.config/systemd/user comes before them and is added per home directory.
var globalUserUnitDirs = []string{
	"etc/systemd/user",
	"run/systemd/user",
	"usr/local/lib/systemd/user",
	"usr/lib/systemd/user",
	"lib/systemd/user",
}

// entry is one assignment of a unit file or drop-in, with where it was
// written.
type entry struct {
	Section string
	Key     string
	Value   string
	File    string // relative to the root
	Line    int
}

// unitFile is a unit as the manager would load it: the fragment found
// first on the search path plus its drop-ins, in order.
type unitFile struct {
	Name     string // the name asked for ("pmlogger_check.timer", "getty@tty1.service")
	Canon    string // the name after following an alias link
	Fragment string // the unit file, relative to the root; "" when not found
	Masked   bool   // the fragment is a link to /dev/null (or an empty file)
	Link     string // for an alias: the link that names it, relative to the root
	DropIns  []string
	Entries  []entry
	Errors   []string // "file:line: reason"
}

// values returns every value of key in section, applying systemd's rule
// that an empty assignment resets the list.
func (u *unitFile) values(section, key string) []entry {
	var out []entry
	for _, e := range u.Entries {
		if e.Section != section || e.Key != key {
			continue
		}
		if e.Value == "" {
			out = nil
			continue
		}
		out = append(out, e)
	}
	return out
}

// last returns the last value of key in section, or "".
func (u *unitFile) last(section, key string) (entry, bool) {
	for i := len(u.Entries) - 1; i >= 0; i-- {
		e := u.Entries[i]
		if e.Section == section && e.Key == key {
			return e, true
		}
	}
	return entry{}, false
}

// unitSet finds unit files of one manager (system or a user) under a root.
type unitSet struct {
	root  string
	dirs  []string // relative to root, highest priority first, deduplicated
	cache map[string]*unitFile
	// listed holds each search-path folder's entry names, read once
	// (listing): a unit's file, drop-in and .wants/ lookups probe a
	// dozen folders each, and thousands of probes of names that are not
	// there were most of an inventory's time (issue #32: 70 ms of a
	// watch's start on Debian). nil for a folder that could not be
	// listed for a reason other than its absence: probed as before.
	listed map[string]map[string]bool
}

// mayExist reports whether name may exist in the search-path folder
// dir: false only when dir's listing (read once) lacks it.
func (s *unitSet) mayExist(dir, name string) bool {
	if s.listed == nil {
		s.listed = map[string]map[string]bool{}
	}
	names, ok := s.listed[dir]
	if !ok {
		des, err := rootfs.ReadDir(s.root, dir)
		switch {
		case err == nil:
			names = make(map[string]bool, len(des))
			for _, de := range des {
				names[de.Name()] = true
			}
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
			names = map[string]bool{} // nothing under a folder that is not there
		}
		s.listed[dir] = names
	}
	return names == nil || names[name]
}

// newUnitSet builds the search path for dirs (relative to root), dropping
// directories that resolve to one already listed (merged /usr).
func newUnitSet(root string, dirs []string) *unitSet {
	s := &unitSet{root: root, cache: map[string]*unitFile{}}
	seen := map[string]bool{}
	for _, d := range dirs {
		real := d
		if r, err := resolveIn(root, d); err == nil {
			real = r
		}
		if seen[real] {
			continue
		}
		seen[real] = true
		s.dirs = append(s.dirs, d)
	}
	return s
}

// resolveIn resolves symlinks of rel inside root, treating absolute link
// targets as relative to root, and returns the resolved path relative to
// root ([rootfs.Resolve]).
func resolveIn(root, rel string) (string, error) { return rootfs.Resolve(root, rel) }

// splitName splits "getty@tty1.service" into prefix "getty", instance
// "tty1" and suffix ".service"; instance is "" for non-template names.
func splitName(name string) (prefix, instance, suffix string, template bool) {
	dot := strings.LastIndex(name, ".")
	if dot < 0 {
		return name, "", "", false
	}
	base, suffix := name[:dot], name[dot:]
	at := strings.Index(base, "@")
	if at < 0 {
		return base, "", suffix, false
	}
	return base[:at], base[at+1:], suffix, true
}

// find returns the path (relative to root) of the first file named name
// on the search path, with its directory's index.
func (s *unitSet) find(name string) (string, int) {
	for i, d := range s.dirs {
		p := path.Join(d, name)
		if !s.mayExist(d, name) {
			continue
		}
		if _, err := rootfs.Lstat(s.root, p); err == nil {
			return p, i
		}
	}
	return "", -1
}

// load returns the unit called name with its drop-ins merged, following
// alias links and falling back to the template for instances. It never
// fails: problems are recorded in the unit's Errors.
func (s *unitSet) load(name string) *unitFile {
	if u, ok := s.cache[name]; ok {
		return u
	}
	u := &unitFile{Name: name, Canon: name}
	s.cache[name] = u

	frag, _ := s.find(name)
	prefix, instance, suffix, tmpl := splitName(name)
	if frag == "" && tmpl && instance != "" {
		frag, _ = s.find(prefix + "@" + suffix)
	}
	if frag != "" {
		s.readFragment(u, frag)
	}
	s.readDropIns(u)
	return u
}

// readFragment reads the main unit file, following an alias link.
func (s *unitSet) readFragment(u *unitFile, frag string) {
	full := filepath.Join(s.root, frag)
	if fi, err := os.Lstat(full); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		target, _ := os.Readlink(full)
		if target == "/dev/null" {
			u.Fragment, u.Masked = frag, true
			return
		}
		if canon := path.Base(target); canon != path.Base(frag) && strings.HasSuffix(canon, path.Ext(frag)) {
			// An alias: the unit's real name is the target's.
			u.Canon, u.Link = canon, frag
		}
		if r, err := resolveIn(s.root, frag); err == nil {
			frag = r
		}
	}
	u.Fragment = frag
	b, err := rootfs.ReadFile(context.Background(), s.root, frag, 0)
	if err != nil {
		u.Errors = append(u.Errors, fmt.Sprintf("%s: %v", frag, err))
		return
	}
	if len(bytes.TrimSpace(b)) == 0 {
		u.Masked = true // systemd treats an empty unit file as masked
		return
	}
	ents, errs := parseUnit(frag, b)
	u.Entries = append(u.Entries, ents...)
	u.Errors = append(u.Errors, errs...)
}

// readDropIns merges NAME.d/*.conf, the template's and the unit type's
// drop-in folders: files sorted by name over all folders, a file in a
// higher-priority folder hiding one of the same name, /dev/null links
// disabling one (systemd.unit(5), "drop-in").
func (s *unitSet) readDropIns(u *unitFile) {
	names := []string{}
	prefix, instance, suffix, tmpl := splitName(u.Name)
	// Type-wide ("timer.d"), then prefix ones ("foo-.timer.d" for
	// "foo-bar.timer"), template, then the unit's own folder.
	names = append(names, strings.TrimPrefix(suffix, ".")+".d")
	parts := strings.Split(prefix, "-")
	for i := 1; i < len(parts); i++ {
		names = append(names, strings.Join(parts[:i], "-")+"-"+suffix+".d")
	}
	if tmpl && instance != "" {
		names = append(names, prefix+"@"+suffix+".d")
	}
	names = append(names, u.Name+".d")
	if u.Canon != u.Name {
		names = append(names, u.Canon+".d")
	}
	chosen := map[string]string{} // conf file name -> path relative to root
	for i := len(s.dirs) - 1; i >= 0; i-- {
		for _, n := range names {
			if !s.mayExist(s.dirs[i], n) {
				continue
			}
			dir := path.Join(s.dirs[i], n)
			des, err := rootfs.ReadDir(s.root, dir)
			if err != nil {
				continue
			}
			for _, de := range des {
				if strings.HasSuffix(de.Name(), ".conf") {
					chosen[de.Name()] = path.Join(dir, de.Name())
				}
			}
		}
	}
	keys := make([]string, 0, len(chosen))
	for k := range chosen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := chosen[k]
		full := filepath.Join(s.root, p)
		if t, err := os.Readlink(full); err == nil && t == "/dev/null" {
			continue
		}
		b, err := rootfs.ReadFile(context.Background(), s.root, p, 0)
		if err != nil {
			u.Errors = append(u.Errors, fmt.Sprintf("%s: %v", p, err))
			continue
		}
		u.DropIns = append(u.DropIns, p)
		ents, errs := parseUnit(p, b)
		u.Entries = append(u.Entries, ents...)
		u.Errors = append(u.Errors, errs...)
	}
}

// parseUnit parses one unit file or drop-in with go-systemd's
// deserializer and gives each entry its line number. go-systemd reports no
// line numbers, so lines are matched by a scan of the same text; a file
// go-systemd rejects is scanned for the offending line, which is reported
// and left out, and the rest is parsed (systemd also skips such lines
// with a warning).
func parseUnit(file string, b []byte) ([]entry, []string) {
	var errs []string
	lines := strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n")
	bad := map[int]bool{}
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || t[0] == '#' || t[0] == ';' || (i > 0 && strings.HasSuffix(strings.TrimRight(lines[i-1], " "), "\\")) {
			continue
		}
		if t[0] == '[' {
			if !strings.HasSuffix(t, "]") {
				errs = append(errs, fmt.Sprintf("%s:%d: %v: section header without ']': %q", file, i+1, ErrUnitParse, t))
				bad[i] = true
			}
			continue
		}
		if !strings.Contains(t, "=") {
			errs = append(errs, fmt.Sprintf("%s:%d: %v: assignment without '=': %q", file, i+1, ErrUnitParse, t))
			bad[i] = true
		}
	}
	if len(bad) > 0 {
		var keep []string
		for i, l := range lines {
			if bad[i] {
				keep = append(keep, "# (skipped)")
				continue
			}
			keep = append(keep, l)
		}
		lines = keep
	}
	text := strings.Join(lines, "\n")
	sections, err := unit.DeserializeSections(strings.NewReader(text))
	if err != nil {
		errs = append(errs, fmt.Sprintf("%s: %v: %v", file, ErrUnitParse, err))
		return nil, errs
	}
	// Line numbers: the n-th assignment of key k in section s.
	type sk struct{ s, k string }
	where := map[sk][]int{}
	sec := ""
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || t[0] == '#' || t[0] == ';' || (i > 0 && strings.HasSuffix(strings.TrimRight(lines[i-1], " "), "\\")) {
			continue
		}
		if t[0] == '[' {
			sec = strings.TrimSuffix(strings.TrimPrefix(t, "["), "]")
			continue
		}
		k, _, _ := strings.Cut(t, "=")
		key := sk{sec, strings.TrimSpace(k)}
		where[key] = append(where[key], i+1)
	}
	seen := map[sk]int{}
	var out []entry
	for _, s := range sections {
		for _, e := range s.Entries {
			key := sk{s.Section, e.Name}
			n := seen[key]
			seen[key]++
			line := 0
			if n < len(where[key]) {
				line = where[key][n]
			}
			// A backslash at the end of a line continues the value; systemd
			// joins the lines with a space.
			v := strings.TrimSpace(continuation.ReplaceAllString(e.Value, " "))
			out = append(out, entry{Section: s.Section, Key: e.Name, Value: v, File: file, Line: line})
		}
	}
	return out, errs
}

// continuation is a backslash-newline and the next line's indentation.
var continuation = regexp.MustCompile(`\\\n[ \t]*`)

// depDirs lists the names of units linked from NAME.wants/, NAME.requires/
// and NAME.upholds/ folders on the search path (systemd.unit(5)), with the
// folder each link was found in.
func (s *unitSet) depDirs(name string) []dep {
	var out []dep
	seen := map[string]bool{}
	names := []string{name}
	if prefix, instance, suffix, tmpl := splitName(name); tmpl && instance != "" {
		names = append(names, prefix+"@"+suffix)
	}
	for _, n := range names {
		for _, d := range s.dirs {
			for _, kind := range []string{"wants", "requires", "upholds"} {
				if !s.mayExist(d, n+"."+kind) {
					continue
				}
				dir := path.Join(d, n+"."+kind)
				des, err := rootfs.ReadDir(s.root, dir)
				if err != nil {
					continue
				}
				for _, de := range des {
					if seen[de.Name()] {
						continue
					}
					seen[de.Name()] = true
					out = append(out, dep{Name: de.Name(), How: "link /" + path.Join(dir, de.Name())})
				}
			}
		}
	}
	return out
}

// dep is one "pulls in" edge: the unit pulled in, and how ("Wants=" in
// file:line, or a link path).
type dep struct {
	Name string
	How  string
}

// unitDeps returns the units u pulls in through Wants=, Requires=,
// BindsTo= and Upholds= (Requisite= does not start anything) and through
// its .wants/.requires/.upholds folders.
func (s *unitSet) unitDeps(u *unitFile) []dep {
	var out []dep
	if u.Masked {
		return nil
	}
	for _, key := range []string{"Wants", "Requires", "BindsTo", "Upholds"} {
		for _, e := range u.values("Unit", key) {
			for _, n := range strings.Fields(e.Value) {
				out = append(out, dep{Name: expandSpecifiers(n, u.Name), How: fmt.Sprintf("%s= in /%s:%d", key, e.File, e.Line)})
			}
		}
	}
	out = append(out, s.depDirs(u.Name)...)
	if u.Canon != u.Name {
		out = append(out, s.depDirs(u.Canon)...)
	}
	return out
}

// expandSpecifiers expands the unit-name specifiers of systemd.unit(5)
// that depend only on the unit's name: %n %N %p %i %I %j %%.
func expandSpecifiers(v, name string) string {
	if !strings.Contains(v, "%") {
		return v
	}
	prefix, instance, suffix, _ := splitName(name)
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] != '%' || i+1 == len(v) {
			b.WriteByte(v[i])
			continue
		}
		i++
		switch v[i] {
		case 'n':
			b.WriteString(name)
		case 'N':
			b.WriteString(strings.TrimSuffix(name, suffix))
		case 'p':
			b.WriteString(prefix)
		case 'i':
			b.WriteString(instance)
		case 'I':
			b.WriteString(unit.UnitNameUnescape(instance))
		case 'j':
			p := prefix
			if k := strings.LastIndex(p, "-"); k >= 0 {
				p = p[k+1:]
			}
			b.WriteString(p)
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			b.WriteByte(v[i])
		}
	}
	return b.String()
}

// listTimers returns the names of every *.timer file on the search path
// (not templates without an instance), sorted.
func (s *unitSet) listTimers() []string {
	seen := map[string]bool{}
	for _, d := range s.dirs {
		des, err := rootfs.ReadDir(s.root, d)
		if err != nil {
			continue
		}
		for _, de := range des {
			n := de.Name()
			if !strings.HasSuffix(n, ".timer") || strings.HasSuffix(n, "@.timer") {
				continue
			}
			if de.IsDir() {
				continue
			}
			seen[n] = true
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// readLines returns the lines of a file under root, for the cron parsers.
func readLines(root, rel string) ([]string, error) {
	f, err := rootfs.Open(root, rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	return out, nil
}
