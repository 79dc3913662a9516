// Package e2e holds memdiag's end-to-end tests: they build the real
// memdiag binary and run it as a user would, against real cgroups, swap
// files and workloads. They need root; elsewhere they skip with a message,
// and under MEMDIAG_E2E=require (CI) they fail instead of skipping.
package e2e
