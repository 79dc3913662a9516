package record

import (
	"bufio"
	"encoding"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
)

// v1TypeNames are the names schema.txt gives the wire types with their own
// MarshalJSON, where the name differs from the type's: the name is not
// part of the file, the keys listed under it are. PSILine was psi.Line
// when schema 1 was frozen, before the wire types moved into record.
var v1TypeNames = map[reflect.Type]string{reflect.TypeFor[PSILine](): "psi.Line"}

// wireSchema lists every JSON path a recording line can carry, with its Go
// kind: "sample.vmstat.pgscan_direct_pages uint64". It walks the types
// record writes (Header, Sample, End) and every type they hold. foreign
// lists the struct types it met outside package record (and time): a
// recording's structs are record's own, so that a collector's struct
// cannot change the file (TestWireTypesOwnedByRecord).
func wireSchema() (out, foreign []string) {
	seen := map[reflect.Type]bool{}
	recordPkg := reflect.TypeFor[Sample]().PkgPath()
	var walk func(prefix string, t reflect.Type)
	walk = func(prefix string, t reflect.Type) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch {
		case t == reflect.TypeFor[time.Time]():
			out = append(out, prefix+" time")
			return
		case t == reflect.TypeFor[time.Duration]():
			out = append(out, prefix+" duration_ns")
			return
		case t.Implements(reflect.TypeFor[encoding.TextMarshaler]()) || reflect.PointerTo(t).Implements(reflect.TypeFor[encoding.TextMarshaler]()):
			// encoding/json writes such a type as the string its
			// MarshalText returns, whatever its kind: a named string
			// type of a collector that gains one changes the file.
			out = append(out, prefix+" text:"+t.String())
			return
		case t.Implements(reflect.TypeFor[json.Marshaler]()) || reflect.PointerTo(t).Implements(reflect.TypeFor[json.Marshaler]()):
			// A type with its own MarshalJSON: list the keys its zero
			// value writes, so a renamed key still shows.
			name, ok := v1TypeNames[t]
			if !ok {
				name = t.String()
			}
			out = append(out, prefix+" custom:"+name)
			if t.PkgPath() != recordPkg {
				foreign = append(foreign, prefix+" "+t.String())
			}
			b, err := json.Marshal(reflect.New(t).Interface())
			var keys map[string]json.RawMessage
			if err == nil && json.Unmarshal(b, &keys) == nil {
				for k := range keys {
					out = append(out, prefix+"."+k+" custom")
				}
			}
			return
		}
		switch t.Kind() {
		case reflect.Struct:
			if t.PkgPath() != recordPkg {
				foreign = append(foreign, prefix+" "+t.String())
			}
			if seen[t] {
				out = append(out, prefix+" recursive:"+t.String())
				return
			}
			seen[t] = true
			defer delete(seen, t)
			for i := range t.NumField() {
				f := t.Field(i)
				if !f.IsExported() {
					continue
				}
				name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
				if name == "-" {
					continue
				}
				if f.Anonymous && name == "" {
					walk(prefix, f.Type)
					continue
				}
				if name == "" {
					name = f.Name
				}
				walk(prefix+"."+name, f.Type)
			}
		case reflect.Slice, reflect.Array:
			walk(prefix+"[]", t.Elem())
		case reflect.Map:
			walk(prefix+"{"+t.Key().Kind().String()+"}", t.Elem())
		default:
			out = append(out, prefix+" "+t.Kind().String())
		}
	}
	walk("header", reflect.TypeFor[Header]())
	walk("sample", reflect.TypeFor[Sample]())
	walk("end", reflect.TypeFor[End]())
	walk("gap", reflect.TypeFor[Gap]())
	sort.Strings(out)
	return out, foreign
}

// TestWireTypesOwnedByRecord fails when a line of the recording holds a
// struct, or a type with its own MarshalJSON, from another package: its
// owner could then change the file by editing its struct. Declare a wire
// type in wire.go and convert to it (a Go conversion where the two
// structs match).
func TestWireTypesOwnedByRecord(t *testing.T) {
	_, foreign := wireSchema()
	for _, f := range foreign {
		t.Errorf("%s: not a record type; the recording's structs are declared in package record (wire.go)", f)
	}
}

// TestWireSchemaFrozen keeps every JSON path of every schema version
// readable: testdata/vN/schema.txt are frozen (never rewritten, not even
// by make golden). A path that disappears or changes kind — a renamed
// JSON tag in any collector's struct, a field turned from pages to bytes
// under the same name — fails here, because every recording users
// already have carries the old one. New optional paths are allowed (old
// readers ignore them); they are listed so that the next schema file
// includes them. The current version must have its file.
func TestWireSchemaFrozen(t *testing.T) {
	now := map[string]bool{}
	paths, _ := wireSchema()
	for _, l := range paths {
		now[l] = true
	}
	for v := 1; v <= SchemaVersion; v++ {
		name := fmt.Sprintf("testdata/v%d/schema.txt", v)
		f, err := os.Open(name)
		if err != nil {
			t.Fatalf("SchemaVersion %d: %v (freeze testdata/v%d/ beside the older ones and keep their tests)", SchemaVersion, err, v)
		}
		frozen := map[string]bool{}
		sc := bufio.NewScanner(f)
		for n := 1; sc.Scan(); n++ {
			l := sc.Text()
			if l == "" || strings.HasPrefix(l, "#") {
				continue
			}
			frozen[l] = true
			if !now[l] {
				t.Errorf("%s:%d: %q is no longer written: recordings of schema %d carry it; "+
					"keep the tag and kind (add a new field instead), or bump SchemaVersion with a reader for %d", name, n, l, v, v)
			}
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		var added []string
		for l := range now {
			if !frozen[l] {
				added = append(added, l)
			}
		}
		sort.Strings(added)
		if v == SchemaVersion && len(added) > 0 {
			t.Logf("paths added since %s was frozen (compatible):\n%s", name, strings.Join(added, "\n"))
		}
	}
}

// TestWireSchemaDetectsRename checks that the walk sees a renamed tag, so
// TestWireSchemaFrozen can fail.
func TestWireSchemaDetectsRename(t *testing.T) {
	type a struct {
		X uint64 `json:"pgscan_direct_pages"`
	}
	type b struct {
		X uint64 `json:"pgscan_direct"`
	}
	sa, sb := fmt.Sprint(reflect.TypeFor[a]().Field(0).Tag), fmt.Sprint(reflect.TypeFor[b]().Field(0).Tag)
	if sa == sb {
		t.Fatal("tags compare equal")
	}
	n := 0
	paths, _ := wireSchema()
	for _, l := range paths {
		if l == "sample.vmstat.pgscan_direct_pages uint64" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("sample.vmstat.pgscan_direct_pages uint64 appears %d times in the schema, want 1", n)
	}
}
