#!/usr/bin/env bash
# Builds memdiag's release artifacts into dist/ (run by `make dist` and by
# .ci/run; nothing is published from here):
#   memdiag_VERSION_linux_{amd64,arm64}.tar.gz  static binary (CGO_ENABLED=0),
#                                               LICENSE, README.md, man pages
#   memdiag_VERSION_{amd64,arm64}.deb           /usr/bin/memdiag and its man pages
#   SHA256SUMS                                  sha256sum of each file above
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

rm -rf "$DIST"
mkdir -p "$DIST"
man=$(mktemp -d)
trap 'rm -rf "$man"' EXIT
# The man pages come from the command tree itself (memdiag man).
$GO run . man --dir "$man" >/dev/null

for arch in $ARCHES; do
  name=memdiag_${VERSION}_linux_${arch}
  dir=$DIST/$name
  mkdir -p "$dir/man"
  CGO_ENABLED=0 GOOS=linux GOARCH=$arch $GO build -trimpath \
    -ldflags "-s -w -X github.com/memdiag/memdiag/cmd.Version=v${VERSION}" \
    -o "$dir/memdiag" .
  cp LICENSE README.md "$dir/"
  cp "$man"/*.1 "$dir/man/"
  tar -C "$DIST" --owner=0 --group=0 --numeric-owner -czf "$DIST/$name.tar.gz" "$name"

  deb=$DIST/deb-$arch
  mkdir -p "$deb/DEBIAN" "$deb/usr/bin" "$deb/usr/share/doc/memdiag" "$deb/usr/share/man/man1"
  install -m 0755 "$dir/memdiag" "$deb/usr/bin/memdiag"
  install -m 0644 LICENSE "$deb/usr/share/doc/memdiag/copyright"
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
  rm -rf "$deb" "$dir"
done
(cd "$DIST" && sha256sum -- *.tar.gz *.deb >SHA256SUMS)
cat "$DIST/SHA256SUMS"
