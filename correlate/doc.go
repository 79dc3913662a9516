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
//     larger rise. The file LRU's baseline is never below zero: a page
//     cache that usually grows makes no drop out of a pause. The defaults
//     are listed under Defaults below.
//  3. Spikes: per interval, the chosen latency statistic (p99 by default;
//     max, p95, mean) is compared with a rolling baseline, the median and
//     MAD of the previous 30 intervals that had requests (the whole
//     recording's while fewer than 5 are known). A spike needs both
//     statistic > median + 4 × 1.4826 × MAD and the floor of the spike
//     rule: an absolute latency ("500ms") or a multiple of the baseline
//     median ("3x", the default). Latency comes from Sample.Latency or,
//     when given, from [Options.Requests] (an imported load-test file).
//     Without latency only pressure episodes are analysed.
//  4. Episodes: flagged intervals (a spike or at least one signal) are
//     merged when the quiet gap between them is at most GapTolerance (one
//     sampling interval by default). A run that raised no kernel signal is
//     a latency spike outside episodes ([Result.LoneSpikes]), not an
//     episode. When the memory signals read a cgroup's PSI (the --cgroup
//     group of watch: the service under test), an episode must raise
//     psi_some or psi_full (Options.Require), so host-wide disk and page
//     cache activity that did not stall the service is left out (a note
//     counts those intervals). An episode keeps its signals with their
//     peaks, its latency peak, the processes that did the most I/O in it
//     (Sample.Procs deltas, with their systemd unit) and the processes that
//     started or exited in it or in the interval before it (Sample.Events).
//  5. Period: [EstimatePeriod] searches periods between 4 sampling
//     intervals and half the recording for the lattice (start + k·period)
//     that best matches the episode starts (F1 of precision and recall,
//     tolerance 10 % of the period), so missed and extra episodes lower the
//     score but do not hide the pattern, and a union of schedules (two
//     20-minute timers offset by 10 minutes) is seen as its combined
//     10-minute period. A period needs at least 3 matching episodes and a
//     score of 0.7.
//  6. Culprits: (a) each job of Header.Jobs is projected over the recording
//     ([Options.Project], normally timers.Project) and an episode is matched
//     to a firing when it starts within [Earliest − one interval,
//     Latest + lag]; the lag (LagTolerance, 60 s, at most a quarter of the
//     job's period) allows for the I/O following the firing. (b) Processes
//     that started or did I/O in episodes are tied to a job through their
//     unit (x.service ← x.timer, or Job.Unit), through the program names
//     of the job's command (15-character comm; shells and interpreters
//     excepted) or through a program path of the command in their command
//     line. A job is named only with evidence: at
//     least 2 matched firings, at least half of its firings followed by an
//     episode, and that many matched firings unlikely by chance: with the
//     episodes at random times a window of width w holds one of n episode
//     starts with probability q = 1 − (1 − w/span)^n, and the binomial
//     probability of matching as many firings must be below 0.01; w is
//     the part of the window the matched episodes used (their latest
//     start after the window opened, plus one interval). A
//     firing's window is clamped to a quarter of the job's period so that a
//     wide AccuracySec cannot cover everything, and an episode in the
//     windows of several jobs is credited to the job that fired closest to
//     it, so a decoy firing shortly before another job's episode does not
//     claim it. A job that is not enabled (Job.Active false) also needs
//     one of its processes in an episode. Or: its processes did I/O in at
//     least 2 episodes and 30 % of them, at least three times their rate
//     outside episodes. Culprits naming a job or a process rank by the
//     episodes they explain, then confidence; "unknown" ranks last. (c) A recurring pattern that named jobs do
//     not explain is reported as kind "process" when one process did I/O in
//     most of its episodes ("recurs every P, PROC wrote N each time, no
//     timer or cron job: an in-process schedule?") or kind "unknown". When
//     nothing fits, [Result.Culprits] is empty and the verdict says so.
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
//	direct_reclaim  pages scanned by direct reclaim +50 pages/s
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
