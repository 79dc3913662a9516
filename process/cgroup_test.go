package process

import (
	"os"
	"path/filepath"
	"testing"
)

func TestUnitFromCgroup(t *testing.T) {
	tests := []struct{ path, want string }{
		// The reference case of DESIGN.md: PCP's check jobs run as services.
		{"/system.slice/pmlogger_check.service", "pmlogger_check.service"},
		{"/system.slice/pmlogger_daily.service", "pmlogger_daily.service"},
		{"/system.slice/cron.service", "cron.service"},
		// Docker with the systemd cgroup driver: one scope per container.
		{"/system.slice/docker-4f1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c.scope", "docker-4f1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c.scope"},
		// logind sessions (systemd-logind.service(8)).
		{"/user.slice/user-1000.slice/session-3.scope", "session-3.scope"},
		// The user manager and an app it started (systemd.special(7), app.slice).
		{"/user.slice/user-1000.slice/user@1000.service/init.scope", "init.scope"},
		{"/user.slice/user-1000.slice/user@1000.service/app.slice/app-org.gnome.Terminal.slice/vte-spawn-1b2c.scope", "vte-spawn-1b2c.scope"},
		// Templated units inside a slice.
		{"/system.slice/system-getty.slice/getty@tty1.service", "getty@tty1.service"},
		// PID 1 itself on a systemd host.
		{"/init.scope", "init.scope"},
		// Delegated subtree below a unit (podman puts the payload in "container";
		// systemd.io/CGROUP_DELEGATION): the unit is the last unit component.
		{"/machine.slice/libpod-9a2b3c.scope/container", "libpod-9a2b3c.scope"},
		{"/system.slice/containerd.service/kubepods-besteffort-pod1.slice:cri-containerd:abc", "containerd.service"},
		// Kubernetes with the systemd driver.
		{"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod8e1f.slice/cri-containerd-77aa.scope", "cri-containerd-77aa.scope"},
		// Mount and swap helpers run in the unit's cgroup.
		{"/system.slice/mnt-data.mount", "mnt-data.mount"},
		{"/system.slice/dev-zram0.swap", "dev-zram0.swap"},
		// A slice alone (v1 name=systemd can place processes there).
		{"/system.slice", "system.slice"},
		// Tests on the CI host create groups named like units.
		{"/memdiag-diskio-test.service", "memdiag-diskio-test.service"},
		// No unit.
		{"/", ""},
		{"", ""},
		// Container runtimes' cgroupfs drivers: the runtime and the container.
		{"/docker/4f1c2d3e", "docker/4f1c2d3e"},
		{"/docker/0123abcd", "docker/0123abcd"},
		{"/kubepods/besteffort/pod8e1f/77aa", "kubepods/77aa"},
		{"/kubepods/pod8e1f/77aa", "kubepods/77aa"},
		{"/docker", ""},                   // the runtime's own group, no container
		{"/process_api/c94b1ad2b6cf", ""}, // this CI host's v1 memory path
		{"/lxc.payload.web/", ""},
		{"/.service", ""}, // a bare suffix is not a unit name
		{"/foo.service.d", ""},
	}
	for _, tt := range tests {
		if got := unitFromCgroup(tt.path); got != tt.want {
			t.Errorf("unitFromCgroup(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
}

func TestParseCgroup(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "diskio", "cgroup", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	tests := []struct {
		name, content, wantPath, wantUnit string
	}{
		// Real files from the CI host (testdata/diskio/cgroup/SOURCE).
		{"host pid1", read("host-pid1"), "/", ""},
		{"host shell", read("host-shell"), "/", ""},
		{"host v2 service", read("host-v2-service"), "/memdiag-diskio-fixture.service", "memdiag-diskio-fixture.service"},
		// Pure cgroup v2 systemd host (Debian 12, Fedora): one line.
		{"v2 service", "0::/system.slice/cron.service\n", "/system.slice/cron.service", "cron.service"},
		// Hybrid systemd host (Ubuntu 20.04 default): v1 controllers, the
		// name=systemd hierarchy and a controller-less v2 tree, all naming the unit.
		{"hybrid", "12:pids:/system.slice/pmlogger_check.service\n" +
			"5:memory:/system.slice/pmlogger_check.service\n" +
			"1:name=systemd:/system.slice/pmlogger_check.service\n" +
			"0::/system.slice/pmlogger_check.service\n",
			"/system.slice/pmlogger_check.service", "pmlogger_check.service"},
		// Hybrid, process in the v2 root but placed by systemd in v1.
		{"hybrid v2 root", "1:name=systemd:/system.slice/docker-ab12.scope\n0::/\n",
			"/system.slice/docker-ab12.scope", "docker-ab12.scope"},
		// Legacy systemd host (CentOS 7): no "0::" line at all.
		{"legacy", "11:memory:/system.slice/crond.service\n1:name=systemd:/system.slice/crond.service\n",
			"/system.slice/crond.service", "crond.service"},
		// Docker with the cgroupfs driver, v2: no unit.
		{"docker cgroupfs", "0::/docker/4f1c2d3e\n", "/docker/4f1c2d3e", "docker/4f1c2d3e"},
		// v1 only without systemd: no path we can name a unit from.
		{"v1 no systemd", "4:memory:/process_api/c94b\n", "", ""},
		// Empty file (kernel thread of a vanished process, truncated read).
		{"empty", "", "", ""},
		// A path containing ':' stays whole.
		{"colon in path", "0::/system.slice/containerd.service/a:b:c\n", "/system.slice/containerd.service/a:b:c", "containerd.service"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, u := parseCgroup([]byte(tt.content))
			if p != tt.wantPath || u != tt.wantUnit {
				t.Errorf("parseCgroup = (%q, %q), want (%q, %q)", p, u, tt.wantPath, tt.wantUnit)
			}
		})
	}
}

func TestControllerPath(t *testing.T) {
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "diskio", "cgroup", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tests := []struct {
		name    string
		content []byte
		ctrl    string
		want    string
		wantV1  bool
	}{
		// The CI host (testdata/diskio/cgroup/SOURCE): v1 controllers beside
		// a v2 mount; memory is governed by the v1 group, whatever v2 says.
		{"host shell memory", read("host-shell"), "memory", "/process_api/c94b1ad2b6cff9addecf9ee6e05d8f5f", true},
		{"host v2 service memory", read("host-v2-service"), "memory", "/process_api/c94b1ad2b6cff9addecf9ee6e05d8f5f", true},
		{"host v2 service cpu", read("host-v2-service"), "cpu", "/", true},
		// "2:cpuacct:/" must not match "cpu" by prefix; a joint "cpu,cpuacct" must.
		{"joint list", []byte("3:cpu,cpuacct:/a.slice\n0::/b.service\n"), "cpu", "/a.slice", true},
		{"cpuacct alone", []byte("2:cpuacct:/a.slice\n0::/b.service\n"), "cpu", "/b.service", false},
		// Pure v2: the unified path, v1 false.
		{"v2", []byte("0::/system.slice/cron.service\n"), "memory", "/system.slice/cron.service", false},
		// The v2 line before the v1 one does not win.
		{"v2 first", []byte("0::/x.service\n4:memory:/m\n"), "memory", "/m", true},
		{"empty", nil, "memory", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, v1 := ControllerPath(tt.content, tt.ctrl)
			if p != tt.want || v1 != tt.wantV1 {
				t.Errorf("ControllerPath(%q) = (%q, %v), want (%q, %v)", tt.ctrl, p, v1, tt.want, tt.wantV1)
			}
		})
	}
}
