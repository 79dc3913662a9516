// Package session owns a recording session: the sources wired from the
// options' root (package sources adapts the collectors of psi, lru, swap,
// diskio, procevents, chain and victim to record.Source), the host facts
// of the recording header, the sampler, the wrapped command, the writer
// or the store's rotating segments, the /metrics listener, the last
// sample and the end line. watch, record and gate parse their flags into
// Options and call it; none of them wires a collector itself.
package session
