"""The most-common-place baseline: answer every question with the training set's most frequent
birthplace ("London" on the course data) and report its accuracy on an evaluation set.

  python src/london_baseline.py --train src/data/birth_places_train.tsv --eval src/data/birth_dev.tsv
"""

import argparse
import sys
from collections import Counter
from pathlib import Path

from kit.decoding import read_questions
from kit.fileio import read_tsv
from submission.utils import evaluate_places

SRC = Path(__file__).resolve().parent


def most_common_place(train_path):
    places = [row[1] for row in read_tsv(train_path) if len(row) > 1]
    if not places:
        raise ValueError(f"{train_path} has no question<TAB>place lines")
    # ties go to the place seen first, so the answer does not depend on hashing
    return Counter(places).most_common(1)[0][0]


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
