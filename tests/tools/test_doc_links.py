"""The docs' relative links: every `[text](path)` and `[text](path#anchor)` in the tracked Markdown files (tests/
aside) names a file that exists, and an #anchor into a Markdown file names one of its headings, as GitHub spells
the heading's anchor.  Links to the web (http, https, mailto) and links inside fenced code blocks are not read."""

import re

from conftest import ROOT

import release

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")
WEB = ("http://", "https://", "mailto:")


def prose_lines(text):
    """(number, line) of a Markdown text's lines outside its fenced code blocks, inline code spans blanked."""
    fenced = False
    for n, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced:
            yield n, re.sub(r"`[^`]*`", "``", line)


def slug(heading):
    """GitHub's anchor of a heading: lower case, link syntax read as its text, every character but letters,
    digits, spaces, hyphens and underscores dropped, each space a hyphen (`## The pretraining check's layouts`:
    the-pretraining-checks-layouts)."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(text):
    """Every heading's anchor, a repeated one with -1, -2, ... after its first."""
    seen, out = {}, set()
    fenced = False
    for line in text.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        m = None if fenced else HEADING.match(line)
        if m:
            base = slug(m.group(1))
            n = seen.get(base, 0)
            seen[base] = n + 1
            out.add(base if n == 0 else f"{base}-{n}")
    return out


def documents():
    """(name, text, the folder its links start from) of each tracked Markdown file outside tests/.  The student's
    README (tools/STUDENT_README.md) is read as the release writes it, its include lines filled in, at the
    starter's top, which is this repository's."""
    for rel in release.tracked_files():
        if not rel.endswith(".md") or rel.startswith("tests/"):
            continue
        if rel == "tools/STUDENT_README.md":
            yield rel, release.student_readme(), ROOT
        else:
            path = ROOT / rel
            yield rel, path.read_text(encoding="utf-8"), path.parent


def broken_links():
    read, broken = {}, []
    for name, text, base in documents():
        for n, line in prose_lines(text):
            for m in LINK.finditer(line):
                target = m.group(1)
                if target.startswith(WEB):
                    continue
                path, _, anchor = target.partition("#")
                file = (base / path).resolve()
                if path and not file.exists():
                    broken.append(f"{name}:{n}: {target} (no such file)")
                elif anchor and (not path or file.suffix == ".md"):
                    if path and file not in read:
                        read[file] = anchors(file.read_text(encoding="utf-8"))
                    if anchor not in (read[file] if path else anchors(text)):
                        broken.append(f"{name}:{n}: {target} (no heading has that anchor)")
    return broken


def test_every_relative_link_in_the_docs_names_a_file_and_a_heading_that_exist():
    broken = broken_links()
    assert not broken, "\n".join(broken)


def test_a_heading_s_anchor_is_github_s():
    text = ("# A\n## The pretraining check's layouts\n```\n# not a heading\n```\n"
            "## GPU\n## GPU\n### `auto` (bf16), 2–3 s")
    assert anchors(text) == {"a", "the-pretraining-checks-layouts", "gpu", "gpu-1", "auto-bf16-23-s"}
