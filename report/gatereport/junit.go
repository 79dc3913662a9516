package gatereport

import (
	"encoding/xml"
	"fmt"
	"github.com/memdiag/memdiag/gate"
	"io"
	"strings"
	"time"
)

// JUnit XML as read by GitLab, Jenkins and the GitHub test-report actions:
// one <testcase> per threshold (a breach is a <failure>, a threshold that
// could not be judged an <error>), plus one for the wrapped command.
// Schema: https://github.com/testmoapp/junitxml (the common subset).
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string          `xml:"name,attr"`
	Tests     int             `xml:"tests,attr"`
	Failures  int             `xml:"failures,attr"`
	Errors    int             `xml:"errors,attr"`
	Time      string          `xml:"time,attr"`
	Timestamp string          `xml:"timestamp,attr,omitempty"`
	Props     *junitPropList  `xml:"properties,omitempty"`
	Cases     []junitTestCase `xml:"testcase"`
	SystemErr string          `xml:"system-err,omitempty"`
}

type junitPropList struct {
	Props []junitProp `xml:"property"`
}

type junitProp struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitTestCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the report as JUnit XML; loc is the zone of the times
// in messages (UTC if nil).
func WriteJUnit(w io.Writer, rep *gate.Report, loc *time.Location) error {
	if loc == nil {
		loc = time.UTC
	}
	dur := fmt.Sprintf("%.3f", rep.End.Sub(rep.Start).Seconds())
	s := junitSuite{Name: "memdiag gate", Time: dur,
		Props: &junitPropList{Props: []junitProp{{"scope", rep.Scope.String()}, {"samples", fmt.Sprint(rep.Samples)}}}}
	if !rep.Start.IsZero() {
		s.Timestamp = rep.Start.UTC().Format(time.RFC3339)
	}
	suspect := SuspectTexts(rep, loc)
	if len(suspect) > 0 {
		// Where a CI system shows the suite's output, and in the cases of
		// the thresholds on that PSI below.
		s.SystemErr = "warning: " + strings.Join(suspect, "\nwarning: ")
		s.Props.Props = append(s.Props.Props, junitProp{"suspect_psi", fmt.Sprint(len(suspect))}, junitProp{"kernel", rep.Kernel})
	}
	for i := range rep.Results {
		r := &rep.Results[i]
		tc := junitTestCase{Name: r.Threshold.Expr, Classname: "memdiag.gate", Time: dur}
		warn := ""
		for _, l := range suspectFor(rep, r.Threshold, loc) {
			warn += "\nwarning: " + l
		}
		if r.Status != gate.NoData {
			tc.SystemOut = fmt.Sprintf("observed %s (%s)", FormatValue(r.Threshold, r.Observed), r.Threshold.Metric.Doc) + warn
		}
		switch r.Status {
		case gate.Fail:
			msg := fmt.Sprintf("%s breached: observed %s", r.Threshold.Expr, FormatValue(r.Threshold, r.Observed))
			text := msg + " over the run, " + rep.Scope.String()
			if wt := WorstText(rep, r, loc); wt != "" {
				text += "\nworst moment: " + wt
			}
			tc.Failure = &junitProblem{Message: msg, Type: "threshold breached", Text: text + warn}
			s.Failures++
		case gate.NoData:
			why := Reason(r)
			tc.Error = &junitProblem{Message: "could not be judged: " + why, Type: "no data", Text: why + warn}
			s.Errors++
		}
		s.Cases = append(s.Cases, tc)
	}
	if c := rep.Command; c != nil {
		tc := junitTestCase{Name: "command: " + strings.Join(c.Args, " "), Classname: "memdiag.gate", Time: dur}
		if c.Failed() {
			ended := CommandText(c)
			tc.Failure = &junitProblem{Message: ended, Type: "command failed", Text: strings.Join(c.Args, " ") + ": " + ended}
			s.Failures++
		}
		s.Cases = append(s.Cases, tc)
	}
	s.Tests = len(s.Cases)
	doc := junitSuites{Name: "memdiag gate", Tests: s.Tests, Failures: s.Failures, Errors: s.Errors, Time: dur, Suites: []junitSuite{s}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
