#!/usr/bin/env python3
"""Navigational questions from a site's table of contents: each page's own name, as the table
of contents lists it, typed lowercase, expecting that page (type "navigational").

    nav.py SUMMARY.md        an mdBook table of contents: one question per linked page
    nav.py DOCS_FOLDER       every markdown page's title (front matter `title`, else its first
                             `# ` heading), for sites whose nav lists pages by their titles

Writes JSONL in the golden format to stdout; paths are relative to the summary's folder or the
docs folder. The sets are made, not written: nothing here is chosen by looking at results.
"""
import json
import os
import re
import sys

LINK = re.compile(r"^\s*(?:[-*]\s+)?\[([^\]]+)\]\(([^)]*)\)")
ATTRS = re.compile(r"\s*\{[^}]*\}\s*$")


def clean(title):
    title = ATTRS.sub("", title)  # MkDocs attribute lists: "# First Steps { #first-steps }"
    title = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", title)  # links keep their text
    title = re.sub(r"[`*_]", "", title)
    return " ".join(title.split()).lower()


def from_summary(path):
    for line in open(path, encoding="utf-8"):
        m = LINK.match(line)
        if not m or not m.group(2).strip():
            continue  # a heading, a separator or a draft chapter without a page
        target = m.group(2).split("#")[0].strip()
        if target.endswith(".md"):
            yield clean(m.group(1)), target


def page_title(path):
    text = open(path, encoding="utf-8", errors="replace").read()
    if text.startswith("---\n"):
        end = text.find("\n---", 4)
        for line in text[4:end].splitlines() if end > 0 else []:
            if line.startswith("title:"):
                return line[6:].strip().strip("\"'")
        text = text[end + 4 :] if end > 0 else text
    for line in text.splitlines():
        if line.startswith("# "):
            return line[2:]
    return None


def from_folder(root):
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            if not name.endswith(".md"):
                continue
            path = os.path.join(folder, name)
            title = page_title(path)
            if title:
                yield clean(title), os.path.relpath(path, root)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    source = sys.argv[1]
    entries = from_folder(source) if os.path.isdir(source) else from_summary(source)
    seen = set()
    n = 0
    for title, path in entries:
        if not title or path in seen:
            continue
        seen.add(path)
        n += 1
        q = {"id": f"nav-{n:03}", "type": "navigational", "query": title, "expected": [path]}
        print(json.dumps(q))


if __name__ == "__main__":
    main()
