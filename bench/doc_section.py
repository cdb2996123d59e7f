# SPDX-License-Identifier: BSD-2-Clause
"""The benchmarks' sections of docs/benchmarks.md: write_section(doc, name, body) replaces
the text between <!-- NAME:begin --> and <!-- NAME:end --> with body (the section is appended
when the markers are not there yet), through a temporary file and a rename, and says so on
stderr. body may carry the markers itself. Imported by the scripts of bench/ (run from the
repository's top: sys.path gets "bench")."""
import os
import sys


def write_section(doc, name, body, who="bench"):
    begin, end = "<!-- %s:begin -->" % name, "<!-- %s:end -->" % name
    body = body.strip("\n")
    if body.startswith(begin):
        body = body[len(begin):].strip("\n")
    if body.endswith(end):
        body = body[:-len(end)].strip("\n")
    block = "%s\n%s\n%s" % (begin, body, end)
    try:
        text = open(doc).read()
    except FileNotFoundError:
        text = ""
    if begin in text and end in text:
        i, j = text.index(begin), text.index(end) + len(end)
        text = text[:i] + block + text[j:]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    tmp = "%s.tmp.%d" % (doc, os.getpid())
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, doc)
    print("%s: wrote %s (%s)" % (who, doc, name), file=sys.stderr)
