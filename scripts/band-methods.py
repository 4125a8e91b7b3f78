"""The 80 % band calibrated the ways README's "The 80 % band" compares, from the residuals of
validation/band.csv: for each, the nested coverage (each source's rows against the band
calibrated on the other sources' rows alone, as `validate --cross-validate` counts it) and the
in-sample coverage (every row against the band calibrated on every row). Standard library
only; a report, not a gate. The shipped method is the last line, which `validate
--cross-validate` reproduces.

    python3 scripts/band-methods.py [validation/band.csv]
"""

import collections
import math
import sys

KINDS = ["kernel", "decode", "prefill", "request"]
Z90 = 1.2815515655446004  # the standard normal's 90th percentile


def read(path):
    rows = []
    for line in open(path):
        line = line.strip()
        if not line or line.startswith("#") or line.startswith("id,"):
            continue
        rid, kind, family, value = line.split(",")
        rows.append({"kind": kind, "family": family, "v": float(value), "src": rid.split("-")[0]})
    return rows


def type7(group, p):
    """Hyndman and Fan's definition 7 (NumPy's default): rank (n - 1) p from 0."""
    s = sorted(r["v"] for r in group)
    h = (len(s) - 1) * p
    i = math.floor(h)
    j = min(i + 1, len(s) - 1)
    return s[i] + (h - i) * (s[j] - s[i])


def weights(group):
    """Each source weighs as one: a row of a source with n rows weighs 1 / n."""
    n = collections.Counter(r["src"] for r in group)
    return sorted((r["v"], 1 / n[r["src"]]) for r in group)


def interpolate(points, p):
    """Linear between (position, value) points, the end values beyond them."""
    if p <= points[0][0]:
        return points[0][1]
    for (p0, v0), (p1, v1) in zip(points, points[1:]):
        if p <= p1:
            return v0 + (p - p0) / (p1 - p0) * (v1 - v0)
    return points[-1][1]


def pooled7(group, p):
    """Each source as one; a row at the middle of its weight, rescaled so the ends are 0 and 1
    (definition 7 with one row per source)."""
    rows, mids, c = weights(group), [], 0.0
    for _, w in rows:
        mids.append(c + w / 2)
        c += w
    if len(rows) == 1:
        return rows[0][0]
    lo, hi = mids[0], mids[-1]
    return interpolate([((m - lo) / (hi - lo), v) for m, (v, _) in zip(mids, rows)], p)


def pooled6(group, p):
    """Each source as one; a row at (middle of its weight + 1/2) / (sources + 1) (definition 6,
    Weibull's position, with one row per source). The shipped method."""
    rows, points, c = weights(group), [], 0.0
    k = len({r["src"] for r in group})
    for v, w in rows:
        points.append(((c + w / 2 + 0.5) / (k + 1), v))
        c += w
    return interpolate(points, p)


def rows6(group, p):
    """Definition 6 over rows, each row as one."""
    s = sorted(r["v"] for r in group)
    return interpolate([((i + 1) / (len(s) + 1), v) for i, v in enumerate(s)], p)


def conformal(group, p):
    """Split conformal over sources: the pooled distribution's inverse at level
    ceil((k + 1) p) / k for the top, floor((k + 1) p) / k for the bottom (a rank beyond the
    sample is unbounded)."""
    rows = weights(group)
    k = len({r["src"] for r in group})
    total = sum(w for _, w in rows)
    if p > 0.5:
        level = math.ceil((k + 1) * p) / k
        if level > 1:
            return math.inf
        c = 0.0
        for v, w in rows:
            c += w / total
            if c >= level - 1e-12:
                return v
        return rows[-1][0]
    level = math.floor((k + 1) * p) / k
    if level <= 0:
        return -math.inf
    c = 0.0
    for v, w in reversed(rows):
        c += w / total
        if c >= 1 - level - 1e-12:
            return v
    return rows[0][0]


def components(group):
    """The mean of the sources' means, and the between-source and within-source variances
    (one-way analysis of variance, method of moments, for groups of unequal size)."""
    by = collections.defaultdict(list)
    for r in group:
        by[r["src"]].append(r["v"])
    n, g = len(group), len(by)
    mean = lambda xs: sum(xs) / len(xs)
    centre = mean([mean(v) for v in by.values()])
    within = sum(sum((x - mean(v)) ** 2 for x in v) for v in by.values())
    grand = mean([r["v"] for r in group])
    between = sum(len(v) * (mean(v) - grand) ** 2 for v in by.values())
    ms_within = within / (n - g) if n > g else 0.0
    ms_between = between / (g - 1) if g > 1 else 0.0
    n0 = (n - sum(len(v) ** 2 for v in by.values()) / n) / (g - 1) if g > 1 else 1.0
    return centre, max(0.0, (ms_between - ms_within) / n0), ms_within


def normal(group, p):
    """Two levels, normal: the centre plus the p quantile of a normal whose variance is the
    between-source variance plus the within-source variance."""
    centre, between, within = components(group)
    return centre + (Z90 if p > 0.5 else -Z90) * math.sqrt(between + within)


def calibrate(rows, quantile, min_rows, min_sources):
    def enough(g):
        return len(g) >= min_rows and len({r["src"] for r in g}) >= min_sources

    bands = {"all": (quantile(rows, 0.1), quantile(rows, 0.9))}
    for kind in KINDS:
        of_kind = [r for r in rows if r["kind"] == kind]
        if of_kind and enough(of_kind):
            bands[kind] = (quantile(of_kind, 0.1), quantile(of_kind, 0.9))
        for family in sorted({r["family"] for r in of_kind}):
            group = [r for r in of_kind if r["family"] == family]
            if enough(group):
                bands[(kind, family)] = (quantile(group, 0.1), quantile(group, 0.9))
    return bands


def band_of(bands, r):
    return bands.get((r["kind"], r["family"])) or bands.get(r["kind"]) or bands["all"]


def report(rows, name, quantile, min_rows, min_sources):
    inside = above = 0
    per_kind = collections.Counter()
    for source in sorted({r["src"] for r in rows}):
        bands = calibrate([r for r in rows if r["src"] != source], quantile, min_rows, min_sources)
        for r in (r for r in rows if r["src"] == source):
            lo, hi = band_of(bands, r)
            ok = lo <= r["v"] <= hi
            inside += ok
            above += r["v"] > hi
            per_kind[r["kind"]] += ok
    bands = calibrate(rows, quantile, min_rows, min_sources)
    in_sample = sum(band_of(bands, r)[0] <= r["v"] <= band_of(bands, r)[1] for r in rows)
    n = len(rows)
    kinds = " ".join(f"{k} {per_kind[k]}/{sum(r['kind'] == k for r in rows)}" for k in KINDS)
    print(f"{name:64s} {inside:3d}/{n} {100 * inside / n:5.1f}%  above {above:2d} below "
          f"{n - inside - above:2d}  in-sample {100 * in_sample / n:5.1f}%  {kinds}")


METHODS = [
    ("rows, definition 7, groups of >= 10 rows (before)", type7, 10, 1),
    ("rows, definition 7, >= 10 rows and >= 3 sources", type7, 10, 3),
    ("(a) each source as one, definition 7, >= 10 rows", pooled7, 10, 1),
    ("(a) each source as one, definition 7, >= 10 rows, >= 3 sources", pooled7, 10, 3),
    ("(a) each source as one, definition 7, >= 9 sources", pooled7, 1, 9),
    ("rows, definition 6, >= 9 rows", rows6, 9, 1),
    ("rows, definition 6, >= 9 sources", rows6, 1, 9),
    ("(b) split conformal over sources, >= 9 sources", conformal, 1, 9),
    ("(c) two-level normal, >= 10 rows and >= 3 sources", normal, 10, 3),
    ("(c) two-level normal, >= 9 sources", normal, 1, 9),
    ("each source as one, definition 6, >= 9 sources (shipped)", pooled6, 1, 9),
]

if __name__ == "__main__":
    rows = read(sys.argv[1] if len(sys.argv) > 1 else "validation/band.csv")
    print(f"{len(rows)} rows from {len({r['src'] for r in rows})} sources; nested coverage, "
          "then in-sample coverage and nested coverage per kind")
    _, between, within = components(rows)
    print(f"between-source sd {math.sqrt(between):.3f}, within-source sd {math.sqrt(within):.3f} "
          f"(share of variance between sources {between / (between + within):.2f})")
    for name, quantile, min_rows, min_sources in METHODS:
        report(rows, name, quantile, min_rows, min_sources)
