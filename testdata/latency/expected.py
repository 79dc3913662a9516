#!/usr/bin/env python3
"""Per-second buckets of a JMeter or k6 results file, without memdiag.

Prints "key count errors mean_ns p99_ns" per bucket like expected.sh: key
is the bucket's end (Unix s); a request starting at t is in bucket
ceil(t) (intervals (k-1, k]); mean (truncated to the ns) and p99 (nearest
rank, ceil(0.99 n)) are of the successful requests. Only the Python
standard library (csv, json, xml.etree) is used.

usage: expected.py jmeter-csv FILE [COLUMNS]   (COLUMNS: comma list for a
                                                header-less file)
       expected.py jmeter-xml FILE
       expected.py k6-json FILE
       expected.py k6-csv FILE
"""
import csv, json, math, re, sys, xml.etree.ElementTree as ET

TX = "Number of samples in transaction"  # a Transaction Controller's own row


def rfc3339_ns(s):
    # 2026-11-29T22:03:22.185585227Z or +01:00; nanoseconds exact.
    m = re.fullmatch(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)", s)
    y, mo, d, h, mi, se, frac, z = m.groups()
    import calendar
    secs = calendar.timegm((int(y), int(mo), int(d), int(h), int(mi), int(se)))
    if z != "Z":
        off = int(z[1:3]) * 3600 + int(z[4:6]) * 60
        secs -= off if z[0] == "+" else -off
    return secs * 10**9 + int(((frac or "") + "000000000")[:9])


def ms_float_ns(v):
    return int(math.floor(float(v) * 1e6 + 0.5))


def jmeter_csv(path, columns):
    rows = []
    with open(path, newline="") as f:
        r = csv.reader(f)
        head = columns.split(",") if columns else next(r)
        for rec in r:
            c = dict(zip(head, rec))
            if c.get("responseMessage", "").startswith(TX):
                continue
            rows.append((int(c["timeStamp"]) * 10**6, c["success"] == "false", int(c["elapsed"]) * 10**6))
    return rows


def jmeter_xml(path):
    rows = []
    for e in ET.parse(path).getroot():  # top-level samples only: sub-results are parts of them
        if e.tag not in ("httpSample", "sample") or e.get("rm", "").startswith(TX):
            continue
        rows.append((int(e.get("ts")) * 10**6, e.get("s") == "false", int(e.get("t")) * 10**6))
    return rows


def k6_err(tags):
    if "expected_response" in tags and tags["expected_response"] != "":
        return tags["expected_response"] == "false"
    st = int(tags.get("status") or 0)
    return st == 0 or st >= 400


def k6_json(path):
    rows = []
    for line in open(path):
        o = json.loads(line)
        if o.get("type") != "Point" or o.get("metric") != "http_req_duration":
            continue
        lat = ms_float_ns(o["data"]["value"])
        rows.append((rfc3339_ns(o["data"]["time"]) - lat, k6_err(o["data"]["tags"]), lat))
    return rows


def k6_csv(path):
    rows = []
    with open(path, newline="") as f:
        for c in csv.DictReader(f):
            if c["metric_name"] != "http_req_duration":
                continue
            lat = ms_float_ns(c["metric_value"])
            # whole-second stamps: the end lies in [ts, ts+1): its middle
            end = int(c["timestamp"]) * 10**9 + 5 * 10**8
            rows.append((end - lat, k6_err(c), lat))
    return rows


def main():
    mode, path = sys.argv[1], sys.argv[2]
    rows = {"jmeter-csv": lambda: jmeter_csv(path, sys.argv[3] if len(sys.argv) > 3 else ""),
            "jmeter-xml": lambda: jmeter_xml(path), "k6-json": lambda: k6_json(path),
            "k6-csv": lambda: k6_csv(path)}[mode]()
    buckets = {}
    for start, err, lat in rows:
        key = -(-start // 10**9)  # ceil
        buckets.setdefault(key, []).append((err, lat))
    for key in sorted(buckets):
        b = buckets[key]
        ok = sorted(lat for err, lat in b if not err)
        mean = sum(ok) // len(ok) if ok else 0
        p99 = ok[math.ceil(0.99 * len(ok)) - 1] if ok else 0
        print(key, len(b), sum(1 for err, _ in b if err), mean, p99)


main()
