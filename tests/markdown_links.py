"""Markdown's headings and relative links as GitHub reads them: the one reading that the docs' link test
(tests/tools/test_doc_links.py) and the starter's reference test (tests/tools/test_release.py) share."""

import re

# the target of [text](target) and ![alt](target), with an optional "title" after it
LINK = re.compile(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"#{1,6}\s+(.+?)\s*#*\s*$")
WEB = ("http://", "https://", "mailto:")


def headings(markdown):
    """The headings of a Markdown text, as written, outside its fenced code blocks (a "# comment" there is none)."""
    found, fenced = [], False
    for line in markdown.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        match = None if fenced else HEADING.match(line)
        if match:
            found.append(match.group(1))
    return found


def slug(heading):
    """GitHub's anchor of a heading: lower case, link syntax read as its text, every character but letters,
    digits, spaces, hyphens and underscores dropped, each space a hyphen (`## The pretraining check's layouts`:
    the-pretraining-checks-layouts)."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(markdown):
    """Every heading's anchor, a repeated one with -1, -2, ... after its first, as GitHub numbers them."""
    seen, out = {}, set()
    for heading in headings(markdown):
        base = slug(heading)
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def broken_links(text, base, root):
    """(line number, what is wrong) of each relative link of a Markdown text that leads nowhere: its file (a path
    from the folder base) missing, or its #anchor no heading of that file (of text itself for a bare #anchor).
    Links are read anywhere in the text, code included: one a reader is shown must lead somewhere.  Web links
    (WEB) are not followed.  root: what the messages' paths are relative to."""
    bad, read = [], {}
    for m in LINK.finditer(text):
        target = m.group(1)
        if target.startswith(WEB):
            continue
        path, _, fragment = target.partition("#")
        linked = base / path
        line = text.count("\n", 0, m.start()) + 1
        if path and not linked.exists():
            bad.append((line, f"[...]({target}): no {linked.relative_to(root).as_posix()}"))
        elif fragment:
            key = linked if path else None
            if key not in read:
                read[key] = anchors(linked.read_text(encoding="utf-8") if path else text)
            if fragment not in read[key]:
                bad.append((line, f"[...]({target}): no heading with that anchor"))
    return bad
