// Package correlate finds latency spikes and memory-pressure episodes in a
// recording, estimates how often they recur, and ranks the periodic jobs and
// processes that explain them. It is a pure function of recorded data
// ([Analyze]): it reads no file and no clock, so every verdict can be
// re-derived later from the recording alone.
//
// # Pipeline
//
//  1. Intervals: [record.Intervals] derives one interval per pair of
//     consecutive samples (PSI shares, file LRU change, refaults, reclaim,
//     swap-out, disk bytes and I/O time).
//  2. Signals: each signal is compared with the recording's own baseline,
//     the median of the signal over the whole recording. An interval raises
//     a signal when the value exceeds the median by at least the signal's
//     threshold AND by more than MADFactor robust standard deviations
//     (1.4826 × the median absolute deviation), so a noisy signal needs a
//     larger rise. PSI is absolute: psi_some and psi_full must also reach
//     PSISomeMin (1 %) and PSIFullMin (0.5 %) of wall time, and their
//     baseline is the quiet level (25th percentile, no deviation test). The file LRU's
//     baseline is never below zero: a page cache that usually grows makes
//     no drop out of a pause. The defaults are listed under Defaults below.
//  3. Spikes: per interval, the chosen latency statistic (p99 by default;
//     max, p95, mean) is compared with a rolling baseline, the median and
//     MAD of the previous 30 intervals that had requests (the whole
//     recording's while fewer than 5 are known). A spike needs both
//     statistic > median + 4 × 1.4826 × MAD and the floor of the spike
//     rule: an absolute latency ("500ms") or a multiple of the baseline
//     median ("3x", the default). Latency comes from Sample.Latency or,
//     when given, from [Options.Requests] (an imported load-test file).
//     Without latency only pressure episodes are analysed.
//  4. Episodes: intervals that raise at least one kernel signal are
//     merged when the quiet gap between them is at most GapTolerance (one
//     sampling interval by default). A latency spike never opens, extends
//     or merges an episode, so the episodes do not depend on the latency
//     source; a spike in an episode, in the interval just before it or
//     within GapTolerance after it makes it a spike episode (one that
//     ended earlier than the interval before the stall is not its effect,
//     nor a run that began two or more intervals before it, inside part
//     included: beforeOnset). Whenever the recording has memory PSI
//     of the scope, an episode must raise psi_some or psi_full
//     (Options.Require): disk and reclaim activity that stalled nobody is
//     an [IOBurst], never an episode. An open episode continues through
//     intervals whose stall stays above a low-water mark or whose reclaim
//     signals go on (hysteresis), so one burst is one episode. Any other
//     run of spike intervals is a latency spike outside episodes
//     ([Result.LoneSpikes]). Pressure at or above Thresholds.Sustained for
//     most of the recording is [Result.Sustained]. An episode keeps its
//     signals with their peaks, its latency peak, the processes that did
//     the most I/O in it and the processes that started or exited in it
//     or in the interval before it (Sample.Events).
//  5. Period: estimatePeriod searches periods between 4 sampling
//     intervals and half the recording for the lattice (start + k·period)
//     that best matches the episode starts (F1 of precision and recall,
//     tolerance 10 % of the period), so missed and extra episodes lower the
//     score but do not hide the pattern, and a union of schedules (two
//     20-minute timers offset by 10 minutes) is seen as its combined
//     10-minute period. A period needs at least 3 matching episodes and a
//     score of 0.7.
//  6. Culprits: the model of docs/analyze.md ("The culprit model").
//     A process belongs to a job only through its unit, its recorded
//     ancestry or its own program (jobPrograms and programOf in model.go), never an
//     argument. A job is credited with an episode when its processes did
//     at least 4 MiB and 25 % of all recorded processes' I/O
//     there; it is named from two or more credits with a chance
//     probability (a null model of its activity outside episodes, or its
//     firings) below 0.01, or from one credit with a 50 % share and
//     a start before the stall. Every job not named is a [NotRun],
//     with why ([NotNamedKind]): it ran only outside the --cgroup
//     group ([RanOutside]), ran but was not proven ([RanUnnamed]), or
//     did not run. Every
//     culprit carries a [Proof], from which its confidence is computed. A
//     recurring pattern no job explains is reported as the program that
//     did its I/O (kind process) or as unknown; a pattern whose runs
//     recur and did their share of a named job's episodes too is named
//     beside the job, each credited with its own share of the episodes
//     they share ([Proof.SharedWith]).
//
// # Defaults
//
// The signal thresholds ([DefaultThresholds]), each a rise above the
// recording's median, each overridable (a negative value disables it):
//
//	psi_some        PSI memory "some" share +0.02 (2 points of wall time),
//	                of the recorded --cgroup group if any, else the host
//	                (Options.PSIScope)
//	psi_full        PSI memory "full" share +0.01
//	lru_drop        file LRU (page cache) shrinking by 4 MiB/s, and by at
//	                least 32 MiB within the interval (LRUDropMin: at 1 s
//	                sampling a busy host's page cache churns by tens of MiB/s)
//	refault         workingset refaults (file+anon) +200 pages/s
//	direct_reclaim  pages scanned by global direct reclaim +50 pages/s
//	limit_reclaim   pages scanned by reclaim at cgroup limits +50 pages/s
//	disk_io         disk read+write +8 MiB/s (all recorded devices)
//	io_time         disk weighted I/O time +0.2 s/s
//	swap_out        swap-out +256 KiB/s
//	MADFactor       4 robust standard deviations
//
// Latency: statistic p99, spike rule 3x, rolling window 30 intervals,
// 4 robust standard deviations. Episodes: one signal (MinSignals) or a
// spike flags an interval; with a cgroup's PSI read, an episode needs
// psi_some or psi_full (Require); gap tolerance one interval,
// processes listed from 1 MiB of I/O, 5 per episode. Culprits: lag
// tolerance 60 s.
package correlate
