#!/usr/bin/env python3
"""bench/lib/evict_cache.py
     Empties the page cache of the files under the directories given, as a
     power loss leaves it: each regular file is synced (fsync) and its pages
     dropped (posix_fadvise POSIX_FADV_DONTNEED), so that the next start of a
     server reads its data directory from the disk, as after a new boot,
     without dropping the caches of the rest of the machine.  bench/scale.sh
     runs it (as root) on a killed cluster's data directory before the
     start that recovers it.
         evict_cache.py DIR...
     prints the files and bytes whose pages were dropped.
"""

import os
import sys


def evict(paths):
    """Syncs and drops the cached pages of every regular file under paths;
    returns (files, bytes)."""
    files = size = 0
    for top in paths:
        for root, _dirs, names in os.walk(top):
            for name in names:
                p = os.path.join(root, name)
                try:
                    if not os.path.isfile(p) or os.path.islink(p):
                        continue
                    fd = os.open(p, os.O_RDONLY)
                except OSError:
                    continue    # removed meanwhile, or a socket
                try:
                    os.fsync(fd)
                    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                    files += 1
                    size += os.fstat(fd).st_size
                except OSError:
                    pass
                finally:
                    os.close(fd)
    return files, size


def main(argv):
    if len(argv) < 2:
        sys.stderr.write("usage: evict_cache.py DIR...\n")
        return 2
    files, size = evict(argv[1:])
    print(f"{files} files, {size} bytes dropped from the page cache")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
