#!/usr/bin/env python3
"""Does training on this machine learn, and which of the fast path's parts breaks it?  One command, the first of a
GPU session (tools/gpu_session.sh): the first epochs of the course's perceiver pretraining (the course's model and
settings, the built-in wiki.txt) in arms that each change one thing, all at once, and the attention's gradients with
each of scaled_dot_product_attention's backends forced, at the shapes training meets.

    python tools/bench/bench_learning.py --json learning.json                 # on a GPU: every arm, 20 epochs
    python tools/bench/bench_learning.py --epochs 1 --lines 64 --json x.json  # a CPU rehearsal (about a minute)

Why the perceiver: all it knows of a line's other characters flows through attention (its first block
cross-attends from the bottleneck to the input), so it cannot learn more than the characters' frequencies without
it.  A run that learns leaves that plateau (the unigram entropy of the corrupted lines, about 3.32 on the built-in
data) within a few epochs: on a CPU (AMD EPYC, bf16, seed 0, run.py) the epochs' mean loss was 3.34 in epoch 4, 3.21
in epoch 5, 2.73 in epoch 10.  On an H200 with torch 2.11, on the fast path, it stayed at 3.31-3.42 for 40 epochs
(docs/benchmarks.md, GPU).  Each arm records its epochs' mean losses, what the learning watch (kit/watch.py) says
at the course run's check epoch, and the kernels its training step ran (the profiler's op names).

The arms (docs/instructor.md says what each outcome means):
  default            the default: on CUDA the course's numerics (fp32 without TF32, the attention written out with
                     nn.Dropout, the course's AdamW, batches not pinned); on a CPU run.py's auto
  fused              the old fused path, --precision fast: bf16 where native, scaled_dot_product_attention in
                     PyTorch's choice of kernel (which draws the dropout itself), the fused AdamW, TF32, pinned
  fused-no-attn-drop fused, with attn_pdrop 0
  mem-efficient      fused, with the memory-efficient kernel alone (CUDA)
  cudnn              fused, with cuDNN's kernel alone (CUDA)
  fused-contiguous-q fused, the perceiver's query (expanded along the batch, stride 0) made contiguous
  fused-fp32         fused, in fp32 without TF32
  fused-course-adamw fused, with the course's AdamW instead of the fused kernel
  fused-unpinned     fused, batches not pinned
and, with --arms all, three planted faults on the default and a correct reading that learns more slowly, which show
what the learning watch sees (docs/benchmarks.md, "The learning watch"):
  fault-keys-ignored  every attention's output ignores its keys (uniform weights over the keys it may see)
  fault-dropout-mask  the attention's dropout draws another mask for the backward pass than for the forward
  fault-basis-frozen  the perceiver's basis C cut off from the gradient (it keeps its random initial values)
  reading-ln-on-c     the down block normalises the basis alone, not the input (correct, and slower to learn)
The CUDA-only arms say they were skipped on a CPU.

The gradients (--gradients, on by default): course-size attention layers at batch 128, self-attention at lengths
64, 97 and 98 and the perceiver's cross shapes 32x98 and 98x32 with the query expanded along the batch, in the
formula written out and in each of scaled_dot_product_attention's backends (math, flash, efficient, cudnn) forced
alone: each parameter tensor's gradient against float64 math on the CPU (relative error, non-finite count), dropout
off; then, with dropout, whether each draw's backward pass used its forward pass's mask.
"""

import argparse
import contextlib
import copy
import dataclasses
import datetime
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench_srcpath import SRC  # first: puts src/ on sys.path
import torch

from kit import course, parts, training, watch
from kit.fileio import write_text_atomic
from submission import attention, helper, model
from submission.trainer import pick_device
from submission.utils import set_seed

from bench_common import BLOCK, COURSE_MODEL, pretraining_corpus

COURSE_EPOCHS = 650  # the course's pretraining: the learning watch checks its loss at plateau_check_epoch
CHECK_EPOCH = 20  # that epoch on the built-in data (23 steps an epoch); tests/tools/test_bench.py holds it to it


@dataclass
class Arm:
    precision: str  # run.py's --precision
    model: dict = field(default_factory=dict)  # GPTConfig settings
    backends: tuple = ()  # scaled_dot_product_attention's CUDA backends left on alone (none: PyTorch's choice)
    numerics: dict = field(default_factory=dict)  # Numerics fields changed from what precision resolves to
    patch: str = ""  # a change to the model's code: contiguous-q, or a planted fault
    cuda_only: bool = False


FAST = "fast"
ARMS = {
    "default": Arm("auto"),
    "fused": Arm(FAST),
    "fused-no-attn-drop": Arm(FAST, model={"attn_pdrop": 0.0}),
    "mem-efficient": Arm(FAST, backends=("efficient",), cuda_only=True),
    "cudnn": Arm(FAST, backends=("cudnn",), cuda_only=True),
    "fused-contiguous-q": Arm(FAST, patch="contiguous-q"),
    "fused-fp32": Arm(FAST, numerics={"precision": "fp32", "tf32": False}),
    "fused-course-adamw": Arm(FAST, numerics={"fused_adamw": False}),
    "fused-unpinned": Arm(FAST, numerics={"pin_memory": False}, cuda_only=True),
    "fault-keys-ignored": Arm("auto", patch="keys-ignored"),
    "fault-dropout-mask": Arm("auto", patch="dropout-mask"),
    "fault-basis-frozen": Arm("auto", patch="basis-frozen"),
    # a correct reading of the course's text that learns more slowly (the watch must not warn on it either)
    "reading-ln-on-c": Arm("auto", patch="ln-on-c-alone"),
}
SUSPECTS = [a for a in ARMS if not a.startswith(("fault-", "reading-"))]

# ---------------------------------------------------------------------------------- the planted faults and patches


class OtherMaskDropout(torch.autograd.Function):
    """The attention's dropout and its product with the values, (att * mask / (1 - p)) @ v, whose backward pass draws
    a mask of its own: what a fused kernel that does not replay its forward pass's mask would compute."""

    @staticmethod
    def forward(ctx, att, v, p):
        ctx.save_for_backward(att, v)
        ctx.p = p
        return (att * (torch.rand_like(att) >= p) / (1 - p)) @ v

    @staticmethod
    def backward(ctx, grad):
        att, v = ctx.saved_tensors
        other = (torch.rand_like(att) >= ctx.p) / (1 - ctx.p)
        return (grad @ v.transpose(-2, -1)) * other, (att * other).transpose(-2, -1) @ grad, None


def attend_with_another_mask(self, q, k, v, mask):
    """_AttentionBase.attend with OtherMaskDropout: the formula written out, the backward pass's mask another."""
    att = (q @ k.transpose(-2, -1)) / math.sqrt(k.size(-1))
    att = att.masked_fill(~mask, float("-inf")).softmax(-1)
    y = OtherMaskDropout.apply(att, v, self.attn_drop.p if self.training else 0.0)
    B, nh, Tq, hs = y.size()
    return y.transpose(1, 2).contiguous().view(B, Tq, nh * hs)


@contextlib.contextmanager
def patched(net, patch):
    """The model's code changed for one arm: the attention's query made contiguous, or a planted fault."""
    original = attention._AttentionBase.attend
    if patch == "contiguous-q":
        attention._AttentionBase.attend = lambda self, q, k, v, mask: original(self, q.contiguous(), k, v, mask)
    elif patch == "keys-ignored":  # every score 0: each query averages the values it may see
        attention._AttentionBase.attend = lambda self, q, k, v, mask: original(self, q, torch.zeros_like(k), v, mask)
    elif patch == "dropout-mask":
        attention._AttentionBase.attend = attend_with_another_mask
    elif patch == "basis-frozen":
        net.down_block.C.requires_grad_(False)  # AdamW leaves a parameter without a gradient as it is
    down = type(net.down_block)
    forward = down.forward
    if patch == "ln-on-c-alone":  # the keys and values from the embeddings as they are, the basis normalised
        def ln_on_c(self, x_input):
            x = self.C + self.attn(x_input, self.ln1(self.C))
            return x + self.mlp(self.ln2(x))
        down.forward = ln_on_c
    try:
        yield
    finally:
        attention._AttentionBase.attend = original
        down.forward = forward


@contextlib.contextmanager
def backends_alone(names):
    """scaled_dot_product_attention with only the CUDA backends `names` on (none: as PyTorch left them)."""
    if not names:
        yield
        return
    from torch.nn.attention import SDPBackend, sdpa_kernel

    kinds = {"math": SDPBackend.MATH, "flash": SDPBackend.FLASH_ATTENTION,
             "efficient": SDPBackend.EFFICIENT_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}
    with sdpa_kernel([kinds[n] for n in names]):
        yield


ATTENTION_OPS = ("attention", "sdpa", "softmax", "dropout", "bernoulli", "adam", "_fused")


def kernels_of_a_step(net, trainer, dataset, numerics):
    """The op names (profiler, CPU and CUDA) of one training step's attention, dropout and optimizer, run on copies
    of the model and its optimizer before training, without consuming the run's random numbers: what the arm's
    training runs."""
    from torch.profiler import ProfilerActivity, profile

    device = trainer.config.device
    probe = copy.copy(trainer)
    probe.model, probe.device = copy.deepcopy(net).to(device), device
    opt = training.make_optimizer(probe.model, trainer.config, **({"fused": True} if numerics.fused_adamw else {}))
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    with parts.random_states_kept():
        x, y = next(iter(torch.utils.data.DataLoader(dataset, batch_size=trainer.config.batch_size)))
        with profile(activities=activities) as prof:
            probe.batch_loss(x, y).backward()
            opt.step()
            if device.type == "cuda":
                torch.cuda.synchronize()
    return sorted({e.key for e in prof.key_averages() if any(w in e.key.lower() for w in ATTENTION_OPS)})


def run_arm(name, epochs, lines, seed, workers=None, scale="course"):
    """One arm's training in this process: its device, numerics, kernels, the watch's verdict and its epochs' mean
    losses; {"skipped": why} for a CUDA-only arm without CUDA.  At the demo's scale (the demo's world, model and
    perceiver schedule, src/demo.py) instead of the course's, with scale "demo"."""
    arm = ARMS[name]
    device = pick_device(None)
    if arm.cuda_only and device.type != "cuda":
        return {"arm": name, "skipped": "needs CUDA"}
    if scale == "demo":
        import demo

        cfg = demo.DemoConfig()
        corpus = pretraining_corpus(SRC / "data" / "demo", lines)
        size = dict(n_layer=cfg.n_layer, n_head=cfg.n_head, n_embd=cfg.n_embd, embd_pdrop=cfg.dropout,
                    resid_pdrop=cfg.dropout, attn_pdrop=cfg.dropout)
        bottleneck, schedule_epochs = cfg.bottleneck_dim, cfg.pretrain_epochs["perceiver"]
    else:
        corpus = pretraining_corpus(SRC / "data", lines)
        size, bottleneck, schedule_epochs = COURSE_MODEL, course.BOTTLENECK_DIM, COURSE_EPOCHS
    set_seed(seed)
    mconf = model.GPTConfig(corpus.vocab_size, BLOCK, **{**size, **arm.model})
    net = parts.new_model(helper, "perceiver", mconf, bottleneck)
    tconf, trainer = parts.training_pair(helper.pretrain(corpus, BLOCK, net), "pretrain", "g")
    if scale == "demo":  # as demo.scale_down sets a stage: its batch and rate, the schedule over its 500 epochs
        total_tokens = schedule_epochs * len(corpus) * (BLOCK - 1)
        tconf.batch_size, tconf.learning_rate = cfg.pretrain_batch, cfg.pretrain_lr
        tconf.warmup_tokens, tconf.final_tokens = cfg.warmup_fraction * total_tokens, total_tokens
    tconf.max_epochs, tconf.show_progress = epochs, False
    tconf.num_workers = training.fit_workers(tconf.num_workers) if workers is None else workers
    numerics = dataclasses.replace(training.resolve_numerics(device, arm.precision), **arm.numerics)
    training.place(trainer, device, numerics=numerics)
    losses = training.record_losses(trainer)
    plateau = watch.unigram_entropy(corpus)

    def progress(t):  # each epoch's mean loss on stderr, the arm's log, as it goes
        mean = [loss for epoch, _, loss, _ in losses if epoch == t.epoch]
        print(f"{name}: epoch {t.epoch}: {sum(mean) / len(mean):.4f}", file=sys.stderr, flush=True)

    trainer.add_callback("on_epoch_end", progress)
    start = time.perf_counter()
    with patched(net, arm.patch), backends_alone(arm.backends):
        kernels = kernels_of_a_step(net, trainer, corpus, numerics)
        trainer.train()
    seconds = time.perf_counter() - start
    by_epoch = {}
    for epoch, _, loss, _ in losses:
        by_epoch.setdefault(epoch, []).append(loss)
    epoch_loss = [round(sum(v) / len(v), 4) for _, v in sorted(by_epoch.items())]
    check = watch.plateau_check_epoch(schedule_epochs, math.ceil(len(corpus) / tconf.batch_size))
    verdict = None
    if len(epoch_loss) >= check:
        verdict = "off the plateau" if watch.off_plateau(epoch_loss[check - 1], plateau) else "warns"
    left = next((e for e, v in enumerate(epoch_loss, 1) if watch.off_plateau(v, plateau)), None)
    return {"arm": name, "device": str(device), "numerics": dataclasses.asdict(numerics), "fused_adamw":
            bool(trainer.optimizer.defaults.get("fused")), "kernels": kernels, "seconds": round(seconds, 1),
            "plateau": round(plateau, 4), "check_epoch": check, "watch": verdict, "left_plateau_at_epoch": left,
            "epoch_loss": epoch_loss}


# ----------------------------------------------------------------------------------------- the attention's gradients

# (queries, keys, self-attention?) at batch 128, as training meets them: the pretraining's batches trimmed to 64, 97
# and 98 characters (64 is cuDNN's suspect length, PyTorch issue 196678), the perceiver's down block (32 basis rows
# attending to 98 characters, the query expanded along the batch) and up block (98 characters attending to 32 rows)
SHAPES = [(64, 64, True), (97, 97, True), (98, 98, True), (32, 98, False), (98, 32, False)]
# "written": the formula written out (attn_impl "math", the default's on CUDA); the others are
# scaled_dot_product_attention's backends, each forced alone (on a CPU, flash is its fused CPU kernel)
BACKENDS = ["written", "math", "flash", "efficient", "cudnn"]
CPU_BACKENDS = ["written", "math", "flash"]


def attention_gradients(device, backends, tq, tk, self_attention, batch=128, seed=0, dropout_draws=3):
    """A course-size attention layer's gradients on `device` with each of `backends` forced alone, against the
    formula in float64 on the CPU (written out here, computed once), dropout off: per parameter tensor (and the inputs) the relative error and the
    count of values that are not finite; then, with the course's dropout, whether each draw's backward pass used its
    own mask (<v, dL/dv> = L for a loss linear in v; the worst relative mismatch of `dropout_draws` draws).  In the
    layer's own precision on that device (bf16 autocast on a CUDA GPU that computes it natively).  One result per
    backend; {"error": ...} where it cannot run the shape."""
    mconf = model.GPTConfig(60, BLOCK, n_layer=1, n_head=COURSE_MODEL["n_head"], n_embd=COURSE_MODEL["n_embd"],
                            attn_pdrop=0.1)
    torch.manual_seed(seed)
    layer = (attention.CausalSelfAttention if self_attention else attention.CausalCrossAttention)(mconf)
    g = torch.Generator().manual_seed(seed)
    x_kv = torch.randn(batch, tk, mconf.n_embd, generator=g)
    x_q = x_kv if self_attention else torch.randn(1, tq, mconf.n_embd, generator=g)  # the basis: a batch of one
    upstream = torch.randn(batch, tq, mconf.n_embd, generator=g)

    def grads(impl, dev, dtype, autocast):
        net = copy.deepcopy(layer).to(dev, dtype).eval()
        net.attn_impl = impl
        inputs = [t.to(dev, dtype).clone().requires_grad_() for t in ((x_kv,) if self_attention else (x_kv, x_q))]
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=autocast):
            out = net(*inputs) if self_attention else net(inputs[0], inputs[1])
        (out.float() * upstream.to(dev)).sum().backward()
        named = {n: torch.zeros_like(p) if p.grad is None else p.grad for n, p in net.named_parameters()}
        named.update({f"input{i}": t.grad for i, t in enumerate(inputs)})
        return {n: t.detach().double().cpu() for n, t in named.items()}

    def dropout_mismatch(impl, dev, autocast):
        net = copy.deepcopy(layer).to(dev).train()
        net.attn_impl = impl
        worst = 0.0
        for _ in range(dropout_draws):  # the query as the layer makes it: a batch of one expanded (stride 0)
            q = net.split_heads(x_q.to(dev), net.query).detach().expand(batch, -1, -1, -1).requires_grad_()
            k = net.split_heads(x_kv.to(dev), net.key).detach().requires_grad_()
            v = net.split_heads(x_kv.to(dev), net.value).detach().requires_grad_()
            with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=autocast):
                y = net.attend(q, k, v, net.mask[:tq, :tk])
            loss = (y.float() * upstream.to(dev)).sum()
            loss.backward()
            scale = float((y.detach().float().abs() * upstream.to(dev).abs()).sum())
            worst = max(worst, float(((v.detach() * v.grad).sum() - loss.detach()).abs()) / scale)
        return round(worst, 6)

    def exact():  # the formula in float64 on the CPU, written here: the layer's own code is what is checked
        w = {n: p.detach().double().clone().requires_grad_() for n, p in layer.named_parameters()}
        inputs = [t.double().clone().requires_grad_() for t in ((x_kv,) if self_attention else (x_kv, x_q))]
        kv, xq = inputs[0], inputs[-1]
        heads, hs = layer.n_head, mconf.n_embd // layer.n_head

        def project(x, name):  # (b, t, C) -> (b, heads, t, hs)
            return (x @ w[f"{name}.weight"].T + w[f"{name}.bias"]).view(x.size(0), -1, heads, hs).transpose(1, 2)

        q, k, v = project(xq, "query").expand(batch, -1, -1, -1), project(kv, "key"), project(kv, "value")
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(hs)
        scores = scores.masked_fill(~torch.ones(tq, tk, dtype=torch.bool).tril(), float("-inf"))
        y = (scores.softmax(-1) @ v).transpose(1, 2).reshape(batch, tq, mconf.n_embd)
        ((y @ w["proj.weight"].T + w["proj.bias"]) * upstream.double()).sum().backward()
        named = {n: t.grad for n, t in w.items()}
        named.update({f"input{i}": t.grad for i, t in enumerate(inputs)})
        return {n: t.detach().cpu() for n, t in named.items()}

    device = torch.device(device)
    autocast = device.type == "cuda" and training.resolve_precision(device, FAST) == "bf16"
    want = exact()
    # relative to the tensor's own gradient, or to a thousandth of the largest where its own is ~0 (the keys' bias:
    # the softmax ignores it, so its exact gradient is 0 and any rounding would be an infinite relative error)
    floor = 1e-3 * max(float(t.norm()) for t in want.values())
    results = []
    for backend in backends:
        head = {"backend": backend, "shape": [tq, tk], "self": self_attention}
        impl = "math" if backend == "written" else "fused"
        try:
            with backends_alone(() if backend == "written" else (backend,)):
                got = grads(impl, device, torch.float32, autocast)
                mismatch = dropout_mismatch(impl, device, autocast)
        except RuntimeError as e:  # the backend cannot run this shape or dtype here
            results.append({**head, "error": str(e).splitlines()[0][:200]})
            continue
        errors = {n: round(float((got[n] - want[n]).norm()) / max(float(want[n].norm()), floor), 6) for n in want}
        bad = {n: int((~torch.isfinite(got[n])).sum()) for n in want if not torch.isfinite(got[n]).all()}
        results.append({**head, "precision": "bf16" if autocast else "fp32", "worst_error": max(errors.values()),
                        "errors": errors, "not_finite": bad, "dropout_mask_mismatch": mismatch})
    return results


def all_gradients(device):
    """attention_gradients for every backend and shape; on a CPU those it has (efficient and cudnn are CUDA's)."""
    backends = BACKENDS if torch.device(device).type == "cuda" else CPU_BACKENDS
    out = [r for tq, tk, s in SHAPES for r in attention_gradients(device, backends, tq, tk, s)]
    return out + [{"backend": b, "skipped": "needs CUDA"} for b in BACKENDS if b not in backends]


# ----------------------------------------------------------------------------------------- the command


def learned(arm, path):
    """True if `arm` in the results file at path left the plateau by the watch's check epoch; says which, in a line."""
    results = {r["arm"]: r for r in json.loads(Path(path).read_text(encoding="utf-8"))["arms"]}
    result = results.get(arm, {"watch": None, "error": "not in the results"})
    print(f"{arm}: {result.get('error') or result.get('skipped') or result.get('watch') or 'too few epochs to say'}")
    return result.get("watch") == "off the plateau"


def line_of(result):
    if "skipped" in result:
        return f"{result['arm']:19} skipped: {result['skipped']}"
    if "error" in result:
        return f"{result['arm']:19} {result['error']}"
    said = f" [watch at epoch {result['check_epoch']}: {result['watch']}]" if result["watch"] else ""
    return f"{result['arm']:19} " + " ".join(f"{v:.3f}" for v in result["epoch_loss"]) + said


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--epochs", type=int, default=CHECK_EPOCH,
                   help="epochs of each arm (default %(default)s: the learning watch's check epoch of the course's "
                        "pretraining on the built-in data)")
    p.add_argument("--arms", default=",".join(SUSPECTS),
                   help=f"comma-separated, of {', '.join(ARMS)}, or all (default: all but the planted faults and "
                        "the reading)")
    p.add_argument("--parallel", type=int, help="arms run at a time (default: all of them)")
    p.add_argument("--lines", type=int, help="only the first LINES lines of wiki.txt (a short rehearsal)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--workers", type=int, help="DataLoader workers of each arm (default run.py's: the course's 4, "
                                               "capped at the cores)")
    p.add_argument("--scale", choices=["course", "demo"], default="course",
                   help="the course's model, data and schedule (default), or the demo's (src/demo.py: a model 16x "
                        "smaller, its world and the perceiver's 500-epoch schedule, whose check is at epoch 17)")
    p.add_argument("--logs", help="keep each arm's log (its epochs' mean losses as they go) in this folder")
    p.add_argument("--no-gradients", dest="gradients", action="store_false", help="leave out the gradient check")
    p.add_argument("--json", help="also write the results to this file")
    p.add_argument("--learned", nargs=2, metavar=("ARM", "JSON"),
                   help="only say whether ARM of the results file JSON left the plateau by the watch's check epoch "
                        "(exit status 0) or not (1): tools/gpu_session.sh trains only on a path that learned")
    p.add_argument("--one-arm", help=argparse.SUPPRESS)  # the child process of one arm: its results on stdout
    p.add_argument("--gradients-only", action="store_true", help=argparse.SUPPRESS)  # the gradients' child
    args = p.parse_args(argv)
    if args.learned:
        return 0 if learned(*args.learned) else 1
    if args.one_arm:
        print(json.dumps(run_arm(args.one_arm, args.epochs, args.lines, args.seed, args.workers, args.scale)))
        return 0
    if args.gradients_only:
        print(json.dumps(all_gradients(pick_device(None))))
        return 0
    arms = list(ARMS) if args.arms == "all" else args.arms.split(",")
    unknown = [a for a in arms if a not in ARMS]
    if unknown or args.epochs < 1:
        p.error(f"unknown arm {unknown[0]}; choose among {', '.join(ARMS)}" if unknown else "--epochs must be >= 1")
    common = ["--epochs", str(args.epochs), "--seed", str(args.seed)]
    common += ["--lines", str(args.lines)] if args.lines else []
    common += ["--workers", str(args.workers)] if args.workers is not None else []
    common += ["--scale", args.scale]
    jobs = [(arm, ["--one-arm", arm, *common]) for arm in arms]
    if args.gradients:
        jobs.insert(0, ("gradients", ["--gradients-only"]))
    results, gradients, parallel = [], None, args.parallel or len(jobs)
    with tempfile.TemporaryDirectory() as work:
        work = args.logs or work
        Path(work).mkdir(parents=True, exist_ok=True)
        for start in range(0, len(jobs), parallel):
            running = []
            for name, flags in jobs[start:start + parallel]:
                log = open(Path(work) / f"{name}.log", "w+", encoding="utf-8")
                proc = subprocess.Popen([sys.executable, __file__, *flags], stdout=subprocess.PIPE, stderr=log,
                                        text=True, env=dict(os.environ, PYTHONUNBUFFERED="1"))
                running.append((name, proc, log))
            for name, proc, log in running:
                out, _ = proc.communicate()
                log.seek(0)
                failed = None
                if proc.returncode != 0:
                    tail = log.read().strip().splitlines()[-1:] or [""]
                    failed = f"exit status {proc.returncode}: {tail[0][:300]}"
                log.close()
                if name == "gradients":
                    gradients = [{"error": failed}] if failed else json.loads(out.strip().splitlines()[-1])
                    for g in gradients:
                        print("gradients " + ", ".join(f"{k} {v}" for k, v in g.items() if k != "errors"), flush=True)
                    continue
                results.append({"arm": name, "error": failed} if failed else json.loads(out.strip().splitlines()[-1]))
                print(line_of(results[-1]), flush=True)
    report = {"kind": "cs224n-learning-arms", "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
              "torch": torch.__version__,
              "device": torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu",
              "command": sys.argv[1:], "scale": args.scale, "epochs": args.epochs, "seed": args.seed, "arms": results,
              "gradients": gradients}
    if args.json:
        write_text_atomic(args.json, json.dumps(report, indent=1) + "\n")
    broken = [r for r in results if "error" in r] + [g for g in gradients or [] if "error" in g and "backend" not in g]
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
