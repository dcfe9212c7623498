"""Zip the handout's deliverables into submission.zip (at the repository root) and list what is missing.

  ./run.sh collect_submission          # python src/collect_submission.py --submission_dir src/submission

The handout asks for 18 files from src/submission/, uploaded "without directory structure": the seven
code files, the six prediction files and the five parameter files that run.sh writes.  The zip is flat
(every file at its top level), which is also what Gradescope unpacks.  The written part's code,
attention_exploration.py, goes in too when it is there (its checks are the extra credit).
"""

import argparse
import sys
import zipfile
from pathlib import Path

from kit import upload  # the graders' rule for which file of an upload is graded
from kit.course import CODE_FILES, DELIVERABLES, OPTIONAL_FILES
from kit.fileio import atomic_path

ROOT = Path(__file__).resolve().parents[1]
SUBMISSION = ROOT / "src" / "submission"


class Misread(Exception):
    """The zip as written is not what the graders would read from it."""


def deliverables(submission_dir=SUBMISSION):
    """(present, missing): paths of the files to zip, names of the required deliverables that are absent."""
    submission_dir = Path(submission_dir)
    present, missing = [], []
    for name in DELIVERABLES:
        path = submission_dir / name
        if path.is_file():
            present.append(path)
        else:
            missing.append(name)
    present += [submission_dir / n for n in OPTIONAL_FILES if (submission_dir / n).is_file()]
    return present, missing


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--submission_dir", default=str(SUBMISSION), help="where the deliverables are")
    p.add_argument("--out", default=str(ROOT / "submission.zip"))
    args = p.parse_args(argv)
    out, submission_dir = Path(args.out), Path(args.submission_dir)
    if not submission_dir.is_dir():
        print(f"error: {submission_dir} is not a folder; pass the folder that holds your deliverables", file=sys.stderr)
        return 2
    if out.is_dir():
        print(f"error: --out {out} is a directory; pass a file name such as {out / 'submission.zip'}", file=sys.stderr)
        return 2
    present, missing = deliverables(submission_dir)
    if not present:  # a mistyped folder: never replace a zip with an empty one
        print(f"error: {submission_dir} holds none of the {len(DELIVERABLES)} deliverables; pass the folder that "
              "holds them (./run.sh: OUT_DIR)", file=sys.stderr)
        return 2
    try:
        with atomic_path(out) as tmp:  # a failed run never leaves half a zip behind
            with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
                for path in present:
                    zf.write(path, path.name)  # flat: no folder inside the zip
            with upload.Upload(tmp) as up:  # read back as Gradescope and grade_class read an upload
                choice = up.choose(upload.deliverable_names(CODE_FILES + OPTIONAL_FILES))
            if sorted(choice.chosen) != sorted(p.name for p in present) or choice.notes:
                raise Misread(choice.notes or sorted(choice.chosen))
    except Misread as e:
        print(f"error: the graders would not read {out.name} as written ({e}); please report this", file=sys.stderr)
        return 1
    found = len(DELIVERABLES) - len(missing)
    print(f"wrote {out}: {found} of the {len(DELIVERABLES)} deliverables"
          + (f", plus {', '.join(p.name for p in present[found:])}" if len(present) > found else ""))
    if missing:
        print(f"missing {len(missing)} (run the run.sh target that writes each, then collect again):")
        for name in missing:
            print(f"  {submission_dir / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
