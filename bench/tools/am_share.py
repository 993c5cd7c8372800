#!/usr/bin/env python3
"""am_share.py: share of nvm's table access method in the backends' busy time.

Reads `perf script` output (call chains) on stdin.  A sample is a wait's when its
chain passes through the wait for the client (secure_read) or a latch wait
(WaitLatch): the kernel's work of going to sleep and waking up; the rest is
busy.  A busy sample is nvm's when its chain holds
one of nvm's entry points from PostgreSQL (table AM callbacks, transaction
callbacks and hooks), listed below; each sample counts once.  Frame-pointer
chains through PostgreSQL functions called from nvm may skip the calling
frame, so this is a lower bound.
"""
import collections
import sys

ENTRY = {
    'nvm_tuple_update', 'nvm_tuple_insert', 'nvm_tuple_insert_speculative',
    'nvm_tuple_complete_speculative', 'nvm_tuple_delete', 'nvm_tuple_lock',
    'nvm_multi_insert', 'nvm_index_fetch_tuple', 'nvm_index_fetch_begin',
    'nvm_index_fetch_end', 'nvm_scan_getnextslot', 'nvm_scan_begin', 'nvm_scan_end',
    'nvm_scan_rescan', 'nvm_tuple_fetch_row_version', 'nvm_tuple_satisfies_snapshot',
    'nvm_index_delete_tuples', 'nvm_xact_callback', 'nvm_subxact_callback',
    'nvm_executor_start', 'nvm_process_utility', 'nvm_planner',
    'nvm_relation_size', 'nvm_relation_estimate_size',
}

samples, cur = [], []
for line in sys.stdin:
    if not line.strip() or line[0] not in ' \t':
        if cur:
            samples.append(cur)
        cur = []
        continue
    parts = line.split()
    if len(parts) >= 2:
        cur.append(parts[1].split('+')[0])
if cur:
    samples.append(cur)

idle = busy = nvm = 0
by_entry = collections.Counter()
for s in samples:
    names = set(s)
    if 'secure_read' in names or 'WaitLatch' in names:
        idle += 1
        continue
    busy += 1
    hit = [f for f in s if f in ENTRY]
    if hit:
        nvm += 1
        by_entry[hit[-1]] += 1      # the outermost entry point
print(f"samples {len(samples)}: in waits (client or latch) {idle}, busy {busy}")
print(f"nvm's table access method: {nvm} busy samples, {100.0 * nvm / busy:.1f} % of busy, "
      f"{100.0 * nvm / len(samples):.1f} % of all (the waits' samples are the kernel's "
      f"switching work, which /proc counts as CPU time)")
for f, c in by_entry.most_common():
    print(f"  {100.0 * c / busy:5.1f} %  {f}")
