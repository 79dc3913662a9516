#!/usr/bin/env bash
# Real install of Debian's pcp, sysstat and cron for the timers end-to-end
# test (real input, not fixtures). Runs as root from .ci/run; idempotent.
#
# First the plain install. On a host whose PID 1 is not systemd, pcp's
# postinst fails at `systemctl daemon-reload` ("System has not been booted
# with systemd"), after its own `deb-systemd-helper enable` calls have
# already linked pmcd/pmlogger/pmie/pmproxy.service into
# multi-user.target.wants. The configuration is then finished with
# `SYSTEMD_OFFLINE=1 dpkg --configure -a`: SYSTEMD_OFFLINE=1 is systemd's
# documented switch that makes systemctl skip verbs that need a running
# manager (daemon-reload, start) — what happens in image builds and
# chroots — so the maintainer scripts run unmodified and create exactly
# the links a real install creates. The way used is written to
# /var/lib/memdiag-ci/timers-install for the test to report.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
marker=/var/lib/memdiag-ci/timers-install
mkdir -p "$(dirname "$marker")"

installed() { [ "$(dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null)" = "ii " ]; }

if installed pcp && installed sysstat && installed cron && [ -s "$marker" ]; then
  exit 0
fi
if installed pcp; then
  echo "pre-installed: pcp was already installed when .ci/timers-setup.sh ran" >"$marker"
elif apt-get install -y -qq pcp sysstat cron >/tmp/memdiag-timers-install.log 2>&1; then
  echo "plain: apt-get install -y pcp sysstat cron succeeded, maintainer scripts included" >"$marker"
else
  echo "timers-setup: apt-get install failed (expected where PID 1 is not systemd):" >&2
  grep -E "systemd|error|Errors" /tmp/memdiag-timers-install.log | tail -5 >&2 || true
  SYSTEMD_OFFLINE=1 dpkg --configure -a
  echo "offline: apt-get install -y pcp sysstat cron; pcp's postinst failed at 'systemctl daemon-reload' (PID 1 is not systemd); finished with 'SYSTEMD_OFFLINE=1 dpkg --configure -a' (unmodified maintainer scripts, systemctl skips daemon-reload/start)" >"$marker"
fi
installed cron || apt-get install -y -qq cron >/dev/null
# sysstat: turn collection on as its debconf question sysstat/enable does.
# sysstat's config script reads the answer back from /etc/default/sysstat,
# so that file is where it is set (README.Debian: edit it or run
# dpkg-reconfigure sysstat); dpkg-reconfigure then records it. Its units
# were enabled by deb-systemd-helper on install.
sed -i 's/^ENABLED=.*/ENABLED="true"/' /etc/default/sysstat
SYSTEMD_OFFLINE=1 dpkg-reconfigure -f noninteractive sysstat >/dev/null
cat "$marker"
