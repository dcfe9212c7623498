"""The docs' relative links: every `[text](path)` and `[text](path#anchor)` in the tracked Markdown files (tests/
aside) names a file that exists, and an #anchor names one of that file's headings, as GitHub spells the heading's
anchor (tests/markdown_links.py reads them, as the starter's reference test does).  Links to the web (http, https,
mailto) are not followed."""

from conftest import ROOT
import markdown_links

import release


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
    """file:line: what is wrong, of each relative link of documents() that leads nowhere."""
    return [f"{name}:{line}: {what}" for name, text, base in documents()
            for line, what in markdown_links.broken_links(text, base, ROOT)]


def test_every_relative_link_in_the_docs_names_a_file_and_a_heading_that_exist():
    broken = broken_links()
    assert not broken, "\n".join(broken)


def test_a_heading_s_anchor_is_github_s():
    text = ("# A\n## The pretraining check's layouts\n```\n# not a heading\n```\n"
            "## GPU\n## GPU\n### `auto` (bf16), 2–3 s")
    assert markdown_links.anchors(text) == {"a", "the-pretraining-checks-layouts", "gpu", "gpu-1", "auto-bf16-23-s"}
