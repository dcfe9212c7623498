"""The course-style baselines tools/bench/bench.py measures the project against: datasets that look up every
character in a dictionary on each access (the same examples as the project's), and the course's training loop
(CourseStyleTrainer).  tests/tools/test_bench.py checks that they give the project's examples and parameters.

Imported by bench.py after it has put src/ on sys.path (tools/srcpath.py).
"""

import math
import random

import torch
from torch.utils.data import DataLoader, Dataset


# ----------------------------------------------------------------------------------------- data


class CourseStyle(Dataset):
    """The course's way of serving a project dataset's lines: build strings, then look every character
    up in a dictionary on each access."""

    def __init__(self, fast):
        self.data, self.stoi, self.block_size = fast.data, fast.stoi, fast.block_size
        self.MASK_CHAR, self.PAD_CHAR = fast.MASK_CHAR, fast.PAD_CHAR

    def __len__(self):
        return len(self.data)

    def ids(self, s):
        return torch.tensor([self.stoi[c] for c in s], dtype=torch.long)


class CourseCharCorruption(CourseStyle):
    """Course-style span corruption.  Draws the same random numbers as CharCorruptionDataset, so it
    yields the same examples."""

    def __getitem__(self, idx):
        doc = self.data[idx][: random.randint(4, int(self.block_size * 3 / 4))]
        n = len(doc)
        masked_len = random.randint(1, max(1, n // 2))
        start = random.randint(0, n - masked_len)
        s = (doc[:start] + self.MASK_CHAR + doc[start + masked_len:] + self.MASK_CHAR
             + doc[start:start + masked_len] + self.MASK_CHAR)
        s = s + self.PAD_CHAR * (self.block_size - len(s))
        return self.ids(s[:-1]), self.ids(s[1:])


class CourseNameDataset(CourseStyle):
    """Course-style birthplace data (the same examples as NameDataset)."""

    def __getitem__(self, idx):
        inp, oup = self.data[idx].split("\t")
        x = inp + self.MASK_CHAR + oup + self.MASK_CHAR
        x = x + self.PAD_CHAR * (self.block_size - len(x))
        y = self.PAD_CHAR * (len(inp) - 1) + x[len(inp):]
        return self.ids(x[:-1]), self.ids(y)


# ----------------------------------------------------------------------------------------- training


def course_optimizer(model, config):
    """The course's AdamW, written here from the course's rule and not imported from the Trainer, so that
    tests/tools/test_bench.py can catch a Trainer that drifted from it: parameters named with "bias" or
    "LayerNorm.weight" are not decayed, every other one is."""
    groups = {True: [], False: []}
    for name, p in model.named_parameters():
        groups["bias" not in name and "LayerNorm.weight" not in name].append(p)
    return torch.optim.AdamW([{"params": groups[True], "weight_decay": config.weight_decay},
                              {"params": groups[False], "weight_decay": 0.0}],
                             lr=config.learning_rate, betas=config.betas)


def course_rate(tokens, config):
    """The course's learning rate once `tokens` tokens were seen (its own formula, like course_optimizer): a
    linear rise over warmup_tokens, then half a cosine from the full rate down to final_tokens, never under a
    tenth of it."""
    if tokens < config.warmup_tokens:
        return config.learning_rate * tokens / max(1, config.warmup_tokens)
    done = (tokens - config.warmup_tokens) / max(1, config.final_tokens - config.warmup_tokens)
    return config.learning_rate * max(0.1, (1 + math.cos(math.pi * done)) / 2)


class CourseStyleTrainer:
    """The course's training loop, step for step, for timing against ours: the full block in fp32
    through whatever attention the model was built with, AdamW with the course's groups
    (course_optimizer), batches in dataset order from a DataLoader whose workers restart every epoch,
    and the learning rate set after each step for the next one (course_rate)."""

    def __init__(self, model, dataset, config, device):
        self.model, self.config, self.device = model.to(device), config, device
        self.optimizer = course_optimizer(model, config)  # the plain (unfused) AdamW
        # not persistent: every pass over it starts its workers again, as the course's new loader per epoch
        self.loader = DataLoader(dataset, batch_size=config.batch_size, num_workers=config.num_workers)
        self.tokens = 0

    def step(self, x, y):
        """One training step on the batch; returns the loss."""
        model, config = self.model, self.config
        x, y = x.to(self.device), y.to(self.device)
        _, loss = model(x, y)
        model.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), config.grad_norm_clip)
        self.optimizer.step()
        if config.lr_decay:
            self.tokens += int((y >= 0).sum())
            for group in self.optimizer.param_groups:
                group["lr"] = course_rate(self.tokens, config)
        return loss.item()
