package diskio

// EventStats accounts for the process events of one interval, so that a
// loss is reported, never silent.
type EventStats struct {
	Received         uint64 `json:"received"`                    // connector events read
	LostKernel       uint64 `json:"lost_kernel,omitempty"`       // gaps in the connector's per-CPU sequence numbers: dropped by the kernel (socket buffer full)
	LostBuffer       uint64 `json:"lost_buffer,omitempty"`       // events memdiag dropped because its own buffer between samples was full
	Overruns         uint64 `json:"overruns,omitempty"`          // ENOBUFS returned by a socket (the count of lost messages is in LostKernel for the connector)
	TaskstatsMissing uint64 `json:"taskstats_missing,omitempty"` // process exits seen by the connector without a taskstats record
	Error            string `json:"error,omitempty"`             // a reader stopped on an unexpected error: events after it are missing
}
