package testenv

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"
)

// PID1Journal reads `journalctl -o json _PID=1` and returns, per unit
// (UNIT=), the times (__REALTIME_TIMESTAMP, µs) of the entries keep
// accepts.
func PID1Journal(t testing.TB, path string, keep func(map[string]any) bool) map[string][]time.Time {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	times := map[string][]time.Time{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		var e map[string]any
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("%s:%d: %v", path, n, err)
		}
		unit, _ := e["UNIT"].(string)
		if unit == "" || !keep(e) {
			continue
		}
		us, err := strconv.ParseInt(fmt.Sprint(e["__REALTIME_TIMESTAMP"]), 10, 64)
		if err != nil {
			t.Fatalf("%s:%d: __REALTIME_TIMESTAMP %v: %v", path, n, e["__REALTIME_TIMESTAMP"], err)
		}
		times[unit] = append(times[unit], time.UnixMicro(us).UTC())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return times
}
