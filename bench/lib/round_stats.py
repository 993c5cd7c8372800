#!/usr/bin/env python3
"""bench/lib/round_stats.py
     What the reports of a server's day (steady_report.py, scale_report.py,
     day_targets.py) share: CSV rows read, numbers read from them, the
     median and range of rounds, and numbers written with three
     significant digits.
"""

import csv
import os
import statistics


def read_rows(path):
    """The lines of a CSV file as dicts; none when the file is missing."""
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def num(v):
    """v as a float, or None when it is not a number."""
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def spread(values):
    """(median, lowest, highest) of the numbers among values, or None."""
    xs = [x for x in (num(v) for v in values) if x is not None]
    if not xs:
        return None
    return statistics.median(xs), min(xs), max(xs)


def fmt(x):
    """x with three significant digits (whole numbers from 100 on); "-"
    for None."""
    if x is None:
        return "-"
    a = abs(x)
    if a == 0:
        return "0"
    if a >= 100:
        return f"{x:,.0f}"
    if a >= 10:
        return f"{x:.1f}"
    if a >= 1:
        return f"{x:.2f}"
    return f"{x:#.3g}"


def fmt_spread(s):
    """A spread as "median (lowest–highest)", or the median alone when
    they are equal; "-" for None."""
    if s is None:
        return "-"
    med, lo, hi = s
    if lo == hi:
        return fmt(med)
    return f"{fmt(med)} ({fmt(lo)}–{fmt(hi)})"
