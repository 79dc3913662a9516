package latency

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// Properties as JMeter reads them (java.util.Properties), with the
// columns JMeter writes in its own order.
func TestParseJMeterProperties(t *testing.T) {
	props := `# user.properties
! another comment
jmeter.save.saveservice.print_field_names = false
jmeter.save.saveservice.default_delimiter=;
jmeter.save.saveservice.timestamp_format=yyyy/MM/dd HH:mm:ss.SSS
jmeter.save.saveservice.thread_name:false
jmeter.save.saveservice.data_type  false
jmeter.save.saveservice.assertion_results_failure_message=false
jmeter.save.saveservice.bytes=FALSE
jmeter.save.saveservice.sent_bytes=false
jmeter.save.saveservice.thread_counts=nonsense
jmeter.save.saveservice.url=false
jmeter.save.saveservice.latency=\
    true
jmeter.save.saveservice.idle_time=false
jmeter.save.saveservice.connect_time=false
jmeter.save.saveservice.hostname=tr\u0075e
sample_variables=user,region
unrelated.key=whatever
`
	s, err := ParseJMeterProperties(strings.NewReader(props), "user.properties")
	if err != nil {
		t.Fatal(err)
	}
	// Every column whose default differs between 2.x and 3.1+ is set:
	// one candidate. "nonsense" is false, as in JMeter.
	if got := strings.Join(s.Columns, ","); got != `timeStamp,elapsed,label,responseCode,responseMessage,success,Latency,Hostname,"user","region"` || s.Alt != nil {
		t.Errorf("columns %s, alt %v", got, s.Alt)
	}
	if s.Delimiter != ';' || s.DateLayout != "2006/01/02 15:04:05.000" {
		t.Errorf("delimiter %q, layout %q", s.Delimiter, s.DateLayout)
	}
	// Such a file reads in the zone given (the JVM's, which JMeter used).
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip(err)
	}
	data := "2026/12/01 22:30:00.250;12;home;200;OK;true;11;host1;alice;\"eu;west\"\n" +
		"2026/12/01 22:30:01.000;7;home;Non HTTP response code: java.net.ConnectException;refused;false;0;host1;bob;us\n"
	imp, err := Import(strings.NewReader(data), "r.jtl", ImportOptions{JMeter: s, Location: berlin})
	if err != nil {
		t.Fatal(err)
	}
	if len(imp.Requests.Slice()) != 2 || imp.Report.Bad != 0 {
		t.Fatalf("%+v", imp.Report)
	}
	if q := imp.Requests.Slice()[0]; !q.Start.Equal(time.Date(2026, 12, 1, 21, 30, 0, 250e6, time.UTC)) || q.Latency != 12*time.Millisecond || q.Status != 200 || q.Err {
		t.Errorf("first %+v", q)
	}
	if q := imp.Requests.Slice()[1]; q.Status != 0 || !q.Err {
		t.Errorf("second %+v", q)
	}
	// Without a zone the dates cannot be placed: bad rows, never a guess.
	imp, err = Import(strings.NewReader(data), "r.jtl", ImportOptions{JMeter: s})
	if err != nil || imp.Report.Bad != 2 || !errors.Is(imp.Report.BadLines[0].Err, errNoZone) {
		t.Errorf("no zone: %v %+v", err, imp.Report)
	}
	// Only 3.1+'s defaults for what is not set: two candidates.
	s, err = ParseJMeterProperties(strings.NewReader("jmeter.save.saveservice.print_field_names=false\n"), "p")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.Columns, ","); got != "timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,failureMessage,bytes,sentBytes,grpThreads,allThreads,URL,Latency,IdleTime,Connect" {
		t.Errorf("3.1+ defaults %s", got)
	}
	// JMeter 2.13's defaults, as its real header shows (jmeter-2.13-header.jtl).
	if got := strings.Join(s.Alt, ","); got != "timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,bytes,grpThreads,allThreads,Latency" {
		t.Errorf("2.x defaults %s", got)
	}
	imp = importFixture(t, "jmeter-noheader.jtl", ImportOptions{JMeter: s})
	if imp.Report.Bad != 0 || imp.Report.Rows == 0 || !strings.Contains(imp.Report.Columns, "JMeter 2.x's defaults") {
		t.Errorf("2.13 header-less file: %+v", imp.Report)
	}
}

func TestParseJMeterPropertiesErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a=1\njmeter.save.saveservice.time=false\n", "p:2: jmeter.save.saveservice.time=false: JMeter wrote no elapsed"},
		{"jmeter.save.saveservice.timestamp_format=none\n", "p:1: jmeter.save.saveservice.timestamp_format=none"},
		{"\n\njmeter.save.saveservice.timestamp_format=yyyy-MM-dd'T'HH:mm:ss.SSS G\n", `p:3: jmeter.save.saveservice.timestamp_format=yyyy-MM-dd'T'HH:mm:ss.SSS G: pattern letter "G" is not supported`},
		{"jmeter.save.saveservice.default_delimiter=ab\n", `p:1: jmeter.save.saveservice.default_delimiter="ab"`},
		{"jmeter.save.saveservice.default_delimiter=x\n", "not a letter"},
		{"jmeter.save.saveservice.output_format=xml\n", "the results are XML"},
		{"k=\\u12\n", `p:1: malformed \u escape`},
	} {
		_, err := ParseJMeterProperties(strings.NewReader(tc.in), "p")
		if err == nil || !errors.Is(err, ErrJMeterSave) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.in, err, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"timeStamp,elapsed,Elapsed", `column 3 "Elapsed" is not one of JMeter's`},
		{"timeStamp,,elapsed", "column 2 is empty"},
		{"timeStamp,elapsed,label,label", `column "label" given twice`},
		{"label,success", "must include timeStamp and elapsed"},
	} {
		_, err := ParseJMeterColumns(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.in, err, tc.want)
		}
	}
	if s, err := ParseJMeterColumns(` timeStamp, elapsed ,success,"myVar"`); err != nil || len(s.Columns) != 4 || s.Columns[3] != `"myVar"` {
		t.Errorf("%+v %v", s, err)
	}
}

func TestJavaDateLayout(t *testing.T) {
	for in, want := range map[string]string{
		"yyyy/MM/dd HH:mm:ss.SSS":        "2006/01/02 15:04:05.000",
		"yyyy-MM-dd'T'HH:mm:ss.SSSXXX":   "2006-01-02T15:04:05.000-07:00",
		"dd MMM yy hh:mm:ss a Z":         "02 Jan 06 03:04:05 PM -0700",
		"EEE, d MMM yyyy HH:mm:ss,SSS z": "Mon, 2 Jan 2006 15:04:05,000 MST",
		"yyyy-MM-dd''HH":                 "2006-01-02'15",
	} {
		if got, err := javaDateLayout(in); err != nil || got != want {
			t.Errorf("%q = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"HH:mm:ss SSS", "yyyy-MM-dd 'at' 10", "'unclosed", "yyyy-MM-dd 'Jan'"} {
		if got, err := javaDateLayout(in); err == nil {
			t.Errorf("%q = %q, want an error", in, got)
		}
	}
}
