// Package confirm runs memdiag's proof by experiment: the same load in
// alternating blocks, A with the host as it is and B with the suspected
// job held off, and the statistics that say whether holding the job off
// changed the victim's latency (or memory stall).
//
// The plan ([Plan]) alternates the order within each pair (AB, BA, AB, …)
// so that drift and warm-up do not favour one side. Each block is
// measured ([Measure]) from the probe's requests and the delta of PSI's
// memory total (/proc/pressure/memory; https://docs.kernel.org/accounting/psi.html).
// [Analyze] compares the blocks pair by pair: the effect is the mean of
// the per-pair differences A−B, its 95 % confidence interval comes from a
// bootstrap over pairs, and its p-value from an exact sign-flip
// permutation test over pairs. docs/confirm.md states the rules.
//
// Holding a job off ([Holder]) changes the host: a cron line is commented
// out with a marker, a systemd timer is stopped. Every change is written
// to a [State] file before it is made, so that a run killed outright can
// be undone later ([Restore]).
package confirm
