package timers

// cron: /etc/crontab, /etc/cron.d/*, /var/spool/cron/crontabs/* as Debian's
// cron (Vixie cron 3.0pl1) reads them, crontab(5).
//
// Time specs are parsed by github.com/robfig/cron/v3's standard parser,
// wrapped where it differs from Vixie cron:
//   - Day of month and day of week: Vixie cron runs a job when either
//     matches if both fields are restricted, and when both match if either
//     field starts with '*'. robfig treats "*/2" as restricted (its star
//     flag is cleared by a step > 1); Vixie sets its DOM_STAR/DOW_STAR
//     flags on the first character alone (cron 3.0pl1 entry.c). We set
//     robfig's star bit by Vixie's rule.
//   - Day of week 7 is Sunday in Vixie cron; robfig accepts only 0–6. A 7
//     is rewritten to 0 before parsing.
//   - @reboot has no time; such a job has no projectable firing.
// Daylight-saving transitions follow robfig (a skipped local time is
// skipped), not Vixie cron's catch-up logic.

import (
	"errors"
	"fmt"
	"os"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/memdiag/memdiag/internal/rootfs"
)

// ErrCronParse is wrapped by errors about malformed crontab lines.
var ErrCronParse = errors.New("malformed crontab line")

// cronSchedule is a parsed cron time spec.
type cronSchedule struct {
	spec   *cron.SpecSchedule
	Reboot bool // @reboot: runs once when cron starts
}

// cronStarBit is robfig/cron's flag for a field written as '*'
// (robfig/cron/v3 spec.go starBit), which selects the AND rule for days.
const cronStarBit = 1 << 63

var cronShorthands = map[string]string{
	"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *",
	"@weekly": "0 0 * * 0", "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *",
}

// parseCron parses a five-field cron time spec ("*/10 * * * *",
// "30 7 1-7 * mon") or a shorthand ("@daily", "@reboot") with Vixie
// cron's semantics.
func parseCron(expr string) (*cronSchedule, error) {
	expr = strings.TrimSpace(expr)
	if expr == "@reboot" {
		return &cronSchedule{Reboot: true}, nil
	}
	if s, ok := cronShorthands[expr]; ok {
		expr = s
	}
	f := cronFields(expr)
	if len(f) != 5 {
		return nil, fmt.Errorf("%w: want 5 time fields, got %d: %q", ErrCronParse, len(f), expr)
	}
	for i := range f {
		// robfig accepts "?" and names everywhere; cron does not accept "?".
		if strings.Contains(f[i], "?") {
			return nil, fmt.Errorf("%w: '?' is not cron syntax: %q", ErrCronParse, f[i])
		}
	}
	dow, err := fixDow7(f[4])
	if err != nil {
		return nil, err
	}
	sched, err := cron.ParseStandard(strings.Join([]string{f[0], f[1], f[2], f[3], dow}, " "))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCronParse, err)
	}
	spec, ok := sched.(*cron.SpecSchedule)
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrCronParse, expr)
	}
	// Vixie's rule: the star flag depends on the first character only.
	spec.Dom &^= cronStarBit
	spec.Dow &^= cronStarBit
	if strings.HasPrefix(f[2], "*") {
		spec.Dom |= cronStarBit
	}
	if strings.HasPrefix(f[4], "*") {
		spec.Dow |= cronStarBit
	}
	return &cronSchedule{spec: spec}, nil
}

// fixDow7 rewrites day-of-week 7 (Sunday in Vixie cron) to 0, expanding
// ranges that end in 7 ("5-7" → "5,6,0", "1-7/2" → "1,3,5,0").
func fixDow7(field string) (string, error) {
	var out []string
	for _, el := range strings.Split(field, ",") {
		rng, step, hasStep := strings.Cut(el, "/")
		lo, hi, isRange := strings.Cut(rng, "-")
		if !isRange {
			if rng == "7" {
				if hasStep {
					return "", fmt.Errorf("%w: day of week %q", ErrCronParse, el)
				}
				out = append(out, "0")
				continue
			}
			out = append(out, el)
			continue
		}
		if hi != "7" {
			out = append(out, el)
			continue
		}
		a, err := strconv.Atoi(lo)
		if err != nil {
			a = dowNames[strings.ToLower(lo)]
			if _, ok := dowNames[strings.ToLower(lo)]; !ok {
				return "", fmt.Errorf("%w: day of week %q", ErrCronParse, el)
			}
		}
		s := 1
		if hasStep {
			if s, err = strconv.Atoi(step); err != nil || s < 1 {
				return "", fmt.Errorf("%w: step %q", ErrCronParse, el)
			}
		}
		for d := a; d <= 7; d += s {
			out = append(out, strconv.Itoa(d%7))
		}
	}
	return strings.Join(out, ","), nil
}

var dowNames = map[string]int{"sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6}

// Next returns the first time after after at which the schedule fires,
// computed in loc, or the zero time for @reboot or when none is found
// within five years.
func (c *cronSchedule) Next(after time.Time, loc *time.Location) time.Time {
	if c.Reboot || c.spec == nil {
		return time.Time{}
	}
	s := *c.spec
	s.Location = loc
	// robfig starts at the next whole second; cron fires on whole minutes,
	// so a time inside a firing minute is after that firing.
	return s.Next(after.In(loc))
}

// HeldMarker prefixes a crontab line that `memdiag confirm` holds off
// (commented out) for a B block; cron(8) skips it as a comment.
// `memdiag confirm --restore` puts the line back.
const HeldMarker = "#memdiag-confirm-hold: "

// heldReason is a held line's Job.Reason.
const heldReason = "held off by memdiag confirm (the line is commented out with \"" + HeldMarker + "\"): memdiag confirm --restore puts it back if no experiment is running"

// cronLine is one job line of a crontab.
type cronLine struct {
	File    string
	Line    int
	Held    bool   // commented out by memdiag confirm (HeldMarker)
	Spec    string // the time spec as written ("5-55/10 * * * *", "@daily")
	User    string
	Command string
	Path    string // the PATH= in force for the line (crontab(5))
	Err     string // "file:line: reason" when the line is malformed
}

var envLine = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*\s*=`)

// parseCrontab parses the lines of a crontab. system says whether lines
// carry a user field (/etc/crontab, /etc/cron.d/*); otherwise user is the
// owner (the file name under /var/spool/cron/crontabs).
func parseCrontab(file string, lines []string, system bool, user string) []cronLine {
	var out []cronLine
	pathEnv := "/usr/bin:/bin" // cron's default PATH (crontab(5))
	for i, raw := range lines {
		l := strings.TrimSpace(raw)
		if envLine.MatchString(l) {
			if k, v, _ := strings.Cut(l, "="); strings.TrimSpace(k) == "PATH" {
				pathEnv = strings.Trim(strings.TrimSpace(v), `"'`)
			}
			continue
		}
		held := strings.HasPrefix(l, HeldMarker)
		if held {
			l = strings.TrimSpace(strings.TrimPrefix(l, HeldMarker))
		}
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		cl := cronLine{File: file, Line: i + 1, User: user, Path: pathEnv, Held: held}
		f := cronFields(l)
		nTime := 5
		if strings.HasPrefix(f[0], "@") {
			nTime = 1
		}
		need := nTime + 1
		if system {
			need++
		}
		if len(f) < need {
			cl.Spec = strings.Join(f[:min(nTime, len(f))], " ")
			cl.Err = fmt.Sprintf("%s:%d: %v: too few fields (want time, %scommand): %q", file, i+1, ErrCronParse, map[bool]string{true: "user, "}[system], l)
			out = append(out, cl)
			continue
		}
		cl.Spec = strings.Join(f[:nTime], " ")
		rest := strings.Trim(cutFields(l, nTime), " \t")
		if system {
			cl.User = cronFields(rest)[0]
			rest = strings.Trim(cutFields(rest, 1), " \t")
		}
		cl.Command = rest
		if _, err := parseCron(cl.Spec); err != nil {
			cl.Err = fmt.Sprintf("%s:%d: %v", file, i+1, err)
		}
		out = append(out, cl)
	}
	return out
}

// cronFields splits a crontab line at runs of spaces and tabs, the only
// field separators of cron (Vixie cron 3.0pl1 misc.c get_string with
// " \t"): a no-break space, \v, \f, \r or U+0085 is part of a field, as it
// is for cron, so the field count and [cutFields] always agree.
func cronFields(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\t' })
}

// cutFields drops the first n fields of s, separated as [cronFields] does.
func cutFields(s string, n int) string {
	s = strings.TrimLeft(s, " \t")
	for ; n > 0; n-- {
		i := strings.IndexAny(s, " \t")
		if i < 0 {
			return ""
		}
		s = strings.TrimLeft(s[i:], " \t")
	}
	return s
}

// runPartsName is the file-name rule of Debian's run-parts (without
// --lsbsysinit) and of cron's /etc/cron.d: names made only of letters,
// digits, '_' and '-'; others (foo.dpkg-old, README.txt) are ignored.
var runPartsName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// runPartsDir returns the folder a command runs with run-parts
// ("/etc/cron.daily"), or "".
var runPartsRe = regexp.MustCompile(`run-parts\s+(?:--?[A-Za-z-]+(?:=\S+)?\s+)*(/\S+?)/?(?:\s|;|\}|$)`)

func runPartsDir(cmd string) string {
	m := runPartsRe.FindStringSubmatch(cmd)
	if m == nil {
		return ""
	}
	return m[1]
}

// runPartsScripts lists the scripts run-parts would run in dir: regular
// executable files with valid names, sorted.
func runPartsScripts(root, dir string) []string {
	des, err := rootfs.ReadDir(root, dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, de := range des {
		if !runPartsName.MatchString(de.Name()) {
			continue
		}
		fi, err := rootfs.Stat(root, path.Join(dir, de.Name()))
		if err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
			continue
		}
		out = append(out, "/"+path.Join(dir, de.Name()))
	}
	sort.Strings(out)
	return out
}

// Guards that make a cron line a no-op on some hosts: Debian's
// /etc/crontab skips cron.daily when anacron is installed, and several
// packages' cron.d lines do nothing when systemd is PID 1 (their timer
// does the work).
var (
	anacronGuard = regexp.MustCompile(`test\s+-x\s+(/usr/sbin/anacron)\s*\|\|`)
	systemdGuard = regexp.MustCompile(`(?:test\s+-[de]\s+/run/systemd/system\s*\|\||\[\s+-[de]\s+/run/systemd/system\s+\]\s*\|\||\[\s+!\s+-[de]\s+/run/systemd/system\s+\])`)
)

// scriptSkipsOnSystemd matches the idiom of Debian's cron scripts that
// step aside for their systemd timer: "if [ -d /run/systemd/system ]; then
// exit 0" (logrotate, man-db, apt-compat, dpkg, plocate) or
// "[ ! -d /run/systemd/system ] || exit 0" (sysstat, debian-sa1).
var scriptSkipsOnSystemd = regexp.MustCompile(`\[\s+-d\s+/run/systemd/system\s+\][^\n]*;?\s*then\s*\n(?:\s*#[^\n]*\n)*\s*exit\b|\[\s+!\s+-d\s+/run/systemd/system\s+\]\s*\|\|\s*exit\b`)

// skipsOnSystemd reports whether the script at rel (relative to root)
// exits at once when systemd is the init system. Only the first 4 KiB are
// read.
func skipsOnSystemd(root, rel string) bool {
	f, err := rootfs.Open(root, rel) // a FIFO or device is refused, never read
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, 4096)
	n, _ := f.Read(b)
	return scriptSkipsOnSystemd.Match(b[:n])
}

// idleScripts returns the scripts that exit at once because systemd is
// the init system.
func idleScripts(root string, scripts []string, systemdInit bool) []string {
	if !systemdInit {
		return nil
	}
	var out []string
	for _, sc := range scripts {
		if skipsOnSystemd(root, strings.TrimPrefix(sc, "/")) {
			out = append(out, sc)
		}
	}
	return out
}

// commandScripts returns the scripts (relative to root) that a cron
// command runs by name: absolute paths and names found on the crontab's
// PATH.
func commandScripts(root, cmd, pathEnv string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(cmd, func(r rune) bool { return strings.ContainsRune(" \t;&|(){}", r) }) {
		if strings.ContainsAny(w, "=$'\"<>") || w == "" {
			continue
		}
		if strings.HasPrefix(w, "/") {
			if isExecutable(root, strings.TrimPrefix(w, "/")) {
				out = append(out, strings.TrimPrefix(w, "/"))
			}
			continue
		}
		if strings.Contains(w, "/") {
			continue
		}
		for _, d := range strings.Split(pathEnv, ":") {
			p := strings.TrimPrefix(path.Join(d, w), "/")
			if strings.HasPrefix(d, "/") && isExecutable(root, p) {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// cronJobs reads /etc/crontab, /etc/cron.d/* and /var/spool/cron/crontabs/*.
func cronJobs(root string, d daemons) []Job {
	var jobs []Job
	// listed: the file was seen in its folder, so not finding it means a
	// link that leads nowhere inside the root, which is said.
	add := func(rel string, system bool, user, prefix string, listed bool) {
		lines, err := readLines(root, rel)
		if err != nil {
			if listed || !errors.Is(err, os.ErrNotExist) {
				jobs = append(jobs, Job{Name: prefix, Source: Cron, File: rel, Errors: []string{err.Error()}})
			}
			return
		}
		for _, cl := range parseCrontab(rel, lines, system, user) {
			jobs = append(jobs, cronJob(root, d, cl, prefix))
		}
	}
	add("etc/crontab", true, "", "crontab", false)
	if des, err := rootfs.ReadDir(root, "etc/cron.d"); err == nil {
		for _, de := range des {
			if de.IsDir() || !runPartsName.MatchString(de.Name()) {
				continue
			}
			add(path.Join("etc/cron.d", de.Name()), true, "", "cron.d/"+de.Name(), true)
		}
	}
	if des, err := rootfs.ReadDir(root, "var/spool/cron/crontabs"); err == nil {
		for _, de := range des {
			if de.IsDir() || strings.HasPrefix(de.Name(), ".") {
				continue
			}
			add(path.Join("var/spool/cron/crontabs", de.Name()), false, de.Name(), "crontabs/"+de.Name(), true)
		}
	}
	return jobs
}

// cronJob turns one crontab line into a Job.
func cronJob(root string, d daemons, cl cronLine, prefix string) Job {
	j := Job{
		Name: fmt.Sprintf("%s:%d", prefix, cl.Line), Source: Cron, File: cl.File, Line: cl.Line,
		Schedule: []string{cl.Spec}, Command: cl.Command, User: cl.User,
	}
	if cl.Err != "" {
		j.Errors = []string{cl.Err}
		j.Reason = "malformed line"
		return j
	}
	cs, _ := parseCron(cl.Spec)
	if !cs.Reboot {
		if p, ok := regularPeriod(func(t time.Time) time.Time { return cs.Next(t, time.UTC) }); ok {
			j.PeriodSeconds = seconds(p)
		}
	}
	if dir := runPartsDir(cl.Command); dir != "" {
		j.Scripts = runPartsScripts(root, strings.TrimPrefix(dir, "/"))
		j.IdleScripts = idleScripts(root, j.Scripts, d.systemdInit)
		j.IdleIOScripts = idleIOScripts(root, j.Scripts, j.IdleScripts)
	}
	j.Note = noteFor(j)
	selfSkip := ""
	if d.systemdInit && len(j.Scripts) == 0 {
		for _, sc := range commandScripts(root, cl.Command, cl.Path) {
			if skipsOnSystemd(root, sc) {
				selfSkip = "/" + sc
				break
			}
		}
	}
	switch {
	case !d.cronActive:
		j.Reason = d.cronWhy
	case anacronGuard.MatchString(cl.Command) && d.anacronInstalled:
		j.Reason = "does nothing: anacron is installed (usr/sbin/anacron), and /etc/anacrontab runs these scripts"
	case systemdGuard.MatchString(cl.Command) && d.systemdInit:
		j.StepsAside = true
		j.Reason = "does nothing when booted with systemd (sbin/init is systemd): the command checks /run/systemd/system and its systemd unit does the work"
	case selfSkip != "":
		j.StepsAside = true
		j.Reason = fmt.Sprintf("does nothing when booted with systemd (sbin/init is systemd): %s exits when /run/systemd/system exists and its systemd timer does the work", selfSkip)
	default:
		j.Active = true
		j.ActiveVia = append([]string(nil), d.cronVia...)
	}
	if cs.Reboot && j.Active {
		j.Active = false
		j.Reason = "@reboot: runs once when cron starts, never periodically"
	}
	if cl.Held {
		j.Active, j.ActiveVia, j.Reason, j.StepsAside = false, nil, heldReason, false
	}
	return j
}

// CheckCronLine checks that text, line n of file, is a crontab job line
// as memdiag's inventory reads it (time spec, a user field when the
// crontab is a system one — /etc/crontab or /etc/cron.d/*, see
// SystemCrontab — and a command). It returns "file:n: reason" for a
// comment, a blank or environment line, too few fields or a bad time spec.
func CheckCronLine(file string, n int, text string, system bool) error {
	cls := parseCrontab("", []string{text}, system, "")
	if len(cls) != 1 {
		return fmt.Errorf("%s:%d: %w: not a job line (a comment, a blank or an environment setting): %q", file, n, ErrCronParse, text)
	}
	if e := cls[0].Err; e != "" {
		// parseCrontab says ":1: reason" for its one line of no file.
		return fmt.Errorf("%s:%d: %s", file, n, strings.TrimPrefix(e, ":1: "))
	}
	return nil
}

// SystemCrontab says whether the crontab at rel (relative to the root,
// as Job.File) has a user field on each line: /etc/crontab and
// /etc/cron.d/* do, a user's crontab under /var/spool/cron/crontabs does
// not (crontab(5)).
func SystemCrontab(rel string) bool {
	return !strings.HasPrefix(strings.TrimPrefix(rel, "/"), "var/spool/cron/")
}
