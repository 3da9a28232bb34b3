#!/usr/bin/env python3
"""tests/doc_fields.py DOC_FIELDS_BINARY: every desc field of every
component (tests/doc_fields.c, from the field tables) has a row in an
options table of its page (docs/<header>.md): a table whose header row
starts "| field | default", with the field's name in backticks first in
the row's first cell (a nested member by its dotted name or its last
part). Where the default cell is a plain number, or an enum's name in
backticks, it must be the table's default (F64 defaults to the 9
decimals the reports keep; a zero default is derived by the model's fill
from other fields, and the page says what it comes to). Prints one line per gap and exits 1 if any.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def options_rows(text):
    """{name: default cell} from the page's '| field | default ...' tables."""
    rows, inside = {}, False
    for line in text.splitlines():
        if re.match(r"^\|\s*field\s*\|\s*default\s*\|", line):
            inside = True
            continue
        if not line.startswith("|"):
            inside = False
            continue
        if not inside or re.match(r"^\|\s*-", line):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        for name in re.findall(r"`([\w.]+)`", cells[0]):
            rows.setdefault(name, cells[1] if len(cells) > 1 else "")
    return rows


def number(cell):
    m = re.fullmatch(r"(-?[0-9][0-9,]*(\.[0-9]+)?)", cell.strip())
    return float(m.group(1).replace(",", "")) if m else None


def main(binary):
    fields = subprocess.run([binary], check=True, capture_output=True, text=True).stdout
    pages, gaps = {}, []
    for line in fields.splitlines():
        c, header, name, typ, default = line.split()
        if header not in pages:
            with open(os.path.join(ROOT, "docs", header + ".md")) as f:
                pages[header] = options_rows(f.read())
        rows = pages[header]
        cell = rows.get(name, rows.get(name.split(".")[-1]))
        if cell is None:
            gaps.append(f"docs/{header}.md: no options row for {c}'s `{name}`")
            continue
        if typ == "enum":
            names = re.findall(r"`(\w+)`", cell)
            if names and names[0] != default:
                gaps.append(f"docs/{header}.md: {c}'s `{name}` defaults to {default}, "
                            f"the page says {cell}")
            continue
        # a zero default is the model's to derive from other fields (or
        # "off"): the page states what it comes to
        want = int(default) / 1e9 if typ == "f64" else int(default)
        got = number(cell)
        if want and got is not None and abs(got - want) > 1e-9 * max(1.0, abs(want)):
            gaps.append(f"docs/{header}.md: {c}'s `{name}` defaults to {want:g}, "
                        f"the page says {cell}")
    for g in gaps:
        print("FAIL", g)
    print(f"{len(fields.splitlines())} desc fields, {len(gaps)} gaps")
    return 1 if gaps else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
