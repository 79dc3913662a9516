package latency

import (
	"encoding/xml"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// jmeterXML parses a JMeter JTL in XML form
// (jmeter.save.saveservice.output_format=xml; JMeter user manual,
// "XML Log format 2.1"). JMeter writes each sample's start tag on one
// line, its attributes there:
//
//	<testResults version="1.2">
//	<httpSample t="3" it="0" lt="3" ct="1" ts="1795988650410" s="true" lb="hello" rc="200" rm="OK" tn="t 1-1" dt="text" by="3"/>
//	<sample t="9" ts="1795988650410" s="false" lb="TC" rc="200" rm="Number of samples in transaction : 2, number of failing samples : 1" …>
//	  <httpSample …/>
//	</sample>
//
// ts is the start in epoch ms, t the elapsed ms, s success, rc the
// response code. Samples nested in a request sample are its sub-results
// (a redirect's) and are not requests of their own; a Transaction
// Controller's own sample (rm "Number of samples in transaction …") is
// excluded and counted in ImportReport.Transactions, the samples nested
// in it are imported.
type jmeterXML struct {
	rep   *ImportReport
	stack []bool // open sample elements: true for a request (its children are sub-results)
}

func (j *jmeterXML) parse(rec string) (row, bool, bool, error) {
	s := strings.TrimSpace(rec)
	switch {
	case strings.HasPrefix(s, "</httpSample"), strings.HasPrefix(s, "</sample"):
		if len(j.stack) > 0 {
			j.stack = j.stack[:len(j.stack)-1]
		}
		return row{}, false, false, nil
	case !strings.HasPrefix(s, "<httpSample") && !strings.HasPrefix(s, "<sample"):
		return row{}, false, false, nil // declaration, testResults, a URL or body element
	}
	end := strings.IndexByte(s, '>')
	if end < 0 {
		return row{}, false, false, fmt.Errorf("%w: sample start tag not closed on its line", ErrParse)
	}
	tag, closed := s[:end+1], s[end-1] == '/'
	if !closed {
		tag = tag[:len(tag)-1] + "/>"
	}
	tok, err := xml.NewDecoder(strings.NewReader(tag)).Token()
	se, ok := tok.(xml.StartElement)
	if err != nil || !ok {
		return row{}, false, false, fmt.Errorf("%w: bad sample tag: %w", ErrParse, err)
	}
	attr := map[string]string{}
	for _, a := range se.Attr {
		attr[a.Name.Local] = a.Value
	}
	sub := false
	for _, req := range j.stack {
		sub = sub || req
	}
	tc := strings.HasPrefix(attr["rm"], transactionPrefix)
	if !closed {
		j.stack = append(j.stack, !tc)
	}
	switch {
	case sub:
		return row{}, false, false, nil
	case tc:
		if j.rep != nil {
			j.rep.Transactions++
		}
		return row{}, false, false, nil
	}
	ts, ok := attr["ts"]
	if !ok {
		return row{}, false, false, fmt.Errorf("%w: sample without ts (start time)", ErrParse)
	}
	t, err := parseTime(ts, nil)
	if err != nil {
		return row{}, false, false, bad("ts", err)
	}
	el, ok := attr["t"]
	if !ok {
		return row{}, false, false, fmt.Errorf("%w: sample without t (elapsed): no latency (jmeter.save.saveservice.time=false)", ErrParse)
	}
	ms, err := strconv.ParseInt(el, 10, 64)
	switch {
	case err != nil:
		return row{}, false, false, bad("t", fmt.Errorf("not an integer: %q", el))
	case ms < 0 || ms > maxElapsedMs:
		return row{}, false, false, bad("t", errors.New("out of range"))
	}
	q := Request{Start: t, Latency: time.Duration(ms) * time.Millisecond}
	q.Status, _ = strconv.Atoi(attr["rc"]) // "Non HTTP response code: …" → 0
	switch attr["s"] {
	case "true":
	case "false":
		q.Err = true
	default:
		return row{}, false, false, bad("s", fmt.Errorf("want true or false, got %q", attr["s"]))
	}
	return row{req: q}, true, false, nil
}
