#!/usr/bin/env python3
"""regress/lib/check_structure.py
     The structure check of a source folder: no include cycle between its
     modules, and a README.md map that names exactly its files.  Run it
     through regress/check-structure.sh.

usage: regress/check-structure.sh [--graph] [--docs] FOLDER...

For each FOLDER (a path from the current directory or from the top of the
repository, e.g. src/core):

  1. Modules.  X.c and X.h of the folder, or of one of its subfolders, are
     one module X (named by its path below the folder, e.g. xact/nvm_xact;
     a file without a partner is a module of its own).  Module A depends on
     module B when A.c or A.h has an #include "..." line naming B.h, found
     beside the including file or below the folder (which the build gives
     as an include directory); includes of system headers (<...>) and of
     headers outside the folder do not count.  The check fails, listing every cycle
     with the include lines that make it, when the modules' include graph
     has a cycle.  With --graph it also prints each module's dependencies,
     lowest modules first.

  2. Layers.  When the folder's README.md has a table whose first column
     is headed "folder" (src/pg/README.md's), its rows name the folder's
     subfolders (`name/`) in the order of their layers, highest first: a
     file of a subfolder may include a file of its own subfolder or of one
     below it in the table, never of one above it.  A file at the top of
     the folder (outside every subfolder) that includes no file of a
     subfolder is below every layer (any file may include it); one that
     includes a subfolder's file is above every layer (no subfolder's file
     may include it).  The check fails, naming the include line, on a file
     that includes one above its own layer, and on a subfolder that holds
     sources and is not in the table (or a row that names no subfolder).

  3. Map.  The folder's README.md, and that of each subfolder holding
     sources, maps its files in tables whose first
     column is headed "file": every backticked name ending in .c or .h in
     that column is a file of the folder ("`x.h/.c`" names x.h and x.c).
     The check fails when a .c or .h file of the folder is not in the map,
     or when the map names a file the folder does not have.  Elsewhere in
     the README, a backticked path into the folder ("`src/core/x.c`") or a
     link to a file in it must name a file that exists; bare names in the
     prose are not checked, because READMEs also name other folders' and
     PostgreSQL's files that way.

With --docs it also runs the documentation check (regress/lib/check_docs.py:
the links between the repository's Markdown pages, and the settings pages
against the settings the code defines).

Exits 0 when every folder passes, 1 when one fails, 2 on a usage error.
"""

import os
import re
import signal
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the top

INCLUDE_RE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.MULTILINE)
SOURCE_RE = re.compile(r'\.[ch]$')
# a backticked token in the map: x.c, x.h, x.h/.c, x.c/.h, dir/x.c
MAP_TOKEN_RE = re.compile(r'^([\w./-]+?)\.([ch])(?:/\.([ch]))?$')
PATH_TOKEN_RE = re.compile(r'`([\w.-]+(?:/[\w.-]+)+\.[ch])`')
LINK_RE = re.compile(r'\]\(([^)\s#]+\.[ch])\)')


def strip_comments(text):
    """Returns text with its C comments and string literals blanked out,
    newlines kept, so that line numbers stay right and an #include inside
    a comment does not count."""

    def blank(m):
        s = m.group(0)
        if s.startswith('"') or s.startswith("'"):
            return s
        return re.sub(r'[^\n]', ' ', s)

    return re.sub(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'',
                  blank, text, flags=re.DOTALL)


def folder_files(folder):
    """Returns the sorted names of the folder's .c and .h files."""
    return sorted(f for f in os.listdir(folder)
                  if SOURCE_RE.search(f) and os.path.isfile(os.path.join(folder, f)))


def tree_files(folder):
    """Returns the sorted paths, below the folder, of the .c and .h files
    of the folder and of its subfolders."""
    out = []
    for here, dirs, names in os.walk(folder):
        dirs.sort()
        rel = os.path.relpath(here, folder)
        for n in names:
            if SOURCE_RE.search(n):
                out.append(n if rel == '.' else os.path.join(rel, n))
    return sorted(out)


def source_folders(folder):
    """Returns the folder and each of its subfolders that holds sources."""
    out = [folder]
    for here, dirs, names in os.walk(folder):
        dirs.sort()
        if here != folder and any(SOURCE_RE.search(n) for n in names):
            out.append(here)
    return out


def module_of(name):
    """Returns the module a file of the folder belongs to: its name without
    .c or .h."""
    return name[:-2]


def include_lines(folder, files):
    """Yields (file, line number, line, included file) for every #include
    "..." line of the files that names a file of the folder (beside the
    including file, or below the folder)."""
    present = set(files)
    for f in files:
        with open(os.path.join(folder, f), encoding='utf-8', errors='replace') as fh:
            raw = fh.read()
        code = strip_comments(raw)
        lines = raw.split('\n')
        for m in INCLUDE_RE.finditer(code):
            for base in (os.path.dirname(f), ''):
                cand = os.path.normpath(os.path.join(base, m.group(1)))
                if cand in present:
                    lineno = code.count('\n', 0, m.start()) + 1
                    yield f, lineno, lines[lineno - 1].strip(), cand
                    break


def include_graph(folder, files):
    """Returns the modules and the arrows between them: a dict from (A, B)
    to the list of (file, line, text) include lines that make A depend on
    B."""
    modules = sorted({module_of(f) for f in files})
    arrows = {}
    for f, lineno, text, name in include_lines(folder, files):
        a, b = module_of(f), module_of(name)
        if a != b:
            arrows.setdefault((a, b), []).append((f, lineno, text))
    return modules, arrows


def strongly_connected(modules, succ):
    """Returns the strongly connected components of the graph (Tarjan's
    algorithm, iterative), each as a sorted list."""
    index = {}
    low = {}
    on_stack = set()
    stack = []
    comps = []
    counter = [0]
    for root in modules:
        if root in index:
            continue
        work = [(root, iter(succ[root]))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(succ[w])))
                    advanced = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                comps.append(sorted(comp))
    return comps


def shortest_cycle(start, succ, members):
    """Returns the shortest cycle from start back to start inside members,
    as a list of modules (start first), or None."""
    prev = {}
    queue = [start]
    seen = {start}
    while queue:
        nxt = []
        for v in queue:
            for w in succ[v]:
                if w not in members:
                    continue
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(prev[path[-1]])
                    return list(reversed(path))
                if w not in seen:
                    seen.add(w)
                    prev[w] = v
                    nxt.append(w)
        queue = nxt
    return None


def rotate(cycle):
    """Returns the cycle rotated to start at its smallest module, so that a
    cycle found from two of its modules is listed once."""
    i = cycle.index(min(cycle))
    return tuple(cycle[i:] + cycle[:i])


def check_cycles(folder, files, show_graph):
    """Checks the module include graph; returns the list of failure lines."""
    modules, arrows = include_graph(folder, files)
    succ = {m: [] for m in modules}
    for (a, b) in sorted(arrows):
        succ[a].append(b)
    out = []
    comps = [c for c in strongly_connected(modules, succ) if len(c) > 1]
    if show_graph:
        print('%s: module include graph (module -> modules it includes)' % folder)
        for m in layered(modules, succ, comps):
            print('  %-12s -> %s' % (m, ', '.join(succ[m]) if succ[m] else '(none)'))
    for comp in sorted(comps):
        members = set(comp)
        out.append('include cycle among modules %s:' % ', '.join(comp))
        cycles = set()
        for m in comp:
            c = shortest_cycle(m, succ, members)
            if c:
                cycles.add(rotate(c))
        for c in sorted(cycles, key=lambda c: (len(c), c)):
            out.append('  %s' % ' -> '.join(list(c) + [c[0]]))
            for a, b in zip(c, c[1:] + (c[0],)):
                for f, lineno, text in arrows[(a, b)]:
                    out.append('      %s:%d: %s' % (f, lineno, text))
    return out


def layered(modules, succ, comps):
    """Returns the modules ordered lowest first: a module comes after every
    module it includes, and the modules of one cycle come together, after
    everything any of them includes outside the cycle."""
    group = {m: m for m in modules}
    for comp in comps:
        for m in comp:
            group[m] = comp[0]
    gsucc = {}
    for m in modules:
        gsucc.setdefault(group[m], set()).update(group[w] for w in succ[m] if group[w] != group[m])
    level = {}

    def depth(g):
        if g not in level:
            level[g] = 0
            level[g] = max([depth(h) + 1 for h in gsucc[g]] or [0])
        return level[g]

    return sorted(modules, key=lambda m: (depth(group[m]), group[m], m))


def layer_order(folder):
    """Returns the subfolders that the folder's README.md orders in a table
    whose first column is headed "folder", as a dict from name to rank (0
    for the highest), and the failure lines of rows that name none; an
    empty dict when the README has no such table."""
    readme = os.path.join(folder, 'README.md')
    if not os.path.isfile(readme):
        return {}, []
    with open(readme, encoding='utf-8') as fh:
        lines = fh.read().split('\n')
    ranks, out = {}, []
    for i, line in enumerate(lines):
        cells = [c.strip() for c in line.strip().strip('|').split('|')] if line.strip().startswith('|') else []
        if not (cells and cells[0].lower() == 'folder' and i + 1 < len(lines) and
                re.match(r'^\|?\s*:?-{3,}', lines[i + 1].strip())):
            continue
        for j in range(i + 2, len(lines)):
            if not lines[j].strip().startswith('|'):
                break
            first = lines[j].strip().strip('|').split('|')[0]
            m = re.search(r'`([\w.-]+)/`', first)
            if m:
                ranks.setdefault(m.group(1), len(ranks))
            else:
                out.append('README.md:%d: a row of the layer table names no folder' % (j + 1))
        break
    return ranks, out


def check_layers(folder, files):
    """Checks that no file includes one of a layer above its own (the order
    of the folder's README.md); returns the failure lines."""
    ranks, out = layer_order(folder)
    if not ranks and not out:
        return []
    def layer(f):
        return f.split(os.sep, 1)[0] if os.sep in f else None
    for sub in sorted({layer(f) for f in files if layer(f)}):
        if sub not in ranks:
            out.append('layers: %s/ holds sources but is not in README.md\'s layer table' % sub)
    lines = list(include_lines(folder, files))
    # a file at the top that includes a subfolder's file is above every layer
    above = {module_of(f) for f, _, _, t in lines if layer(f) is None and layer(t) is not None}
    for f, lineno, text, t in lines:
        lf, lt = layer(f), layer(t)
        if lf is None or lf == lt:
            continue
        if lt is None:
            if module_of(t) in above:
                out.append('layers: %s:%d: %s: %s is above every folder (it includes their files)'
                           % (f, lineno, text, t))
        elif lf in ranks and lt in ranks and ranks[lt] < ranks[lf]:
            out.append('layers: %s:%d: %s: %s/ is above %s/ in README.md\'s layer table'
                       % (f, lineno, text, lt, lf))
    return out


def map_names(readme_text):
    """Returns the names the README's map tables give, as a dict from name to
    the README line that gives it, and the number of map tables found."""
    names = {}
    tables = 0
    lines = readme_text.split('\n')
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        cells = [c.strip() for c in line.strip('|').split('|')] if line.startswith('|') else []
        is_sep = (i + 1 < len(lines) and
                  re.match(r'^\|?\s*:?-{3,}', lines[i + 1].strip()) is not None)
        if cells and cells[0].lower() == 'file' and is_sep:
            tables += 1
            i += 2
            while i < len(lines) and lines[i].strip().startswith('|'):
                first = lines[i].strip().strip('|').split('|')[0]
                for token in re.findall(r'`([^`]+)`', first):
                    m = MAP_TOKEN_RE.match(token.strip())
                    if not m:
                        continue
                    stem = m.group(1)
                    for ext in (m.group(2), m.group(3)):
                        if ext:
                            names.setdefault('%s.%s' % (stem, ext), i + 1)
                i += 1
            continue
        i += 1
    return names, tables


def check_map(folder, files):
    """Checks the folder's README.md map; returns the list of failure
    lines."""
    readme = os.path.join(folder, 'README.md')
    if not os.path.isfile(readme):
        return ['no README.md']
    with open(readme, encoding='utf-8') as fh:
        text = fh.read()
    names, tables = map_names(text)
    if tables == 0:
        return ['README.md has no map (a table whose first column is headed "file")']
    out = []
    present = set(files)
    for f in files:
        if f not in names:
            out.append('README.md: %s is not in the map' % f)
    for name, lineno in sorted(names.items()):
        if name not in present:
            out.append('README.md:%d: the map names %s, which the folder does not have'
                       % (lineno, name))
    here = os.path.normpath(os.path.abspath(folder))
    for lineno, line in enumerate(text.split('\n'), 1):
        for path in PATH_TOKEN_RE.findall(line) + LINK_RE.findall(line):
            if not in_folder(path, here):
                continue
            if not os.path.isfile(os.path.join(here, os.path.basename(path))):
                out.append('README.md:%d: names %s, which does not exist' % (lineno, path))
    return out


def in_folder(path, here):
    """Says whether a path the README gives names a file of the folder here
    (an absolute path): a relative one ("../core/x.h", "./x.c") from the
    README's folder, any other from the top of the repository, which is
    where here ends with the path's folder ("src/core/x.c")."""
    parent = os.path.dirname(path)
    if path.startswith('.'):
        return os.path.normpath(os.path.join(here, parent)) == here
    return here == os.path.normpath(parent) or here.endswith(os.sep + os.path.normpath(parent))


def resolve(folder):
    """Returns the folder as given if it exists, else from the top of the
    repository, else None."""
    for cand in (folder, os.path.join(REPO, folder)):
        if os.path.isdir(cand):
            return cand
    return None


def main(argv):
    """Checks every folder named on the command line; returns the exit
    status."""
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet when piped into head
    show_graph = False
    docs = False
    folders = []
    for a in argv:
        if a == '--graph':
            show_graph = True
        elif a == '--docs':
            docs = True
        elif a in ('-h', '--help'):
            print(__doc__.split('\n\n', 1)[1].rstrip())
            return 0
        elif a.startswith('-'):
            print('check-structure: unknown option %s (see --help)' % a, file=sys.stderr)
            return 2
        else:
            folders.append(a)
    if not folders and not docs:
        print('usage: check-structure.sh [--graph] [--docs] FOLDER...', file=sys.stderr)
        return 2
    status = 0
    for given in folders:
        folder = resolve(given)
        if folder is None:
            print('%s: FAIL: no such folder' % given)
            status = 1
            continue
        files = tree_files(folder)
        failures = check_cycles(folder, files, show_graph) + check_layers(folder, files)
        for sub in source_folders(folder):
            failures += ['%s: %s' % (os.path.relpath(sub, folder), line) if sub != folder else line
                         for line in check_map(sub, folder_files(sub))]
        modules = len({module_of(f) for f in files})
        if failures:
            status = 1
            print('%s: FAIL (%d files, %d modules)' % (given, len(files), modules))
            for line in failures:
                print('  ' + line)
        else:
            layers = ', layers as README.md orders them' if layer_order(folder)[0] else ''
            print('%s: ok (%d files, %d modules, no include cycle%s, every README.md maps its folder)'
                  % (given, len(files), modules, layers))
    if docs:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import check_docs
        if check_docs.check():
            status = 1
    return status


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
