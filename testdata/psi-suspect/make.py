#!/usr/bin/env python3
"""Builds the two suspect-PSI recordings from a real one (see SOURCE).

    python3 testdata/psi-suspect/make.py   # from the repository root
"""
import copy, gzip, json, os

SRC = "correlate/testdata/real/trial-s8-tenant.jsonl.gz"
OUT = "testdata/psi-suspect"


def lines():
    with gzip.open(SRC, "rt") as f:
        return [json.loads(l) for l in f if l.strip()]


def write(name, objs):
    path = os.path.join(OUT, name)
    # mtime=0: the same bytes on every run
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz:
        for o in objs:
            gz.write((json.dumps(o, separators=(",", ":")) + "\n").encode())


def memory_lines(s):
    for scope in ("psi", "cgroup_psi"):
        m = (s.get(scope) or {}).get("memory")
        if m:
            for line in ("some", "full"):
                if line in m:
                    yield scope, line, m[line]


def frozen_total():
    """Averages at 99 % while total does not move."""
    objs = lines()
    first = {}
    for o in objs:
        if o["type"] != "sample":
            continue
        for scope, line, l in memory_lines(o):
            first.setdefault((scope, line), l["total_us"])
            l["total_us"] = first[(scope, line)]
            l["avg10"] = l["avg60"] = l["avg300"] = 99.0
    write("avg99-total-frozen.jsonl.gz", objs)


def stall_no_activity():
    """total rising 96 % of wall time, the averages following it as the
    kernel's would (an exponentially weighted average of 96 % from the
    real first sample's values), and every vmstat counter (host and group)
    frozen at the first sample's values."""
    import math
    objs = lines()
    t0, tp = None, None
    avg = {}
    base, vm0, cvm0 = {}, None, None
    from datetime import datetime
    def ts(s):
        # 2026-12-02T10:52:45.172243227Z -> seconds (µs precision is enough)
        d, frac = s.rstrip("Z").split(".")
        return datetime.fromisoformat(d).timestamp() + float("0." + frac)
    for o in objs:
        if o["type"] != "sample":
            continue
        t = ts(o["time"])
        if t0 is None:
            t0 = t
            vm0 = copy.deepcopy(o.get("vmstat"))
            cvm0 = copy.deepcopy(o.get("cgroup_vmstat"))
        for scope, line, l in memory_lines(o):
            k = (scope, line)
            base.setdefault(k, l["total_us"])
            l["total_us"] = base[k] + int(round(0.96 * (t - t0) * 1e6))
            if k not in avg:
                avg[k] = {a: l[a] for a in ("avg10", "avg60", "avg300")}
            else:
                for a, tau in (("avg10", 10), ("avg60", 60), ("avg300", 300)):
                    e = math.exp(-(t - tp) / tau)
                    avg[k][a] = avg[k][a] * e + 96.0 * (1 - e)
            for a in ("avg10", "avg60", "avg300"):
                l[a] = round(avg[k][a], 2)
        tp = t
        if vm0 is not None:
            o["vmstat"] = copy.deepcopy(vm0)
        if cvm0 is not None:
            o["cgroup_vmstat"] = copy.deepcopy(cvm0)
    write("stall96-counters-frozen.jsonl.gz", objs)


frozen_total()
stall_no_activity()
