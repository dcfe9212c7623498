"""Zip the handout's deliverables into submission.zip (at the repository root) and list what is missing.

Deliverables: the Python files of src/submission/ and the six prediction files written by run.sh.
"""

import argparse
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUBMISSION = ROOT / "src" / "submission"

PREDICTION_FILES = [
    "vanilla.nopretrain.dev.predictions",
    "vanilla.nopretrain.test.predictions",
    "vanilla.pretrain.dev.predictions",
    "vanilla.pretrain.test.predictions",
    "perceiver.pretrain.dev.predictions",
    "perceiver.pretrain.test.predictions",
]


def deliverables(submission_dir=SUBMISSION):
    """(present, missing): paths of the deliverables that exist, names of those that do not."""
    present = sorted(p for p in submission_dir.glob("*.py"))
    missing = []
    for name in PREDICTION_FILES:
        path = submission_dir / name
        (present if path.is_file() else missing).append(path if path.is_file() else name)
    return present, missing


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--submission_dir", default=str(SUBMISSION), help="where the deliverables are")
    p.add_argument("--out", default=str(ROOT / "submission.zip"))
    args = p.parse_args(argv)
    out, submission_dir = Path(args.out), Path(args.submission_dir)
    if not submission_dir.is_dir():
        print(f"error: {submission_dir} is not a folder", file=sys.stderr)
        return 2
    present, missing = deliverables(submission_dir)
    tmp = out.with_suffix(".zip.tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in present:
            zf.write(path, f"submission/{path.name}")
    tmp.replace(out)
    print(f"wrote {out} with {len(present)} files")
    if missing:
        print("missing (run the run.sh target that writes each):")
        for name in missing:
            print(f"  {submission_dir / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
