"""The most-common-place baseline: answer every question with the training set's most frequent
birthplace ("London" on the course data) and report its accuracy on an evaluation set.

  python src/london_baseline.py --train src/data/birth_places_train.tsv --eval src/data/birth_dev.tsv
"""

import argparse
import sys
from pathlib import Path

from kit.baseline import most_common_place
from kit.decoding import read_questions
from submission.utils import evaluate_places

SRC = Path(__file__).resolve().parent


def main(argv=None):
    data = SRC / "data"
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--train", default=str(data / "birth_places_train.tsv"))
    p.add_argument("--eval", default=str(data / "birth_dev.tsv"))
    args = p.parse_args(argv)
    for path in (args.train, args.eval):
        if not Path(path).is_file():
            print(f"error: {path} does not exist; pass the right path with --train / --eval", file=sys.stderr)
            return 2
    place = most_common_place(args.train)
    predictions = [place] * len(read_questions(args.eval))
    total, correct = evaluate_places(args.eval, predictions)
    if total == 0:
        return 0
    print(f"Most common training birthplace: {place}")
    print(f"Correct: {correct:.0f} out of {total:.0f}: {correct / total * 100:.2f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
