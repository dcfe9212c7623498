"""The course's facts, written once: the model the handout trains, the perceiver's bottleneck, the answer
length of the evaluation, the data files, the run.sh targets with the files each reads and writes, and the
18 files the handout asks students to hand in.

run.py, collect_submission.py, the grader, the demo and the instructor's tools import these; run.sh is bash,
so a test of the instructor's suite checks that its targets say the same.
The hyperparameters of training are not here: they are the student's to write (helper.py lists them).
"""

from typing import NamedTuple

# The handout's model: 4 layers, 8 heads, width 256, a context of 128 characters.
MODEL = dict(n_layer=4, n_head=8, n_embd=256, block_size=128)
BOTTLENECK_DIM = 32  # the perceiver's m: the length of the basis C (helper.initialize_perceiver_model's default)
PRETRAIN_LR, FINETUNE_LR = 6e-3, 6e-4  # run.py's --pretrain_lr / --finetune_lr (pretrain's and finetune's defaults)
ANSWER_CHARS = 32  # characters the evaluation decodes after "question⁇" (the course's sample(..., 32))
# The dataset's two special characters (dataset.py's PAD_CHAR and MASK_CHAR): ids 0 and 1 of the vocabulary.
PAD_CHAR, MASK_CHAR = "\u25A1", "\u2047"

# The data folder's files (src/data/ or DATA_DIR).  The test set's answers are held out: only the grader
# knows where they are.
DATA_FILES = {
    "corpus": "wiki.txt",
    "train": "birth_places_train.tsv",
    "dev": "birth_dev.tsv",
    "test": "birth_test_inputs.tsv",
}


class Target(NamedTuple):
    """One of the handout's run.sh targets: run.py --function FUNCTION --variant VARIANT, reading the params
    file READS (written by another target) and the data file DATA, writing the file WRITES."""

    name: str
    function: str  # "pretrain", "finetune" or "evaluate"
    variant: str  # "vanilla" or "perceiver"
    reads: str | None  # a params file, or None
    data: str  # a key of DATA_FILES: what the target reads beside wiki.txt ("corpus": nothing more)
    writes: str  # a params file or a predictions file


def _evals(variant, params, tag):
    return [Target(f"{variant}_eval_{split}_{tag}", "evaluate", variant, params, split,
                   f"{variant}.{'nopretrain' if tag == 'without_pretrain' else 'pretrain'}.{split}.predictions")
            for split in ("dev", "test")]


# In the handout's order.
TARGETS = [
    Target("vanilla_finetune_without_pretrain", "finetune", "vanilla", None, "train", "vanilla.model.params"),
    *_evals("vanilla", "vanilla.model.params", "without_pretrain"),
    Target("vanilla_pretrain", "pretrain", "vanilla", None, "corpus", "vanilla.pretrain.params"),
    Target("vanilla_finetune_with_pretrain", "finetune", "vanilla", "vanilla.pretrain.params", "train",
           "vanilla.finetune.params"),
    *_evals("vanilla", "vanilla.finetune.params", "with_pretrain"),
    Target("perceiver_pretrain", "pretrain", "perceiver", None, "corpus", "perceiver.pretrain.params"),
    Target("perceiver_finetune_with_pretrain", "finetune", "perceiver", "perceiver.pretrain.params", "train",
           "perceiver.finetune.params"),
    *_evals("perceiver", "perceiver.finetune.params", "with_pretrain"),
]
TARGET = {t.name: t for t in TARGETS}
WRITTEN_BY = {t.writes: t for t in TARGETS}  # output file -> the target that writes it

# The handout's deliverables, uploaded "without directory structure".
CODE_FILES = ["__init__.py", "attention.py", "dataset.py", "helper.py", "model.py", "trainer.py", "utils.py"]
PREDICTION_FILES = [t.writes for t in TARGETS if t.function == "evaluate"]
PARAMS_FILES = [t.writes for t in TARGETS if t.function != "evaluate"]
DELIVERABLES = CODE_FILES + PREDICTION_FILES + PARAMS_FILES
OPTIONAL_FILES = ["attention_exploration.py"]  # the written part (extra credit), handed in when written
