package redact

import "testing"

func TestCmdline(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		// Option values.
		{"long =", []string{"app", "--password=hunter2", "-v"}, "app --password=*** -v"},
		{"long separate", []string{"app", "--password", "hunter2", "-v"}, "app --password *** -v"},
		{"long separate then flag", []string{"app", "--token", "--verbose"}, "app --token --verbose"},
		{"token", []string{"/usr/bin/agent", "--token=abc123", "--api-key", "k-123"}, "/usr/bin/agent --token=*** --api-key ***"},
		{"single-dash long", []string{"java", "-password", "s3", "-jar", "x.jar"}, "java -password *** -jar x.jar"},
		{"client secret camel", []string{"svc", "--clientSecret=abc"}, "svc --clientSecret=***"},
		{"java property", []string{"java", "-Djavax.net.ssl.keyStorePassword=changeit", "-Xmx1g"}, "java -Djavax.net.ssl.keyStorePassword=*** -Xmx1g"},
		{"env assignment", []string{"env", "DB_PASSWORD=pw1", "AWS_SECRET_ACCESS_KEY=AKx", "HOME=/root", "./run"}, "env DB_PASSWORD=*** AWS_SECRET_ACCESS_KEY=*** HOME=/root ./run"},
		{"key=", []string{"tool", "key=abcd", "apikey=zz", "api_key=yy"}, "tool key=*** apikey=*** api_key=***"},
		{"secret word", []string{"vault", "write", "secret=xyz"}, "vault write secret=***"},
		{"query string", []string{"wget", "https://example.com/a?user=bob&token=t0k&x=1"}, "wget https://example.com/a?user=bob&token=***&x=1"},
		{"conninfo", []string{"psql", "host=db port=5432 dbname=app password=pg1"}, "psql host=db port=5432 dbname=app password=***"},
		{"PGPASSWORD", []string{"sh", "-c", "PGPASSWORD=pg1 psql -h db"}, "sh -c PGPASSWORD=*** psql -h db"},
		// The fixture process of testdata/diskio/poll.
		{"fixture writer", []string{"/root/.pyenv/versions/3.11.7/bin/python3", "/var/tmp/memdiag-diskio-cap/writer.py", "--token=abc123", "--password", "hunter2"},
			"/root/.pyenv/versions/3.11.7/bin/python3 /var/tmp/memdiag-diskio-cap/writer.py --token=*** --password ***"},

		// Database clients.
		{"mysql -p attached", []string{"mysql", "-uroot", "-psecret", "app"}, "mysql -uroot -p*** app"},
		{"mysql -p prompt", []string{"/usr/bin/mysql", "-u", "root", "-p", "app"}, "/usr/bin/mysql -u root -p app"},
		{"mysql --password=", []string{"mysqldump", "--password=pw", "app"}, "mysqldump --password=*** app"},
		{"mysql --password db", []string{"mysql", "--password", "app"}, "mysql --password app"},
		{"mariadb-dump", []string{"mariadb-dump", "-ppw", "--all-databases"}, "mariadb-dump -p*** --all-databases"},
		{"mysql in sh -c", []string{"/bin/sh", "-c", "mysqldump -uroot -pS3cr3t app | gzip > /backup/app.gz"}, "/bin/sh -c mysqldump -uroot -p*** app | gzip > /backup/app.gz"},
		{"mongo -p separate", []string{"mongosh", "-u", "admin", "-p", "mpw", "--authenticationDatabase", "admin"}, "mongosh -u admin -p *** --authenticationDatabase admin"},
		{"sshpass (its mode also covers the wrapped ssh: over-redaction accepted)", []string{"sshpass", "-pXyz", "ssh", "-p", "2222", "host"}, "sshpass -p*** ssh -p *** host"},
		{"redis-cli", []string{"redis-cli", "-h", "cache", "-a", "rpw", "ping"}, "redis-cli -h cache -a *** ping"},
		{"redis-cli --pass", []string{"redis-cli", "--pass", "rpw"}, "redis-cli --pass ***"},

		// curl and HTTP.
		{"curl -u", []string{"curl", "-u", "bob:pw", "https://x"}, "curl -u bob:*** https://x"},
		{"curl -uuser:pass", []string{"curl", "-ubob:pw", "https://x"}, "curl -ubob:*** https://x"},
		{"curl --user", []string{"curl", "--user", "bob:pw"}, "curl --user bob:***"},
		{"curl -u no password", []string{"curl", "-u", "bob", "https://x"}, "curl -u bob https://x"},
		{"authorization header", []string{"curl", "-H", "Authorization: Bearer eyJhbGc.x.y", "https://api"}, "curl -H Authorization: Bearer *** https://api"},
		{"authorization basic", []string{"curl", "-H", "authorization:Basic Ym9iOnB3", "u"}, "curl -H authorization:Basic *** u"},
		{"authorization raw", []string{"http", "Authorization:tok123"}, "http Authorization:***"},
		{"x-api-key header", []string{"curl", "-H", "X-Api-Key: k1", "u"}, "curl -H X-Api-Key: *** u"},
		{"cookie header", []string{"curl", "-H", "Cookie: sid=abc", "u"}, "curl -H Cookie: *** u"},
		{"bearer alone", []string{"client", "--header", "Bearer abc.def"}, "client --header Bearer ***"},
		{"header in sh -c", []string{"sh", "-c", "curl -s -H 'Authorization: Bearer abc' https://api/x"}, "sh -c curl -s -H 'Authorization: Bearer ***' https://api/x"},

		// URL credentials.
		{"url user:pass", []string{"pg_dump", "postgresql://app:pgpw@db:5432/app"}, "pg_dump postgresql://app:***@db:5432/app"},
		{"url empty user", []string{"redis-cli", "-u", "redis://:rpw@cache:6379/0"}, "redis-cli -u redis://:***@cache:6379/0"},
		{"url @ in password", []string{"git", "clone", "https://bob:p@ss@git.example.com/r.git"}, "git clone https://bob:***@git.example.com/r.git"},
		{"url user only kept", []string{"git", "clone", "ssh://git@github.com/o/r.git"}, "git clone ssh://git@github.com/o/r.git"},
		{"url no credentials", []string{"curl", "https://example.com/a@b"}, "curl https://example.com/a@b"},

		// The shapes that got through before the policy had one home.
		{"--auth next", []string{"agent", "--auth", "user:pw1", "-v"}, "agent --auth *** -v"},
		{"--auth=", []string{"agent", "--auth=pw1"}, "agent --auth=***"},
		{"--pin", []string{"pkcs11-tool", "--login", "--pin", "1234"}, "pkcs11-tool --login --pin ***"},
		{"--authorization=", []string{"client", "--authorization=Bearer x1"}, "client --authorization=*** ***"},
		{"--cookie=", []string{"client", "--cookie=sid=abc"}, "client --cookie=***"},
		{"--api-token=", []string{"client", "--api-token=t1"}, "client --api-token=***"},
		{"openssl -k", []string{"openssl", "enc", "-aes256", "-k", "pw1", "-in", "x"}, "openssl enc -aes256 -k *** -in x"},
		{"openssl -kX", []string{"openssl", "enc", "-kpw1"}, "openssl enc -k***"},
		{"zip -P", []string{"zip", "-P", "pw1", "a.zip", "f"}, "zip -P *** a.zip f"},
		{"ipmitool -P", []string{"ipmitool", "-H", "bmc", "-U", "admin", "-P", "pw1", "power", "status"}, "ipmitool -H bmc -U admin -P *** power status"},
		{"unknown -P", []string{"/opt/x/bin/tool", "-Ppw1"}, "/opt/x/bin/tool -P***"},
		{"7z -p", []string{"7z", "a", "-ppw1", "x.7z", "f"}, "7z a -p*** x.7z f"},
		{"ldapsearch -w", []string{"ldapsearch", "-D", "cn=admin", "-w", "pw1", "-b", "dc=x"}, "ldapsearch -D cn=admin -w *** -b dc=x"},
		{"cookie header, many pairs", []string{"curl", "-H", "Cookie: sid=abc; csrftoken=def", "u"}, "curl -H Cookie: *** u"},
		{"cookie in sh -c", []string{"sh", "-c", "curl -H 'Cookie: a=1; b=2' https://x"}, "sh -c curl -H 'Cookie: ***' https://x"},
		{"access_token query", []string{"curl", "https://api/x?access_token=t1&page=2"}, "curl https://api/x?access_token=***&page=2"},
		{"signature query", []string{"curl", "https://s3/b/o?X-Amz-Signature=abc&X-Amz-Date=1"}, "curl https://s3/b/o?X-Amz-Signature=***&X-Amz-Date=1"},
		{"mysqldump -p in a crontab command", []string{"mysqldump -uroot -pS3cret --all-databases | gzip > /b.gz"}, "mysqldump -uroot -p*** --all-databases | gzip > /b.gz"},

		// Shapes of issue 29.3.
		{"token as URL user", []string{"git", "clone", "https://ghp_16C7e42F292c6912E7710c838347Ae178B4a@github.com/o/r.git"}, "git clone https://***@github.com/o/r.git"},
		{"gitlab token as URL user", []string{"git", "push", "https://glpat-xR9b2Lk7mQ4vT1sZ8nYp@gitlab.example.com/o/r.git"}, "git push https://***@gitlab.example.com/o/r.git"},
		{"token as URL user in sh -c", []string{"sh", "-c", "git clone https://0123456789abcdef0123456789abcdef01234567@github.com/o/r.git /src"}, "sh -c git clone https://***@github.com/o/r.git /src"},
		{"azure SAS sig", []string{"azcopy", "copy", "f", "https://acct.blob.core.windows.net/c/f?sv=2022-11-02&ss=b&srt=o&sp=rw&se=2026-12-31T00:00:00Z&sig=AbC%2Bd3F%3D"},
			"azcopy copy f https://acct.blob.core.windows.net/c/f?sv=2022-11-02&ss=b&srt=o&sp=rw&se=2026-12-31T00:00:00Z&sig=***"},
		{"Private-Token header", []string{"curl", "--header", "PRIVATE-TOKEN: glpat-abc123", "https://gitlab/api/v4/projects"}, "curl --header PRIVATE-TOKEN: *** https://gitlab/api/v4/projects"},
		{"Private-Token header attached", []string{"curl", "-H", "Private-Token:glpat-abc123", "u"}, "curl -H Private-Token:*** u"},
		{"Job-Token header in sh -c", []string{"sh", "-c", "curl -H 'JOB-TOKEN: abc' https://gitlab/x"}, "sh -c curl -H 'JOB-TOKEN: ***' https://gitlab/x"},
		{"--jwt", []string{"vault", "write", "auth/jwt/login", "--jwt", "eyJhbGciOi.x.y", "-v"}, "vault write auth/jwt/login --jwt *** -v"},
		{"--jwt=", []string{"client", "--jwt=eyJhbGciOi.x.y"}, "client --jwt=***"},
		{"--bearer two words", []string{"client", "--bearer", "abc.def", "https://api"}, "client --bearer *** https://api"},
		{"aws configure set secret", []string{"aws", "configure", "set", "aws_secret_access_key", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "--profile", "p"},
			"aws configure set aws_secret_access_key *** --profile p"},
		{"aws configure set session token", []string{"aws", "configure", "set", "aws_session_token", "FwoGZXIvYXdz", "--profile", "p"},
			"aws configure set aws_session_token *** --profile p"},
		{"aws configure set in sh -c", []string{"sh", "-c", "aws configure set default.aws_secret_access_key wJalrXUtn && aws s3 ls"},
			"sh -c aws configure set default.aws_secret_access_key *** && aws s3 ls"},
		{"htpasswd -b", []string{"htpasswd", "-b", "/etc/nginx/.htpasswd", "admin", "hpw1"}, "htpasswd -b /etc/nginx/.htpasswd admin ***"},
		{"htpasswd -cbB", []string{"/usr/bin/htpasswd", "-cbB", "/etc/apache2/.htpasswd", "admin", "hpw1"}, "/usr/bin/htpasswd -cbB /etc/apache2/.htpasswd admin ***"},
		{"htpasswd -b -C cost", []string{"htpasswd", "-B", "-C", "12", "-b", "f", "admin", "hpw1"}, "htpasswd -B -C 12 -b f admin ***"},
		{"htpasswd -nb", []string{"htpasswd", "-nb", "admin", "hpw1"}, "htpasswd -nb admin ***"},
		{"htpasswd -b in sh -c", []string{"sh", "-c", "htpasswd -b /etc/h admin hpw1 && nginx -s reload"}, "sh -c htpasswd -b /etc/h admin *** && nginx -s reload"},
		{"slack webhook", []string{"curl", "-X", "POST", "-d", "@msg.json", "https://hooks.slack.com/services/T0A1B2C3D/B4E5F6G7H/abcDEF123ghiJKL456mnoPQR"},
			"curl -X POST -d @msg.json https://hooks.slack.com/services/T0A1B2C3D/B4E5F6G7H/***"},
		{"AWS access key id", []string{"env", "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE", "aws", "s3", "ls"}, "env AWS_ACCESS_KEY_ID=AKIA*** aws s3 ls"},
		{"AWS temporary key id", []string{"tool", "--id", "ASIAQWERTYUIOPASDFGH"}, "tool --id ASIA***"},

		{"script run by an interpreter", []string{"/bin/sh", "/opt/backup.sh", "-k", "pw1", "-P", "pw2"}, "/bin/sh /opt/backup.sh -k *** -P ***"},
		{"python script", []string{"python3", "-u", "/opt/job.py", "-kpw1"}, "python3 -u /opt/job.py -k***"},
		{"sudo wrapper", []string{"sudo", "-u", "app", "/opt/tool", "-P", "pw1"}, "sudo -u app /opt/tool -P ***"},

		// Must NOT be redacted.
		{"curl -k", []string{"curl", "-k", "https://x/health"}, "curl -k https://x/health"},
		{"sort -k", []string{"sort", "-k", "2", "f"}, "sort -k 2 f"},
		{"grep -P", []string{"grep", "-P", "a+b", "f"}, "grep -P a+b f"},
		{"scp -P", []string{"scp", "-P", "2222", "f", "h:"}, "scp -P 2222 f h:"},
		{"mysql -P port", []string{"mysql", "-h", "db", "-P", "3306", "app"}, "mysql -h db -P 3306 app"},
		{"xargs -P in a pipeline", []string{"sh", "-c", "find . | xargs -P 4 gzip"}, "sh -c find . | xargs -P 4 gzip"},
		{"python -P script", []string{"python3", "-P", "/opt/job.py"}, "python3 -P /opt/job.py"},
		{"author", []string{"git", "commit", "--author=Bob"}, "git commit --author=Bob"},
		{"auth type", []string{"client", "--auth-type", "basic"}, "client --auth-type basic"},
		{"nc -p port", []string{"nc", "-l", "-p", "8080"}, "nc -l -p 8080"},
		{"ssh -p port", []string{"ssh", "-p", "2222", "host"}, "ssh -p 2222 host"},
		{"docker -p", []string{"docker", "run", "-p", "8080:80", "nginx"}, "docker run -p 8080:80 nginx"},
		{"psql -p port", []string{"psql", "-h", "db", "-p", "5432", "-U", "app"}, "psql -h db -p 5432 -U app"},
		{"psql --no-password", []string{"psql", "--no-password", "app"}, "psql --no-password app"},
		{"password file", []string{"app", "--password-file=/run/secrets/db", "--password-file", "/run/x"}, "app --password-file=/run/secrets/db --password-file /run/x"},
		{"docker login stdin", []string{"docker", "login", "--password-stdin", "reg.example.com"}, "docker login --password-stdin reg.example.com"},
		{"key size", []string{"ssh-keygen", "--key-size=4096", "-t", "ed25519"}, "ssh-keygen --key-size=4096 -t ed25519"},
		{"PWD", []string{"env", "PWD=/root", "ls"}, "env PWD=/root ls"},
		{"tokenizer", []string{"train", "--tokenizer=bert", "--keyboard=us"}, "train --tokenizer=bert --keyboard=us"},
		{"pmlogger_check", []string{"/bin/sh", "/usr/libexec/pcp/bin/pmlogger_check", "-C"}, "/bin/sh /usr/libexec/pcp/bin/pmlogger_check -C"},
		{"plain", []string{"/usr/sbin/cron", "-f"}, "/usr/sbin/cron -f"},
		{"empty value", []string{"app", "--token="}, "app --token="},
		{"empty", nil, ""},
		{"spaces collapse", []string{"sh", "-c", "echo  a   b"}, "sh -c echo a b"},
		{"sort -u", []string{"sort", "-u", "a:b"}, "sort -u a:b"},
		// Near misses of the shapes of issue 29.3.
		{"URL short user kept", []string{"git", "clone", "https://bob@git.example.com/r.git"}, "git clone https://bob@git.example.com/r.git"},
		{"URL long plain user kept", []string{"git", "clone", "https://deploy-bot-account@git.example.com/r.git"}, "git clone https://deploy-bot-account@git.example.com/r.git"},
		{"URL mail address kept", []string{"curl", "https://example.com/u/jane.doe.example@example.org"}, "curl https://example.com/u/jane.doe.example@example.org"},
		{"docker --sig-proxy", []string{"docker", "run", "--sig-proxy=false", "img"}, "docker run --sig-proxy=false img"},
		{"kill --signal", []string{"kill", "--signal", "TERM", "42"}, "kill --signal TERM 42"},
		{"aws configure set region", []string{"aws", "configure", "set", "region", "eu-west-1"}, "aws configure set region eu-west-1"},
		{"aws configure set key id", []string{"aws", "configure", "set", "aws_access_key_id", "EXAMPLEID"}, "aws configure set aws_access_key_id EXAMPLEID"},
		{"htpasswd without -b", []string{"htpasswd", "-c", "/etc/h", "admin"}, "htpasswd -c /etc/h admin"},
		{"htpasswd -D", []string{"htpasswd", "-D", "/etc/h", "admin"}, "htpasswd -D /etc/h admin"},
		{"slack API path", []string{"curl", "https://slack.com/api/chat.postMessage"}, "curl https://slack.com/api/chat.postMessage"},
		{"AKIA in a word", []string{"grep", "-r", "XAKIAIOSFODNN7EXAMPLEX", "."}, "grep -r XAKIAIOSFODNN7EXAMPLEX ."},
		{"uppercase word", []string{"make", "ASIANFOODSANDMORE"}, "make ASIANFOODSANDMORE"},
		{"jwt path", []string{"tool", "--jwt-file", "/run/jwt"}, "tool --jwt-file /run/jwt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Cmdline(tt.args)
			if got != tt.want {
				t.Errorf("Cmdline(%q)\n got %q\nwant %q", tt.args, got, tt.want)
			}
			// Redacting twice changes nothing.
			if again := Cmdline([]string{got}); again != got {
				t.Errorf("not idempotent: %q -> %q", got, again)
			}
		})
	}
}

func TestSensitiveName(t *testing.T) {
	for name, want := range map[string]bool{
		"password": true, "DB_PASSWORD": true, "api-key": true, "apiKey": true, "accessToken": true,
		"secret_key": true, "MYSQL_PWD": true, "pass": true,
		"pwd": false, "PGPASSWORD": true, "mytoken": true, "bypass": false, "tokenizer": false, "no-password": false, "password-file": false,
		"keyboard": false, "monkey": false, "user": false, "port": false, "key-id": false,
	} {
		if got := sensitiveName(name); got != want {
			t.Errorf("sensitiveName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestURLAndString(t *testing.T) {
	for in, want := range map[string]string{
		"http://bob:pw1@127.0.0.1:8080/health?token=t1&x=1": "http://bob:***@127.0.0.1:8080/health?token=***&x=1",
		"http://127.0.0.1:8080/health":                      "http://127.0.0.1:8080/health",
		"https://h/x?api_key=k1":                            "https://h/x?api_key=***",
	} {
		if got := URL(in); got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
	}
	if got, want := String("PGPASSWORD=pw1 pg_dump -h db app  >  /b"), "PGPASSWORD=*** pg_dump -h db app > /b"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
}
