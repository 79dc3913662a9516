package correlate

import (
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/memdiag/memdiag/process"
	"github.com/memdiag/memdiag/timers"
)

// How a process is tied to a job (Tie.How).
const (
	TieUnit     = "unit"     // its cgroup is the job's unit
	TieAncestry = "ancestry" // a process of the job started it (parent PID chain)
	TieProgram  = "program"  // its own program (argv[0], exe, or the script an interpreter runs) is one the job runs
)

// interpreters run a script named by their first non-option argument.
var interpreters = map[string]bool{
	"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "busybox": true,
	"python": true, "python2": true, "python3": true, "perl": true, "ruby": true, "node": true,
	"php": true, "lua": true, "tclsh": true, "Rscript": true,
}

// wrappers run the program named by a later word of their command line.
var wrappers = map[string]bool{
	"nice": true, "ionice": true, "flock": true, "timeout": true, "env": true, "sudo": true,
	"chronic": true, "systemd-cat": true, "exec": true, "nohup": true, "setsid": true,
	"taskset": true, "chrt": true, "stdbuf": true, "systemd-inhibit": true, "run-parts": true,
}

// builtins never name a job's program: their arguments are data.
var builtins = map[string]bool{
	"test": true, "[": true, "[[": true, "if": true, "then": true, "else": true, "fi": true,
	"true": true, "false": true, "exit": true, "cd": true, "echo": true, "logger": true,
	"su": true, ":": true, "do": true, "done": true, "for": true, "while": true,
}

// isInterpreter reports whether the program base name is an interpreter
// ("python3.11" too).
func isInterpreter(base string) bool {
	if interpreters[base] {
		return true
	}
	for _, p := range []string{"python", "perl", "ruby", "php", "lua"} {
		if strings.HasPrefix(base, p) && strings.Trim(base[len(p):], "0123456789.") == "" {
			return true
		}
	}
	return false
}

// programOf names a process by its program: the base name of argv[0],
// or for an interpreter the script it runs ("python3 pressure.py" →
// "pressure.py"; "sh -c …" stays "sh"). Without a command line, comm.
func programOf(comm, cmdline string) string {
	words := strings.Fields(cmdline)
	if len(words) == 0 {
		return comm
	}
	// A process that renames itself ("nginx: worker process",
	// "postgres: checkpointer") keeps its program before the colon.
	prog := strings.TrimSuffix(path.Base(words[0]), ":")
	if !isInterpreter(prog) && !isInterpreter(comm) {
		return prog
	}
	for _, w := range words[1:] {
		switch {
		case w == "-c" || w == "-e" || w == "-m":
			// Inline code or a module: the interpreter is the program.
			return prog
		case strings.HasPrefix(w, "-"):
			continue
		case strings.HasPrefix(w, "/dev/fd/") || strings.HasPrefix(w, "/proc/self/fd/") || w == "/dev/stdin":
			// A script read from a file descriptor (bash <(…), a
			// heredoc): its path names no program, the interpreter does.
			return prog
		}
		return path.Base(w)
	}
	return prog
}

// jobPrograms are the programs a job's command runs, as [programOf] names
// a process: the first word of each command of its command line (through
// wrappers like nice or flock; for an interpreter, the script), and its
// run-parts scripts. Arguments are never programs: in "find /var/cache/man"
// only find is.
func jobPrograms(j *timers.Job) []string {
	seen := map[string]bool{}
	var out []string
	add := func(w string) {
		b := path.Base(w)
		if b == "" || b == "." || b == "/" || seen[b] {
			return
		}
		seen[b] = true
		out = append(out, b)
	}
	var scan func(cmd string)
	scan = func(cmd string) {
		segs := strings.FieldsFunc(cmd, func(r rune) bool { return strings.ContainsRune(";&|()`\n", r) })
		for _, seg := range segs {
			words := strings.Fields(seg)
			for k := 0; k < len(words); k++ {
				w := strings.Trim(words[k], `"'`)
				w = strings.TrimLeft(w, "-@+!:|") // systemd ExecStart prefixes
				if w == "" || (strings.Contains(w, "=") && !strings.HasPrefix(w, "/")) {
					continue // VAR=value before the command
				}
				b := path.Base(w)
				if builtins[b] {
					break
				}
				if wrappers[b] {
					// Skip the wrapper's options (and their values, roughly:
					// a number or a word after -n, -c ...).
					for k+1 < len(words) && strings.HasPrefix(words[k+1], "-") {
						k++
						if k+1 < len(words) && !strings.HasPrefix(words[k+1], "/") && !strings.Contains(words[k+1], "/") &&
							len(words[k]) == 2 && strings.Trim(words[k+1], "0123456789") == "" {
							k++
						}
					}
					if b == "run-parts" {
						break // its scripts are Job.Scripts
					}
					continue
				}
				if isInterpreter(b) {
					// The script, or with -c the inline command.
					for k+1 < len(words) {
						k++
						a := strings.Trim(words[k], `"'`)
						if a == "-c" {
							scan(strings.Trim(strings.Join(words[k+1:], " "), `"'`))
							break
						}
						if strings.HasPrefix(a, "-") {
							continue
						}
						add(a)
						break
					}
					break
				}
				add(w)
				break
			}
		}
	}
	scan(j.Command)
	for _, s := range j.Scripts {
		if !slices.Contains(j.IdleScripts, s) {
			add(s)
		}
	}
	return out
}

// proc is one process of the recording, from its samples and events.
type proc struct {
	pid, ppid int
	start     uint64
	comm      string
	cmdline   string
	unit      string
	programs  []string // every program it ran (an exec changes it)
	// progOf is the comm and command line programs was last brought up
	// to date with (noted set): note skips programOf while they stay.
	progOf [2]string
	noted  bool
	units  []string  // every unit it was seen in
	first  time.Time // first seen (its exec event or first sample)
	execAt time.Time // its exec event, zero if none was recorded
	exited bool
	exitAt time.Time // its exit event, zero if none was recorded
	// execK and exitK are the intervals its exec and exit events fell
	// in (events of sample k+1), -1 when none was recorded.
	execK, exitK int
	// active is its I/O per interval, counted as an episode counts it
	// (analyze.go's episode): its sampled delta (with the children it
	// reaped unseen), and in the interval of its exit the part of its
	// exit event's life totals no sample saw.
	active []ivIO
	// anc and ancDone memoise procTable.ancestors: the table does not
	// change once built, and every job's owner walks every process's
	// ancestors (the minute's analysis of a 1 h window on a host of
	// ~1,100 processes spent a quarter of its CPU there).
	anc     []*proc
	ancDone bool
	// idx is its place in procTable.all, which owners' memos index by.
	idx int
}

// ivIO is a process's I/O in interval k (sample k+1's delta).
type ivIO struct {
	k int
	b uint64
}

// procTable is every recorded process, by PID (a PID may be reused).
type procTable struct {
	byPID map[int][]*proc
	all   []*proc
}

// buildProcTable gathers the recording's processes in time order: per
// sample, its process events (tableEvent), its RSS holders and its
// process rows, with the intervals each did I/O in.
func buildProcTable(sr *Series) *procTable {
	t := &procTable{byPID: map[int][]*proc{}}
	var buf []procIO
	var evs []process.Event
	for i := 0; i < sr.samples; i++ {
		at := sr.sampleTimeSafe(i)
		var prior []cumPrior
		evs, prior = sr.eventsWithPrior(i, evs)
		for j := range evs {
			t.tableEvent(&evs[j], prior[j], i, at)
		}
		for _, h := range sr.rssOf(i) {
			t.get(h.pid, h.start, at).note(0, sr.strs[h.comm], "", "")
		}
		buf = sr.procsOf(i, buf[:0])
		for _, pi := range buf {
			n := &sr.names[pi.name]
			p := t.get(pi.pid, pi.start, at)
			p.note(pi.ppid, n.comm, n.cmdline, n.unit)
			if b := pi.dReadBytes + pi.dWriteByte + pi.rReadBytes + pi.rWriteBytes; i > 0 && b > 0 {
				p.active = append(p.active, ivIO{i - 1, b})
			}
		}
	}
	return t
}

// get is the process pid started at start (0: unknown, any of the PID's
// that has not exited), added first seen at at when new.
func (t *procTable) get(pid int, start uint64, at time.Time) *proc {
	list := t.byPID[pid]
	for k := len(list) - 1; k >= 0; k-- {
		p := list[k]
		if start != 0 && p.start != 0 && p.start != start {
			continue
		}
		if p.exited && start == 0 {
			break // a new process with a reused PID
		}
		if p.start == 0 {
			p.start = start
		}
		return p
	}
	p := &proc{pid: pid, start: start, first: at, execK: -1, exitK: -1, idx: len(t.all)}
	t.byPID[pid] = append(t.byPID[pid], p)
	t.all = append(t.all, p)
	return p
}

// note adds what an observation says of p: its parent, names, units
// and programs (empty: not said).
func (p *proc) note(ppid int, comm, cmdline, unit string) {
	if ppid != 0 {
		p.ppid = ppid
	}
	if comm != "" {
		p.comm = comm
	}
	if cmdline != "" {
		p.cmdline = cmdline
	}
	if unit != "" {
		p.unit = unit
		if !slices.Contains(p.units, unit) {
			p.units = append(p.units, unit)
		}
	}
	if p.noted && p.progOf == [2]string{p.comm, p.cmdline} {
		return // the same names as every sample before: nothing new
	}
	p.noted, p.progOf = true, [2]string{p.comm, p.cmdline}
	if prog := programOf(p.comm, p.cmdline); prog != "" && !slices.Contains(p.programs, prog) {
		p.programs = append(p.programs, prog)
	}
	// A 15-character comm names the program too (a script run
	// directly: comm "backup.sh").
	if p.comm != "" && !slices.Contains(p.programs, p.comm) {
		p.programs = append(p.programs, p.comm)
	}
}

// tableEvent adds process event ev of sample i (at: the sample's time,
// for an event without its own; prior: its process's cumulative I/O
// last seen) to t: the process, its parent's identity when the event
// carries it, its exec and its exit, with the I/O of its exit no sample
// saw.
func (t *procTable) tableEvent(ev *process.Event, prior cumPrior, i int, at time.Time) {
	when := ev.Time
	if when.IsZero() {
		when = at
	}
	var p *proc
	if ev.Kind == process.Exec && ev.StartTicks == 0 {
		// The connector's exec: the same PID after an exit is a
		// new process; before, the same process exec'ing anew.
		p = t.get(ev.PID, 0, when)
	} else {
		p = t.get(ev.PID, ev.StartTicks, when)
	}
	p.note(ev.PPID, ev.Comm, ev.Cmdline, ev.Unit)
	if ev.ParentComm != "" && ev.PPID > 1 {
		// The parent's identity, recorded at this exec because its
		// own exec was not (a loop started before the recording).
		t.get(ev.PPID, 0, when).note(ev.ParentPPID, ev.ParentComm, ev.ParentCmdline, "")
	}
	switch ev.Kind {
	case process.Exec:
		if p.execAt.IsZero() {
			p.execAt = when
			p.execK = i - 1
		}
	case process.Exit:
		if !p.exited && i > 0 {
			// What it did after the last sample that saw it (all of
			// it, if none did): a process that lived between two
			// samples did its I/O here, not nowhere.
			var seen [2]uint64
			if prior.ok {
				seen = prior.cum
			}
			b := ev.ReadBytes - min(ev.ReadBytes, seen[0]) + ev.WriteBytes - min(ev.WriteBytes, seen[1])
			if b > 0 {
				p.active = append(p.active, ivIO{i - 1, b})
			}
		}
		if !p.exited {
			p.exitK = i - 1
		}
		p.exited = true
		if p.exitAt.IsZero() {
			p.exitAt = when
		}
	}
}

// sampleTimeSafe is sampleTime for any sample index, the header's start
// for a lone sample.
func (sr *Series) sampleTimeSafe(i int) time.Time {
	if len(sr.times) < 2 {
		return sr.Header.Start
	}
	return sr.sampleTime(i)
}

// lookup finds the process pid (start ticks start, 0: the latest seen by
// at).
func (t *procTable) lookup(pid int, start uint64, at time.Time) *proc {
	list := t.byPID[pid]
	for k := len(list) - 1; k >= 0; k-- {
		p := list[k]
		if start != 0 && p.start != 0 {
			if p.start == start {
				return p
			}
			continue
		}
		if !p.first.After(at) {
			return p
		}
	}
	if len(list) > 0 && start == 0 {
		return list[0]
	}
	return nil
}

// parent returns the recorded parent of p, nil if none was recorded.
func (t *procTable) parent(p *proc) *proc {
	if p.ppid <= 1 || p.ppid == p.pid {
		return nil
	}
	return t.lookup(p.ppid, 0, p.first)
}

// ancestors lists p's recorded ancestors, parent first, at most 8.
// The table must be complete (buildProcTable returned): the list is
// computed once per process. Callers must not change it.
func (t *procTable) ancestors(p *proc) []*proc {
	if p.ancDone {
		return p.anc
	}
	p.anc, p.ancDone = t.walkAncestors(p), true
	return p.anc
}

func (t *procTable) walkAncestors(p *proc) []*proc {
	var out []*proc
	for a := t.parent(p); a != nil && len(out) < 8; a = t.parent(a) {
		if slices.Contains(out, a) || a == p {
			break
		}
		out = append(out, a)
	}
	return out
}

func (p *proc) label() string {
	prog := programOf(p.comm, p.cmdline)
	if prog == "" {
		prog = "?"
	}
	return prog + " " + strconv.Itoa(p.pid)
}

// Tie is how one process belongs to a job.
type Tie struct {
	PID     int    `json:"pid"`
	Program string `json:"program"`
	How     string `json:"how"` // TieUnit, TieAncestry or TieProgram
	// Via is the unit (unit), the ancestor that is the job's (ancestry:
	// "periodic.sh 4100") or the program (program).
	Via string `json:"via"`
	// StartedBy is the recorded ancestor chain, parent first.
	StartedBy []string `json:"started_by,omitempty"`
}

// owner ties processes to one job.
type owner struct {
	units    []string
	programs []string
	t        *procTable
	// memo keeps tie's answers: asked, a bit per process (by proc.idx),
	// and the ties, few, in a map. Every job's owner lives for the whole
	// analysis and is asked of every process of every episode: a map
	// holding each answer, nil ones included, took ~300 MB at once for
	// the minute's analysis of a 1 h window of a busy host (~50 jobs,
	// storms of 10,000 processes; docs/benchmarks.md).
	asked []uint64
	memo  map[*proc]*Tie
	// systemd: the job is a timer's service, whose processes systemd
	// always starts in the service's cgroup.
	systemd bool
	// unitData: the recording places processes in units or cgroups
	// (some process was recorded in a unit, or in a cgroup other than
	// the root); without it a program is the only link.
	unitData bool
	// ran: a process of the job was recorded in its unit.
	ran bool
	// cgroupOf is a process's recorded cgroup, "" if none was recorded.
	cgroupOf func(p *proc) string
}

func newOwner(j *timers.Job, t *procTable) *owner {
	return &owner{units: jobUnits(j), programs: jobPrograms(j), t: t, memo: map[*proc]*Tie{}, asked: make([]uint64, (len(t.all)+63)/64),
		systemd: j.Source == timers.Systemd, cgroupOf: func(*proc) string { return "" }}
}

// cronDaemons are the programs (comm) of the cron daemons, which start a
// cron or anacron job's processes.
var cronDaemons = map[string]bool{"cron": true, "CRON": true, "crond": true, "anacron": true, "fcron": true}

// cronUnit says whether a cron job's process may run in unit u: the cron
// daemon's service, or (pam_systemd) a session scope of its own.
func cronUnit(u string) bool {
	base := strings.TrimSuffix(u, ".service")
	return cronDaemons[base] || base == "cronie" ||
		strings.HasPrefix(u, "session-") && strings.HasSuffix(u, ".scope")
}

// byProgram says whether p may be the job's through its program name
// alone, by what else the recording says of p and of the job's runs:
//   - a process recorded in a unit that is not the job's (for a cron
//     job: not the cron daemon's or a session scope) is that unit's;
//   - without unit or cgroup data in the recording (no process recorded
//     in a unit or in a cgroup other than the root) the program is the
//     only link, and it stands;
//   - a timer's service runs in its own cgroup: a process whose cgroup
//     (or, not recorded, a recorded ancestor's: a child starts in its
//     parent's) is elsewhere is not its, and one whose cgroup was not
//     recorded is its only when the job's unit was seen running;
//   - a cron job's process was started by the cron daemon (a recorded
//     ancestor), or its parent was not recorded.
func (o *owner) byProgram(p *proc) bool {
	for _, u := range p.units {
		if o.systemd || !cronUnit(u) {
			return false
		}
	}
	if !o.unitData {
		return true
	}
	if o.systemd {
		// A child starts in its parent's cgroup: without its own, the
		// nearest recorded ancestor's says where it ran.
		if o.cgroupOf(p) != "" {
			return false
		}
		for _, a := range o.t.ancestors(p) {
			if len(a.units) > 0 || o.cgroupOf(a) != "" {
				return false
			}
		}
		return o.ran
	}
	anc := o.t.ancestors(p)
	for _, a := range anc {
		if cronDaemons[a.comm] {
			return true
		}
	}
	// No recorded parent: nothing says who started it.
	return len(anc) == 0
}

// direct ties p through its unit or its own program.
func (o *owner) direct(p *proc) *Tie {
	for _, u := range p.units {
		if slices.Contains(o.units, u) {
			return &Tie{PID: p.pid, Program: programOf(p.comm, p.cmdline), How: TieUnit, Via: u}
		}
	}
	// The program first: it rarely matches, and byProgram walks the
	// process's ancestors and cgroups.
	for _, prog := range p.programs {
		for _, jp := range o.programs {
			// comm is cut at 15 characters.
			if prog == jp || (len(prog) == 15 && strings.HasPrefix(jp, prog)) {
				if !o.byProgram(p) {
					return nil
				}
				return &Tie{PID: p.pid, Program: programOf(p.comm, p.cmdline), How: TieProgram, Via: jp}
			}
		}
	}
	return nil
}

// tie says how p belongs to the job, nil if it does not.
func (o *owner) tie(p *proc) *Tie {
	w, bit := p.idx/64, uint64(1)<<(p.idx%64)
	if w < len(o.asked) && o.asked[w]&bit != 0 {
		return o.memo[p]
	}
	t := o.direct(p)
	anc := o.t.ancestors(p)
	if t == nil {
		for _, a := range anc {
			if d := o.direct(a); d != nil {
				t = &Tie{PID: p.pid, Program: programOf(p.comm, p.cmdline), How: TieAncestry, Via: a.label()}
				break
			}
		}
	}
	if t != nil {
		for _, a := range anc {
			t.StartedBy = append(t.StartedBy, a.label())
		}
	}
	if w < len(o.asked) {
		o.asked[w] |= bit
	}
	if t != nil {
		o.memo[p] = t
	}
	return t
}
