"""bench/lib/report_compare.py
     The compare mode (report.py --compare DIR1 DIR2 ...): the verdicts of
     several runs side by side, target by target, and whether they agree.
"""

import os

from report_common import md_table
from report_load import Results, load_disk, load_results, pg_version
from report_stats import targets


def compare(dirs):
    """A Markdown table of the verdicts of several runs, target by target,
    and whether they agree (report.py --compare DIR1 DIR2 ...)."""
    runs = []
    for d in dirs:
        res = Results(load_results(d), load_disk(d))
        runs.append({t[0]: t for t in targets(res)})
    names = []
    for r in runs:
        names += [n for n in r if n not in names]
    rows, same = [], 0
    for n in names:
        ts = [r.get(n) for r in runs]
        vs = [t[1] if t else "–" for t in ts]
        agree = len(set(vs)) == 1
        same += agree
        rows.append([n] + ["%s: %s" % (v, t.spread.text() if t and t.spread else (t[2] if t else ""))
                           for v, t in zip(vs, ts)] + ["yes" if agree else "**no**"])
    header = ["target"] + ["run %d (%s)" % (i + 1, ", ".join(
        x for x in (os.path.basename(os.path.normpath(d)), pg_version(d)) if x))
        for i, d in enumerate(dirs)] + ["same verdict"]
    return md_table(header, rows) + "\n\n%d of %d target lines give the same verdict in every run.\n" % (
        same, len(names))
