// Package redact is memdiag's one redaction policy: what counts as a
// secret in a command line, a URL, an HTTP header or free text, and how
// it is replaced ("***"). It is applied to everything that leaves the
// process — the recording's header (cron and unit commands, the wrapped
// command, the --probe URL), samples and events (process command lines),
// every report and every error — unless the user opts out (--no-redact).
package redact

import (
	"path"
	"regexp"
	"strings"
	"unicode"
)

// redacted replaces a secret in a redacted command line.
const redacted = "***"

// Cmdline joins a process's arguments (/proc/PID/cmdline split at
// NUL) with spaces, as ps does, after replacing likely secrets with "***".
// Recordings end up in bug reports; comm, PID and unit are kept elsewhere
// and never redacted, so the process stays identifiable. An argument that
// contains spaces (a `sh -c` script) is split into words and the same rules
// apply to its words; runs of spaces collapse to one.
//
// What is redacted:
//
//   - The value of an option or assignment whose name has a secret word as
//     a component (split at "-", "_", ".", and lower-to-upper case changes):
//     password, passwd, passphrase, pass, pw, pwd (not PWD alone), secret(s),
//     token(s), apikey, key, credential(s), auth, authorization, cookie(s),
//     pin, passcode, otp, signature, jwt, bearer, or that ends in password,
//     passwd, passphrase, secret, token or apikey (PGPASSWORD). Both "--password=x",
//     "DB_PASSWORD=x", "-Dspring.datasource.password=x", "?token=x&...",
//     "--api-token=x", "--authorization=x", "--cookie=x" and
//     "--password x" (the next word, unless it starts with "-") are covered.
//     Names starting with "no-" (psql's --no-password) or ending in file,
//     path, dir, stdin, fd, env, type, size, len, length, id, name, url or
//     ttl name a place or a property of the secret, not the secret, and are
//     kept (--password-file=/run/secrets/db, --key-size=2048). The name
//     "sig" alone is one too: an Azure SAS URL's signature ("&sig=x").
//   - "aws configure set NAME VALUE" (and "npm config set", any "config
//     set" or "configure set"): VALUE when NAME names a secret
//     (aws_secret_access_key, aws_session_token).
//   - htpasswd in batch mode (-b, also in -cbB, -nb): its last
//     argument, the password ("htpasswd -b FILE USER PASSWORD",
//     "htpasswd -nb USER PASSWORD").
//   - mysql/mariadb clients (mysql, mysqldump, mariadb, mariadb-dump, ...):
//     "-pSECRET" (attached only: "-p" alone prompts, and a separate word
//     after it is the database name). psql's "-p" is the port and is kept;
//     its password comes as PGPASSWORD=, password= in a conninfo string or
//     a URL, which the other rules cover. mysql's --password takes its
//     value only as --password=x, so a word after a bare --password (the
//     database) is kept.
//   - mongo shells and tools and sshpass: "-p SECRET" and "-pSECRET";
//     redis-cli: "-a SECRET"; 7z, rar: "-pSECRET"; ldapsearch and the
//     other OpenLDAP clients: "-w SECRET".
//   - "-k SECRET" / "-kSECRET" and "-P SECRET" / "-PSECRET" (openssl -k,
//     zip and unzip -P, ipmitool -P and -k, …) of every program except
//     those known to use -k or -P for something else (curl -k is
//     --insecure, sort -k a key, grep -P Perl regexps, scp -P and mysql -P
//     a port, xargs -P a count, rsync -P progress, …: the list
//     kOrPNotSecret). An unknown program's -k or -P value is redacted: a
//     lost argument is cheaper than a leaked secret.
//   - curl: the password part of "-u user:pass", "--user user:pass" and
//     "--proxy-user", "-U".
//   - Credentials in URLs: "scheme://user:pass@host" becomes
//     "scheme://user:***@host". A URL whose user alone looks like a token
//     ("https://ghp_…@github.com", "https://glpat-…@host": a known token
//     prefix, or 20 or more letters, digits, "-" and "_" with both a
//     letter and a digit) becomes "scheme://***@host"; another URL with a
//     user but no password ("ssh://git@github.com") is kept.
//   - Slack incoming webhooks: "hooks.slack.com/services/T…/B…/SECRET"
//     keeps its team and channel ids and loses SECRET.
//   - AWS access key ids ("AKIA" or "ASIA" and 16 upper-case letters or
//     digits, a word of its own): "AKIA***".
//   - HTTP headers carrying credentials: Authorization, Proxy-Authorization,
//     Cookie, GitLab's Private-Token, Job-Token and Deploy-Token, and
//     X-…-Token/Key/Secret/Auth headers: "Authorization: Bearer x"
//     becomes "Authorization: Bearer ***"; a lone "Bearer x" too. A Cookie
//     or Set-Cookie header's whole value ("a=1; b=2") is redacted.
//
// Not redacted, by decision: "-p 8080" and "-p8080" of any program not
// listed above (ssh, nc, docker, psql use -p for ports), positional
// arguments, and secrets in formats not listed (a password inside a
// quoted shell string with spaces, a short token passed as a bare URL
// user).
func Cmdline(args []string) string { return strings.Join(Args(args), " ") }

// Args is [Cmdline] before the join: the words of args, secrets replaced.
func Args(args []string) []string {
	var words []string
	for _, a := range args {
		words = append(words, strings.Fields(redactInline(a))...)
	}
	var (
		mysqlStyle, mongoStyle, redisStyle, curlStyle bool
		archiveStyle, ldapStyle                       bool
		pending                                       bool   // the next word is a secret value
		pendingUserPass                               bool   // the next word is curl's user:pass
		cur                                           string // the program the words belong to
		htpw                                          htpasswdState
	)
	for i, w := range words {
		// The program the next options belong to: the first word, a
		// program named later (after a pipe, in sh -c), or the script or
		// program an interpreter or wrapper runs (python3 job.py,
		// sudo -u x job).
		switch base := path.Base(w); {
		case i == 0 || kOrPNotSecret[base] && !launchers[cur] || knownProgram(base):
			cur = base
		case launchers[cur] && !strings.HasPrefix(w, "-") && !strings.Contains(w, "=") && strings.Trim(w, "0123456789.smhd") != "":
			cur = base
		}
		switch prog := path.Base(w); {
		case archivers[prog]:
			archiveStyle = true
		case strings.HasPrefix(prog, "ldap") && len(prog) > 4:
			ldapStyle = true
		case mysqlClients[prog]:
			mysqlStyle = true
		case mongoClients[prog]:
			mongoStyle = true
		case prog == "redis-cli":
			redisStyle = true
		case prog == "curl":
			curlStyle = true
		}
		if pending {
			pending = false
			if !strings.HasPrefix(w, "-") {
				words[i] = redacted
				continue
			}
		}
		if pendingUserPass {
			pendingUserPass = false
			if u, _, ok := strings.Cut(w, ":"); ok {
				words[i] = u + ":" + redacted
				continue
			}
		}
		if i >= 3 && isConfigSet(words[i-3], words[i-2]) && !strings.HasPrefix(words[i-1], "-") &&
			!strings.Contains(words[i-1], "=") && sensitiveName(words[i-1]) && !strings.HasPrefix(w, "-") {
			words[i] = redacted // aws configure set aws_secret_access_key X
			continue
		}
		if path.Base(w) == "htpasswd" {
			htpw = htpasswdState{on: true}
			continue
		}
		if cur == "htpasswd" && htpw.on && htpw.word(w) {
			words[i] = redacted
			continue
		}
		if len(w) < 2 || w[0] != '-' || w == "--" {
			continue
		}
		long := strings.HasPrefix(w, "--")
		name := strings.TrimLeft(w, "-")
		if strings.Contains(name, "=") {
			continue // name=value was handled by redactInline
		}
		switch {
		case !long && mysqlStyle && strings.HasPrefix(w, "-p"):
			if len(w) > 2 {
				words[i] = "-p" + redacted
			}
		case !long && ((mongoStyle && strings.HasPrefix(w, "-p")) || (redisStyle && strings.HasPrefix(w, "-a"))):
			if len(w) > 2 {
				words[i] = w[:2] + redacted
			} else {
				pending = true
			}
		case !long && curlStyle && (strings.HasPrefix(w, "-u") || strings.HasPrefix(w, "-U")):
			if len(w) == 2 {
				pendingUserPass = true
			} else if u, _, ok := strings.Cut(w[2:], ":"); ok {
				words[i] = w[:2] + u + ":" + redacted
			}
		case !long && archiveStyle && strings.HasPrefix(w, "-p") && len(w) > 2:
			words[i] = "-p" + redacted
		case !long && ldapStyle && w == "-w":
			pending = true
		case !long && (w[1] == 'k' || w[1] == 'P') && !kOrPNotSecret[cur] && !(w[1] == 'P' && mysqlStyle):
			if len(w) > 2 {
				words[i] = w[:2] + redacted
			} else {
				pending = true
			}
		case long && mysqlStyle && name == "password":
			// mysql's --password takes its value only as --password=x;
			// a separate word is the database.
		case len(name) > 1 && sensitiveName(name):
			pending = true
		case long && curlStyle && (name == "user" || name == "proxy-user"):
			pendingUserPass = true
		}
	}
	return words
}

// isConfigSet reports whether a, b are "configure set" or "config set"
// (aws configure set NAME VALUE, npm config set NAME VALUE).
func isConfigSet(a, b string) bool {
	return b == "set" && (a == "configure" || a == "config")
}

// htpasswdState follows the arguments of one htpasswd command: in batch
// mode (-b) its password is the third word that is not an option
// (FILE USER PASSWORD), the second with -n (USER PASSWORD, no file).
type htpasswdState struct {
	on            bool // an htpasswd word was seen
	batch, noFile bool // -b, -n
	skip          bool // the next word is an option's value (-C cost, -r rounds)
	pos           int  // words seen that are not options
}

// word takes the next word of the htpasswd command and reports whether
// it is the password.
func (h *htpasswdState) word(w string) bool {
	if h.skip {
		h.skip = false
		return false
	}
	if len(w) > 1 && w[0] == '-' && h.pos == 0 {
		for k := 1; k < len(w); k++ {
			switch w[k] {
			case 'b':
				h.batch = true
			case 'n':
				h.noFile = true
			case 'C', 'r': // a value: the rest of the word or the next one
				h.skip = k == len(w)-1
				return false
			}
		}
		return false
	}
	h.pos++
	want := 3
	if h.noFile {
		want = 2
	}
	return h.batch && h.pos == want
}

var mysqlClients = setOf("mysql", "mysqldump", "mysqladmin", "mysqlimport", "mysqlcheck",
	"mysqlshow", "mysqlpump", "mysqlbinlog", "mysqlslap", "mariadb", "mariadb-dump",
	"mariadb-admin", "mariadb-import", "mariadb-check", "mariadb-show", "mariadb-slap",
	"mariadb-binlog")

var mongoClients = setOf("mongo", "mongosh", "mongodump", "mongorestore", "mongoexport",
	"mongoimport", "mongostat", "mongotop", "mongofiles", "sshpass")

var secretWords = setOf("password", "passwd", "passphrase", "pass", "pw", "pwd", "secret",
	"secrets", "token", "tokens", "apikey", "key", "credential", "credentials", "auth",
	"authorization", "cookie", "cookies", "pin", "passcode", "otp", "signature", "jwt", "bearer")

var archivers = setOf("7z", "7za", "7zr", "rar", "unrar")

// kOrPNotSecret are programs whose -k or -P is not followed by a secret
// (an option without a value, a port, a key field, a count, a folder).
var kOrPNotSecret = setOf(
	// -k: no value or not a secret
	"curl", "wget", "sort", "df", "du", "ls", "free", "gzip", "gunzip", "zstd", "xz", "bzip2", "lz4",
	"pigz", "dmesg", "journalctl", "ssh", "sudo", "kill", "pkill", "pgrep", "ps", "top", "htop",
	"ip", "ss", "lsof", "make", "tar", "cut", "join", "uniq", "fio", "stress-ng", "apt", "apt-get",
	"dpkg", "systemctl", "nmap", "ab", "wrk", "hey", "vegeta", "k6", "locust", "jmeter", "siege",
	// -P: no value or not a secret
	"grep", "egrep", "fgrep", "rg", "ag", "scp", "sftp", "rsync", "cp", "mv", "ln", "find",
	"xargs", "parallel", "docker", "podman", "su", "git", "less", "man", "pidstat", "iostat",
	"mpstat", "sar", "vmstat", "python", "python3", "perl", "ruby", "node", "java", "bash", "sh",
	"dash", "zsh", "env", "nice", "ionice", "timeout", "nohup", "taskset", "chrt", "psql",
	"pg_dump", "pg_dumpall", "pg_restore", "pg_basebackup", "mount", "umount", "sed", "awk",
	"head", "tail", "cat", "tee", "date", "watch", "nc", "ncat", "socat", "ping", "mtr",
	"traceroute", "dig", "host", "lsblk", "blkid", "stat", "id", "who", "w", "uptime")

// launchers run another program or a script named by a later word.
var launchers = setOf("sh", "bash", "dash", "zsh", "ksh", "python", "python2", "python3", "perl",
	"ruby", "node", "php", "env", "sudo", "nice", "ionice", "timeout", "nohup", "taskset", "chrt",
	"setsid", "stdbuf", "runuser", "flock", "chronic", "systemd-run")

// knownProgram reports whether name is a program the rules above treat
// specially, so that the words after it belong to it.
func knownProgram(name string) bool {
	return mysqlClients[name] || mongoClients[name] || archivers[name] || name == "redis-cli" ||
		name == "curl" || strings.HasPrefix(name, "ldap") || name == "htpasswd"
}

// keepLast are last name components that say the value is where or what
// kind of secret, not the secret.
var keepLast = setOf("file", "path", "dir", "stdin", "fd", "env", "type", "size", "len",
	"length", "id", "name", "url", "ttl")

func setOf(s ...string) map[string]bool {
	m := make(map[string]bool, len(s))
	for _, x := range s {
		m[x] = true
	}
	return m
}

// sensitiveName reports whether an option or variable name names a secret
// (see Cmdline).
func sensitiveName(name string) bool {
	comps := nameComponents(name)
	if len(comps) == 0 || comps[0] == "no" || keepLast[comps[len(comps)-1]] {
		return false
	}
	if len(comps) == 1 && comps[0] == "pwd" {
		return false // $PWD is the working directory
	}
	if len(comps) == 1 && comps[0] == "sig" {
		return true // an Azure SAS URL's signature: "&sig=x"
	}
	for _, c := range comps {
		if secretWords[c] {
			return true
		}
		for _, suf := range secretSuffixes {
			if strings.HasSuffix(c, suf) {
				return true // PGPASSWORD, mytoken
			}
		}
	}
	return false
}

// secretSuffixes catch secret words glued to a prefix (PGPASSWORD). Short
// words (key, pass, pw) are not among them: monkey, bypass.
var secretSuffixes = []string{"password", "passwd", "passphrase", "secret", "token", "apikey"}

// nameComponents splits "DB_PASSWORD", "api-key", "clientSecret",
// "javax.net.ssl.keyStorePassword" into lower-case words.
func nameComponents(name string) []string {
	var comps []string
	start := -1
	var prev rune
	for i, r := range name {
		alnum := unicode.IsLetter(r) || unicode.IsDigit(r)
		if start >= 0 && (!alnum || (unicode.IsUpper(r) && unicode.IsLower(prev))) {
			comps = append(comps, strings.ToLower(name[start:i]))
			start = -1
		}
		if alnum && start < 0 {
			start = i
		}
		prev = r
	}
	if start >= 0 {
		comps = append(comps, strings.ToLower(name[start:]))
	}
	return comps
}

var (
	// scheme://userinfo@ up to the last '@' of the authority.
	urlUserinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://)([^/?#\s'"]*)@`)
	// A header carrying credentials, optionally with an auth scheme.
	authHeader = regexp.MustCompile(`(?i)\b((?:proxy-)?authorization|cookie|(?:private|job|deploy)-token|x-[a-z0-9-]*(?:token|key|secret|auth)[a-z0-9-]*)(\s*:\s*)((?:basic|bearer|digest|token|negotiate|aws4-hmac-sha256)\s+)?[^\s'"]+`)
	bearer     = regexp.MustCompile(`(?i)\b(bearer\s+)[^\s'"]+`)
	// A Cookie header's value is pairs joined by "; ": "Cookie: a=1; b=2".
	cookieHeader = regexp.MustCompile(`(?i)\b((?:set-)?cookie)(\s*:\s*)[^\s;'"]+(?:;\s*[^\s;'"]+)*;?`)
	// A Slack incoming webhook: team id, channel id, secret.
	slackWebhook = regexp.MustCompile(`(hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/)[A-Za-z0-9]+`)
	// An AWS access key id: long-term (AKIA) or temporary (ASIA).
	awsKeyID = regexp.MustCompile(`\b(AKIA|ASIA)[A-Z0-9]{16}\b`)
)

// tokenPrefixes start tokens that services accept as a URL's user:
// GitHub (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_), GitLab (glpat-,
// gldt-, glcbt-), Slack (xox).
var tokenPrefixes = []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "gldt-", "glcbt-", "xox"}

// tokenLike reports whether a URL's user (with no password) looks like a
// token rather than a name: a known token prefix, or at least 20 letters,
// digits, "-" and "_" with both a letter and a digit.
func tokenLike(user string) bool {
	for _, p := range tokenPrefixes {
		if strings.HasPrefix(user, p) && len(user) > len(p) {
			return true
		}
	}
	if len(user) < 20 {
		return false
	}
	var letter, digit bool
	for _, c := range user {
		switch {
		case c >= '0' && c <= '9':
			digit = true
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			letter = true
		case c == '-' || c == '_':
		default:
			return false
		}
	}
	return letter && digit
}

// redactInline redacts secrets that sit inside one argument: URL
// credentials, headers, and name=value pairs.
func redactInline(a string) string {
	if strings.Contains(a, "://") {
		a = urlUserinfo.ReplaceAllStringFunc(a, func(m string) string {
			sub := urlUserinfo.FindStringSubmatch(m)
			user, _, ok := strings.Cut(sub[2], ":")
			if !ok {
				if tokenLike(user) {
					return sub[1] + redacted + "@"
				}
				return m
			}
			return sub[1] + user + ":" + redacted + "@"
		})
	}
	if strings.Contains(a, ":") {
		a = cookieHeader.ReplaceAllString(a, "${1}${2}"+redacted)
		a = authHeader.ReplaceAllString(a, "${1}${2}${3}"+redacted)
	}
	a = bearer.ReplaceAllString(a, "${1}"+redacted)
	if strings.Contains(a, "hooks.slack.com/") {
		a = slackWebhook.ReplaceAllString(a, "${1}"+redacted)
	}
	if strings.Contains(a, "AKIA") || strings.Contains(a, "ASIA") {
		a = awsKeyID.ReplaceAllString(a, "${1}"+redacted)
	}
	if strings.Contains(a, "=") {
		a = redactAssignments(a)
	}
	return a
}

// redactAssignments replaces the value of every name=value in s whose
// name is sensitive. A name starts after a start of string, space, or one
// of ?&;,'"( and may carry leading dashes (--password=x, -Dx.password=y);
// the value ends at a space or one of &;,'".
func redactAssignments(s string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '=' {
			continue
		}
		j := i
		for j > 0 && isNameByte(s[j-1]) {
			j--
		}
		if j > 0 && !strings.ContainsRune(" \t?&;,'\"(", rune(s[j-1])) {
			continue
		}
		name := strings.TrimLeft(s[j:i], "-")
		if name == "" || !sensitiveName(name) {
			continue
		}
		k := i + 1
		for k < len(s) && !strings.ContainsRune(" \t&;,'\"", rune(s[k])) {
			k++
		}
		if k == i+1 {
			continue // empty value
		}
		b.WriteString(s[last : i+1])
		b.WriteString(redacted)
		last = k
		i = k - 1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func isNameByte(c byte) bool {
	return c == '-' || c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// String redacts free text: a command as a crontab or unit file writes it
// ("mysqldump -pX db | gzip"), an error message, a log line. It applies
// the rules of [Cmdline] to the words of each line; a line with a secret
// has its runs of spaces collapsed to one, other lines are kept as they
// are.
func String(s string) string {
	if s == "" {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		words := strings.Fields(l)
		if r := Args([]string{l}); !equal(r, words) {
			lines[i] = strings.Join(r, " ")
		}
	}
	return strings.Join(lines, "\n")
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// URL redacts a URL: the password of its userinfo and the values of its
// query parameters that name a secret ("?access_token=x", "&api_key=y").
// Nothing else of the URL changes.
func URL(u string) string { return redactInline(u) }
