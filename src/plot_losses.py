"""Draw the loss curves that training runs log beside their params (<params>.log.csv) into one PNG.

    python src/plot_losses.py src/submission/vanilla.pretrain.params.log.csv [MORE.csv ...] [--out losses.png]

Each file is one curve (loss against optimisation step), labelled by its file name; the learning rate goes on
a second, smaller panel, so a warmup or a decay that went wrong is visible next to the loss it caused.  It can
run while training is still going: the log gets a row after every step.  matplotlib is optional for the
kit, so without it this says what to install and exits with status 2.
"""

import argparse
import csv
import sys
from pathlib import Path

from kit.fileio import atomic_path


def fail(message):
    print(f"error: {message}", file=sys.stderr)
    sys.exit(2)


def read_curve(path):
    """(steps, losses, lrs) of one log; a file that is missing or not a loss log is the user's error."""
    if not path.is_file():
        fail(f"{path} does not exist; training writes <writing_params_path>.log.csv")
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        if not reader.fieldnames or not {"step", "loss", "lr"} <= set(reader.fieldnames):
            fail(f"{path} is not a loss log (it needs the columns step, loss and lr)")
        try:
            rows = [(int(r["step"]), float(r["loss"]), float(r["lr"])) for r in reader]
        except (TypeError, ValueError):
            fail(f"{path} has a malformed row; was it cut off or edited?")
    if not rows:
        fail(f"{path} has no rows yet; wait for the first training step")
    steps, losses, lrs = zip(*rows)
    return steps, losses, lrs


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("logs", nargs="+", type=Path, help="loss logs written by training (*.log.csv)")
    p.add_argument("--out", type=Path, default=Path("losses.png"), help="the PNG to write (default losses.png)")
    args = p.parse_args(argv)
    curves = [(path.name.removesuffix(".log.csv"), read_curve(path)) for path in args.logs]
    try:
        import matplotlib
    except ImportError:
        fail("plotting needs matplotlib: pip install matplotlib")
    matplotlib.use("Agg")  # files only, no window: this also runs on a headless VM
    import matplotlib.pyplot as plt

    fig, (ax, ax_lr) = plt.subplots(2, 1, figsize=(8, 6), sharex=True, gridspec_kw=dict(height_ratios=[3, 1]))
    for name, (steps, losses, lrs) in curves:
        ax.plot(steps, losses, label=name, linewidth=0.8)
        ax_lr.plot(steps, lrs, linewidth=0.8)
    ax.set_ylabel("training loss")
    ax.legend()
    ax_lr.set_ylabel("learning rate")
    ax_lr.set_xlabel("step")
    fig.tight_layout()
    # an interrupted plot never leaves half a PNG over a good one
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(args.out) as tmp:
        fig.savefig(tmp, dpi=120)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
