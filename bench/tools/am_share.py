#!/usr/bin/env python3
"""am_share.py: share of a table access method (nvm's or heap's) in the
backends' busy time, from `perf script` call chains.

usage: perf script | python3 am_share.py [--am nvm|heap]
       python3 am_share.py --am heap FILE.perf-script.txt.gz ...

Reads `perf script` output with call chains (perf record -g or
--call-graph dwarf; bench/run.sh keeps them as profile/*.perf-script.txt.gz
with NVM_BENCH_PERF_CALLGRAPH set).  A sample is a wait's when its chain
passes through the wait for the client (secure_read) or a latch wait
(WaitLatch): the kernel's work of going to sleep and waking up; the rest is
busy.  A busy sample is the access method's when its chain passes through
one of its table-AM callbacks (the functions of its TableAmRoutine, and for
heap the heap functions its static callbacks call, below); each sample
counts once.  Both engines are judged by the same rule, so the two shares
compare like for like.  For nvm the output also gives the share of all its
entry points from PostgreSQL (transaction callbacks and hooks as well),
which heap has no counterpart of: its commit work is PostgreSQL's own.  A
hook counts for its own work only, not for the statement it wraps
(standard_ProcessUtility, standard_ExecutorStart, ...).

Heap's callbacks that are static in heapam_handler.c have no symbol in a
stripped postgres binary, and perf shows them as [unknown].  Each of them is
recognised by what it calls: heap_insert, heap_update, heap_delete,
heap_lock_tuple, heap_fetch and so on (HEAP_CALLEES), or by its caller:
index_fetch_heap calls nothing but the index-fetch callback, so every frame
below it is the callback's (the same holds for nvm's).  A static callback's
own instructions outside those callees (few: it passes its arguments on) are
missed, so heap's share is a lower bound, as is nvm's: frame-pointer chains
skip the caller of a leaf function that sets up no frame.  An entry point
of nvm that ends in a tail call (nvm_tuple_insert jumps to insert_row) is
gone from the chain too: a sample with nvm code (nvmam.so, which has its
symbols) and no entry point is attributed by its outermost nvm function
(NVM_TAIL), or counted apart when that function is not listed.
"""
import argparse
import collections
import gzip
import sys

# nvm: the table AM callbacks of src/pg/am/nvm_handler.c (its slots are
# PostgreSQL's TTSOpsHeapTuple, so deforming is the executor's for both)
NVM_CALLBACKS = {
    'nvm_finish_bulk_insert', 'nvm_index_build_range_scan', 'nvm_index_delete_tuples',
    'nvm_index_fetch_begin', 'nvm_index_fetch_end', 'nvm_index_fetch_reset',
    'nvm_index_fetch_tuple', 'nvm_index_validate_scan', 'nvm_multi_insert',
    'nvm_parallelscan_estimate', 'nvm_parallelscan_initialize',
    'nvm_parallelscan_reinitialize', 'nvm_relation_copy_data',
    'nvm_relation_copy_for_cluster', 'nvm_relation_estimate_size',
    'nvm_relation_needs_toast_table', 'nvm_relation_nontransactional_truncate',
    'nvm_relation_set_new_filenode', 'nvm_relation_size', 'nvm_relation_toast_am',
    'nvm_relation_vacuum', 'nvm_scan_analyze_next_block', 'nvm_scan_analyze_next_tuple',
    'nvm_scan_begin', 'nvm_scan_bitmap_next_block', 'nvm_scan_bitmap_next_tuple',
    'nvm_scan_end', 'nvm_scan_getnextslot', 'nvm_scan_rescan',
    'nvm_scan_sample_next_block', 'nvm_scan_sample_next_tuple', 'nvm_scan_set_tidrange',
    'nvm_tuple_complete_speculative', 'nvm_tuple_delete', 'nvm_tuple_fetch_row_version',
    'nvm_tuple_get_latest_tid', 'nvm_tuple_insert', 'nvm_tuple_insert_speculative',
    'nvm_tuple_lock', 'nvm_tuple_satisfies_snapshot', 'nvm_tuple_tid_valid',
    'nvm_tuple_update', 'nvm_slot_callbacks',
}
# nvm: functions that an entry point reaches by a tail call, so that the
# entry point's frame is gone from the chain (the compiler jumped instead of
# calling), as found in these profiles: the outermost nvm frame of a sample
# with no entry point in its chain, and the kind of entry point whose body
# or callee it is (src/pg/am/nvm_modify.c, src/pg/nvm_xact_end.c, ...)
NVM_TAIL = {
    'insert_row': 'am', 'nvm_relation_table': 'am', 'nvm_version_by_no': 'am',
    'nvm_ssi_write': 'am', 'nvm_ssi_needed': 'am', 'nvm_table_version_limit': 'am',
    'nvm_xact_check_access': 'am', 'nvm_wal_logs_changes': 'am',
    'nvm_xact_at_xact_end': 'hook', 'nvm_token_at_xact_end': 'hook',
    'nvm_drop_at_xact_end': 'hook', 'nvm_seqlog_finish': 'hook',
    'nvm_xact_statement_boundary': 'hook',
}
# nvm: its other entry points from PostgreSQL (not table-AM callbacks)
NVM_HOOKS = {
    'nvm_xact_end_callback', 'nvm_subxact_end_callback', 'nvm_executor_start',
    'nvm_executor_end', 'nvm_process_utility', 'nvm_get_relation_info',
    'nvm_object_access', 'nvm_commit_object_access',
}
# heap: the callbacks of heapam_methods (PostgreSQL 15, heapam_handler.c)
# that are exported functions of heapam.c and tableam.c
HEAP_CALLBACKS = {
    'heap_beginscan', 'heap_endscan', 'heap_rescan', 'heap_getnextslot',
    'heap_set_tidrange', 'heap_getnextslot_tidrange', 'heap_multi_insert',
    'heap_get_latest_tid', 'heap_index_delete_tuples', 'heap_vacuum_rel',
    'table_block_parallelscan_estimate', 'table_block_parallelscan_initialize',
    'table_block_parallelscan_reinitialize', 'table_block_relation_size',
}
# heap: what its static callbacks (heapam_tuple_insert, heapam_tuple_update,
# heapam_tuple_delete, heapam_tuple_lock, heapam_fetch_row_version,
# heapam_tuple_satisfies_snapshot, heapam_index_fetch_tuple, ...) call
HEAP_CALLEES = {
    'heap_insert', 'heap_update', 'heap_delete', 'heap_lock_tuple', 'heap_fetch',
    'heap_hot_search_buffer', 'heap_page_prune_opt', 'heap_abort_speculative',
    'heap_finish_speculative', 'HeapTupleSatisfiesVisibility', 'ExecFetchSlotHeapTuple',
}
# what nvm's hooks wrap: a sample below one of them is PostgreSQL's
# statement, not the hook's own work
WRAPPED = {
    'standard_ProcessUtility', 'standard_ExecutorStart', 'standard_ExecutorEnd',
}
# callers whose every callee is a table-AM callback
AM_CALLERS = {'index_fetch_heap'}
WAITS = {'secure_read', 'WaitLatch'}


def read_samples(stream, dsos=None):
    """The call chains of perf script's output, innermost frame first; with
    dsos (a list), also each chain's frames' binaries, appended to it."""
    samples, cur, cur_dso = [], [], []
    for line in stream:
        if not line.strip() or line[0] not in ' \t':
            if cur:
                samples.append(cur)
                if dsos is not None:
                    dsos.append(cur_dso)
            cur, cur_dso = [], []
            continue
        parts = line.split()
        if len(parts) >= 2:
            cur.append(parts[1].split('+')[0])
            cur_dso.append(parts[-1].strip('()').rsplit('/', 1)[-1])
    if cur:
        samples.append(cur)
        if dsos is not None:
            dsos.append(cur_dso)
    return samples


def am_frame(chain, names):
    """The outermost frame of chain that is the access method's (a name in
    names, or a callee of an AM_CALLERS frame), or None."""
    hit = None
    for i, f in enumerate(chain):
        if f in names:
            hit = f
        elif i + 1 < len(chain) and chain[i + 1] in AM_CALLERS:
            hit = chain[i + 1] + ' -> callback'
    return hit


def share(samples, am, dsos=None):
    callbacks = NVM_CALLBACKS if am == 'nvm' else HEAP_CALLBACKS | HEAP_CALLEES
    idle = busy = mine = hooks = other = 0
    by_entry = collections.Counter()
    for k, s in enumerate(samples):
        names = set(s)
        if names & WAITS:
            idle += 1
            continue
        busy += 1
        hit = am_frame(s, callbacks)
        if hit:
            mine += 1
            by_entry[hit] += 1
        elif am == 'nvm' and names & NVM_HOOKS:
            j = max(i for i, f in enumerate(s) if f in NVM_HOOKS)
            if not set(s[:j]) & WRAPPED:
                hooks += 1
                by_entry[s[j] + ' (hook)'] += 1
        elif am == 'nvm' and dsos is not None and 'nvmam.so' in dsos[k]:
            # nvm code with no entry point in the chain: a tail call hid it
            f = s[max(i for i, d in enumerate(dsos[k]) if d == 'nvmam.so')]
            kind = NVM_TAIL.get(f)
            if kind == 'am':
                mine += 1
            elif kind == 'hook':
                hooks += 1
            else:
                other += 1
            by_entry['%s (tail call%s)' % (f, ', ' + kind if kind else '')] += 1
    total = len(samples)
    out = ["samples %d: in waits (client or latch) %d, busy %d" % (total, idle, busy)]
    if not busy:
        return "\n".join(out + ["no busy samples"])
    out.append("%s's table-AM callbacks: %d busy samples, %.1f %% of busy, %.1f %% of all "
               "(the waits' samples are the kernel's switching work, which /proc counts "
               "as CPU time)" % (am, mine, 100.0 * mine / busy, 100.0 * mine / total))
    if am == 'nvm':
        both = mine + hooks
        out.append("nvm's entry points (callbacks, transaction callbacks and hooks): %d busy "
                   "samples, %.1f %% of busy, %.1f %% of all"
                   % (both, 100.0 * both / busy, 100.0 * both / total))
        if other:
            out.append("nvm code reached by a tail call from an entry point not known: %d busy "
                       "samples, %.1f %% of busy" % (other, 100.0 * other / busy))
    for f, c in by_entry.most_common():
        out.append("  %5.1f %%  %s" % (100.0 * c / busy, f))
    return "\n".join(out)


def main(argv):
    ap = argparse.ArgumentParser(prog="am_share.py")
    ap.add_argument("--am", choices=("nvm", "heap"), default="nvm")
    ap.add_argument("files", nargs="*", help="perf script output (.gz allowed); stdin without")
    a = ap.parse_args(argv)
    samples, dsos = [], []
    if not a.files:
        samples = read_samples(sys.stdin, dsos)
    for p in a.files:
        opener = gzip.open if p.endswith(".gz") else open
        with opener(p, "rt", errors="replace") as f:
            samples += read_samples(f, dsos)
    print(share(samples, a.am, dsos))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
