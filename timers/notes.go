package timers

import (
	"path"
	"regexp"
	"strings"
)

// knownJob is a periodic job known to cause memory pressure or heavy I/O
// when it runs, matched on a timer or service name, a command or a
// run-parts script.
type knownJob struct {
	re   *regexp.Regexp
	note string
}

// knownJobs are checked in order; the first match wins. The notes say what
// the job does to the page cache and the disks, which is what matters when
// it lines up with a latency spike.
var knownJobs = []knownJob{
	{regexp.MustCompile(`pmlogger_check|pmlogger_farm_check`), "PCP pmlogger check: walks and may rewrite/compress PCP archives; bursts of disk I/O and page-cache churn"},
	{regexp.MustCompile(`pmlogger_daily`), "PCP pmlogger daily: merges, compresses and culls PCP archives; heavy disk I/O"},
	{regexp.MustCompile(`pmie_check|pmie_farm_check`), "PCP pmie check: checks/restarts pmie inference engines; CPU and I/O burst"},
	{regexp.MustCompile(`pmie_daily`), "PCP pmie daily: rotates and culls pmie logs; small"},
	{regexp.MustCompile(`pmfind`), "PCP pmfind: service discovery sweep"},
	{regexp.MustCompile(`sysstat-collect|debian-sa1|sa1\b`), "sysstat collection (sadc): small, but writes /var/log/sysstat every run"},
	{regexp.MustCompile(`sysstat-summary|sa2\b|cron\.daily/sysstat`), "sysstat daily summary (sa2): reads the day's activity files"},
	{regexp.MustCompile(`logrotate`), "logrotate: copies/compresses logs; disk I/O and page cache fill"},
	{regexp.MustCompile(`man-db|mandb`), "man-db: rebuilds the manual page index; reads many small files"},
	{regexp.MustCompile(`updatedb|mlocate|plocate`), "updatedb: walks the whole file system; evicts page cache (dentries, inodes)"},
	{regexp.MustCompile(`apt-daily-upgrade|unattended-upgrade`), "apt daily upgrade: installs updates; CPU, disk and memory"},
	{regexp.MustCompile(`apt-daily|apt-compat|apt\.systemd\.daily`), "apt daily: downloads package lists; network, disk and memory (apt cache)"},
	{regexp.MustCompile(`fstrim`), "fstrim: discards unused blocks on all file systems; can stall disk I/O"},
	{regexp.MustCompile(`e2scrub`), "e2scrub: LVM snapshot + e2fsck of ext4 file systems; heavy read I/O"},
	{regexp.MustCompile(`mdcheck|mdadm|checkarray`), "mdadm RAID check/resync: reads whole disks for hours"},
	{regexp.MustCompile(`dpkg-db-backup|cron\.daily/dpkg`), "dpkg database backup: small"},
	{regexp.MustCompile(`(?i)backup|borg|restic|duplicity|rsnapshot|bacula|amanda|rsync`), "backup: reads much data; fills and evicts page cache"},
	{regexp.MustCompile(`(?i)vacuum|pg_dump|postgres|mysqldump|mysqlcheck|automysqlbackup|mongodump|redis-cli.*(bgsave|bgrewriteaof)`), "database maintenance or dump: heavy I/O and memory"},
	{regexp.MustCompile(`anacron\.timer|anacron\.service`), "starts anacron, which runs /etc/cron.{daily,weekly,monthly}"},
	{regexp.MustCompile(`exim4-base|exim_tidydb`), "exim4 database tidy: small"},
}

// noteFor returns a note for a job: for a run-parts job, which of its
// scripts are known heavy jobs; otherwise the note of the first known job
// matching its name, unit or command (a cron or anacron job's command
// only); "" when none matches.
func noteFor(j Job) string {
	if len(j.Scripts) > 0 {
		var names []string
		for _, s := range j.Scripts {
			for _, k := range knownJobs {
				if k.re.MatchString(s) {
					n := path.Base(s)
					for _, idle := range j.IdleScripts {
						if idle == s {
							n += " (idle: systemd timer)"
						}
					}
					names = append(names, n)
					break
				}
			}
		}
		if len(names) == 0 {
			return ""
		}
		return "run-parts; known jobs: " + strings.Join(names, ", ")
	}
	text := strings.Join([]string{j.Name, j.Unit, j.Command}, "\n")
	if j.Source != Systemd {
		// A crontab line's name is its file's (cron.d/backup:2): any
		// line of a file called backup would be taken for a backup.
		// The command says what the line runs.
		text = j.Command
	}
	for _, k := range knownJobs {
		if k.re.MatchString(text) {
			return k.note
		}
	}
	return ""
}
