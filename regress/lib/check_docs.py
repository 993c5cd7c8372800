#!/usr/bin/env python3
"""regress/lib/check_docs.py
     The documentation check: the links between the repository's Markdown
     pages, and the settings pages against the settings the code defines.
     Run it through regress/check-structure.sh --docs (the structure stage
     of regress/run-tests.sh does), or alone: python3 check_docs.py.

The rules:

  1. Links.  In every Markdown file of the repository (README.md, doc/,
     the READMEs of src/, bench/ and regress/; not the build directories,
     and not the files of a run of record below bench/results/, which
     describe the tree as it was), every link [text](target) whose target
     is not a URL must name a file or folder that exists, relative to the
     page; a target with #anchor (or a bare #anchor, into the page itself)
     must name a heading of that Markdown page, by GitHub's rule (lower
     case, punctuation other than - and _ dropped, spaces made -, a repeated
     heading numbered -1, -2, ...).  Links inside code blocks and code spans
     do not count.

  2. Pages.  Every page of doc/ is linked from README.md (its map of the
     documentation), and starts, after its title, with "This page covers".

  3. Settings.  The settings the code defines (every
     DefineCustom*Variable("nvm.<name>" ...) in a .c file under src/) are
     exactly those doc/settings.md lists (the first column of its table,
     `nvm.<name>`), and exactly those of src/pg/README.md's table of settings
     (columns setting, file), whose file column names the file that defines
     each one (a path below src/pg/).

Prints one line per failure and returns their number.
"""

import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

LINK_RE = re.compile(r'(?<!!)\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*([^)\s]+)(?:\s+"[^"]*")?\s*\)')
HEADING_RE = re.compile(r'^(#{1,6})\s+(.*?)\s*#*\s*$')
SETTING_DEF_RE = re.compile(r'DefineCustom\w+Variable\(\s*"(nvm\.[a-z0-9_]+)"')
SKIP_DIRS = {'.git', 'node_modules'}


def markdown_files():
    """Returns the repository's Markdown files the check reads, as paths
    from the top."""
    out = []
    for here, dirs, names in os.walk(REPO):
        rel = os.path.relpath(here, REPO)
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith('build')
                         and not (rel == os.path.join('bench', 'results')))
        for n in sorted(names):
            if n.endswith('.md'):
                out.append(os.path.normpath(os.path.join(rel, n)))
    return out


def prose_lines(text):
    """Yields (line number, line) of the text outside fenced code blocks,
    with code spans blanked."""
    fence = None
    for i, line in enumerate(text.split('\n'), 1):
        m = re.match(r'^\s*(```+|~~~+)', line)
        if m:
            if fence is None:
                fence = m.group(1)[0] * 3
            elif m.group(1).startswith(fence):
                fence = None
            continue
        if fence is None:
            yield i, re.sub(r'`[^`]*`', lambda s: ' ' * len(s.group(0)), line)


def slug(heading):
    """Returns GitHub's anchor for a heading's text."""
    text = re.sub(r'`', '', heading)
    text = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', text)  # a link: its text
    text = text.strip().lower()
    text = re.sub(r'[^\w\- ]', '', text)
    return text.replace(' ', '-')


ANCHORS = {}


def anchors(path):
    """Returns the set of anchors of a Markdown file (a path from the top)."""
    if path not in ANCHORS:
        found = set()
        seen = {}
        with open(os.path.join(REPO, path), encoding='utf-8') as fh:
            text = fh.read()
        fence = None
        for line in text.split('\n'):
            m = re.match(r'^\s*(```+|~~~+)', line)
            if m:
                if fence is None:
                    fence = m.group(1)[0] * 3
                elif m.group(1).startswith(fence):
                    fence = None
                continue
            if fence is not None:
                continue
            h = HEADING_RE.match(line)
            if not h:
                continue
            s = slug(h.group(2))
            n = seen.get(s, 0)
            seen[s] = n + 1
            found.add(s if n == 0 else '%s-%d' % (s, n))
        for m in re.finditer(r'<a\s+(?:name|id)="([^"]+)"', text):
            found.add(m.group(1))
        ANCHORS[path] = found
    return ANCHORS[path]


def check_links(pages):
    """Checks every link of the pages; returns the failure lines."""
    out = []
    for page in pages:
        with open(os.path.join(REPO, page), encoding='utf-8') as fh:
            text = fh.read()
        base = os.path.dirname(page)
        for lineno, line in prose_lines(text):
            for m in LINK_RE.finditer(line):
                target = m.group(1)
                if re.match(r'^[a-z][a-z0-9+.-]*:', target, re.I):
                    continue  # a URL (https:, mailto:, ...)
                path, _, anchor = target.partition('#')
                dest = os.path.normpath(os.path.join(base, path)) if path else page
                if path and not os.path.exists(os.path.join(REPO, dest)):
                    out.append('%s:%d: link to %s, which does not exist' % (page, lineno, target))
                    continue
                if anchor and dest.endswith('.md') and anchor not in anchors(dest):
                    out.append('%s:%d: link to %s: %s has no heading #%s'
                               % (page, lineno, target, dest, anchor))
    return out


def check_pages():
    """Checks that README.md links every page of doc/ and that each page
    starts with what it covers; returns the failure lines."""
    out = []
    doc = os.path.join(REPO, 'doc')
    if not os.path.isdir(doc):
        return out
    with open(os.path.join(REPO, 'README.md'), encoding='utf-8') as fh:
        readme = fh.read()
    linked = {os.path.normpath(m.group(1).partition('#')[0])
              for _, line in prose_lines(readme) for m in LINK_RE.finditer(line)}
    for name in sorted(os.listdir(doc)):
        if not name.endswith('.md'):
            continue
        page = os.path.join('doc', name)
        if page not in linked:
            out.append('README.md: the map of the documentation does not link %s' % page)
        with open(os.path.join(doc, name), encoding='utf-8') as fh:
            paras = [p.strip() for p in fh.read().split('\n\n') if p.strip()]
        if len(paras) < 2 or not paras[0].startswith('# ') or not paras[1].startswith('This page covers'):
            out.append('%s: does not start with its title and "This page covers ..."' % page)
    return out


def defined_settings():
    """Returns a dict from each setting the code defines to the file (a
    path from the top) that defines it."""
    out = {}
    for here, dirs, names in os.walk(os.path.join(REPO, 'src')):
        dirs.sort()
        for n in sorted(names):
            if not n.endswith('.c'):
                continue
            path = os.path.join(here, n)
            with open(path, encoding='utf-8', errors='replace') as fh:
                for m in SETTING_DEF_RE.finditer(fh.read()):
                    out[m.group(1)] = os.path.relpath(path, REPO)
    return out


def table_rows(path, first_header):
    """Returns (line number, cells) of the rows of the tables in a Markdown
    file whose first header cell is first_header."""
    rows = []
    with open(os.path.join(REPO, path), encoding='utf-8') as fh:
        lines = fh.read().split('\n')
    i = 0
    while i < len(lines):
        cells = [c.strip() for c in lines[i].strip().strip('|').split('|')]
        if (lines[i].strip().startswith('|') and cells[0].lower() == first_header and
                i + 1 < len(lines) and re.match(r'^\|?\s*:?-{3,}', lines[i + 1].strip())):
            i += 2
            while i < len(lines) and lines[i].strip().startswith('|'):
                rows.append((i + 1, [c.strip() for c in lines[i].strip().strip('|').split('|')]))
                i += 1
            continue
        i += 1
    return rows


def check_settings():
    """Checks the settings pages against the code; returns the failure
    lines."""
    out = []
    code = defined_settings()
    for page, with_file in (('doc/settings.md', False), ('src/pg/README.md', True)):
        if not os.path.isfile(os.path.join(REPO, page)):
            out.append('%s: missing (it lists the settings)' % page)
            continue
        listed = {}
        for lineno, cells in table_rows(page, 'setting'):
            m = re.match(r'^`(nvm\.[a-z0-9_]+)`$', cells[0])
            if not m:
                continue
            listed[m.group(1)] = lineno
            if m.group(1) not in code:
                out.append('%s:%d: lists %s, which the code does not define' % (page, lineno, m.group(1)))
            elif with_file:
                f = re.match(r'^`([\w./-]+\.c)`', cells[1] if len(cells) > 1 else '')
                where = os.path.normpath(os.path.join('src/pg', f.group(1))) if f else None
                if where != code[m.group(1)]:
                    out.append('%s:%d: says %s is defined in %s; it is defined in %s'
                               % (page, lineno, m.group(1), f.group(1) if f else '(no file)',
                                  code[m.group(1)]))
        for name in sorted(set(code) - set(listed)):
            out.append('%s: does not list %s (defined in %s)' % (page, name, code[name]))
    return out


def check():
    """Runs every rule; prints the failures and returns their number."""
    failures = check_links(markdown_files()) + check_pages() + check_settings()
    if failures:
        print('documentation: FAIL')
        for line in failures:
            print('  ' + line)
    else:
        print('documentation: ok (links between the pages, doc/ in the README\'s map, '
              'the settings pages against the code)')
    return len(failures)


if __name__ == '__main__':
    sys.exit(1 if check() else 0)
