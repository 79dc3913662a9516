package session

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/memdiag/memdiag/chain"
	"github.com/memdiag/memdiag/internal/hostenv"
	"github.com/memdiag/memdiag/record"
)

// addChainSource wires the eBPF page-cache chain (--ebpf). Commands
// without the flag (EBPF "") do not trace it and list no status.
func addChainSource(_ context.Context, o *Options, h *record.Header, ws *Sources) {
	switch o.EBPF {
	case "":
		return
	case "off":
		h.Collectors = append(h.Collectors, record.CollectorStatus{Name: chain.Name, Reason: "off (--ebpf off)"})
		return
	}
	c, err := chain.Open(chain.Options{SysRoot: filepath.Join(o.Root, "sys"), PageSize: h.PageSize})
	if err != nil {
		if o.EBPF == "on" {
			ws.Fatal = fmt.Errorf("--ebpf on: %w", &hostenv.Unavailable{Path: chain.Name, Need: err.Error(), Err: err})
			return
		}
		ws.status(h, chain.Name, err)
		return
	}
	st := record.CollectorStatus{Name: chain.Name, Available: true}
	if m := c.Missing(); len(m) > 0 {
		st.Reason = strings.Join(m, "; ")
		ws.Warnings = append(ws.Warnings, chain.Name+": "+st.Reason)
	}
	h.Collectors = append(h.Collectors, st)
	ws.closers = append(ws.closers, func() { _ = c.Close() })
	ws.List = append(ws.List, c)
}
