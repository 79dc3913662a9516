# Everyday commands. Each target is one go command (or a short loop of
# them), so what CI and a contributor run is the same thing.
#
#   make test     the fast suite (about 70 s); host-changing tests skip
#   make e2e      everything, with the end-to-end tests (root; they take the e2e lock);
#                 ends with every skipped test and why (gotestsum, a go.mod tool)
#   make golden   rewrite every golden file and fixture recording; review the diff
#   make bench    the benchmarks (not while others use the machine)
#   make fuzz     each Fuzz target for FUZZTIME (default 1m)
#   make lint     golangci-lint with .golangci.yml
#   make build    ./memdiag
#   make dist     dist/: static linux/amd64 and arm64 binaries, .debs, SHA256SUMS

GO        ?= go
FUZZTIME  ?= 1m
BENCHTIME ?= 1s
PKGS      ?= ./...
# The linter CI installs (.ci/run); `make lint` uses it from GOBIN or PATH.
GOLANGCI_LINT_VERSION ?= v2.15.0
GOLANGCI_LINT ?= $(shell command -v golangci-lint 2>/dev/null || echo $$($(GO) env GOPATH)/bin/golangci-lint)

.PHONY: all build test e2e golden bench fuzz lint lint-install vet fmt dist

all: build test

# The version --version prints: git describe of this checkout (what a
# plain `go build` leaves out when it records no commit, as in `go run`).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null)

build:
	$(GO) build -ldflags "-X github.com/memdiag/memdiag/cmd.Version=$(VERSION)" -o memdiag .

test:
	$(GO) test $(PKGS)

e2e:
	MEMDIAG_E2E=1 $(GO) tool gotestsum --format pkgname-and-test-fails -- -count=1 -timeout=50m $(PKGS)

# Release artifacts, built, not published (packaging/dist.sh says what).
dist:
	GO=$(GO) bash packaging/dist.sh

# MEMDIAG_UPDATE_GOLDEN=1 is read by internal/golden, which every test
# package with golden files uses, so this works over ./... It is the one
# mechanism: there is no -update flag (one that only some test binaries
# define fails `go test ./... -update` in the others).
golden:
	MEMDIAG_UPDATE_GOLDEN=1 $(GO) test -count=1 $(PKGS)
	@git status --short -- '*testdata*' || true

bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) $(PKGS)

# go test -fuzz takes one target in one package at a time: scripts/fuzz.sh
# runs each func FuzzX of the tree for FUZZTIME (the same script .ci/run
# runs for a few seconds each). New crashers land in
# <pkg>/testdata/fuzz/<Target>/; keep them and add a regression test.
fuzz:
	bash scripts/fuzz.sh $(FUZZTIME)

lint-install:
	$(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)

lint:
	$(GOLANGCI_LINT) run $(PKGS)

vet:
	$(GO) vet $(PKGS)
	@test -z "$$(gofmt -l .)" || { echo "gofmt would change:"; gofmt -l .; exit 1; }
