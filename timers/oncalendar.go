package timers

// This file implements systemd's calendar events, the values of
// OnCalendar= in .timer units (systemd.time(7), "CALENDAR EVENTS").
//
// The grammar, the normalization, the printed form and the search for the
// next elapse follow systemd's src/shared/calendarspec.c (v252, the version
// in Debian bookworm) step by step, so that the results are those of
// `systemd-analyze calendar`, including its behaviour around daylight
// saving time changes, which comes from glibc's mktime(3) (emulated by
// [mktimeState.mktime]).

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ErrCalendar is wrapped by every error [parseCalendar] returns.
var ErrCalendar = errors.New("invalid calendar expression")

const (
	usecPerSec = 1_000_000
	// minYear and maxYear bound the year component (calendarspec.c
	// MIN_YEAR, MAX_YEAR).
	minYear = 1970
	maxYear = 2199
	// allWeekdays is the weekday mask with all seven days (BITS_WEEKDAYS).
	allWeekdays = 127
	// maxCalendarIterations is systemd's safety valve in find_next: after
	// that many steps the expression is taken to never elapse.
	maxCalendarIterations = 1000
	// maxComponents bounds the length of a comma list
	// (CALENDARSPEC_COMPONENTS_MAX).
	maxComponents = 240
)

// calendarSpec is a parsed calendar event, such as "Mon..Fri *-*-* 08:00:00"
// or "*-*-* *:00/20:00 Europe/Berlin".
//
// A nil component list means "*" (every value). Seconds are kept in
// microseconds, as systemd does, so fractional seconds are exact.
type calendarSpec struct {
	weekdays   int // bit 0 = Monday … bit 6 = Sunday; -1 = every day
	endOfMonth bool
	utc        bool
	zone       string         // IANA zone name from the expression, "" if none
	loc        *time.Location // loaded zone, nil if none

	year, month, day []component
	hour, minute     []component
	usec             []component // second of the minute, in µs
}

// component is one element of a comma list: a value (stop < 0, repeat 0),
// a range start..stop, or a repetition start[..stop]/repeat.
type component struct {
	start, stop, repeat int
}

// parseCalendar parses a calendar event expression as systemd.time(7)
// defines it: "[WEEKDAYS] [[YEAR-]MONTH-DAY] [HOUR:MINUTE[:SECOND]] [ZONE]",
// the shorthands (minutely, hourly, daily, weekly, monthly, yearly,
// annually, quarterly, semiannually, and their aliases) and "@UNIXSECONDS".
// ZONE is "UTC" or an IANA zone name such as "Europe/Berlin", loaded with
// [time.LoadLocation]. It accepts exactly what systemd v252 accepts, so
// pass the value as systemd's unit-file parser does, with surrounding
// blanks removed: like systemd-analyze, parseCalendar rejects "daily ".
//
// The error wraps [ErrCalendar] and names the expression and the problem.
// A Calendar is not changed after parsing and is safe for concurrent use.
func parseCalendar(expr string) (*calendarSpec, error) {
	p := &calParser{expr: expr}
	c, err := p.parse()
	if err != nil {
		// A last word that looks like a zone name but is none is the
		// likelier mistake ("12:00 Europe/Berlim").
		if i := strings.LastIndexByte(expr, ' '); i >= 0 && looksLikeZone(expr[i+1:]) {
			err = fmt.Errorf("unknown time zone %q", expr[i+1:])
		}
		return nil, fmt.Errorf("%w %q: %w", ErrCalendar, expr, err)
	}
	return c, nil
}

// looksLikeZone reports whether w starts like an IANA zone name and is
// none of the words of the grammar.
func looksLikeZone(w string) bool {
	if w == "" || !(w[0] >= 'A' && w[0] <= 'Z' || w[0] >= 'a' && w[0] <= 'z') || strings.ContainsAny(w, ":.,~*") {
		return false
	}
	switch strings.ToLower(w) {
	case "minutely", "hourly", "daily", "monthly", "weekly", "yearly", "annually", "anually",
		"quarterly", "semiannually", "semi-annually", "biannually", "bi-annually", "utc":
		return false
	}
	for _, d := range weekdayNames {
		if len(w) >= 3 && strings.EqualFold(w[:3], d.name[:3]) {
			return false
		}
	}
	return true
}

// Location returns the zone the expression names (time.UTC for "UTC"),
// or nil when it names none and is computed in the caller's zone.
func (c *calendarSpec) Location() *time.Location {
	if c.utc {
		return time.UTC
	}
	return c.loc
}

type calParser struct {
	expr string
	s    string // what is left to parse
}

func (p *calParser) parse() (*calendarSpec, error) {
	c := &calendarSpec{}
	s := p.expr

	// Time zone suffix: " UTC" (any case), else the last word when it names
	// a zone. Before that, systemd matches the abbreviations of the host's
	// own zone (tzname: "CET" and "CEST" when TZ is Europe/Berlin) and then
	// elapses only in standard or only in daylight time. A parser has no
	// host zone, so here such a word is a zone name if tzdata has one
	// ("CET", "EST") and an error otherwise ("CEST").
	if len(s) >= 4 && strings.EqualFold(s[len(s)-4:], " UTC") {
		c.utc = true
		s = s[:len(s)-4]
	} else if i := strings.LastIndexByte(s, ' '); i >= 0 {
		if loc, ok := loadZone(s[i+1:]); ok {
			c.zone, c.loc = s[i+1:], loc
			s = s[:i]
		}
	}
	if s == "" {
		return nil, errors.New("empty expression")
	}

	switch strings.ToLower(s) {
	case "minutely":
		c.usec = constChain(0)
	case "hourly":
		c.minute, c.usec = constChain(0), constChain(0)
	case "daily":
		c.hour, c.minute, c.usec = constChain(0), constChain(0), constChain(0)
	case "monthly":
		c.day = constChain(1)
		c.hour, c.minute, c.usec = constChain(0), constChain(0), constChain(0)
	case "annually", "yearly", "anually":
		c.month, c.day = constChain(1), constChain(1)
		c.hour, c.minute, c.usec = constChain(0), constChain(0), constChain(0)
	case "weekly":
		c.weekdays = 1
		c.hour, c.minute, c.usec = constChain(0), constChain(0), constChain(0)
	case "quarterly":
		c.month, c.day = constChain(1, 4, 7, 10), constChain(1)
		c.hour, c.minute, c.usec = constChain(0), constChain(0), constChain(0)
	case "biannually", "bi-annually", "semiannually", "semi-annually":
		c.month, c.day = constChain(1, 7), constChain(1)
		c.hour, c.minute, c.usec = constChain(0), constChain(0), constChain(0)
	default:
		p.s = s
		if err := p.weekdays(c); err != nil {
			return nil, err
		}
		timeDone, err := p.date(c)
		if err != nil {
			return nil, err
		}
		if !timeDone {
			if err := p.time(c); err != nil {
				return nil, err
			}
		}
		if p.s != "" {
			return nil, fmt.Errorf("unexpected %q at the end", p.s)
		}
	}
	c.normalize()
	if err := c.validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// loadZone reports whether name is a zone systemd accepts (verify_timezone
// in systemd's time-util.c: letters, digits, "-_+/", no leading, trailing
// or doubled "/", and a TZif file) and loads it.
func loadZone(name string) (*time.Location, bool) {
	if name == "UTC" {
		return time.UTC, true
	}
	if name == "" || name[0] == '/' || name[len(name)-1] == '/' || strings.Contains(name, "//") {
		return nil, false
	}
	for _, r := range name {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || strings.ContainsRune("-_+/", r)) {
			return nil, false
		}
	}
	if name == "Local" {
		return nil, false
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, false
	}
	return loc, true
}

func constChain(values ...int) []component {
	cs := make([]component, len(values))
	for i, v := range values {
		cs[i] = component{start: v, stop: -1}
	}
	return cs
}

var weekdayNames = []struct {
	name string
	nr   int
}{
	{"Monday", 0}, {"Mon", 0},
	{"Tuesday", 1}, {"Tue", 1},
	{"Wednesday", 2}, {"Wed", 2},
	{"Thursday", 3}, {"Thu", 3},
	{"Friday", 4}, {"Fri", 4},
	{"Saturday", 5}, {"Sat", 5},
	{"Sunday", 6}, {"Sun", 6},
}

// weekdays parses an optional weekday list ("Mon,Wed", "Mon..Fri",
// "Sat-Sun") and the blanks after it (parse_weekdays).
func (p *calParser) weekdays(c *calendarSpec) error {
	l := -1
	first := true
	for {
		found := -1
		for _, d := range weekdayNames {
			if len(p.s) < len(d.name) || !strings.EqualFold(p.s[:len(d.name)], d.name) {
				continue
			}
			rest := p.s[len(d.name):]
			if rest != "" && !strings.ContainsRune("-., ", rune(rest[0])) {
				return fmt.Errorf("unexpected %q after weekday %q", rest[:1], p.s[:len(d.name)])
			}
			c.weekdays |= 1 << d.nr
			if l >= 0 {
				if l > d.nr {
					return fmt.Errorf("weekday range %s..%s runs backwards", weekdayShort[l], weekdayShort[d.nr])
				}
				for j := l + 1; j < d.nr; j++ {
					c.weekdays |= 1 << j
				}
			}
			p.s = rest
			found = d.nr
			break
		}
		if found < 0 {
			if first {
				return nil
			}
			return fmt.Errorf("expected a weekday name at %q", p.s)
		}
		if p.s == "" {
			return nil
		}
		if p.s[0] == ' ' {
			p.s = strings.TrimLeft(p.s, " ")
			return nil
		}
		switch {
		case p.s[0] == '.':
			if l >= 0 {
				return errors.New("weekday range has more than two ends")
			}
			if len(p.s) < 2 || p.s[1] != '.' {
				return errors.New(`single "." after a weekday; a range is "Mon..Fri"`)
			}
			l = found
			p.s = p.s[2:]
		case p.s[0] == '-': // old range syntax "Mon-Fri"
			if l >= 0 {
				return errors.New("weekday range has more than two ends")
			}
			l = found
			p.s = p.s[1:]
		case p.s[0] == ',':
			l = -1
			p.s = p.s[1:]
		}
		// A trailing comma is allowed, an open range is not.
		if p.s == "" || p.s[0] == ' ' {
			p.s = strings.TrimLeft(p.s, " ")
			if l >= 0 {
				return fmt.Errorf("weekday range from %s has no end", weekdayShort[l])
			}
			return nil
		}
		first = false
	}
}

// date parses "[YEAR-]MONTH-DAY" (or "MONTH~DAY" for days counted from the
// end of the month) and the blanks after it, or "@UNIXSECONDS" (parse_date).
// It reports whether the expression also fixed the time, as "@" does. If
// the first component is followed by ":" the text is a time and is left
// for p.time.
func (p *calParser) date(c *calendarSpec) (timeDone bool, err error) {
	t := p.s
	if t == "" {
		return false, nil
	}
	if t[0] == '@' {
		return true, p.timestamp(c, t[1:])
	}
	first, t, err := parseChain(t, false, "year or month")
	if err != nil {
		return false, err
	}
	if t == "" || t[0] == ':' {
		return false, nil // a time, not a date
	}
	if err := c.dateSeparator(t); err != nil {
		return false, err
	}
	second, t, err := parseChain(t[1:], false, "month or day")
	if err != nil {
		return false, err
	}
	if t == "" || t[0] == ' ' {
		p.s = strings.TrimLeft(t, " ")
		c.month, c.day = first, second
		return false, nil
	}
	if c.endOfMonth {
		return false, errors.New(`"~" must separate month and day`)
	}
	if err := c.dateSeparator(t); err != nil {
		return false, err
	}
	third, t, err := parseChain(t[1:], false, "day")
	if err != nil {
		return false, err
	}
	if t != "" && t[0] != ' ' {
		return false, fmt.Errorf("unexpected %q after the date", t)
	}
	p.s = strings.TrimLeft(t, " ")
	c.year, c.month, c.day = first, second, third
	return false, nil
}

// timestamp handles "@SECONDS": one point in time, kept in UTC
// (calendarspec_from_time_t). The number is read as strtoul(3) reads it
// (leading blanks and a sign are allowed); nothing may follow it.
func (p *calParser) timestamp(c *calendarSpec, s string) error {
	i := 0
	for i < len(s) && strings.ContainsRune(" \t\n\v\f\r", rune(s[i])) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	j := i
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	if j == i {
		return fmt.Errorf("expected seconds since the epoch after \"@\" at %q", s)
	}
	if j < len(s) {
		return fmt.Errorf("unexpected %q after the timestamp", s[j:])
	}
	v, err := strconv.ParseInt(s[i:j], 10, 64)
	// Anything before 1970 or after 2199 fails validation in systemd.
	if err != nil || neg && v != 0 || v > 1<<40 {
		return fmt.Errorf("timestamp @%s out of range %d..%d", s, minYear, maxYear)
	}
	t := time.Unix(v, 0).UTC()
	c.year = constChain(t.Year())
	c.month = constChain(int(t.Month()))
	c.day = constChain(t.Day())
	c.hour = constChain(t.Hour())
	c.minute = constChain(t.Minute())
	c.usec = constChain(t.Second() * usecPerSec)
	c.utc = true
	p.s = ""
	return nil
}

// time parses "HOUR:MINUTE[:SECOND]"; an empty time is 00:00:00
// (parse_calendar_time).
func (p *calParser) time(c *calendarSpec) error {
	t := p.s
	if t == "" {
		c.hour, c.minute, c.usec = constChain(0), constChain(0), constChain(0)
		return nil
	}
	h, t, err := parseChain(t, false, "hour")
	if err != nil {
		return err
	}
	if t == "" || t[0] != ':' {
		return fmt.Errorf("expected \":\" after the hour at %q", p.s)
	}
	m, t, err := parseChain(t[1:], false, "minute")
	if err != nil {
		return err
	}
	var s []component
	switch {
	case t == "":
		s = constChain(0)
	case t[0] != ':':
		return fmt.Errorf("unexpected %q after the minute", t)
	default:
		s, t, err = parseChain(t[1:], true, "second")
		if err != nil {
			return err
		}
		if t != "" {
			return fmt.Errorf("unexpected %q after the time", t)
		}
	}
	c.hour, c.minute, c.usec = h, m, s
	p.s = ""
	return nil
}

// parseChain parses "*" or a comma list of components (parse_chain); usec
// means the value is a second that may carry a fraction, kept in µs.
func parseChain(s string, usec bool, what string) ([]component, string, error) {
	if strings.HasPrefix(s, "*") {
		if usec {
			return []component{{start: 0, stop: -1, repeat: usecPerSec}}, s[1:], nil
		}
		return nil, s[1:], nil
	}
	var cs []component
	for n := 0; ; n++ {
		if n > maxComponents {
			return nil, "", fmt.Errorf("more than %d values in the %s list", maxComponents, what)
		}
		var c component
		var err error
		c.stop = -1
		if c.start, s, err = parseDecimal(s, usec, what); err != nil {
			return nil, "", err
		}
		if strings.HasPrefix(s, "..") {
			if c.stop, s, err = parseDecimal(s[2:], usec, what+" range end"); err != nil {
				return nil, "", err
			}
			c.repeat = 1
			if usec {
				c.repeat = usecPerSec
			}
		}
		if strings.HasPrefix(s, "/") {
			if c.repeat, s, err = parseDecimal(s[1:], usec, what+" repetition"); err != nil {
				return nil, "", err
			}
			if c.repeat == 0 {
				return nil, "", fmt.Errorf("%s repetition is 0", what)
			}
		} else if usec && c.stop >= 0 && c.start+c.repeat > c.stop {
			// Without a repetition a range of seconds steps by 1 s.
			return nil, "", fmt.Errorf("%s range %s..%s is shorter than its 1 s step", what, fmtUsec(c.start), fmtUsec(c.stop))
		}
		if s != "" && !strings.ContainsRune(" ,-~:", rune(s[0])) {
			return nil, "", fmt.Errorf("unexpected %q in %s", s[:1], what)
		}
		cs = append(cs, c)
		if s == "" || s[0] != ',' {
			return cs, s, nil
		}
		s = s[1:]
	}
}

// parseDecimal parses a non-negative decimal number
// (parse_component_decimal); with usec it is a second with an optional
// fraction ("1.5", but "1..5" is a range), returned in µs.
func parseDecimal(s string, usec bool, what string) (int, string, error) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		if s == "" {
			return 0, "", fmt.Errorf("missing %s", what)
		}
		return 0, "", fmt.Errorf("expected a number for the %s at %q", what, s)
	}
	v, err := strconv.ParseUint(s[:i], 10, 64)
	if err != nil || v > 1<<31-1 {
		return 0, "", fmt.Errorf("%s %s is out of range", what, s[:i])
	}
	s = s[i:]
	if usec {
		v *= usecPerSec
		if len(s) >= 1 && s[0] == '.' && !(len(s) >= 2 && s[1] == '.') {
			frac, rest, err := parseFraction(s[1:])
			if err != nil {
				return 0, "", fmt.Errorf("%s: %w", what, err)
			}
			v += uint64(frac)
			s = rest
		}
	}
	if v > 1<<31-1 {
		return 0, "", fmt.Errorf("%s is out of range", what)
	}
	return int(v), s, nil
}

// parseFraction parses the digits after a decimal point into µs, rounding
// on the seventh digit and ignoring the rest (parse_fractional_part_u).
func parseFraction(s string) (int, string, error) {
	v, i := 0, 0
	for ; i < 6; i++ {
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			if i == 0 {
				return 0, "", errors.New(`no digits after "."`)
			}
			for ; i < 6; i++ {
				v *= 10
			}
			break
		}
		v = v*10 + int(s[i]-'0')
	}
	j := min(i, len(s))
	if j < len(s) && s[j] >= '5' && s[j] <= '9' {
		v++
	}
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	return v, s[j:], nil
}

// normalize is calendar_spec_normalize: full weekday sets become "every
// day", two-digit years get their century, lists are sorted and
// deduplicated, ranges are cut to a multiple of their step.
func (c *calendarSpec) normalize() {
	if c.weekdays <= 0 || c.weekdays >= allWeekdays {
		c.weekdays = -1
	}
	if c.endOfMonth && c.day == nil {
		c.endOfMonth = false
	}
	for i := range c.year {
		y := &c.year[i]
		for _, v := range []*int{&y.start, &y.stop} {
			switch {
			case *v >= 0 && *v < 70:
				*v += 2000
			case *v >= 70 && *v < 100:
				*v += 1900
			}
		}
	}
	for _, chain := range []*[]component{&c.year, &c.month, &c.day, &c.hour, &c.minute, &c.usec} {
		*chain = normalizeChain(*chain)
	}
}

func normalizeChain(cs []component) []component {
	for i := range cs {
		x := &cs[i]
		if x.stop > x.start && x.repeat > 0 {
			x.stop -= (x.stop - x.start) % x.repeat
		}
		if (x.stop > x.start && x.start+x.repeat > x.stop) || x.start == x.stop {
			x.repeat = 0
			x.stop = -1
		}
	}
	if len(cs) <= 1 {
		return cs
	}
	slices.SortFunc(cs, compareComponent)
	return slices.CompactFunc(cs, func(a, b component) bool { return compareComponent(a, b) == 0 })
}

func compareComponent(a, b component) int {
	switch {
	case a.start != b.start:
		return a.start - b.start
	case a.stop != b.stop:
		return a.stop - b.stop
	default:
		return a.repeat - b.repeat
	}
}

// validate is calendar_spec_valid (chain_valid), with a reason.
func (c *calendarSpec) validate() error {
	checks := []struct {
		chain    []component
		what     string
		from, to int
		eom      bool
	}{
		{c.year, "year", minYear, maxYear, false},
		{c.month, "month", 1, 12, false},
		{c.day, "day", 1, 31, c.endOfMonth},
		{c.hour, "hour", 0, 23, false},
		{c.minute, "minute", 0, 59, false},
		{c.usec, "second", 0, 60*usecPerSec - 1, false},
	}
	for _, k := range checks {
		show := strconv.Itoa
		if k.what == "second" {
			show = fmtUsec
		}
		what := k.what
		if k.eom {
			what = "day counted from the end of the month"
		}
		for i, x := range k.chain {
			if k.eom {
				// "~" days go back at most 28 days from the end, so
				// that every month has them. systemd lowers that bound
				// by 3 again for each further list element (chain_valid
				// recurses with the lowered bound): "~20,24" is valid,
				// "~4,27" is not.
				k.to -= 3
			}
			if k.eom && x.start > k.to {
				if i == 0 {
					return fmt.Errorf("day ~%d is more than %d days from the end of the month", x.start, k.to)
				}
				return fmt.Errorf("day ~%d is too far from the end of the month: systemd allows at most ~%d as element %d of a \"~\" list", x.start, k.to, i+1)
			}
			if x.start < k.from || x.start > k.to {
				return fmt.Errorf("%s %s out of range %s..%s", what, show(x.start), show(k.from), show(k.to))
			}
			if x.repeat > k.to-k.from {
				return fmt.Errorf("%s repetition /%s is longer than the range %s..%s", what, show(x.repeat), show(k.from), show(k.to))
			}
			switch {
			case x.stop >= 0:
				if x.stop < k.from || x.stop > k.to {
					return fmt.Errorf("%s range end %s out of range %s..%s", what, show(x.stop), show(k.from), show(k.to))
				}
				if x.start+x.repeat > x.stop {
					return fmt.Errorf("%s range %s..%s runs backwards", what, show(x.start), show(x.stop))
				}
			case k.eom && x.start-x.repeat < k.from:
				return fmt.Errorf("day ~%d/%d never repeats within the month", x.start, x.repeat)
			case !k.eom && x.repeat > 0 && x.start+x.repeat > k.to:
				return fmt.Errorf("%s %s/%s never repeats within %s..%s", what, show(x.start), show(x.repeat), show(k.from), show(k.to))
			}
		}
	}
	return nil
}

func fmtUsec(v int) string {
	if v%usecPerSec == 0 {
		return strconv.Itoa(v / usecPerSec)
	}
	return fmt.Sprintf("%d.%06d", v/usecPerSec, v%usecPerSec)
}

var weekdayShort = []string{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"}

// String returns systemd's normalized form of the expression, as
// `systemd-analyze calendar` prints it under "Normalized form:", e.g.
// "Mon..Fri *-*-* 08:00:00" or "*-*-* *:00/20:00 Europe/Berlin"
// (calendar_spec_to_string).
func (c *calendarSpec) String() string {
	var b strings.Builder
	if c.weekdays > 0 && c.weekdays <= allWeekdays {
		formatWeekdays(&b, c.weekdays)
		b.WriteByte(' ')
	}
	formatChain(&b, 4, c.year, false)
	b.WriteByte('-')
	formatChain(&b, 2, c.month, false)
	if c.endOfMonth {
		b.WriteByte('~')
	} else {
		b.WriteByte('-')
	}
	formatChain(&b, 2, c.day, false)
	b.WriteByte(' ')
	formatChain(&b, 2, c.hour, false)
	b.WriteByte(':')
	formatChain(&b, 2, c.minute, false)
	b.WriteByte(':')
	formatChain(&b, 2, c.usec, true)
	switch {
	case c.utc:
		b.WriteString(" UTC")
	case c.zone != "":
		b.WriteString(" " + c.zone)
	}
	return b.String()
}

func formatWeekdays(b *strings.Builder, bits int) {
	l, x := -1, 0
	needComma := false
	for ; x < len(weekdayShort); x++ {
		if bits&(1<<x) != 0 {
			if l < 0 {
				if needComma {
					b.WriteByte(',')
				}
				needComma = true
				b.WriteString(weekdayShort[x])
				l = x
			}
		} else if l >= 0 {
			if x > l+1 {
				if x > l+2 {
					b.WriteString("..")
				} else {
					b.WriteByte(',')
				}
				b.WriteString(weekdayShort[x-1])
			}
			l = -1
		}
	}
	if l >= 0 && x > l+1 {
		if x > l+2 {
			b.WriteString("..")
		} else {
			b.WriteByte(',')
		}
		b.WriteString(weekdayShort[x-1])
	}
}

func formatChain(b *strings.Builder, width int, cs []component, usec bool) {
	d := 1
	if usec {
		d = usecPerSec
	}
	if len(cs) == 0 {
		b.WriteByte('*')
		return
	}
	// Seconds print as "*" when one element covers every second
	// (chain_is_star).
	for _, c := range cs {
		if usec && c.start == 0 && c.stop < 0 && c.repeat == usecPerSec {
			b.WriteByte('*')
			return
		}
	}
	for i, c := range cs {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(b, "%0*d", width, c.start/d)
		if c.start%d > 0 {
			fmt.Fprintf(b, ".%06d", c.start%d)
		}
		if c.stop > 0 {
			fmt.Fprintf(b, "..%0*d", width, c.stop/d)
		}
		if c.stop%d > 0 {
			fmt.Fprintf(b, ".%06d", c.stop%d)
		}
		if c.repeat > 0 && !(c.stop > 0 && c.repeat == d) {
			fmt.Fprintf(b, "/%d", c.repeat/d)
		}
		if c.repeat%d > 0 {
			fmt.Fprintf(b, ".%06d", c.repeat%d)
		}
	}
}

// Next returns the first time after "after" (strictly later) at which the
// expression elapses, or the zero Time if it never does again (a year
// list in the past, or a date that does not exist such as "*-02-30").
// It is computed in the expression's own zone if it names one, else in
// loc (nil means UTC); the result is in that zone.
//
// Like systemd (calendar_spec_next_usec), it searches the broken-down
// local time field by field and normalizes through mktime(3). So around
// daylight saving changes it does what systemd does: a time that a
// spring-forward change skips does not elapse that day, and of a local
// time that a fall-back change repeats, usually only the first elapses
// (glibc resolves it with the UTC offset it found last). Where systemd
// gives up after 1000 steps ("Infinite loop in calendar calculation"),
// Next returns the zero Time too.
func (c *calendarSpec) Next(after time.Time, loc *time.Location) time.Time {
	t, _ := c.next(after, loc)
	return t
}

// nextStatus says how the search for the next elapse ended.
type nextStatus int

const (
	elapses nextStatus = iota
	never              // no elapse left (ENOENT in systemd)
	gaveUp             // systemd's safety valve: "Infinite loop in calendar calculation"
)

func (c *calendarSpec) next(after time.Time, loc *time.Location) (time.Time, nextStatus) {
	switch {
	case c.utc:
		loc = time.UTC
	case c.loc != nil:
		loc = c.loc
	case loc == nil:
		loc = time.UTC
	}
	// systemd works in µs since the epoch (unsigned, so never before it)
	// and starts 1 µs after "after".
	u := max(after.UnixMicro(), 0) + 1
	start := time.UnixMicro(u).In(loc)
	m := &mktimeState{loc: loc, utc: loc == time.UTC}
	_, off := start.Zone()
	m.offset = int64(off)
	t := tmFromTime(start)
	tmUsec := int(u % usecPerSec)
	if tmUsec < 0 {
		tmUsec += usecPerSec
	}
	r, st := c.findNext(m, t, tmUsec)
	if st != elapses {
		return time.Time{}, st
	}
	return r.In(loc), elapses
}

// tm is C's struct tm as calendarspec.c uses it: fields may be out of
// range until normalized. mon counts from 0, year is the full year, isdst
// is 1, 0 or -1 (unknown) as in C.
type tm struct {
	year, mon, mday, hour, min, sec int
	isdst                           int
}

func tmFromTime(t time.Time) tm {
	d := 0
	if t.IsDST() {
		d = 1
	}
	return tm{t.Year(), int(t.Month()) - 1, t.Day(), t.Hour(), t.Minute(), t.Second(), d}
}

// compareTm is tm_compare: the fields from year to second, isdst ignored.
func compareTm(a, b tm) int {
	for _, p := range [][2]int{{a.year, b.year}, {a.mon, b.mon}, {a.mday, b.mday}, {a.hour, b.hour}, {a.min, b.min}, {a.sec, b.sec}} {
		if c := cmpInt(p[0], p[1]); c != 0 {
			return c
		}
	}
	return 0
}

// findNext is find_next of systemd v252's calendarspec.c, statement by
// statement.
func (c *calendarSpec) findNext(m *mktimeState, start tm, startUsec int) (time.Time, nextStatus) {
	t, tmUsec := start, startUsec
	invalidateDST := false
	for range maxCalendarIterations {
		// Normalize the current date.
		if n, _, ok := m.mktime(t); ok {
			t = n
		}
		if !invalidateDST {
			t.isdst = -1
		}

		r := c.matchComponent(m, c.year, t, &t.year)
		if r > 0 {
			t.mon, t.mday = 0, 1
			t.hour, t.min, t.sec, tmUsec = 0, 0, 0, 0
		}
		if r < 0 || m.withinBounds(&t) <= 0 {
			return time.Time{}, never
		}

		t.mon++
		r = c.matchComponent(m, c.month, t, &t.mon)
		t.mon--
		if r > 0 {
			t.mday = 1
			t.hour, t.min, t.sec, tmUsec = 0, 0, 0, 0
		}
		if r >= 0 {
			r = m.withinBounds(&t)
		}
		if r < 0 {
			t.year++
			t.mon, t.mday = 0, 1
			t.hour, t.min, t.sec, tmUsec = 0, 0, 0, 0
			continue
		} else if r == 0 {
			continue
		}

		r = c.matchComponent(m, c.day, t, &t.mday)
		if r > 0 {
			t.hour, t.min, t.sec, tmUsec = 0, 0, 0, 0
		}
		if r >= 0 {
			r = m.withinBounds(&t)
		}
		if r < 0 {
			t.mon++
			t.mday = 1
			t.hour, t.min, t.sec, tmUsec = 0, 0, 0, 0
			continue
		} else if r == 0 {
			continue
		}

		if !m.matchesWeekday(c.weekdays, t) {
			t.mday++
			t.hour, t.min, t.sec, tmUsec = 0, 0, 0, 0
			continue
		}

		r = c.matchComponent(m, c.hour, t, &t.hour)
		if r > 0 {
			t.min, t.sec, tmUsec = 0, 0, 0
		}
		if r >= 0 {
			r = m.withinBounds(&t)
		}
		if r < 0 {
			t.mday++
			t.hour, t.min, t.sec, tmUsec = 0, 0, 0, 0
			continue
		} else if r == 0 {
			// The hour may not exist (daylight saving): go on from
			// the normalized time.
			continue
		}

		r = c.matchComponent(m, c.minute, t, &t.min)
		if r > 0 {
			t.sec, tmUsec = 0, 0
		}
		if r >= 0 {
			r = m.withinBounds(&t)
		}
		if r < 0 {
			t.hour++
			t.min, t.sec, tmUsec = 0, 0, 0
			continue
		} else if r == 0 {
			continue
		}

		us := t.sec*usecPerSec + tmUsec
		r = c.matchComponent(m, c.usec, t, &us)
		tmUsec = us % usecPerSec
		t.sec = us / usecPerSec
		if r >= 0 {
			r = m.withinBounds(&t)
		}
		if r < 0 {
			t.min++
			t.sec, tmUsec = 0, 0
			continue
		} else if r == 0 {
			continue
		}

		// Not later than the start: stuck on a repeated local time.
		// Advance and let mktime pick the side of the DST change.
		r = compareTm(start, t)
		if r == 0 {
			r = cmpInt(startUsec, tmUsec+1)
		}
		if r >= 0 {
			invalidateDST = true
			t.hour++
			continue
		}

		_, secs, ok := m.mktime(t)
		if !ok {
			return time.Time{}, never
		}
		return time.Unix(secs, int64(tmUsec)*1000), elapses
	}
	// systemd gives up ("Infinite loop in calendar calculation").
	return time.Time{}, gaveUp
}

// matchComponent is find_matching_component: it moves *val to the
// earliest value of chain that is >= *val and returns 1 if it moved, 0 if
// *val already matched (or chain is "*"), -1 if no value is left.
func (c *calendarSpec) matchComponent(m *mktimeState, chain []component, t tm, val *int) int {
	if chain == nil {
		return 0
	}
	eom := c.endOfMonth && len(c.day) > 0 && &chain[0] == &c.day[0]
	d, set := -1, false
	for _, x := range chain {
		start, stop := x.start, x.stop
		if eom {
			start = m.endOfMonth(t, x.start)
			stop = m.endOfMonth(t, x.stop)
			if stop > 0 {
				start, stop = stop, start
			}
		}
		if start >= *val {
			if !set || start < d {
				d, set = start, true
			}
		} else if x.repeat > 0 {
			k := start + x.repeat*ceilDiv(*val-start, x.repeat)
			if (!set || k < d) && (stop < 0 || k <= stop) {
				d, set = k, true
			}
		}
	}
	if !set {
		return -1
	}
	moved := *val != d
	*val = d
	if moved {
		return 1
	}
	return 0
}

// ceilDiv is DIV_ROUND_UP for a > 0.
func ceilDiv(a, b int) int { return (a + b - 1) / b }

// endOfMonth is find_end_of_month: the day of t's month that is "day"
// days from its end counting the last day as 1, or -1.
func (m *mktimeState) endOfMonth(t tm, day int) int {
	x := t
	x.mon++
	x.mday = 1 - day
	n, _, ok := m.mktime(x)
	if !ok || n.mon != t.mon {
		return -1
	}
	return n.mday
}

// withinBounds is tm_within_bounds: 1 if t exists as written, 0 if
// mktime moves it forward (t is then set to the normalized time with the
// unit below the first changed one reset, so that no time is skipped),
// -1 if it moves it backward, mktime fails or t lies beyond the last
// year systemd handles.
func (m *mktimeState) withinBounds(t *tm) int {
	if t.year > maxYear {
		return -1
	}
	n, _, ok := m.mktime(*t)
	if !ok {
		return -1
	}
	var c int
	switch {
	case n.year != t.year:
		c = cmpInt(n.year, t.year)
		n.mon = 0
	case n.mon != t.mon:
		c = cmpInt(n.mon, t.mon)
		n.mday = 1
	case n.mday != t.mday:
		c = cmpInt(n.mday, t.mday)
		n.hour = 0
	case n.hour != t.hour:
		c = cmpInt(n.hour, t.hour)
		n.min = 0
	case n.min != t.min:
		c = cmpInt(n.min, t.min)
		n.sec = 0
	default:
		c = cmpInt(n.sec, t.sec)
	}
	switch {
	case c < 0:
		return -1 // systemd refuses to go backward
	case c > 0:
		*t = n
		return 0
	}
	return 1
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (m *mktimeState) matchesWeekday(bits int, t tm) bool {
	if bits < 0 || bits >= allWeekdays {
		return true
	}
	n, _, ok := m.mktime(t)
	if !ok {
		return false
	}
	wd := time.Date(n.year, time.Month(n.mon+1), n.mday, 0, 0, 0, 0, time.UTC).Weekday() // Sunday = 0
	k := (int(wd) + 6) % 7
	return bits&(1<<k) != 0
}

// mktimeState emulates mktime(3) of glibc 2.36 (time/mktime.c,
// __mktime_internal), or timegm(3) for UTC, as systemd calls it.
//
// glibc guesses the UTC offset of a local time from the offset its
// previous call found (a static variable) and probes from there; with
// tm_isdst = -1 that guess decides which of the two instants of a
// repeated local time (fall back) it returns, and a local time in a
// spring-forward gap is moved by the size of the gap, preferring the DST
// side. offset carries that state, in seconds east of UTC; a [calendarSpec]
// search starts it at the offset of the start time, as systemd's first
// call (on the output of localtime) does.
type mktimeState struct {
	loc    *time.Location
	utc    bool
	offset int64
}

// mktime normalizes t and returns it (with isdst set) and its Unix time;
// ok is false where glibc fails (EOVERFLOW) or the time is before the
// epoch (systemd treats a negative time_t as failure).
func (m *mktimeState) mktime(t tm) (tm, int64, bool) {
	secRequested := t.sec
	sec := min(max(t.sec, 0), 59) // glibc clamps seconds (leap seconds)
	// Naive local seconds since the epoch: month normalized into the
	// year, the rest linear, as glibc's ydhms_diff.
	local := time.Date(t.year, time.Month(t.mon+1), t.mday, t.hour, t.min, sec, 0, time.UTC).Unix()
	var secs int64
	if m.utc {
		secs = local
	} else {
		var ok bool
		secs, ok = m.probe(local, t.isdst)
		if !ok {
			return t, 0, false
		}
		m.offset = local - secs
	}
	secs += int64(secRequested - sec)
	if secs < 0 {
		return t, 0, false
	}
	return tmFromTime(time.Unix(secs, 0).In(m.loc)), secs, true
}

// probe finds the Unix time whose local time is "local" (naive seconds)
// the way __mktime_internal does.
func (m *mktimeState) probe(local int64, isdst int) (int64, bool) {
	convert := func(t int64) (int64, bool) { // local naive seconds, isdst
		lt := time.Unix(t, 0).In(m.loc)
		_, off := lt.Zone()
		return t + int64(off), lt.IsDST()
	}
	t0 := local - m.offset
	t, t1, t2 := t0, t0, t0
	dst2 := false
	remaining := 6
	var isDST bool
	for {
		var lt int64
		lt, isDST = convert(t)
		dt := local - lt
		if dt == 0 {
			break
		}
		if t == t1 && t != t2 {
			var stop bool
			if isdst < 0 {
				stop = !dst2 || isDST // dst2 <= (tm.tm_isdst != 0)
			} else {
				stop = (isdst != 0) != isDST
			}
			if stop {
				return t, true // oscillating around a spring-forward gap
			}
		}
		remaining--
		if remaining == 0 {
			return 0, false
		}
		t1, t2, t = t2, t, t+dt
		dst2 = isDST
	}
	if isdst >= 0 && (isdst != 0) != isDST {
		// Matched with the wrong isdst: find a neighbouring time with
		// the requested one and use its offset.
		const stride = 601200
		const bound = 536454000/2 + stride
		for delta := int64(stride); delta < bound; delta += stride {
			for _, dir := range []int64{-1, 1} {
				ot := t + delta*dir
				olt, oDST := convert(ot)
				if oDST == (isdst != 0) {
					return ot + (local - olt), true
				}
			}
		}
		return 0, false
	}
	return t, true
}

// calendarPeriod returns the interval between consecutive elapses of c
// when it is always the same, with regular true: "*:0/30" gives 30m,
// "*-*-* 6,18:00" 12h, "daily" 24h, "Mon *-*-* 02:00" 168h. When the gaps
// differ ("*-*-01", "Mon,Wed,Fri 08:00", "*-*-* 6,20:00", "*:0/25"),
// regular is false and period is the shortest gap, or 0 where the
// schedule depends on months or days of the month.
//
// The period is that of the wall clock: a daylight saving change makes
// one gap an hour longer or shorter, which is ignored here. A year list
// only bounds when the schedule runs and does not change its period.
func calendarPeriod(c *calendarSpec) (period time.Duration, regular bool) {
	// Times of day, as three levels: hours, minutes, µs of the minute.
	levels := []struct {
		values []int
		size   int
		unit   time.Duration
	}{
		{expand(c.hour, 0, 23, 24), 24, time.Hour},
		{expand(c.minute, 0, 59, 60), 60, time.Minute},
		{expand(c.usec, 0, 60*usecPerSec-1, 1_000_000), 60 * usecPerSec, time.Microsecond},
	}
	for _, l := range levels {
		if len(l.values) == 0 {
			return 0, false // too many values to check
		}
	}
	everyDay := c.weekdays < 0 && c.month == nil && c.day == nil
	if !everyDay {
		everyDay = c.weekdays < 0 && !c.endOfMonth &&
			len(expand(c.month, 1, 12, 12)) == 12 && len(expand(c.day, 1, 31, 31)) == 31
	}
	// The finest level with more than one value decides the period; all
	// finer levels must hold one value and all coarser ones every value.
	k := -1
	for i := len(levels) - 1; i >= 0; i-- {
		if len(levels[i].values) > 1 {
			k = i
			break
		}
	}
	if k < 0 { // one time a day
		switch {
		case everyDay:
			return 24 * time.Hour, true
		case c.month == nil && c.day == nil && onlyOneBit(c.weekdays):
			return 7 * 24 * time.Hour, true
		case c.month == nil && c.day == nil:
			return time.Duration(weekdayGap(c.weekdays)) * 24 * time.Hour, false
		}
		return 0, false
	}
	l := levels[k]
	step := l.values[1] - l.values[0]
	minGap := step
	ap := true
	for i := 2; i < len(l.values); i++ {
		g := l.values[i] - l.values[i-1]
		minGap = min(minGap, g)
		if g != step {
			ap = false
		}
	}
	coarserFull := everyDay
	for i := 0; i < k; i++ {
		if len(levels[i].values) != levels[i].size {
			coarserFull = false
		}
	}
	if coarserFull {
		// The gap from the last value to the first of the next unit.
		minGap = min(minGap, l.values[0]+l.size-l.values[len(l.values)-1])
	}
	regular = ap && len(l.values)*step == l.size && coarserFull
	return time.Duration(minGap) * l.unit, regular
}

func onlyOneBit(b int) bool { return b > 0 && b&(b-1) == 0 }

// weekdayGap is the shortest distance in days between two weekdays of
// the mask, going round the week.
func weekdayGap(bits int) int {
	gap := 7
	for a := range 7 {
		if bits&(1<<a) == 0 {
			continue
		}
		for d := 1; d < 7; d++ {
			if bits&(1<<((a+d)%7)) != 0 {
				gap = min(gap, d)
				break
			}
		}
	}
	return gap
}

// combinedCalendarPeriod is [calendarPeriod] for a timer with several
// OnCalendar= lines, which elapses whenever any of them does. pcp's
// pmlogger_check.timer has "*-*-* *:25:00" and "*-*-* *:55:00", each
// hourly, together every 30 minutes: 30m, regular. It is regular when
// every expression is and their elapses interleave evenly; else period
// is the shortest gap found (0 if unknown) and regular is false.
//
// Phases are taken from each expression's elapses after Monday
// 2024-01-01 00:00 UTC, in its own zone if it has one, else in UTC.
func combinedCalendarPeriod(cs ...*calendarSpec) (period time.Duration, regular bool) {
	if len(cs) == 0 {
		return 0, false
	}
	if len(cs) == 1 {
		return calendarPeriod(cs[0])
	}
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC) // a Monday
	var l time.Duration = 1
	var shortest time.Duration
	all := true
	periods := make([]time.Duration, len(cs))
	for i, c := range cs {
		p, ok := calendarPeriod(c)
		if p > 0 && (shortest == 0 || p < shortest) {
			shortest = p
		}
		all = all && ok
		periods[i] = p
		if ok {
			l = lcmDuration(l, p)
		}
	}
	if !all {
		return shortest, false
	}
	const maxElapses = 1 << 20
	var offsets []time.Duration
	for i, c := range cs {
		if l/periods[i] > maxElapses {
			return shortest, false
		}
		first := c.Next(base.Add(-time.Microsecond), time.UTC)
		if first.IsZero() {
			return shortest, false
		}
		phase := first.Sub(base) % periods[i]
		for o := phase; o < l; o += periods[i] {
			offsets = append(offsets, o)
		}
	}
	slices.Sort(offsets)
	offsets = slices.Compact(offsets)
	n := time.Duration(len(offsets))
	if l%n != 0 {
		return minGap(offsets, l), false
	}
	step := l / n
	for i, o := range offsets {
		if o != offsets[0]+time.Duration(i)*step {
			return minGap(offsets, l), false
		}
	}
	return step, true
}

func lcmDuration(a, b time.Duration) time.Duration {
	x, y := a, b
	for y != 0 {
		x, y = y, x%y
	}
	return a / x * b
}

// minGap is the shortest gap between sorted offsets repeating every l.
func minGap(offsets []time.Duration, l time.Duration) time.Duration {
	g := offsets[0] + l - offsets[len(offsets)-1]
	for i := 1; i < len(offsets); i++ {
		g = min(g, offsets[i]-offsets[i-1])
	}
	return g
}

// expand lists the values of chain within from..to in order (all of them
// for "*"), or nil if there would be more than limit.
func expand(chain []component, from, to, limit int) []int {
	if chain == nil {
		if to-from+1 > limit {
			return nil
		}
		vs := make([]int, 0, to-from+1)
		for v := from; v <= to; v++ {
			vs = append(vs, v)
		}
		return vs
	}
	seen := map[int]bool{}
	for _, x := range chain {
		stop := x.stop
		if stop < 0 {
			stop = to
		}
		if x.repeat == 0 {
			seen[x.start] = true
			continue
		}
		for v := x.start; v <= stop; v += x.repeat {
			seen[v] = true
			if len(seen) > limit {
				return nil
			}
		}
	}
	vs := make([]int, 0, len(seen))
	for v := range seen {
		vs = append(vs, v)
	}
	slices.Sort(vs)
	return vs
}

// dateSeparator accepts the "-" before a month or day field, or the "~"
// that counts the day from the end of the month (systemd.time(7)), and
// notes the latter.
func (c *calendarSpec) dateSeparator(t string) error {
	switch t[0] {
	case '~':
		c.endOfMonth = true
	case '-':
	default:
		return fmt.Errorf("unexpected %q in date", t[:1])
	}
	return nil
}
