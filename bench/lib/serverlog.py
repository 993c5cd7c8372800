#!/usr/bin/env python3
"""bench/lib/serverlog.py
     What a server's log says of its checkpoints, starts and recoveries,
     read by bench/steady.sh and bench/scale.sh from a byte offset of the
     log on (log_checkpoints = on):
       - PostgreSQL's "checkpoint complete: wrote N buffers ... total=S s"
         lines: checkpoints, buffers written, seconds;
       - nvm's "checkpoint of the pool at WHY: wrote K kB (R rows) for D
         changed and B whole nvm tables, kept U unchanged, dropped X, I in
         doubt; S s" lines: a capture of the pool into its checkpoint files
         (base files of whole tables, delta files of the rows that changed)
         at a checkpoint, at the end of recovery or at a clean stop, by the
         "nvm backup watch" worker (the startup process at the end of
         recovery);
       - nvm's "merged the checkpoint files of T nvm tables (F files into
         R rows, K kB)" lines: deltas merged into new base files between
         checkpoints;
       - "redo done at ... elapsed: S s" (crash recovery's redo), nvm's
         "is perhaps torn (or gone) ... rebuilt from the WAL" (a rebuild of
         the pool after a new boot) and "loaded the checkpoint files of T
         nvm tables (R rows, M MB) into the rebuilt pool in S s with W
         workers".
     The engine before incremental checkpoints logged other lines, still
     read so that its results can be parsed again: "checkpoint of the pool:
     wrote the files of T nvm tables (R rows, K kB), kept U unchanged"
     (whole tables only), "logged the rows of T nvm tables (R rows, P
     prepared transactions, M MB of WAL) as the image of the pool at ..."
     (the image every start logged in the WAL; the new engine logs one
     only for a base backup) and "loaded ... (R rows) into the rebuilt
     pool" without its seconds.
         serverlog.py sum LOGFILE OFFSET [END]
     prints one NAME=VALUE line per count (shell assignments; the names
     are those of Summary's fields in upper case), summed over every line
     from byte OFFSET on (up to byte END).  The same parsing is tested by test_bench.py.
"""

import re
import sys
from dataclasses import dataclass, fields

CKPT_DONE = re.compile(r"checkpoint complete: wrote (\d+) buffers .*?total=([0-9.]+) s")
POOL_CKPT = re.compile(r"nvm: checkpoint of the pool at .*?: wrote (\d+) kB \((\d+) rows\) for "
                       r"(\d+) changed and (\d+) whole nvm tables, kept (\d+) unchanged, "
                       r"dropped (\d+), (\d+) in doubt; ([0-9.]+) s")
OLD_POOL_CKPT = re.compile(r"nvm: checkpoint of the pool: wrote the files of (\d+) nvm tables "
                           r"\((\d+) rows, (\d+) kB\), kept (\d+) unchanged")
MERGE = re.compile(r"nvm: merged the checkpoint files of (\d+) nvm tables "
                   r"\((\d+) files into (\d+) rows, (\d+) kB\)")
IMAGE = re.compile(r"nvm: logged the rows of (\d+) nvm tables \((\d+) rows, \d+ prepared "
                   r"transactions, (\d+) MB of WAL\) as the image of the pool")
REDO = re.compile(r"redo done at .*elapsed: ([0-9.]+) s")
REBUILD = re.compile(r"is (?:perhaps torn|gone) after a crash of the operating system.*"
                     r"rebuilt from the WAL")
LOADED = re.compile(r"nvm: loaded the checkpoint files of (\d+) nvm tables \((\d+) rows"
                    r"(?:, (\d+) MB\) into the rebuilt pool in ([0-9.]+) s with (\d+) workers)?")


@dataclass
class Summary:
    """Counts summed over the lines of a log (see the module's header)."""
    checkpoints: int = 0        # checkpoints completed
    ckpt_buffers: int = 0       # buffers they wrote (8 kB each)
    ckpt_seconds: float = 0.0   # their total= seconds, summed
    pool_ckpts: int = 0         # captures of the pool (nvm)
    pool_files: int = 0         # tables whose files they wrote (changed + whole)
    pool_kb: int = 0            # the kB they wrote
    pool_rows: int = 0          # their rows
    pool_kept: int = 0          # tables whose files were kept unchanged
    pool_changed: int = 0       # tables written as delta files (new engine)
    pool_whole: int = 0         # tables written whole, as base files (old engine: all)
    pool_seconds: float = 0.0   # the captures' seconds, as logged (new engine)
    merges: int = 0             # merges of checkpoint files
    merged_kb: int = 0          # the kB of the base files they wrote
    images: int = 0             # whole images of the pool logged in the WAL (old engine: at
                                # every start; new engine: for a base backup only)
    image_rows: int = 0
    image_mb: int = 0           # MB of WAL they took, as the log says
    redo_seconds: float = -1.0  # crash recovery's redo, -1 when none
    rebuilds: int = 0           # pools rebuilt after a new boot
    loaded_rows: int = 0        # rows loaded from checkpoint files into a rebuilt pool
    load_seconds: float = -1.0  # the load's seconds, as logged (new engine), -1 when none
    load_workers: int = 0       # its workers


def summarize(text):
    """Summary of the log text given."""
    s = Summary()
    for line in text.splitlines():
        m = CKPT_DONE.search(line)
        if m:
            s.checkpoints += 1
            s.ckpt_buffers += int(m.group(1))
            s.ckpt_seconds += float(m.group(2))
            continue
        m = POOL_CKPT.search(line)
        if m:
            s.pool_ckpts += 1
            s.pool_kb += int(m.group(1))
            s.pool_rows += int(m.group(2))
            s.pool_changed += int(m.group(3))
            s.pool_whole += int(m.group(4))
            s.pool_files += int(m.group(3)) + int(m.group(4))
            s.pool_kept += int(m.group(5))
            s.pool_seconds += float(m.group(8))
            continue
        m = MERGE.search(line)
        if m:
            s.merges += 1
            s.merged_kb += int(m.group(4))
            continue
        m = OLD_POOL_CKPT.search(line)
        if m:
            s.pool_ckpts += 1
            s.pool_whole += int(m.group(1))
            s.pool_files += int(m.group(1))
            s.pool_rows += int(m.group(2))
            s.pool_kb += int(m.group(3))
            s.pool_kept += int(m.group(4))
            continue
        m = IMAGE.search(line)
        if m:
            s.images += 1
            s.image_rows += int(m.group(2))
            s.image_mb += int(m.group(3))
            continue
        m = REDO.search(line)
        if m:
            s.redo_seconds = max(s.redo_seconds, 0.0) + float(m.group(1))
            continue
        if REBUILD.search(line):
            s.rebuilds += 1
            continue
        m = LOADED.search(line)
        if m:
            s.loaded_rows += int(m.group(2))
            if m.group(4) is not None:
                s.load_seconds = max(s.load_seconds, 0.0) + float(m.group(4))
                s.load_workers = max(s.load_workers, int(m.group(5)))
    return s


def read_from(path, offset, end=None):
    """The log's text from byte offset on, up to byte end ('' when it is
    shorter)."""
    with open(path, "rb") as f:
        f.seek(int(offset))
        data = f.read() if end is None else f.read(max(0, int(end) - int(offset)))
        return data.decode("utf-8", "replace")


def main(argv):
    if len(argv) not in (4, 5) or argv[1] != "sum":
        sys.stderr.write("usage: serverlog.py sum LOGFILE OFFSET [END]\n")
        return 2
    s = summarize(read_from(argv[2], argv[3], argv[4] if len(argv) == 5 else None))
    for f in fields(s):
        v = getattr(s, f.name)
        print(f"{f.name.upper()}={v:.3f}" if isinstance(v, float) else f"{f.name.upper()}={v}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
