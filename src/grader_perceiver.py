"""The perceiver's blocks (part g) run on inputs a test chooses, and what a judge reads from their outputs.

grader.py's part (g) tests lean on this, and so do the perceiver cases of finetune (grader_training.py).  The
blocks are found and checked by what they compute, never by their attributes' names: the basis C is the one
parameter of its shape (find_basis), a model's blocks are recognised by their class (perceiver_runs).  Beside
the student's code: building and running the blocks (build_block, run_down, run_up, changes, perceiver_runs),
failing at once where an output is no tensor of the expected shape (require_tensor), which can only cost the
student.  In the judge, which never imports student code and alone decides the verdict: reading the reported
outputs (tensors, changed_rows).  perceiver_config and find_basis serve both sides: the judge builds the
reference's block from the one and finds its basis with the other (grader_same_weights.py).
"""

from graderUtil import Fail, call


def perceiver_config(ctx, package="student", m=8, n_embd=32, block=64, n_head=4):
    """The GPTConfig of a perceiver with bottleneck_dim m and no dropout, from the student's model.py or (package
    "solution") the reference's."""
    mod = ctx.student("model") if package == "student" else ctx.solution("model")
    cfg = mod.GPTConfig(30, block, n_layer=3, n_head=n_head, n_embd=n_embd, embd_pdrop=0.0, resid_pdrop=0.0,
                        attn_pdrop=0.0)
    cfg.perceiver, cfg.bottleneck_dim = True, m
    return cfg


def build_block(ctx, cls, cfg, seed=0):
    import torch

    model = ctx.student("model")
    torch.manual_seed(seed)
    return call(f"{cls}(config)", ctx.submission_dir, getattr(model, cls), cfg).eval()


def find_basis(block, m, n_embd):
    """The learnable basis C of a DownProjectBlock: its one parameter of shape (1, m, n_embd) or (m, n_embd)."""
    found = [p for p in block.parameters() if tuple(p.shape) in ((1, m, n_embd), (m, n_embd))]
    if len(found) != 1:
        raise Fail(f"DownProjectBlock must hold the learnable basis C as one nn.Parameter of shape (1, {m}, "
                   f"{n_embd}), i.e. (1, bottleneck_dim, n_embd); it has {len(found)} parameters of that shape")
    return found[0]


def require_tensor(value, what, shape):
    import torch

    if value is None:
        raise Fail(f"{what} returned None: its part (g) code is missing")
    if not torch.is_tensor(value):
        raise Fail(f"{what} returned a {type(value).__name__}, not a tensor")
    if tuple(value.shape) != tuple(shape):
        raise Fail(f"{what} returned shape {tuple(value.shape)}; expected {tuple(shape)}")
    return value


def run_down(ctx, block, x, m):
    b, t, d = x.shape
    out = call("DownProjectBlock.forward", ctx.submission_dir, block, x)
    return require_tensor(out, f"DownProjectBlock.forward on ({b}, {t}, {d})", (b, m, d))


def run_up(ctx, block, y, x):
    out = call("UpProjectBlock.forward", ctx.submission_dir, block, y, x)
    return require_tensor(out, f"UpProjectBlock.forward on y {tuple(y.shape)}, x {tuple(x.shape)}", tuple(x.shape))


def _rows_changed(a, b, atol=1e-5):
    """Which rows (positions) of two (B, T, C) outputs differ."""
    return ((a - b).abs().amax(dim=(0, 2)) > atol).tolist()


def tensors(report, count, shape=None):
    """A judge's check that a report is `count` tensors (of one `shape`, when given)."""
    import torch

    if (not isinstance(report, (list, tuple)) or len(report) != count
            or not all(torch.is_tensor(t) and (shape is None or tuple(t.shape) == tuple(shape)) for t in report)):
        raise Fail("the test reported no outputs of the student's code to check")
    return [t.float() for t in report]


def changes(ctx, fn, base, positions, rows):
    """Beside the student's code: fn(base) and, for each position p, fn of base with row p of its `rows`-th
    argument moved by random noise (not a constant: a layer norm on a query would remove it)."""
    import torch

    outputs = [fn(*base)]
    for p in positions:
        args = [a.clone() for a in base]
        args[rows][:, p] += torch.randn(args[rows].size(0), args[rows].size(-1))
        outputs.append(fn(*args))
    return outputs


def changed_rows(report, positions, shape):
    """For the judge: which output rows each change moved, from what changes reported."""
    outputs = tensors(report, len(positions) + 1, shape)
    return [_rows_changed(out, outputs[0]) for out in outputs[1:]]


def perceiver_runs(ctx, net, idx):
    """Run net(idx) and record, by class, what the handout's blocks saw: [(kind, input length, output length)]."""
    model = ctx.student("model")
    kinds = {"down": model.DownProjectBlock, "up": model.UpProjectBlock, "block": getattr(model, "Block", ())}
    runs = []
    handles = []

    def hook(module, inputs, output, kind):
        first = inputs[0] if inputs else None
        out = output[0] if isinstance(output, tuple) else output
        runs.append([kind, int(getattr(first, "shape", (0, 0))[1]), int(getattr(out, "shape", (0, 0))[1])])

    for module in net.modules():
        # the first class that matches: a DownProjectBlock written as a subclass of Block is still the down block
        kind = next((k for k, cls in kinds.items() if cls and isinstance(module, cls)), None)
        if kind:
            handles.append(module.register_forward_hook(lambda mod, i, o, kind=kind: hook(mod, i, o, kind)))
    try:
        call("the perceiver GPT's forward", ctx.submission_dir, net, idx)
    finally:
        for h in handles:
            h.remove()
    return runs


def require_blocks(ctx, cfg):
    """A perceiver needs the student's DownProjectBlock and UpProjectBlock; say so if they are missing."""
    model = ctx.student("model")
    down = call("DownProjectBlock(config)", ctx.submission_dir, model.DownProjectBlock, cfg)
    find_basis(down, cfg.bottleneck_dim, cfg.n_embd)
    up = call("UpProjectBlock(config)", ctx.submission_dir, model.UpProjectBlock, cfg)
    if not list(up.parameters()):
        raise Fail("UpProjectBlock.__init__ creates no layers (part g): the perceiver cannot be built")
