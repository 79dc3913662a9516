package cmd

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/memdiag/memdiag/chain"
	"github.com/memdiag/memdiag/internal/hostenv"
	"github.com/memdiag/memdiag/record"
)

// ebpfFlagHelp is the --ebpf help of watch and record.
const ebpfFlagHelp = "trace the page-cache chain with eBPF: auto, on or off. Records per sample who added pages to the page cache, whose file pages reclaim evicted and by whom (kswapd, direct, cgroup limit), who stalled in reclaim and for how long, and who refaulted (docs/recording.md, \"chain\"). Costs a few hundred ns of kernel time per page added or evicted, summed in kernel maps read once per sample; needs root (CAP_BPF, CAP_PERFMON) and kernel BTF. auto: skip with a note when it cannot load; on: exit 5 instead"

// addChainSource wires the eBPF page-cache chain (--ebpf). Commands
// without the flag (EBPF "") do not trace it and list no status.
func addChainSource(_ context.Context, o *watchOptions, h *record.Header, ws *watchSources) {
	switch o.EBPF {
	case "":
		return
	case "off":
		h.Collectors = append(h.Collectors, record.CollectorStatus{Name: chain.Name, Reason: "off (--ebpf off)"})
		return
	}
	c, err := chain.Open(chain.Options{SysRoot: filepath.Join(o.F.Root, "sys"), PageSize: h.PageSize})
	if err != nil {
		if o.EBPF == "on" {
			ws.fatal = fmt.Errorf("--ebpf on: %w", &hostenv.Unavailable{Path: chain.Name, Need: err.Error(), Err: err})
			return
		}
		ws.status(h, chain.Name, err)
		return
	}
	st := record.CollectorStatus{Name: chain.Name, Available: true}
	if m := c.Missing(); len(m) > 0 {
		st.Reason = strings.Join(m, "; ")
		ws.warnings = append(ws.warnings, chain.Name+": "+st.Reason)
	}
	h.Collectors = append(h.Collectors, st)
	ws.closers = append(ws.closers, func() { _ = c.Close() })
	ws.list = append(ws.list, c)
}
