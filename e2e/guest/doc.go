// Package guest holds the end-to-end test that boots systemd as PID 1 of
// a user-mode Linux guest, with Debian's pcp timers, memdiag timers,
// watch and confirm inside it (TestSystemdGuestFiresPCPTimers). It is a
// package of its own so that its test binary starts with the suite and
// the guest's minutes run beside the other packages' end-to-end tests
// (testenv.Aside) instead of after e2e's. It needs root and
// MEMDIAG_E2E=1, like package e2e.
package guest
