"""Totals over a campaign log written by fuzz/campaign.sh.

    python fuzz/summarize.py fuzz/campaign-s7.log

Prints inputs tried (and the index ranges covered), findings, the slowest
input, the largest traced peak and the largest peak-RSS growth over one input.
"""

import re
import sys

CHUNK = re.compile(r"seed (\d+) inputs (\d+)\.\.(\d+): (\d+) tried in ([\d.]+) s")
FINDINGS = re.compile(r"^findings: (\d+)")
SLOWEST = re.compile(r"slowest input: ([\d.]+) ms \(index (\d+)\)")
TRACED = re.compile(r"peak traced memory for one \(traced\) input: ([\d.]+) MB")
RSS = re.compile(r"largest peak-RSS growth over one input: ([\d.]+) MB")


def summarize(lines):
    tried = seconds = findings = 0
    ranges, slowest, traced, rss = [], (0.0, None), 0.0, 0.0
    for line in lines:
        if m := CHUNK.search(line):
            tried += int(m[4])
            seconds += float(m[5])
            ranges.append((int(m[2]), int(m[3])))
        elif m := FINDINGS.search(line):
            findings += int(m[1])
        elif m := SLOWEST.search(line):
            if float(m[1]) > slowest[0]:
                slowest = (float(m[1]), int(m[2]))
        if m := TRACED.search(line):
            traced = max(traced, float(m[1]))
        if m := RSS.search(line):
            rss = max(rss, float(m[1]))
    ranges.sort()
    merged = []
    for a, b in ranges:
        if merged and a <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return dict(tried=tried, seconds=seconds, ranges=merged, findings=findings,
                slowest_ms=slowest[0], slowest_index=slowest[1],
                traced_peak_mb=traced, rss_growth_mb=rss)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    lines = []
    for path in argv:
        with open(path) as fh:
            lines += fh.readlines()
    s = summarize(lines)
    span = ", ".join(f"{a}..{b}" for a, b in s["ranges"])
    print(f"inputs tried: {s['tried']} ({span}) in {s['seconds'] / 3600:.2f} h of chunks "
          f"({s['tried'] / max(s['seconds'], 1e-9):.0f}/s)")
    print(f"findings: {s['findings']}")
    print(f"slowest input: {s['slowest_ms']:.1f} ms (index {s['slowest_index']})")
    print(f"largest traced peak: {s['traced_peak_mb']:.1f} MB; largest peak-RSS growth: "
          f"{s['rss_growth_mb']:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
