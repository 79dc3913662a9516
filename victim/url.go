package victim

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/prometheus/procfs"

	"github.com/memdiag/memdiag/internal/rootfs"
	"github.com/memdiag/memdiag/process"
	"github.com/memdiag/memdiag/record"
)

// tcpListen is TCP_LISTEN, the st column of /proc/net/tcp for a listening
// socket (include/net/tcp_states.h).
const tcpListen = 0x0A

// FromURL finds the service behind a probe URL whose host is this host's
// (loopback, or an address of one of its interfaces): the listening TCP
// socket on the URL's port (/proc/net/tcp, /proc/net/tcp6), then the
// process holding it (/proc/PID/fd/* -> "socket:[inode]"), then its
// cgroups. how is record.VictimFromProbe or record.VictimFromLatency.
// A remote host is a *NotLocalError; a local one with no listener or no
// visible holder a *NotFoundError.
func (f *Finder) FromURL(ctx context.Context, raw, how string) (*record.Victim, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil, &NotFoundError{What: raw, Why: "not a URL with a host", Hint: "pass --victim PID|UNIT|CGROUP"}
	}
	port, err := urlPort(u)
	if err != nil {
		return nil, &NotFoundError{What: raw, Why: err.Error(), Hint: "pass --victim PID|UNIT|CGROUP"}
	}
	ips, err := f.localIPs(ctx, u.Hostname())
	if err != nil {
		return nil, err
	}
	if len(ips) == 0 {
		return nil, &NotLocalError{URL: raw, Host: u.Hostname()}
	}
	addr := net.JoinHostPort(u.Hostname(), strconv.Itoa(port))
	inodes, err := f.listeners(ips, port)
	if err != nil {
		return nil, err
	}
	if len(inodes) == 0 {
		return nil, &NotFoundError{What: addr, Why: "no listening TCP socket on this port in /proc/net/tcp or tcp6",
			Hint: "is the service up (or in another network namespace)? pass --victim PID|UNIT|CGROUP"}
	}
	holders, denied, err := f.holders(inodes)
	if err != nil {
		return nil, err
	}
	if len(holders) == 0 {
		why := "no process holds its listening socket"
		if denied > 0 {
			why += fmt.Sprintf(" among those readable (%d processes' fd were denied)", denied)
		}
		return nil, &NotFoundError{What: addr, Why: why, Hint: "run as root, or pass --victim PID|UNIT|CGROUP"}
	}
	pid := mainHolder(holders)
	v, err := f.FromPID(pid, how)
	if err != nil {
		return nil, err
	}
	v.Holders = len(holders)
	v.Detail = fmt.Sprintf("%s is a listening socket of %s (pid %d)", addr, v.Comm, pid)
	if n := len(holders); n > 1 {
		v.Detail += fmt.Sprintf(", the parent of the %d processes holding it", n)
	}
	return v, nil
}

// urlPort is u's port, or the scheme's (http 80, https 443).
func urlPort(u *url.URL) (int, error) {
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 || n > 65535 {
			return 0, fmt.Errorf("port %q out of range", p)
		}
		return n, nil
	}
	switch u.Scheme {
	case "http":
		return 80, nil
	case "https":
		return 443, nil
	}
	return 0, fmt.Errorf("no port and scheme %q has no default one", u.Scheme)
}

// localIPs are the addresses of host that are this host's; none when
// host is remote. "localhost" and literal loopback addresses are local
// without a lookup.
func (f *Finder) localIPs(ctx context.Context, host string) ([]net.IP, error) {
	var ips []net.IP
	if ip := net.ParseIP(strings.Trim(host, "[]")); ip != nil {
		ips = []net.IP{ip}
	} else if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		ips = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	} else {
		var err error
		if ips, err = f.o.LookupHost(ctx, host); err != nil {
			return nil, &NotFoundError{What: host, Why: "cannot resolve: " + err.Error(), Hint: "pass --victim PID|UNIT|CGROUP"}
		}
	}
	var own []net.Addr
	var local []net.IP
	for _, ip := range ips {
		if ip.IsLoopback() || ip.IsUnspecified() {
			local = append(local, ip)
			continue
		}
		if own == nil {
			var err error
			if own, err = f.o.LocalAddrs(); err != nil {
				return nil, fmt.Errorf("this host's addresses: %w", err)
			}
		}
		for _, a := range own {
			if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
				local = append(local, ip)
				break
			}
		}
	}
	return local, nil
}

// listeners are the inodes of the TCP sockets listening on port at one
// of ips or at a wildcard address, from /proc/net/tcp and tcp6 (a tcp6
// wildcard also takes IPv4 unless IPV6_V6ONLY; a v4-mapped address
// equals its IPv4 one). A missing tcp6 (ipv6.disable=1) is skipped.
func (f *Finder) listeners(ips []net.IP, port int) ([]uint64, error) {
	var inodes []uint64
	// procfs marks NetTCP deprecated in favour of sock_diag over netlink,
	// which reads the live kernel only; /proc/net/tcp{,6} is what --root
	// fixtures and tests can hold, so the files are read here.
	for i, read := range []func() (procfs.NetTCP, error){f.fs.NetTCP, f.fs.NetTCP6} { //nolint:staticcheck // SA1019: see above
		// procfs opens without O_NONBLOCK and follows links: vet the
		// file inside the proc root first (a FIFO, a device, a link out).
		err := rootfs.Check(f.o.ProcRoot, []string{"net/tcp", "net/tcp6"}[i])
		var lines procfs.NetTCP
		if err == nil {
			lines, err = read()
		}
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("listening sockets: %w", err)
		}
		for _, l := range lines {
			if l.St != tcpListen || l.LocalPort != uint64(port) || l.Inode == 0 {
				continue
			}
			if l.LocalAddr.IsUnspecified() || slices.ContainsFunc(ips, l.LocalAddr.Equal) {
				inodes = append(inodes, l.Inode)
			}
		}
	}
	return inodes, nil
}

// holders are the processes with a file descriptor on one of the socket
// inodes, each with its parent; denied counts the processes whose fd
// directory could not be read (others' processes, not root). Processes
// that exit during the scan are skipped.
func (f *Finder) holders(inodes []uint64) (map[int]int, int, error) {
	want := map[string]bool{}
	for _, n := range inodes {
		want["socket:["+strconv.FormatUint(n, 10)+"]"] = true
	}
	procs, err := f.fs.AllProcs()
	if err != nil {
		return nil, 0, fmt.Errorf("listing processes: %w", err)
	}
	out, denied := map[int]int{}, 0
	for _, p := range procs {
		targets, err := process.FDTargets(f.o.ProcRoot, p.PID)
		switch {
		case gone(err):
			continue
		case errors.Is(err, fs.ErrPermission):
			denied++
			continue
		case err != nil:
			return nil, 0, err
		}
		if !slices.ContainsFunc(targets, func(t string) bool { return want[t] }) {
			continue
		}
		st, err := process.ReadStat(context.Background(), f.o.ProcRoot, p.PID)
		if gone(err) {
			continue
		}
		if err != nil {
			return nil, 0, err
		}
		out[p.PID] = st.PPID
	}
	return out, denied, nil
}

// gone reports an error of a process that exited while it was read.
func gone(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH)
}

// mainHolder is the holder whose parent holds none (a prefork server's
// master, not its workers); the lowest such PID when there are several.
func mainHolder(holders map[int]int) int {
	best := 0
	for pid, ppid := range holders {
		if _, ok := holders[ppid]; ok {
			continue
		}
		if best == 0 || pid < best {
			best = pid
		}
	}
	if best == 0 { // a cycle cannot happen; keep the lowest anyway
		for pid := range holders {
			if best == 0 || pid < best {
				best = pid
			}
		}
	}
	return best
}

// FromPID is the victim pid, with its comm, executable and cgroups
// (/proc/PID/cgroup: the v2 "0::" group, the memory controller's group
// and the systemd unit, by package process's rules). how is the
// record.Victim How.
func (f *Finder) FromPID(pid int, how string) (*record.Victim, error) {
	if _, err := rootfs.Stat(f.o.ProcRoot, strconv.Itoa(pid)); err != nil {
		return nil, &NotFoundError{What: "pid " + strconv.Itoa(pid), Why: "no such process", Hint: "pass a running PID"}
	}
	v := &record.Victim{PID: pid, How: how}
	ctx := context.Background()
	if st, err := process.ReadStat(ctx, f.o.ProcRoot, pid); err == nil {
		v.Comm = st.Comm
	}
	if exe, err := process.Exe(f.o.ProcRoot, pid); err == nil {
		v.Exe = exe
	}
	b, err := process.ReadPIDFile(ctx, f.o.ProcRoot, pid, "cgroup", rootfs.ProcLimit)
	if gone(err) {
		return nil, &NotFoundError{What: "pid " + strconv.Itoa(pid), Why: "exited", Hint: "pass --victim PID|UNIT|CGROUP"}
	}
	if err != nil {
		return nil, err
	}
	v.Cgroup = unifiedPath(b)
	_, v.Unit = process.ParseCgroupFile(b)
	mem, memV1 := process.ControllerPath(b, "memory")
	if memV1 || f.o.Mounts.Memory == "" {
		v.Memcg = mem
	}
	f.hierarchyDirs(v, memV1)
	return v, nil
}

// unifiedPath is the v2 group path of a /proc/PID/cgroup content, the
// "0::" line's; "" when it has none.
func unifiedPath(b []byte) string {
	p, v1 := process.ControllerPath(b, "\x00none")
	if v1 {
		return ""
	}
	return p
}
