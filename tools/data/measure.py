#!/usr/bin/env python3
"""Measure a birth-place data set (ours or the course's) the same way.

    python tools/data/measure.py                     # our files in src/data/
    python tools/data/measure.py DIR [DIR ...]       # any folders with the five files
    python tools/data/measure.py --markdown src/data ../shared/course-data

Definitions (all computed identically for every folder):
  answer_in_line      share of dev people whose answer occurs in their own wiki line
  answer_in_window    ... and the first occurrence ends within the first 96 characters, the longest
                      text span corruption keeps at the course's block size (int(128 * 3/4))
  top_dev_share       share of dev answers equal to the most common dev answer
  dev_answers_in_train share of dev answers that are some train answer
  vocab               distinct characters in wiki.txt (newline included)
"""
from __future__ import annotations

import argparse
import statistics
import sys
from collections import Counter
from pathlib import Path

import generate  # the questions' wordings (this folder is on the path when either script runs)

WINDOW = 96  # int(128 * 3/4): the longest truncation of a line in pretraining
# (start, end) of each style's question around the name
WORDINGS = [tuple(q.split("{}")) for q in generate.QUESTIONS.values()]


def read_lines(path: Path) -> list[str]:
    return [l for l in path.read_text(encoding="utf-8").split("\n") if l]


def read_qa(path: Path) -> list[tuple[str, str]]:
    out = []
    for line in read_lines(path):
        q, _, a = line.partition("\t")
        names = [q[len(start):len(q) - len(end)] for start, end in WORDINGS
                 if len(q) > len(start) + len(end) and q.startswith(start) and q.endswith(end)]
        if not names:
            raise ValueError(f"{path.name}: not a question: {line!r}")
        out.append((names[0], a))
    return out


def load(folder: Path) -> dict:
    folder = Path(folder)
    wiki = read_lines(folder / "wiki.txt")
    return dict(
        wiki=wiki,
        text=(folder / "wiki.txt").read_text(encoding="utf-8"),
        train=read_qa(folder / "birth_places_train.tsv"),
        dev=read_qa(folder / "birth_dev.tsv"),
        test=read_qa(folder / "birth_test.tsv"),
        test_inputs=[q for q, _ in read_qa(folder / "birth_test_inputs.tsv")],
    )


def line_by_name(wiki: list[str]) -> dict[str, str]:
    """First wiki line for each name (the course has a few repeated names)."""
    out: dict[str, str] = {}
    for line in wiki:
        out.setdefault(line.split(". ", 1)[0], line)
    return out


def measure(data: dict) -> dict:
    wiki, train, dev, test = data["wiki"], data["train"], data["dev"], data["test"]
    lines = line_by_name(wiki)
    lengths = [len(l) for l in wiki]

    def found(name, ans):
        return lines.get(name, "").find(ans)

    in_line = [found(n, a) >= 0 for n, a in dev]
    in_window = [0 <= found(n, a) and found(n, a) + len(a) <= WINDOW for n, a in dev]
    dev_counts = Counter(a for _, a in dev)
    train_counts = Counter(a for _, a in train)
    top_dev, top_dev_n = dev_counts.most_common(1)[0]
    top_train, top_train_n = train_counts.most_common(1)[0]
    names = [l.split(". ", 1)[0] for l in wiki]
    train_answers = set(train_counts)
    all_answers = [a for _, a in train + dev + test]
    qs = lambda split: {n for n, _ in split}
    return dict(
        people=len(wiki),
        train=len(train), dev=len(dev), test=len(test),
        median_len=statistics.median(lengths),
        max_len=max(lengths),
        vocab=len(set(data["text"])),
        answer_in_line=sum(in_line) / len(dev),
        answer_in_window=sum(in_window) / len(dev),
        distinct_train_answers=len(train_counts),
        top_dev_answer=top_dev,
        top_dev_share=top_dev_n / len(dev),
        top_train_answer=top_train,
        top_train_share=top_train_n / len(train),
        top10_train_share=sum(c for _, c in train_counts.most_common(10)) / len(train),
        dev_answers_in_train=sum(a in train_answers for _, a in dev) / len(dev),
        non_ascii_names=sum(not n.isascii() for n in names) / len(names),
        two_part_names=sum(len(n.split()) == 2 for n in names) / len(names),
        median_name_len=statistics.median(len(n) for n in names),
        repeated_names=len(names) - len(set(names)),
        people_in_two_splits=(len(qs(train) & qs(dev)) + len(qs(train) & qs(test))
                              + len(qs(dev) & qs(test))),
        multiword_answers=sum(" " in a for a in all_answers) / len(all_answers),
        non_ascii_answers=sum(not a.isascii() for a in all_answers),
    )


ROWS = [
    ("people", "people (wiki lines)", "{:,}"),
    ("train", "train / dev / test", None),
    ("median_len", "median wiki line length (chars)", "{:g}"),
    ("max_len", "longest wiki line (chars)", "{:,}"),
    ("vocab", "distinct characters in wiki.txt", "{}"),
    ("answer_in_line", "dev answer in own wiki line", "{:.1%}"),
    ("answer_in_window", "... within the first 96 characters", "{:.1%}"),
    ("distinct_train_answers", "distinct train answers", "{:,}"),
    ("top_dev_share", "most common dev answer", None),
    ("top_train_share", "most common train answer", None),
    ("top10_train_share", "ten most common train answers", "{:.1%}"),
    ("dev_answers_in_train", "dev answers that are some train answer", "{:.1%}"),
    ("non_ascii_names", "names with non-ASCII letters", "{:.1%}"),
    ("two_part_names", "two-part names", "{:.1%}"),
    ("median_name_len", "median name length (chars)", "{:g}"),
    ("repeated_names", "repeated names", "{}"),
    ("people_in_two_splits", "people in two splits", "{}"),
    ("multiword_answers", "answers with a space", "{:.1%}"),
]


def cell(stats: dict, key: str, fmt: str | None) -> str:
    if key == "train":
        return f"{stats['train']:,} / {stats['dev']} / {stats['test']}"
    if key == "top_dev_share":
        return f"{stats['top_dev_answer']} {stats['top_dev_share']:.1%}"
    if key == "top_train_share":
        return f"{stats['top_train_answer']} {stats['top_train_share']:.1%}"
    return fmt.format(stats[key])


def table(columns: list[tuple[str, dict]]) -> str:
    head = "| statistic | " + " | ".join(n for n, _ in columns) + " |"
    sep = "|---|" + "---|" * len(columns)
    body = [f"| {label} | " + " | ".join(cell(s, key, fmt) for _, s in columns) + " |"
            for key, label, fmt in ROWS]
    return "\n".join([head, sep] + body)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Measure birth-place data sets.")
    ap.add_argument("folders", nargs="*", type=Path,
                    default=[Path(__file__).resolve().parents[2] / "src" / "data"])
    ap.add_argument("--markdown", action="store_true", help="print one markdown table")
    args = ap.parse_args(argv)
    cols = [(str(f), measure(load(f))) for f in args.folders]
    if args.markdown:
        print(table(cols))
    else:
        for name, s in cols:
            print(name)
            for k, v in s.items():
                print(f"  {k:24} {v:.4f}" if isinstance(v, float) else f"  {k:24} {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
