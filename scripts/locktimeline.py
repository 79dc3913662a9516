#!/usr/bin/env python3
"""Where the end-to-end suite's time went, by lock.

Reads the log testenv writes when MEMDIAG_E2E_LOCKLOG names a file (lines
"RFC3339Nano PID hold|release exclusive|shared|uml TEST", see
internal/testenv/lock.go) and prints, in seconds from the first hold:

  - every test's span under each lock, by start (spans over --min s);
  - how long the e2e lock was held exclusively, shared, or not at all,
    and how long a UML guest ran, between the first hold and the last
    release: the suite's e2e part cannot end sooner than the exclusive
    spans plus the shared ones laid end to end.

Usage: scripts/locktimeline.py LOG [--min SECONDS]
"""
import sys
from datetime import datetime


def parse_time(s):
    # Python's fromisoformat takes at most microseconds.
    head, _, frac = s.rstrip("Z").partition(".")
    frac = (frac + "000000")[:6]
    return datetime.fromisoformat(head + "." + frac + "+00:00").timestamp()


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    least = 10.0
    if "--min" in args:
        i = args.index("--min")
        least = float(args[i + 1])
        del args[i:i + 2]
    opened, spans = {}, []
    with open(args[0]) as f:
        for n, line in enumerate(f, 1):
            parts = line.rstrip("\n").split(" ", 4)
            if len(parts) != 5 or parts[2] not in ("hold", "release"):
                sys.exit(f"{args[0]}:{n}: not TIME PID hold|release MODE TEST: {line!r}")
            at, pid, event, mode, test = parse_time(parts[0]), parts[1], parts[2], parts[3], parts[4]
            key = (pid, mode, test)
            if event == "hold":
                opened[key] = at
            elif key in opened:
                spans.append((opened.pop(key), at, mode, pid, test))
    if not spans:
        sys.exit(f"{args[0]}: no complete span")
    t0 = min(s[0] for s in spans)
    end = max(s[1] for s in spans)
    print(f"spans over {least:g} s (start, end, length, lock, test):")
    for a, b, mode, pid, test in sorted(spans):
        if b - a >= least:
            print(f"{a - t0:7.0f} {b - t0:7.0f} {b - a:6.0f}  {mode:9} {test} [{pid}]")
    # Sweep: at each moment, which modes are held.
    edges = sorted({t for s in spans for t in (s[0], s[1])})
    total = {"exclusive": 0.0, "shared": 0.0, "none": 0.0, "uml": 0.0}
    for a, b in zip(edges, edges[1:]):
        mid = (a + b) / 2
        live = {s[2] for s in spans if s[0] <= mid < s[1]}
        if "exclusive" in live:
            total["exclusive"] += b - a
        elif "shared" in live:
            total["shared"] += b - a
        else:
            total["none"] += b - a
        if "uml" in live:
            total["uml"] += b - a
    print(f"from the first hold to the last release: {end - t0:.0f} s; "
          f"e2e lock exclusive {total['exclusive']:.0f} s, shared {total['shared']:.0f} s, "
          f"free {total['none']:.0f} s; a UML guest running {total['uml']:.0f} s")


if __name__ == "__main__":
    main()
