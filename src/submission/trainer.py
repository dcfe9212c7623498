"""A simple training loop: AdamW, linear warmup then cosine learning-rate decay, gradient clipping.

Nothing here is specific to GPT.  What makes it fast without changing the math:
- one DataLoader for the whole run (workers are started once, not once per epoch);
- trailing columns whose targets are all PAD are dropped before the forward pass: the model is
  causal, so the kept positions compute exactly what they would in the full block;
- bf16 autocast (fp32 master weights, fp32 loss) where it helps, TF32 matmuls and fused AdamW on CUDA.

precision="auto" picks bf16 autocast on CUDA GPUs that support bf16 and on CPUs with native bf16
instructions (AVX512-BF16 or AMX), where it measured about 2x faster than fp32 for the course model
(the instructor's benchmarks); fp32 everywhere else (older CPUs, Apple MPS).  The weights, the
optimizer state and the loss stay fp32 in every case.
"""

import contextlib
import math
import os

import torch
from torch.utils.data import DataLoader
from tqdm import tqdm


class TrainerConfig:
    # optimization parameters
    max_epochs = 10
    batch_size = 64
    learning_rate = 3e-4
    betas = (0.9, 0.95)
    grad_norm_clip = 1.0
    weight_decay = 0.1  # only applied to the weight matrices of nn.Linear layers
    # learning rate decay: linear warmup over warmup_tokens, then cosine decay to 10% at final_tokens
    lr_decay = False
    warmup_tokens = 375e6
    final_tokens = 260e9
    # checkpoint settings
    ckpt_path = None
    num_workers = 0  # for the DataLoader
    # speed settings (they do not change the math beyond floating-point rounding)
    device = None  # None: CUDA, else MPS, else CPU
    precision = "auto"  # "auto" (bf16 on CUDA and on CPUs with native bf16, else fp32), "bf16" or "fp32"
    trim_padding = True  # drop trailing all-PAD columns before the forward pass
    compile = False  # torch.compile the model (CUDA only)
    show_progress = True

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)


def pick_device(requested=None):
    """The requested device, else CUDA, else Apple's MPS, else CPU."""
    if requested:
        return torch.device(requested)
    if torch.cuda.is_available():
        return torch.device("cuda")
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def cpu_has_native_bf16():
    """True if this CPU computes bf16 natively (AVX512-BF16 or AMX), where bf16 autocast is fast.
    Elsewhere bf16 on a CPU is emulated and usually slower than fp32."""
    cpu = getattr(torch, "cpu", None)
    for name in ("_is_avx512_bf16_supported", "_is_amx_tile_supported"):
        check = getattr(cpu, name, None)
        try:
            if check is not None and check():
                return True
        except (RuntimeError, AttributeError):
            pass
    try:  # older torch builds without the checks above: ask the kernel (Linux only)
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            flags = f.read().split()
        return "avx512_bf16" in flags or "amx_bf16" in flags
    except OSError:
        return False


def resolve_precision(device, precision):
    """The precision training runs in on `device`: "bf16" or "fp32" ("auto": see the module docstring)."""
    if precision not in ("auto", "bf16", "fp32"):
        raise ValueError(f"unknown precision {precision!r}: use auto, bf16 or fp32")
    if precision != "auto":
        return precision
    if device.type == "cuda":
        return "bf16" if torch.cuda.is_bf16_supported() else "fp32"
    if device.type == "cpu":
        return "bf16" if cpu_has_native_bf16() else "fp32"
    return "fp32"


def autocast_context(device, precision):
    """bf16 autocast when resolve_precision says bf16, else a no-op context."""
    if resolve_precision(device, precision) == "bf16":
        return torch.autocast(device_type=device.type, dtype=torch.bfloat16)
    return contextlib.nullcontext()


def trim_padding(x, y, min_len=1):
    """Drop trailing columns of a batch where every target is PAD (id 0).

    The model is causal, so the kept positions give the same logits as in the full block, and the
    dropped positions carry no loss.  At least min_len columns are kept (the perceiver keeps its
    bottleneck length).
    """
    nonpad = (y != 0).any(dim=0).nonzero()
    keep = int(nonpad[-1]) + 1 if len(nonpad) else 1
    keep = min(max(keep, min_len), y.size(1))
    return x[:, :keep], y[:, :keep]


def lr_multiplier(tokens, config):
    """Learning-rate multiplier after `tokens` training tokens (the course's schedule)."""
    if tokens < config.warmup_tokens:
        return float(tokens) / float(max(1, config.warmup_tokens))
    progress = float(tokens - config.warmup_tokens) / float(max(1, config.final_tokens - config.warmup_tokens))
    return max(0.1, 0.5 * (1.0 + math.cos(math.pi * progress)))


def make_optimizer(model, config, device):
    """AdamW with weight decay on the weight matrices of nn.Linear layers only (not on biases,
    LayerNorm, embeddings, position embeddings or the perceiver basis)."""
    decay = {id(m.weight) for m in model.modules() if isinstance(m, torch.nn.Linear)}
    params = [p for p in model.parameters() if p.requires_grad]
    groups = [
        {"params": [p for p in params if id(p) in decay], "weight_decay": config.weight_decay},
        {"params": [p for p in params if id(p) not in decay], "weight_decay": 0.0},
    ]
    extra = {"fused": True} if device.type == "cuda" else {}
    return torch.optim.AdamW(groups, lr=config.learning_rate, betas=config.betas, **extra)


def save_state_dict(model, path):
    """Save model parameters atomically: an interrupted save never destroys an earlier file."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        torch.save(model.state_dict(), tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


class Trainer:
    def __init__(self, model, train_dataset, test_dataset, config):
        self.model = model
        self.train_dataset = train_dataset
        self.test_dataset = test_dataset
        self.config = config
        self.device = pick_device(config.device)
        self.model = self.model.to(self.device)
        self.tokens = 0  # tokens seen so far, for the learning-rate schedule
        self.losses = []  # (epoch, step, loss, lr) per optimisation step
        self.optimizer = self.step_model = None  # made by setup(), which train() calls

    def save_checkpoint(self):
        if self.config.ckpt_path is not None:
            raw = getattr(self.model, "_orig_mod", self.model)
            save_state_dict(raw, self.config.ckpt_path)

    def _loader(self, dataset, shuffle):
        cfg = self.config
        return DataLoader(
            dataset,
            shuffle=shuffle,
            batch_size=cfg.batch_size,
            num_workers=cfg.num_workers,
            persistent_workers=cfg.num_workers > 0,
            pin_memory=self.device.type == "cuda",
        )

    def setup(self):
        """Everything train() prepares once per run: fast-math switches, optimizer, compiled model."""
        model, config, device = self.model, self.config, self.device
        if device.type == "cuda":
            torch.backends.cuda.matmul.allow_tf32 = True
            torch.backends.cudnn.allow_tf32 = True
        self.optimizer = make_optimizer(model, config, device)
        self.step_model = torch.compile(model) if config.compile and device.type == "cuda" else model
        self.min_len = model.min_length() if hasattr(model, "min_length") else 1

    def run_batch(self, x, y, is_train):
        """The loss of one batch (padding trimmed, under the configured precision)."""
        config, device = self.config, self.device
        x = x.to(device, non_blocking=True)
        y = y.to(device, non_blocking=True)
        if config.trim_padding:
            x, y = trim_padding(x, y, self.min_len)
        with torch.set_grad_enabled(is_train), autocast_context(device, config.precision):
            _, loss = self.step_model(x, y)
        return loss

    def train_step(self, x, y):
        """One optimisation step on the batch (x, y); returns (loss tensor, learning rate)."""
        model, config, optimizer = self.model, self.config, self.optimizer
        loss = self.run_batch(x, y, True)
        model.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), config.grad_norm_clip)
        if config.lr_decay:
            # count every position of the full block, as the course does, so trimming
            # padding leaves the learning-rate schedule unchanged
            self.tokens += y.numel()
            lr = config.learning_rate * lr_multiplier(self.tokens, config)
            for group in optimizer.param_groups:
                group["lr"] = lr
        else:
            lr = config.learning_rate
        optimizer.step()
        return loss, lr

    def train(self):
        model, config = self.model, self.config
        self.setup()
        train_loader = self._loader(self.train_dataset, shuffle=True)
        test_loader = self._loader(self.test_dataset, shuffle=False) if self.test_dataset is not None else None

        total = config.max_epochs * len(train_loader)
        bar = tqdm(total=total, disable=not config.show_progress, dynamic_ncols=True, mininterval=0.5)
        for epoch in range(config.max_epochs):
            model.train()
            for it, (x, y) in enumerate(train_loader):
                loss, lr = self.train_step(x, y)
                loss_value = loss.item()
                self.losses.append((epoch + 1, it, loss_value, lr))
                bar.update(1)
                bar.set_postfix_str(f"epoch {epoch + 1} iter {it}: loss {loss_value:.5f} lr {lr:e}", refresh=False)

            if test_loader is not None:
                model.eval()
                test_losses = [self.run_batch(x, y, False).item() for x, y in test_loader]
                bar.write(f"epoch {epoch + 1}: test loss {sum(test_losses) / len(test_losses):.5f}")
            self.save_checkpoint()
        bar.close()
