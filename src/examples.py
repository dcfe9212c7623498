"""Print a few decoded (x, y) examples of a dataset: what the model is trained on.

  python src/examples.py charcorruption      # span-corruption pretraining examples (part e)
  python src/examples.py namedata            # birthplace finetuning examples

The handout's `python dataset.py charcorruption`, run in src/submission/, does the same.
"""

import argparse
import sys
from pathlib import Path

from kit import course, parts
from submission.dataset import CharCorruptionDataset, NameDataset

SRC = Path(__file__).resolve().parent


def main(argv=None):
    data_dir = SRC / "data"
    parser = argparse.ArgumentParser(description="Print a few decoded (x, y) examples of a dataset.")
    parser.add_argument("dataset_type", choices=["namedata", "charcorruption"])
    parser.add_argument("--pretrain_corpus_path", default=str(data_dir / course.DATA_FILES["corpus"]))
    parser.add_argument("--finetune_corpus_path", default=str(data_dir / course.DATA_FILES["train"]))
    parser.add_argument("--block_size", type=int, default=course.MODEL["block_size"])
    parser.add_argument("-n", type=int, default=4, help="how many examples (default 4)")
    args = parser.parse_args(argv)
    paths = [args.pretrain_corpus_path] + ([args.finetune_corpus_path] if args.dataset_type == "namedata" else [])
    for path in paths:
        if not Path(path).is_file():
            parser.error(f"data file {path} not found; pass its path with --pretrain_corpus_path or "
                         "--finetune_corpus_path")
    corpus = CharCorruptionDataset(Path(args.pretrain_corpus_path).read_text(encoding="utf-8"), args.block_size)
    if args.dataset_type == "namedata":
        data = NameDataset(Path(args.finetune_corpus_path).read_text(encoding="utf-8"), corpus)
    else:
        data = corpus
        try:
            parts.check_corruption(corpus)
        except parts.NotImplementedPart as e:
            sys.exit(f"error: {e}")
    for _, (x, y) in zip(range(args.n), data):
        print("x:", "".join(corpus.itos[int(i)] for i in x))
        print("y:", "".join(corpus.itos[int(i)] for i in y))
        print()


if __name__ == "__main__":
    main()
