// Package exposition serves what memdiag records as Prometheus metrics
// (/metrics: the text format, or OpenMetrics when the scraper asks for
// it; TLS and basic auth through exporter-toolkit's web configuration), through
// github.com/prometheus/client_golang: `memdiag watch --listen ADDR` and the
// recording service both feed it the samples they write.
//
// The hook, for any command that samples:
//
//	exp := exposition.New(hdr, exposition.Options{})
//	srv, err := exposition.Listen(ctx, exposition.ListenOptions{Addr: addr}, exp) // fails at once on a bad address
//	defer srv.Close()
//	... for each sample written: exp.Observe(&s) // never waits for a scrape or the analysis
//	... on a new header (service restart, new segment): exp.SetHeader(hdr)
//
// # What it exposes
//
// Above all what node_exporter cannot give (docs/fleet.md lists both):
//
//   - memdiag_unit_read_bytes_total, memdiag_unit_written_bytes_total
//     {unit}: per systemd unit (or container scope) the bytes its
//     processes read from and wrote to storage (/proc/PID/io read_bytes,
//     write_bytes), counting the top processes of each interval (watch
//     --top) and the whole-life I/O of every process that exited (the
//     process-events connector's taskstats, or the last /proc/PID/io read),
//     so a cron job that lives 300 ms is still counted.
//   - memdiag_stall_onsets_total{scope,resource,kind} and
//     memdiag_stall_onset_last_timestamp_seconds: the moments PSI crossed
//     watch's --stall-threshold (record.StallOnset), scope "host" or
//     "cgroup" as for the signal metrics (not the cgroup's path).
//   - memdiag_job_info{periodic_job,source,unit,schedule,active,location}, memdiag_job_period_seconds,
//     memdiag_job_next_firing_timestamp_seconds,
//     memdiag_job_last_firing_timestamp_seconds: the periodic-job inventory
//     (timers, cron, anacron) as projected by package timers, for Grafana
//     annotations; active="false" marks a job that will not run (what
//     memdiag timers lists only with --all). A cron job's periodic_job is
//     its crontab and command ("cron.d/sysstat: debian-sa1 1 1"), so that
//     editing the crontab around it keeps its series; the file:line is the
//     location label of memdiag_job_info alone.
//   - process_* and go_*: memdiag's own CPU, memory, open files and Go
//     runtime, as every Go exporter serves them.
//   - memdiag_episodes_total, memdiag_episode_active,
//     memdiag_episode_last_start_timestamp_seconds and
//     memdiag_culprit_confidence{culprit,kind} /
//     memdiag_culprit_episodes{culprit,kind}: the correlator's episodes and
//     culprits, re-derived every Options.AnalyzeEvery (1 min) over the
//     last 60-67 min of samples (Options.Window).
//   - memdiag_samples_late_total and memdiag_samples_missed_total: the
//     sampler's samples more than half an interval late and those never
//     taken, each a gap in the recording (record.Gap).
//   - every entry of the signal catalogue (package signal), named by
//     [SignalMetric] from its Name, base unit and kind
//     (memdiag_psi_memory_some_seconds_total, memdiag_direct_reclaim_bytes_total,
//     memdiag_file_lru_bytes, memdiag_disk_read_bytes_total), with
//     scope="host" and, under watch --cgroup, scope="cgroup" — the
//     group's PSI and memory.stat, which node_exporter does not read. A
//     counter is the sum of the signal's change between samples since
//     memdiag started (so it only grows, whatever devices come and go);
//     the host's counters repeat node_exporter's so that a host scraped
//     for memdiag alone can still be analysed.
//
// # Cardinality
//
// Labels are units, jobs and culprits, never PIDs or command lines. Units
// are capped at Options.MaxUnits (default 50): the first units seen get a
// label of their own for the life of the process (a counter must not move
// between labels), every later one is summed under unit="other", and
// memdiag_unit_overflow_total counts how many units went there. A process
// in no unit is counted under unit="none". Culprits are capped at
// Options.MaxCulprits (default 5, the best ranked).
package exposition
