"""Datasets: span-corruption pretraining (CharCorruptionDataset) and birthplace finetuning (NameDataset).

Both are character level and share one vocabulary, always built from the pretraining corpus:
id 0 is PAD_CHAR, id 1 is MASK_CHAR, ids 2.. are the sorted distinct characters of the corpus.
Every line is encoded to ids once, when the dataset is built, so __getitem__ only slices tensors.

Run `python dataset.py charcorruption` (or `namedata`) in src/submission/ to print a few examples.
"""

import random
import sys
from pathlib import Path

import torch
from torch.utils.data import Dataset

PAD_CHAR = "\u25A1"  # □, fills a sequence up to block_size
MASK_CHAR = "\u2047"  # ⁇, marks the corrupted span (and separates question from answer)


class CharCorruptionDataset(Dataset):
    """Span-corruption pretraining data: one example per line of the corpus.

    Attributes: PAD_CHAR, MASK_CHAR, stoi (char -> id), itos (id -> char), vocab_size, block_size,
    data (the non-empty lines, as text), encoded (the same lines as LongTensors of ids),
    pad_id (0) and mask_id (1); max_context_size (int(block_size * 3/4), the longest truncation) and
    masking_percent (0.25, the masked span's average share of the truncated text), the spec's two numbers,
    for __getitem__ to use if you like.
    """

    PAD_CHAR = PAD_CHAR
    MASK_CHAR = MASK_CHAR

    def __init__(self, data, block_size):
        chars = sorted(set(data))
        for special in (self.PAD_CHAR, self.MASK_CHAR):
            if special in chars:
                raise ValueError(f"the pretraining corpus contains the reserved character {special!r}; remove it")
        chars = [self.PAD_CHAR, self.MASK_CHAR] + chars
        self.stoi = {ch: i for i, ch in enumerate(chars)}
        self.itos = {i: ch for i, ch in enumerate(chars)}
        self.pad_id = self.stoi[self.PAD_CHAR]
        self.mask_id = self.stoi[self.MASK_CHAR]
        self.vocab_size = len(chars)
        self.block_size = block_size
        self.max_context_size = int(block_size * 3 / 4)
        self.masking_percent = 0.25
        self.data = [line for line in data.split("\n") if line]
        self.encoded = [self.encode(line) for line in self.data]

    def encode(self, text):
        """Text -> LongTensor of ids; a character outside the vocabulary is a clear error."""
        try:
            return torch.tensor([self.stoi[c] for c in text], dtype=torch.long)
        except KeyError as e:
            raise ValueError(
                f"character {e.args[0]!r} in {text[:60]!r} is not in the vocabulary built from the pretraining "
                "corpus; pass the corpus the model is pretrained on with --pretrain_corpus_path"
            ) from None

    def decode(self, ids):
        return "".join(self.itos[int(i)] for i in ids)

    def __len__(self):
        return len(self.data)

    def __getitem__(self, idx):
        """Return (x, y), two LongTensors of length block_size - 1, built from line idx.

        1. Truncate: keep the first n characters of the line, n drawn at random from
           4 .. int(block_size * 3/4) (both ends included, every length possible); a line shorter than
           n stays whole.
        2. Split the truncated text into three consecutive pieces, prefix, masked_content and suffix.
           The length of masked_content is random and varies between examples, 1/4 of the truncated
           length on average; where it starts is up to you (random is usual; prefix or suffix may be empty).
        3. Rearrange:  masked_string = prefix + MASK_CHAR + suffix + MASK_CHAR + masked_content + MASK_CHAR,
           then append PAD_CHAR until masked_string has exactly block_size characters.
        4. x is masked_string without its last character and y without its first, so y[i] is the
           character that follows x[i]; both are returned as ids.

        Example, block_size 16: "Anna was born in Oslo" truncated to 12 characters is "Anna was bor";
        with the masked span "was":
            masked_string = "Anna ⁇ bor⁇was⁇□",   x = "Anna ⁇ bor⁇was⁇",   y = "nna ⁇ bor⁇was⁇□"

        Any random generator will do (random, numpy or torch: utils.set_seed seeds all three).
        self.encoded[idx] is the line already encoded as ids (no per-character lookups needed here);
        self.pad_id and self.mask_id are the ids of PAD_CHAR and MASK_CHAR.
        """
        x, y = None, None
        ### TODO: [part e]
        ### START CODE HERE ###
        line = self.encoded[idx]
        doc = line[: random.randint(4, self.max_context_size)]
        n = len(doc)
        masked_len = random.randint(1, max(1, n // 2))  # mean (1 + n/2) / 2, about n/4
        start = random.randint(0, n - masked_len)
        prefix, masked, suffix = doc[:start], doc[start : start + masked_len], doc[start + masked_len :]
        mask = torch.tensor([self.mask_id])
        s = torch.cat([prefix, mask, suffix, mask, masked, mask])
        s = torch.cat([s, torch.full((self.block_size - len(s),), self.pad_id)])
        x, y = s[:-1], s[1:]
        ### END CODE HERE ###
        return x, y


class NameDataset(Dataset):
    """Birthplace finetuning data: one example per line `question<TAB>place`.

    Non-ASCII characters are dropped from the text first (as the course does).  Each line becomes
        x = question + MASK_CHAR + place + MASK_CHAR + PAD_CHAR...   (length block_size - 1)
        y = PAD over the question, then the characters that follow  (so only the answer is scored)
    using the vocabulary of the pretraining dataset: NameDataset(data, pretraining_dataset), data being the
    text of the TSV file.
    """

    def __init__(self, data, pretraining_dataset):
        self.MASK_CHAR = pretraining_dataset.MASK_CHAR
        self.PAD_CHAR = pretraining_dataset.PAD_CHAR
        self.itos = pretraining_dataset.itos
        self.stoi = pretraining_dataset.stoi
        self.block_size = pretraining_dataset.block_size
        text = data.encode("utf-8").decode("ascii", errors="ignore")
        self.data = [line.rstrip("\r") for line in text.split("\n") if line.strip()]
        self.examples = [self._build(i, line, pretraining_dataset) for i, line in enumerate(self.data)]

    def _build(self, i, line, vocab):
        fields = line.split("\t")
        if len(fields) != 2 or not fields[0] or not fields[1]:
            raise ValueError(f"finetuning line {i + 1} is not 'question<TAB>place': {line[:80]!r}")
        inp, oup = fields
        x = inp + self.MASK_CHAR + oup + self.MASK_CHAR
        if len(x) > self.block_size:
            raise ValueError(f"finetuning line {i + 1} is longer than the block size {self.block_size}: {line[:80]!r}")
        x = x + self.PAD_CHAR * (self.block_size - len(x))
        y = self.PAD_CHAR * (len(inp) - 1) + x[len(inp) :]
        return vocab.encode(x[:-1]), vocab.encode(y)

    def __len__(self):
        return len(self.examples)

    def __getitem__(self, idx):
        return self.examples[idx]


if __name__ == "__main__":
    # The handout's `python dataset.py charcorruption` (or namedata): print a few examples.  The printer is
    # src/examples.py, next to run.py; this file only holds the datasets.
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import examples

    examples.main()
