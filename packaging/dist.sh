#!/usr/bin/env bash
# Builds memdiag's release artifacts into dist/ (run by `make dist` and by
# .ci/run; nothing is published from here):
#   memdiag_VERSION_linux_{amd64,arm64}.tar.gz  static binary (CGO_ENABLED=0),
#                                               LICENSE, README.md, man pages,
#                                               contrib/memdiag.service
#   memdiag_VERSION_{amd64,arm64}.deb           /usr/bin/memdiag, its man pages and
#                                               /lib/systemd/system/memdiag.service,
#                                               enabled and started by its
#                                               maintainer scripts (packaging/deb/)
#                                               as dh_installsystemd's would: never
#                                               started where systemd is not running
#   SHA256SUMS                                  sha256sum of each file above
# Each artifact is checked after it is built (check_tarball, check_deb):
# the unit is there, identical to contrib/memdiag.service, and the .deb's
# postinst, prerm and postrm are there, executable, valid sh, and guard
# every start and stop with [ -d /run/systemd/system ].
# VERSION is `git describe --tags --always --dirty` without its leading v,
# or VERSION from the environment. The binary reports it in --version
# (-ldflags -X .../cmd.Version). The .deb is built with dpkg-deb, which
# every Debian and Ubuntu system has.
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
DIST=${DIST:-dist}
ARCHES=${ARCHES:-"amd64 arm64"}
if [ -z "${VERSION:-}" ]; then
  VERSION=$(git describe --tags --always --dirty 2>/dev/null || echo unknown)
fi
VERSION=${VERSION#v}
# A Debian version must start with a digit: a bare commit id becomes
# 0.0.0~git<id>, which sorts below any real release.
DEBVERSION=$VERSION
case $DEBVERSION in [0-9]*.[0-9]*) ;; *) DEBVERSION="0.0.0~git${DEBVERSION}" ;; esac
DEBVERSION=${DEBVERSION//-/\~}

UNIT=contrib/memdiag.service

# check_tarball TARBALL NAME: the unit is in the tarball, as in the tree.
check_tarball() {
  local unit
  unit=$(tar -xzOf "$1" "$2/contrib/memdiag.service") || { echo "$1: no $2/contrib/memdiag.service" >&2; return 1; }
  [ "$unit" = "$(cat "$UNIT")" ] || { echo "$1: contrib/memdiag.service differs from $UNIT" >&2; return 1; }
  tar -tzf "$1" "$2/contrib/prometheus/memdiag-alerts.yml" >/dev/null || { echo "$1: no contrib/prometheus/memdiag-alerts.yml" >&2; return 1; }
}

# check_deb DEB: the unit is installed where systemd reads it, and the
# maintainer scripts are those of packaging/deb, executable, valid sh,
# every systemctl/deb-systemd-invoke behind the systemd check.
check_deb() {
  local x s
  x=$(mktemp -d)
  dpkg-deb -x "$1" "$x/root" && dpkg-deb -e "$1" "$x/DEBIAN"
  cmp -s "$x/root/lib/systemd/system/memdiag.service" "$UNIT" ||
    { echo "$1: /lib/systemd/system/memdiag.service missing or not $UNIT" >&2; rm -rf "$x"; return 1; }
  cmp -s "$x/root/usr/share/doc/memdiag/examples/prometheus/memdiag-alerts.yml" contrib/prometheus/memdiag-alerts.yml ||
    { echo "$1: /usr/share/doc/memdiag/examples/prometheus/memdiag-alerts.yml missing or not contrib's" >&2; rm -rf "$x"; return 1; }
  for s in postinst prerm postrm; do
    if ! [ -x "$x/DEBIAN/$s" ] || ! cmp -s "$x/DEBIAN/$s" "packaging/deb/$s" || ! sh -n "$x/DEBIAN/$s"; then
      echo "$1: DEBIAN/$s missing, not executable, not packaging/deb/$s or not valid sh" >&2; rm -rf "$x"; return 1
    fi
    # Each line that starts or stops something sits in an if whose
    # condition tests /run/systemd/system (the systemd-is-running check).
    if awk '/^[ \t]*#/ {next}
      /^[ \t]*if / {d++; gd[d] = ($0 ~ /\/run\/systemd\/system/)}
      /^[ \t]*fi([ \t;]|$)/ || /^[ \t]*if .*;[ \t]*fi[ \t]*$/ {d--}
      /(systemctl|deb-systemd-invoke) / {ok = 0; for (i = 1; i <= d; i++) if (gd[i]) ok = 1; if (!ok) bad = 1}
      END {exit bad}' "$x/DEBIAN/$s"; then :; else
      echo "$1: DEBIAN/$s starts or stops memdiag without checking /run/systemd/system" >&2; rm -rf "$x"; return 1
    fi
  done
  rm -rf "$x"
}

rm -rf "$DIST"
mkdir -p "$DIST"
man=$(mktemp -d)
trap 'rm -rf "$man"' EXIT
# The man pages come from the command tree itself (memdiag man).
$GO run . man --dir "$man" >/dev/null

for arch in $ARCHES; do
  name=memdiag_${VERSION}_linux_${arch}
  dir=$DIST/$name
  mkdir -p "$dir/man" "$dir/contrib/prometheus"
  CGO_ENABLED=0 GOOS=linux GOARCH=$arch $GO build -trimpath \
    -ldflags "-s -w -X github.com/memdiag/memdiag/cmd.Version=v${VERSION}" \
    -o "$dir/memdiag" .
  cp LICENSE README.md "$dir/"
  cp "$man"/*.1 "$dir/man/"
  install -m 0644 "$UNIT" "$dir/contrib/memdiag.service"
  # The alerting rules on memdiag's job forecast, with their promtool test.
  install -m 0644 contrib/prometheus/*.yml "$dir/contrib/prometheus/"
  tar -C "$DIST" --owner=0 --group=0 --numeric-owner -czf "$DIST/$name.tar.gz" "$name"
  check_tarball "$DIST/$name.tar.gz" "$name"

  deb=$DIST/deb-$arch
  mkdir -p "$deb/DEBIAN" "$deb/usr/bin" "$deb/usr/share/doc/memdiag/examples/prometheus" "$deb/usr/share/man/man1" "$deb/lib/systemd/system"
  install -m 0755 "$dir/memdiag" "$deb/usr/bin/memdiag"
  # The unit where Debian bookworm's dh_installsystemd puts a package's
  # units, and the maintainer scripts it would generate for it.
  install -m 0644 "$UNIT" "$deb/lib/systemd/system/memdiag.service"
  install -m 0755 packaging/deb/postinst packaging/deb/prerm packaging/deb/postrm "$deb/DEBIAN/"
  install -m 0644 LICENSE "$deb/usr/share/doc/memdiag/copyright"
  install -m 0644 contrib/prometheus/*.yml "$deb/usr/share/doc/memdiag/examples/prometheus/"
  for p in "$man"/*.1; do gzip -9n <"$p" >"$deb/usr/share/man/man1/$(basename "$p").gz"; done
  cat >"$deb/DEBIAN/control" <<CONTROL
Package: memdiag
Version: $DEBVERSION
Architecture: $arch
Maintainer: memdiag developers <memdiag@users.noreply.github.com>
Section: admin
Priority: optional
Homepage: https://github.com/memdiag/memdiag
Description: find why latency spikes under memory pressure, and which job causes it
 memdiag records the kernel's memory-pressure signals (PSI, the file LRU,
 reclaim and refaults, swap, disk I/O per device and per process), lines
 latency spikes up with them and with every periodic job on the host
 (systemd timers, cron, anacron) and names the culprit with its evidence.
CONTROL
  dpkg-deb --root-owner-group -Zxz --build "$deb" "$DIST/memdiag_${DEBVERSION}_${arch}.deb" >/dev/null
  check_deb "$DIST/memdiag_${DEBVERSION}_${arch}.deb"
  rm -rf "$deb" "$dir"
done
(cd "$DIST" && sha256sum -- *.tar.gz *.deb >SHA256SUMS)
cat "$DIST/SHA256SUMS"
