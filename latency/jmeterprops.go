package latency

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// JMeterSave is how JMeter wrote a CSV results file: the columns of a
// file without a header line, its delimiter and its timestamp format,
// from the user (--latency-columns) or from the jmeter.save.saveservice.*
// properties JMeter ran with ([ParseJMeterProperties]). A file that has
// a header line is read by its header whatever this says.
type JMeterSave struct {
	// Columns are the column names in JMeter's header spelling
	// (timeStamp, elapsed, label, responseCode, responseMessage, …,
	// success, …), in file order. Alt, when not nil, is a second
	// candidate: properties that leave a column at its default give one
	// list under JMeter 3.1+'s defaults (Columns) and one under 2.x's
	// (Alt); the import takes the list whose length is the first row's
	// field count, and says so in ImportReport.Columns.
	Columns, Alt []string
	// Delimiter is the field separator (default_delimiter); 0 detects
	// ',', ';' or tab from the first row.
	Delimiter rune
	// DateLayout is the Go layout of timestamp_format when it is a date
	// pattern ("2006/01/02 15:04:05.000"); "" for epoch milliseconds.
	DateLayout string
	// From says where the columns came from, for the import report
	// ("--latency-columns", "user.properties").
	From string
}

// jmeterColumn is one column (or pair) of JMeter's CSV and the property
// that turns it on, in the order JMeter writes them (CSVSaveService
// printableFieldNamesToString, JMeter 2.13 to 5.6), with its default in
// JMeter 3.1+ and in 2.x (the 2.13 defaults checked by a real 2.13 run:
// testdata/latency/jmeter-2.13-header.jtl).
var jmeterColumns = []struct {
	names        []string
	prop         string
	def3, def2   bool
	onlyModern   bool // absent from JMeter 2.x
	timestampCol bool // on unless timestamp_format=none
}{
	{names: []string{"timeStamp"}, timestampCol: true},
	{[]string{"elapsed"}, "time", true, true, false, false},
	{[]string{"label"}, "label", true, true, false, false},
	{[]string{"responseCode"}, "response_code", true, true, false, false},
	{[]string{"responseMessage"}, "response_message", true, true, false, false},
	{[]string{"threadName"}, "thread_name", true, true, false, false},
	{[]string{"dataType"}, "data_type", true, true, false, false},
	{[]string{"success"}, "successful", true, true, false, false},
	{[]string{"failureMessage"}, "assertion_results_failure_message", true, false, false, false},
	{[]string{"bytes"}, "bytes", true, true, false, false},
	{[]string{"sentBytes"}, "sent_bytes", true, false, true, false},
	{[]string{"grpThreads", "allThreads"}, "thread_counts", true, true, false, false},
	{[]string{"URL"}, "url", true, false, false, false},
	{[]string{"Filename"}, "filename", false, false, false, false},
	{[]string{"Latency"}, "latency", true, true, false, false},
	{[]string{"Encoding"}, "encoding", false, false, false, false},
	{[]string{"SampleCount", "ErrorCount"}, "sample_count", false, false, false, false},
	{[]string{"Hostname"}, "hostname", false, false, false, false},
	{[]string{"IdleTime"}, "idle_time", true, false, false, false},
	{[]string{"Connect"}, "connect_time", true, false, false, false},
}

// jmeterColumnNames are the names --latency-columns accepts: JMeter's
// CSV header names. A name in double quotes ("myVar") is a
// sample_variables column.
var jmeterColumnNames = func() []string {
	var out []string
	for _, c := range jmeterColumns {
		out = append(out, c.names...)
	}
	return out
}()

// ErrJMeterSave marks a bad --latency-columns list or properties file.
var ErrJMeterSave = errors.New("bad JMeter save settings")

// ParseJMeterColumns reads a comma-separated column list in JMeter's
// header spelling. It needs timeStamp and elapsed; names must be
// JMeter's (quoted names are sample variables) and each at most once.
func ParseJMeterColumns(list string) (*JMeterSave, error) {
	cols := strings.Split(list, ",")
	seen := map[string]bool{}
	for i, c := range cols {
		c = strings.TrimSpace(c)
		cols[i] = c
		quoted := len(c) > 2 && strings.HasPrefix(c, `"`) && strings.HasSuffix(c, `"`)
		switch {
		case c == "":
			return nil, fmt.Errorf("%w: column %d is empty", ErrJMeterSave, i+1)
		case !quoted && !slices.Contains(jmeterColumnNames, c):
			return nil, fmt.Errorf("%w: column %d %q is not one of JMeter's (%s; a sample variable in double quotes)", ErrJMeterSave, i+1, c, strings.Join(jmeterColumnNames, ","))
		case seen[c]:
			return nil, fmt.Errorf("%w: column %q given twice", ErrJMeterSave, c)
		}
		seen[c] = true
	}
	if !seen["timeStamp"] || !seen["elapsed"] {
		return nil, fmt.Errorf("%w: the columns must include timeStamp and elapsed (the request's start and latency)", ErrJMeterSave)
	}
	return &JMeterSave{Columns: cols, From: "--latency-columns"}, nil
}

// ParseJMeterProperties reads the jmeter.save.saveservice.* settings of
// a Java properties file (user.properties, or a file given to JMeter
// with -q or -p) and returns the columns JMeter writes with them: the
// properties it sets, JMeter's defaults for the rest. Lines that are not
// save-service settings are ignored. Errors name the file and line.
func ParseJMeterProperties(r io.Reader, name string) (*JMeterSave, error) {
	props, lines, err := readProperties(r, name)
	if err != nil {
		return nil, err
	}
	const pre = "jmeter.save.saveservice."
	get := func(k string) (string, bool) {
		v, ok := props[pre+k]
		return v, ok
	}
	where := func(k string) string { return fmt.Sprintf("%s:%d: %s%s", name, lines[pre+k], pre, k) }
	s := &JMeterSave{From: name}
	if v, ok := get("default_delimiter"); ok {
		if v == `\t` {
			v = "\t"
		}
		r := []rune(v)
		if len(r) != 1 || r[0] == '"' || (r[0] != '\t' && (unicode.IsLetter(r[0]) || unicode.IsDigit(r[0]) || !unicode.IsPrint(r[0]))) {
			return nil, fmt.Errorf("%w: %s=%q: want one printable character that is not a letter, digit or quote", ErrJMeterSave, where("default_delimiter"), v)
		}
		s.Delimiter = r[0]
	}
	if v, ok := get("output_format"); ok && strings.TrimSpace(v) == "xml" {
		return nil, fmt.Errorf("%w: %s=xml: the results are XML, which names its fields; give the file without --latency-properties", ErrJMeterSave, where("output_format"))
	}
	timestamp := true
	if v, ok := get("timestamp_format"); ok {
		switch v = strings.TrimSpace(v); strings.ToLower(v) {
		case "ms", "":
		case "none":
			timestamp = false
		default:
			l, err := javaDateLayout(v)
			if err != nil {
				return nil, fmt.Errorf("%w: %s=%s: %w", ErrJMeterSave, where("timestamp_format"), v, err)
			}
			s.DateLayout = l
		}
	}
	if !timestamp {
		return nil, fmt.Errorf("%w: %s=none: JMeter wrote no timeStamp, so no request can be placed in time", ErrJMeterSave, where("timestamp_format"))
	}
	on := func(prop string, def bool) bool {
		v, ok := get(prop)
		if !ok {
			return def
		}
		return strings.EqualFold(strings.TrimSpace(v), "true") // as JMeter reads it
	}
	var modern, old []string
	explicit := true // no column left at a default that differs between 2.x and 3.1+
	for _, c := range jmeterColumns {
		if c.timestampCol {
			modern, old = append(modern, c.names...), append(old, c.names...)
			continue
		}
		if on(c.prop, c.def3) {
			modern = append(modern, c.names...)
		}
		if !c.onlyModern && on(c.prop, c.def2) {
			old = append(old, c.names...)
		}
		if _, set := get(c.prop); !set && (c.def3 != c.def2 || c.onlyModern) {
			explicit = false
		}
	}
	if vars, ok := props["sample_variables"]; ok && strings.TrimSpace(vars) != "" {
		for _, v := range strings.Split(vars, ",") {
			q := `"` + strings.TrimSpace(v) + `"`
			modern, old = append(modern, q), append(old, q)
		}
	}
	if !slices.Contains(modern, "elapsed") {
		return nil, fmt.Errorf("%w: %s=false: JMeter wrote no elapsed, so the file holds no latency", ErrJMeterSave, where("time"))
	}
	s.Columns = modern
	if !explicit && !slices.Equal(modern, old) {
		s.Alt = old
	}
	return s, nil
}

// readProperties reads a Java properties file (java.util.Properties
// load: key=value, key:value or key value; # and ! comments; a trailing
// backslash continues a line; \t \n \\ \uXXXX escapes), returning each
// key's value and line.
func readProperties(r io.Reader, name string) (map[string]string, map[string]int, error) {
	props, lines := map[string]string{}, map[string]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	n := 0
	for sc.Scan() {
		n++
		start := n
		line := strings.TrimLeft(sc.Text(), " \t\f")
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		for continued(line) && sc.Scan() {
			n++
			line = line[:len(line)-1] + strings.TrimLeft(sc.Text(), " \t\f")
		}
		if continued(line) {
			line = line[:len(line)-1]
		}
		key, val := splitProperty(line)
		k, err := unescapeProperty(key)
		if err == nil {
			var v string
			if v, err = unescapeProperty(val); err == nil {
				props[k], lines[k] = v, start
				continue
			}
		}
		return nil, nil, fmt.Errorf("%w: %s:%d: %w", ErrJMeterSave, name, start, err)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("%s:%d: %w", name, n+1, err)
	}
	return props, lines, nil
}

// continued reports whether line ends in an odd number of backslashes.
func continued(line string) bool {
	k := 0
	for i := len(line) - 1; i >= 0 && line[i] == '\\'; i-- {
		k++
	}
	return k%2 == 1
}

// splitProperty splits at the first unescaped '=', ':' or whitespace,
// skipping whitespace and one separator after the key.
func splitProperty(line string) (string, string) {
	i := 0
	for i < len(line) {
		c := line[i]
		if c == '\\' {
			i += 2
			continue
		}
		if c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\f' {
			break
		}
		i++
	}
	key := line[:min(i, len(line))]
	rest := line[min(i, len(line)):]
	rest = strings.TrimLeft(rest, " \t\f")
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = strings.TrimLeft(rest[1:], " \t\f")
	}
	return key, rest
}

func unescapeProperty(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if i+5 > len(s) {
				return "", fmt.Errorf(`malformed \u escape in %q`, s)
			}
			r, err := strconv.ParseUint(s[i+1:i+5], 16, 16)
			if err != nil {
				return "", fmt.Errorf(`malformed \u escape in %q`, s)
			}
			b.WriteRune(rune(r))
			i += 4
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), nil
}

// javaDateLayout converts a java.text.SimpleDateFormat pattern (JMeter's
// timestamp_format, e.g. "yyyy/MM/dd HH:mm:ss.SSS") to a Go layout. It
// knows the letters a results timestamp uses: y M d H h m s S a E z Z X
// and 'quoted' text; others are an error.
func javaDateLayout(p string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(p); {
		c := p[i]
		j := i
		for j < len(p) && p[j] == c {
			j++
		}
		n := j - i
		switch {
		case c == '\'':
			// 'text' is literal; '' is a quote.
			if n >= 2 && n%2 == 0 {
				b.WriteString(strings.Repeat("'", n/2))
				i = j
				continue
			}
			end := strings.IndexByte(p[i+1:], '\'')
			if end < 0 {
				return "", errors.New("unclosed quote")
			}
			lit := p[i+1 : i+1+end]
			if strings.ContainsAny(lit, "0123456789") || strings.Contains(lit, "Jan") || strings.Contains(lit, "Mon") || strings.Contains(lit, "MST") || strings.Contains(lit, "PM") {
				return "", fmt.Errorf("literal %q would read as a Go layout element", lit)
			}
			b.WriteString(lit)
			i += end + 2
			continue
		case c == 'y' && n == 2:
			b.WriteString("06")
		case c == 'y':
			b.WriteString("2006")
		case c == 'M' && n == 1:
			b.WriteString("1")
		case c == 'M' && n == 2:
			b.WriteString("01")
		case c == 'M' && n == 3:
			b.WriteString("Jan")
		case c == 'M':
			b.WriteString("January")
		case c == 'd' && n == 1:
			b.WriteString("2")
		case c == 'd':
			b.WriteString("02")
		case c == 'H':
			b.WriteString("15")
		case c == 'h' && n == 1:
			b.WriteString("3")
		case c == 'h':
			b.WriteString("03")
		case c == 'm' && n == 1:
			b.WriteString("4")
		case c == 'm':
			b.WriteString("04")
		case c == 's' && n == 1:
			b.WriteString("5")
		case c == 's':
			b.WriteString("05")
		case c == 'S':
			if i == 0 || (p[i-1] != '.' && p[i-1] != ',') || n > 9 {
				return "", errors.New("milliseconds (S) must follow a '.' or ',' after the seconds")
			}
			b.WriteString(strings.Repeat("0", n))
		case c == 'a':
			b.WriteString("PM")
		case c == 'E' && n <= 3:
			b.WriteString("Mon")
		case c == 'E':
			b.WriteString("Monday")
		case c == 'z':
			b.WriteString("MST")
		case c == 'Z':
			b.WriteString("-0700")
		case c == 'X' && n == 1:
			b.WriteString("-07")
		case c == 'X' && n == 2:
			b.WriteString("-0700")
		case c == 'X':
			b.WriteString("-07:00")
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			return "", fmt.Errorf("pattern letter %q is not supported", string(c))
		default:
			if c >= '0' && c <= '9' {
				return "", fmt.Errorf("digit %q in a pattern would read as a Go layout element", string(c))
			}
			b.WriteString(p[i:j])
		}
		i = j
	}
	return b.String(), nil
}
