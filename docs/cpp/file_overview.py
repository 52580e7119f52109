#!/usr/bin/python3
"""Doxygen input filter (docs/cpp/Doxyfile): the comment that opens each header (the `//` lines
after `#pragma once`, before the first #include or declaration) becomes the header's \\file
documentation, so that its page starts with the overview the header gives of itself. Every line
keeps its number, so Doxygen's line references stay right."""
import re
import sys

lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
i = 0
while i < len(lines) and (lines[i].startswith("#pragma") or not lines[i].strip()):
    i += 1
first = i
while i < len(lines) and lines[i].startswith("//") and not lines[i].startswith("///"):
    # `template <class T>` in prose is not an HTML tag: escape < before a letter.
    lines[i] = "///" + re.sub(r"<(?=[A-Za-z/])", r"\\<", lines[i][2:])
    i += 1
if i > first:
    lines[first] += " \\file"
sys.stdout.write("\n".join(lines))
