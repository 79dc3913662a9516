#!/bin/sh
# Per-second buckets of a results file, computed without memdiag:
# key count errors mean_ns p99_ns, where key is the bucket's end (Unix s)
# and a request starting at t is in bucket ceil(t) (intervals (k-1, k]).
# mean and p99 (nearest rank, ceil(0.99 n)) are of the successful requests.
# usage: expected.sh vegeta|hey|ab|generic|gatling FILE [hey-start-unix-s]
fmt=$1 file=$2 start=${3:-0}
case $fmt in
vegeta) # timestamp ns, code, latency ns, ..., error (field 6)
  awk -F, '{ s=substr($1,1,length($1)-9); f=substr($1,length($1)-8)+0; k=s+(f>0);
             err=($2==0 || $6!=""); print k, err, $3 }' "$file" ;;
hey) # response-time s, ..., status-code (7), offset s (8); header skipped
  awk -F, -v st="$start" 'NR>1 { o=$8; k=st+int(o)+(o>int(o)); err=($7>=400);
             printf "%d %d %.0f\n", k, err, $1*1e9 }' "$file" ;;
generic) # timestamp (Unix s), latency_ms, status, error; header skipped
  awk -F, 'NR>1 { split($1,p,"."); k=p[1]+(p[2]+0>0); err=($3==0 || $3>=400 || $4!="");
             printf "%d %d %.0f\n", k, err, $2*1e6 }' "$file" ;;
gatling) # REQUEST [userId] groups name start-ms end-ms OK|KO message (tab-separated)
  awk -F'\t' '$1=="REQUEST" { o=(NF==8); s=$(4+o); e=$(5+o); k=int(s/1000)+(s%1000>0);
             print k, ($(6+o)=="KO"), (e-s)*1000000 }' "$file" ;;
ab) # starttime, seconds, ctime, dtime, ttime (ms); start read as seconds+0.5
  awk -F'\t' 'NR>1 { print $2+1, 0, $5*1000000 }' "$file" ;;
esac | sort -k1,1n -k2,2n -k3,3n | awk '
function flush() { if (key=="") return; m=(ok>0)?int(sum/ok):0; r=int(0.99*ok); if (r<0.99*ok) r++; p=(ok>0)?lat[r]:0;
                   printf "%s %d %d %d %d\n", key, n, e, m, p }
$1!=key { flush(); key=$1; n=0; e=0; ok=0; sum=0; delete lat }
{ n++; if ($2) e++; else { ok++; sum+=$3; lat[ok]=$3 } }
END { flush() }'
