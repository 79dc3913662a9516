package memstate

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/memdiag/memdiag/internal/rootfs"
)

// KernelLogOptions say where [Collector.ReadKernelLog] finds OOM kills.
type KernelLogOptions struct {
	// LogOptions say how to read the log's times (Boot: /proc/stat
	// btime of the host whose log is read).
	LogOptions
	// File is a file of kernel log text in any form (dmesg, dmesg -T,
	// journalctl -k, /dev/kmsg records, syslog) the user gave (mem
	// --kernel-log); "" reads the host's own log.
	File string
	// Run runs a kernel log command (dmesg, journalctl) when /dev/kmsg
	// cannot be read; nil never does. Set it only for the running host
	// (root "/"): the commands read its log, not a fixture's.
	Run func(ctx context.Context, name string, args ...string) ([]byte, error)
}

// logCommands are the commands tried, in order, when /dev/kmsg cannot be
// read: dmesg (needs CAP_SYSLOG under kernel.dmesg_restrict=1), then the
// journal's kernel messages with their since-boot stamps.
var logCommands = [][]string{{"dmesg"}, {"journalctl", "-k", "-o", "short-monotonic", "--no-pager", "-q"}}

// ReadKernelLog reads the OOM kills of a kernel log: o.File when given,
// else <root>/dev/kmsg, else (o.Run set) the output of dmesg, else of
// journalctl -k. When none could be read, KernelLog.Unreadable says why
// each failed.
func (c *Collector) ReadKernelLog(ctx context.Context, o KernelLogOptions) KernelLog {
	if o.File != "" {
		return readLogFile(ctx, o.File, o.LogOptions)
	}
	lo := o.LogOptions
	b, err := ReadKmsg(ctx, c.root)
	if err == nil {
		kills, perr := ParseKernelLogWith(strings.NewReader(string(b)), c.KmsgPath(), lo)
		if perr == nil {
			return KernelLog{Source: "/dev/kmsg", Kills: kills}
		}
		err = perr
	}
	why := []string{err.Error()}
	if o.Run != nil {
		log, cmdWhy := runLogCommands(ctx, o.Run, lo)
		if log != nil {
			return *log
		}
		why = append(why, cmdWhy...)
	}
	return KernelLog{Unreadable: strings.Join(why, "; ")}
}

// readLogFile reads the OOM kills of a pasted log. It may come from
// another host or boot: its raw stamps are time since that boot, not
// this host's; only the wall times it carries itself are kept.
func readLogFile(ctx context.Context, path string, lo LogOptions) KernelLog {
	lo.Boot = time.Time{}
	// Bounded (a regular file or a pipe, at most 256 MiB, read whole)
	// and cancellable: --kernel-log names any file.
	b, err := rootfs.ReadInput(ctx, path, rootfs.KernelLogLimit, true)
	if err == nil {
		var kills []OOMKill
		if kills, err = ParseKernelLogWith(strings.NewReader(string(b)), path, lo); err == nil {
			return KernelLog{Source: path, Kills: kills, File: true}
		}
	}
	return KernelLog{Unreadable: err.Error(), File: true}
}

// runLogCommands tries each of logCommands in turn and returns the first
// log that reads, or nil and why each failed.
func runLogCommands(ctx context.Context, run func(context.Context, string, ...string) ([]byte, error), lo LogOptions) (*KernelLog, []string) {
	var why []string
	for _, c := range logCommands {
		out, err := run(ctx, c[0], c[1:]...)
		if err != nil {
			why = append(why, err.Error())
			continue
		}
		if len(strings.TrimSpace(string(out))) == 0 {
			// journalctl prints nothing, successfully, without a journal
			// or without the right to read it: that is not "no kills".
			why = append(why, c[0]+": no kernel messages (no journal, or no access to it)")
			continue
		}
		kills, err := ParseKernelLogWith(strings.NewReader(string(out)), c[0], lo)
		if err != nil {
			why = append(why, err.Error())
			continue
		}
		return &KernelLog{Source: strings.Join(c[:min(2, len(c))], " "), Kills: kills}, nil
	}
	return nil, why
}

// RunLogCommand runs a kernel-log reader for [KernelLogOptions.Run]; its
// error carries the command's stderr, since "exit status 1" alone tells
// the user nothing.
func RunLogCommand(ctx context.Context, name string, args ...string) ([]byte, error) {
	c := exec.CommandContext(ctx, name, args...)
	var stderr strings.Builder
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %s", name, err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
