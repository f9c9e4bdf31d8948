#!/usr/bin/env python3
"""Main-code lines per module at two commits: main-lines.py BEFORE AFTER (run inside the repository).

Counts the lines of every src/main/java/**/*.java file as git holds it at each commit, in total and as code only
(lines that are neither blank nor part of a comment), and prints a Markdown table with the change per module."""
import subprocess
import sys


def count(rev):
    names = subprocess.run(['git', 'ls-tree', '-r', '--name-only', rev], capture_output=True, text=True,
                           check=True).stdout.split()
    totals = {}
    for name in names:
        if '/src/main/java/' not in name or not name.endswith('.java'):
            continue
        module = name.split('/src/main/java/')[0]
        text = subprocess.run(['git', 'show', f'{rev}:{name}'], capture_output=True, text=True, check=True).stdout
        lines = text.splitlines()
        code = 0
        in_comment = False
        for line in lines:
            s = line.strip()
            if in_comment:
                in_comment = '*/' not in s
                continue
            if not s or s.startswith('//'):
                continue
            if s.startswith('/*'):
                in_comment = '*/' not in s
                continue
            code += 1
        t, c = totals.get(module, (0, 0))
        totals[module] = (t + len(lines), c + code)
    return totals


def main():
    before, after = count(sys.argv[1]), count(sys.argv[2])
    print('| module | before: lines (code) | after: lines (code) | change |')
    print('| --- | ---: | ---: | ---: |')
    rows = sorted(set(before) | set(after))
    for m in rows + ['all']:
        if m == 'all':
            b = tuple(map(sum, zip(*before.values())))
            a = tuple(map(sum, zip(*after.values())))
        else:
            b, a = before.get(m, (0, 0)), after.get(m, (0, 0))
        print(f'| {m} | {b[0]:,} ({b[1]:,}) | {a[0]:,} ({a[1]:,}) | {a[0] - b[0]:+,} ({a[1] - b[1]:+,}) |')


if __name__ == '__main__':
    main()
