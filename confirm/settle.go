package confirm

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/procfs"

	"github.com/memdiag/memdiag/internal/english"
	"github.com/memdiag/memdiag/process"
	"github.com/memdiag/memdiag/timers"
)

// Holding a job off stops its next firing, not the one running: a crontab
// line commented out, or a timer stopped (systemctl stop NAME.timer
// leaves NAME.service running), lets an instance started just before the
// hold go on into the B block, where it would count as B's. So before a B
// block memdiag waits for the job's instances running at the hold to end
// — at most a bound, after which the block starts anyway and is marked.

// Running lists what of a job runs now: the PIDs of a crontab line's
// commands, or one entry (the service's main PID, or 0 when systemd does
// not give one) while the timer's service is active. Nil when memdiag
// cannot tell (a root other than "/", an anacron job).
type Running func(ctx context.Context) ([]int, error)

// settlePoll is how often [Settle] looks again.
const settlePoll = 100 * time.Millisecond

// settleQuiet is how long nothing of the job must run before a B block
// starts: a firing that cron or systemd began just before the hold (the
// crontab read, the service's start job queued) can take a moment to
// show as a process, longer on a loaded host.
const settleQuiet = 250 * time.Millisecond

// Settle waits until running has reported nothing for settleQuiet, or
// max has passed, or ctx ends. It returns how long it waited for
// something that ran to end (0 when nothing ran) and what still ran when
// it gave up (nil when nothing did).
func Settle(ctx context.Context, running Running, max time.Duration) (waited time.Duration, left []int, err error) {
	start := time.Now()
	var quietSince time.Time // zero while something runs
	seen := false
	for {
		pids, err := running(ctx)
		now := time.Now()
		if err != nil {
			return now.Sub(start), nil, err
		}
		switch {
		case len(pids) > 0:
			seen, quietSince = true, time.Time{}
			if now.Sub(start) >= max {
				return now.Sub(start), pids, nil
			}
		case quietSince.IsZero():
			quietSince = now
		}
		if !quietSince.IsZero() && now.Sub(quietSince) >= settleQuiet {
			if !seen {
				return 0, nil, nil
			}
			return quietSince.Sub(start), nil, nil
		}
		select {
		case <-ctx.Done():
			return now.Sub(start), pids, context.Cause(ctx)
		case <-time.After(settlePoll):
		}
	}
}

// SettleMax is how long memdiag waits, before a B block, for the job's
// running instance to end: twice the block, at least 30 s and at most 10
// minutes (a block of one run of the command: a minute).
func SettleMax(block time.Duration) time.Duration {
	if block <= 0 {
		return time.Minute
	}
	return min(max(2*block, 30*time.Second), 10*time.Minute)
}

// SayWaiting returns an Experiment.Waiting that tells w, as progress,
// that block b of total waits for the running instances of jobs: started
// before the hold (a B block), or when it ended (an A block).
func SayWaiting(w io.Writer, jobs []string, total int) func(b Block, pids []int, limit time.Duration) {
	whose := english.List(jobs, "or") + "'s instance"
	if len(jobs) > 1 {
		whose = "the instances of " + english.List(jobs, "and")
	}
	return func(b Block, pids []int, limit time.Duration) {
		known := slices.DeleteFunc(slices.Clone(pids), func(p int) bool { return p <= 0 })
		which := "its PID not known"
		if len(known) > 0 {
			which = "PID " + strings.Trim(fmt.Sprint(known), "[]")
		}
		when := "before the hold"
		if b.Arm != HeldOff {
			when = "when the hold ended"
		}
		fmt.Fprintf(w, "memdiag: block %d/%d (%s): waiting up to %s for %s started %s to end (%s)\n",
			b.Index+1, total, b.Arm, limit, whose, when, which)
	}
}

// JobsRunning returns how to find the running instances of any of jobs
// on the live host: their PIDs, from each job's JobRunning; nil where
// memdiag can tell for none of them.
func JobsRunning(jobs []timers.Job, env Env) Running {
	var each []Running
	for _, j := range jobs {
		if r := JobRunning(j, env); r != nil {
			each = append(each, r)
		}
	}
	if len(each) == 0 {
		return nil
	}
	return func(ctx context.Context) ([]int, error) {
		var pids []int
		for _, r := range each {
			p, err := r(ctx)
			if err != nil {
				return pids, err
			}
			pids = append(pids, p...)
		}
		return pids, nil
	}
}

// JobRunning returns how to find job's running instances on the live
// host (env.Root "/"), nil where memdiag cannot tell.
func JobRunning(job timers.Job, env Env) Running {
	if filepath.Clean(env.Root) != "/" {
		return nil
	}
	switch job.Source {
	case timers.Cron:
		cmd := CronShellCommand(job.Command)
		if cmd == "" {
			return nil
		}
		return func(ctx context.Context) ([]int, error) { return cronInstances(ctx, "/proc", cmd) }
	case timers.Systemd:
		if job.Unit == "" || userTimer(job) {
			return nil
		}
		return func(ctx context.Context) ([]int, error) { return serviceRunning(ctx, env, job.Unit) }
	}
	return nil
}

// CronShellCommand is the string cron gives `/bin/sh -c` for a crontab
// line's command (crontab(5)): up to the first unescaped '%' (the rest is
// the command's standard input), with "\%" made '%'.
func CronShellCommand(command string) string {
	var b strings.Builder
	for i := 0; i < len(command); i++ {
		switch {
		case command[i] == '\\' && i+1 < len(command) && command[i+1] == '%':
			b.WriteByte('%')
			i++
		case command[i] == '%':
			return b.String()
		default:
			b.WriteByte(command[i])
		}
	}
	return b.String()
}

// cronInstances lists the processes running cmd the way cron runs a
// line: argv "<shell> -c <cmd>" (cron's execle of the user's SHELL,
// /bin/sh by default), or — the shell having exec'd a simple command in
// its place, as dash and bash do — a child of a cron process whose
// arguments are cmd's words. A process that vanishes or denies its files
// while the list is read is not one, nor is a match whose parent matched:
// that is the shell's own fork for a command of the line, caught before
// its exec (dash runs "sleep 30; true" so), part of the same instance.
func cronInstances(ctx context.Context, procRoot, cmd string) ([]int, error) {
	fs, err := procfs.NewFS(procRoot)
	if err != nil {
		return nil, fmt.Errorf("finding the job's running instances: %w", err)
	}
	procs, err := fs.AllProcs()
	if err != nil {
		return nil, fmt.Errorf("finding the job's running instances: %w", err)
	}
	words := strings.Fields(cmd)
	var pids []int
	parent := map[int]int{}
	for _, p := range procs {
		argv, err := process.ReadCmdline(ctx, procRoot, p.PID, int64(len(cmd))+4096)
		if err != nil || len(argv) == 0 {
			continue
		}
		if len(argv) == 3 && strings.HasSuffix(argv[0], "sh") && argv[1] == "-c" && argv[2] == cmd {
			pids = append(pids, p.PID)
			if st, err := process.ReadStat(ctx, procRoot, p.PID); err == nil {
				parent[p.PID] = st.PPID
			}
			continue
		}
		if slices.Equal(argv, words) && parentIsCron(ctx, procRoot, p.PID) {
			pids = append(pids, p.PID)
		}
	}
	matched := slices.Clone(pids)
	return slices.DeleteFunc(pids, func(pid int) bool {
		ppid, ok := parent[pid]
		return ok && slices.Contains(matched, ppid)
	}), nil
}

// parentIsCron says whether pid's parent is named cron or crond (Debian's
// cron forks a child of its own name for each job it runs).
func parentIsCron(ctx context.Context, procRoot string, pid int) bool {
	st, err := process.ReadStat(ctx, procRoot, pid)
	if err != nil {
		return false
	}
	comm, err := process.ReadComm(ctx, procRoot, st.PPID)
	return err == nil && timers.CronDaemon(comm)
}

// serviceRunning says whether unit runs: active and not merely "exited"
// (a oneshot with RemainAfterExit=), or on its way in or out
// (activating — a oneshot while it runs —, deactivating, reloading);
// org.freedesktop.systemd1(5) ActiveState and SubState.
func serviceRunning(ctx context.Context, env Env, unit string) ([]int, error) {
	var pids []int
	_, err := withUnits(ctx, env, func(u UnitControl) (bool, error) {
		st, err := u.ListUnitsByNamesContext(ctx, []string{unit})
		if err != nil {
			return false, fmt.Errorf("%s: %w", unit, err)
		}
		if len(st) == 0 {
			return false, nil
		}
		s := st[0]
		running := slices.Contains([]string{"activating", "deactivating", "reloading"}, s.ActiveState) ||
			(s.ActiveState == "active" && s.SubState != "exited")
		if !running {
			return false, nil
		}
		// The main process, or, once it has exited while an
		// ExecStartPost= (or a oneshot's ExecStart=) still runs, the
		// control process; 0 when systemd names neither.
		pid := 0
		for _, prop := range []string{"MainPID", "ControlPID"} {
			if p, err := u.GetServicePropertyContext(ctx, unit, prop); err == nil && pid == 0 {
				if v, ok := p.Value.Value().(uint32); ok {
					pid = int(v)
				}
			}
		}
		pids = []int{pid}
		return true, nil
	})
	return pids, err
}
