"""A simple training loop: AdamW, linear warmup then cosine learning-rate decay, gradient clipping.

Nothing here is specific to GPT.  The math is the course's trainer's, step for step: the course's accuracy
thresholds were set on models it trained.  Other code joins the loop at fixed events, as in minGPT, e.g.
trainer.add_callback("on_batch_end", lambda t: losses.append(t.loss)); the events are on_train_start,
on_batch_end and on_epoch_end, and a callback reads the run's state from the trainer it is given."""

import math
import os
import sys
from collections import defaultdict

import torch
from torch.utils.data import DataLoader
from tqdm import tqdm


class TrainerConfig:
    # optimisation
    max_epochs = 10
    batch_size = 64
    learning_rate = 3e-4
    betas = (0.9, 0.95)
    grad_norm_clip = 1.0
    weight_decay = 0.1  # on every parameter but the biases (make_optimizer says which)
    # with lr_decay, the rate rises linearly over warmup_tokens, then follows a cosine down to 10% at
    # final_tokens (GPT-3's values here; helper.py sets the assignment's)
    lr_decay = False
    warmup_tokens = 375e6
    final_tokens = 260e9
    ckpt_path = None  # if set, the model's state dict is saved here after every epoch
    num_workers = 0  # DataLoader worker processes
    writer = None  # e.g. a TensorBoard SummaryWriter; src/run.py's callbacks send it train/loss and train/lr
    # where and how to compute: these change the rounding, not the math
    device = None  # None: pick_device() when training starts
    precision = "fp32"  # or "bf16": the forward pass under bf16 autocast (weights and loss stay fp32)
    pin_memory = False  # on CUDA: the DataLoader pins its batches, so copies to the GPU need not wait
    show_progress = True

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)


def pick_device(requested=None):
    """The requested device, else CUDA, else Apple's MPS, else the CPU (the course's order)."""
    if requested:
        return torch.device(requested)
    mps = torch.backends.mps.is_available()
    return torch.device("cuda" if torch.cuda.is_available() else "mps" if mps else "cpu")


def make_optimizer(model, config, **adamw_options):
    """The course's AdamW: weight decay on every parameter whose name has neither "bias" nor "LayerNorm.weight"
    in it.  None of ours is called LayerNorm (ln1, ln2, ln_f), so only biases escape; the course's grading
    thresholds were set with this rule (minGPT's own decays Linear weights only)."""
    no_decay = ("bias", "LayerNorm.weight")
    named = list(model.named_parameters())
    decay = [p for n, p in named if not any(part in n for part in no_decay)]
    rest = [p for n, p in named if any(part in n for part in no_decay)]
    groups = [{"params": decay, "weight_decay": config.weight_decay}, {"params": rest, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=config.learning_rate, betas=config.betas, **adamw_options)


def lr_multiplier(tokens, config):
    """The course's schedule: the learning rate's multiplier once `tokens` training tokens have been seen."""
    if tokens < config.warmup_tokens:  # linear warmup
        return float(tokens) / float(max(1, config.warmup_tokens))
    progress = float(tokens - config.warmup_tokens) / float(max(1, config.final_tokens - config.warmup_tokens))
    return max(0.1, 0.5 * (1.0 + math.cos(math.pi * progress)))  # cosine decay, never below 10%


def trim_padding(x, y, min_len=1):
    """Drop the trailing columns where every target is PAD (id 0), keeping at least min_len: the same loss and
    gradients for less work, because the model is causal (the kept positions compute what they would in the
    full block) and PAD targets carry no loss.  Most of a birthplace example is padding."""
    nonpad = (y != 0).any(dim=0).nonzero()
    keep = int(nonpad[-1]) + 1 if len(nonpad) else 1
    keep = min(max(keep, min_len), y.size(1))
    return x[:, :keep], y[:, :keep]


def save_atomic(obj, path):
    """torch.save(obj, path) through a temporary file, so a save cut short never leaves half a file and never
    destroys an earlier one: os.replace swaps the whole new file in at once."""
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        torch.save(obj, tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def save_state_dict(model, path):
    save_atomic(model.state_dict(), path)


class Trainer:

    def __init__(self, model, train_dataset, test_dataset, config):
        self.model = model
        self.train_dataset = train_dataset
        self.test_dataset = test_dataset
        self.config = config
        self.callbacks = defaultdict(list)
        self.device = self.optimizer = None  # set when training starts, once every setting is final
        # where the run stands: optimizer steps, tokens seen, whole epochs done, the epoch under way (from 1) and
        # the step within it, the last loss and the rate it used (callbacks read them; at on_train_start, may set them)
        self.step = self.tokens = self.epochs_done = self.epoch = self.iter = 0
        self.loss = self.lr = None

    def add_callback(self, onevent, callback):
        self.callbacks[onevent].append(callback)

    def set_callback(self, onevent, callback):
        self.callbacks[onevent] = [callback]

    def trigger_callbacks(self, onevent):
        for callback in self.callbacks.get(onevent, []):
            callback(self)

    def save_checkpoint(self):
        if self.config.ckpt_path is not None:
            save_state_dict(self.model, self.config.ckpt_path)

    def batch_loss(self, x, y):
        """The loss of one batch from the DataLoader: on the device, padding trimmed, at the precision asked."""
        mconf = getattr(self.model, "config", None)
        min_len = mconf.bottleneck_dim if getattr(mconf, "perceiver", False) else 1
        x, y = trim_padding(x.to(self.device, non_blocking=True), y.to(self.device, non_blocking=True), min_len)
        with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.config.precision == "bf16"):
            return self.model(x, y)[1]

    def train(self):
        model, config = self.model, self.config

        # set-up, once per run: the device (picked now, after every change to the config), the course's AdamW,
        # and one DataLoader in dataset order (no shuffling, as the course's), whose workers start only once
        self.device = pick_device(config.device)
        model.to(self.device)
        self.optimizer = make_optimizer(model, config)
        loader = DataLoader(self.train_dataset, shuffle=False, batch_size=config.batch_size,
                            num_workers=config.num_workers, persistent_workers=config.num_workers > 0,
                            pin_memory=bool(config.pin_memory) and self.device.type == "cuda")
        self.trigger_callbacks("on_train_start")
        # progress: a bar on a terminal; elsewhere (output to a file, CI), where a bar writes a line per refresh,
        # a short line every ~10 % of the steps instead
        total = config.max_epochs * len(loader)
        bar = tqdm(total=total, initial=self.step, dynamic_ncols=True, mininterval=0.5,
                   disable=not (config.show_progress and sys.stdout.isatty()))
        every = max(1, total // 10) if config.show_progress and bar.disable else 0

        for epoch in range(self.epochs_done, config.max_epochs):
            self.epoch = epoch + 1
            model.train()
            for self.iter, (x, y) in enumerate(loader):
                # forward
                loss = self.batch_loss(x, y)

                # backward, clip the gradients, update
                model.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), config.grad_norm_clip)
                self.lr = self.optimizer.param_groups[0]["lr"]
                self.optimizer.step()

                # the learning rate, as the course sets it: after the step, for the next one (the first step
                # runs at the full rate), from the tokens seen so far.  The course counts the labels >= 0 of
                # the untrimmed batch: every position (PAD is 0), so y.numel(), which needs no wait for the GPU.
                self.tokens += y.numel()
                if config.lr_decay:
                    lr = config.learning_rate * lr_multiplier(self.tokens, config)
                    for param_group in self.optimizer.param_groups:
                        param_group["lr"] = lr

                # report
                self.step += 1
                self.loss = loss.item()
                self.trigger_callbacks("on_batch_end")
                text = f"epoch {self.epoch} iter {self.iter}: loss {self.loss:.5f} lr {self.lr:e}"
                bar.set_postfix_str(text, refresh=False)
                bar.update(1)
                if every and (self.step % every == 0 or self.step == total):
                    print(f"step {self.step}/{total}: {text}", flush=True)

            # end of epoch: the test loss (if there is a test set), then save
            if self.test_dataset is not None:
                model.eval()
                with torch.no_grad():
                    test = [self.batch_loss(x, y).item() for x, y in DataLoader(self.test_dataset, config.batch_size)]
                bar.write(f"epoch {self.epoch}: test loss {sum(test) / len(test):.5f}")
            self.epochs_done = self.epoch
            self.save_checkpoint()
            self.trigger_callbacks("on_epoch_end")
        bar.close()
