package gate

import (
	"bytes"
	"fmt"
	"io"

	"go.yaml.in/yaml/v3"
)

// Read reads thresholds from a YAML or JSON file (JSON is YAML, so one
// parser reads both). Two shapes are accepted — a list of expressions, or
// a mapping whose "thresholds" key holds that list:
//
//	thresholds:
//	  - memory.full.stall<1%
//	  - swap.out<64MiB
//
//	["memory.full.stall<1%", "oom_kills==0"]
//
// r is read whole (up to a bound); name is the file name errors give
// ("-" for standard input, say), and they name its line of the bad entry.
func Read(r io.Reader, name string) ([]*Threshold, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxThresholdsFile+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(b) > maxThresholdsFile {
		return nil, fmt.Errorf("%s: %w: more than %d bytes; a thresholds file is a short list", name, ErrThreshold, maxThresholdsFile)
	}
	return parseFile(b, name)
}

// maxThresholdsFile bounds what [Read] takes from a stream.
const maxThresholdsFile = 1 << 20

func parseFile(b []byte, path string) ([]*Threshold, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, fmt.Errorf("%s: %w: the file is empty; list thresholds under \"thresholds:\"", path, ErrThreshold)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	n := &doc
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	if n.Kind == yaml.MappingNode {
		var list *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Value != "thresholds" {
				return nil, fmt.Errorf("%s:%d: %w: unknown key %q; the file holds a \"thresholds\" list", path, k.Line, ErrThreshold, k.Value)
			}
			list = n.Content[i+1]
		}
		if list == nil {
			return nil, fmt.Errorf("%s:%d: %w: no \"thresholds\" key", path, n.Line, ErrThreshold)
		}
		n = list
	}
	if n.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("%s:%d: %w: want a list of expressions such as - memory.full.stall<1%%", path, n.Line, ErrThreshold)
	}
	var out []*Threshold
	for _, item := range n.Content {
		if item.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("%s:%d: %w: want an expression string, e.g. \"memory.full.stall<1%%\"", path, item.Line, ErrThreshold)
		}
		t, err := Parse(item.Value)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, item.Line, err)
		}
		out = append(out, t)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: %w: no thresholds in the list", path, ErrThreshold)
	}
	return out, nil
}
