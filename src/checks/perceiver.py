"""The perceiver's blocks (part g) run on inputs a test chooses, and what a judge reads from their outputs.

grader.py's part (g) tests lean on this, and so do the perceiver cases of finetune (checks/training.py).  The
blocks are found and checked by what they compute, never by their attributes' names: the basis C is the one
parameter of its shape (find_basis), a model's blocks are recognised by their class (perceiver_runs).

- Beside the student's code: building and running the blocks and models (build_block, perceiver_model, run_down,
  run_up, changes, perceiver_runs) and what a test reports of them (the observe_* functions), failing at once
  where an output is no tensor of the expected shape (require_tensor), which can only cost the student.
- In the judge: reading the reported outputs (tensors, changed_rows and the check_* functions).
- perceiver_config and find_basis serve both sides: the hidden comparison's judge builds the reference's block
  from the one and finds its basis with the other.
"""

from checks.bars import at_most, finite, within
from graderUtil import Fail, call



def gpt_config(model_module, n_layer=3, n_head=4, n_embd=32, block=64):
    """A GPTConfig of 30 characters without dropout (two runs of one model compute the same)."""
    return model_module.GPTConfig(30, block, n_layer=n_layer, n_head=n_head, n_embd=n_embd, embd_pdrop=0.0,
                                  resid_pdrop=0.0, attn_pdrop=0.0)


def perceiver_config(model_module, m=8, n_embd=32, block=64, n_head=4):
    """The GPTConfig of a perceiver with bottleneck_dim m and no dropout, from the student's model.py (beside
    the student's code) or the reference's (in the judge)."""
    cfg = gpt_config(model_module, n_head=n_head, n_embd=n_embd, block=block)
    cfg.perceiver, cfg.bottleneck_dim = True, m
    return cfg


def perceiver_model(ctx, mconf, *bottleneck_dim):
    """Beside the student's code: initialize_perceiver_model(mconf[, bottleneck_dim]); a Fail where it returns
    nothing."""
    helper = ctx.student("helper")
    net = call("initialize_perceiver_model", ctx.submission_dir, helper.initialize_perceiver_model, mconf,
               *bottleneck_dim)
    if net is None:
        raise Fail("initialize_perceiver_model returned None: its part (g) code in helper.py is missing")
    return net


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
    return ((a - b).abs().amax(dim=(0, 2)) > atol).tolist()  # not a bar: tensors() found a and b finite


def tensors(report, count, shape=None):
    """A judge's check that a report is `count` tensors (of one `shape`, when given)."""
    import torch

    if (not isinstance(report, (list, tuple)) or len(report) != count
            or not all(torch.is_tensor(t) and (shape is None or tuple(t.shape) == tuple(shape)) for t in report)):
        raise Fail("the test reported no outputs of the student's code to check")
    return [finite(t.float(), "the outputs of the student's code") for t in report]


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


def observe_down_shapes(ctx, cases, shapes):
    """Beside the student's code: for each (m, n_embd, n_head) of `cases`, a DownProjectBlock run on batches of
    each (B, T) of `shapes` and of T = m + 1 (run_down fails at once on an output of another shape than
    (B, m, n_embd)), then on one sequence alone and within a batch of 3: those two outputs, for the judge."""
    import torch

    reported = []
    for m, n_embd, n_head in cases:
        block = build_block(ctx, "DownProjectBlock", perceiver_config(ctx.student("model"), m, n_embd, n_head=n_head))
        with torch.no_grad():
            for b, t in tuple(shapes) + ((2, m + 1),):
                run_down(ctx, block, torch.randn(b, max(t, m), n_embd), m)
            x = torch.randn(3, 20, n_embd)
            reported.append([run_down(ctx, block, x[1:2], m), run_down(ctx, block, x, m)[1:2]])
    return reported


def check_down_batch(ctx, report, cases):
    """The judge of observe_down_shapes: a sequence's bottleneck is the same alone and within a batch."""
    import torch

    if not isinstance(report, list) or len(report) != len(cases):
        raise Fail("the test reported no outputs of the student's code to check")
    for (m, n_embd, _), pair in zip(cases, report):
        alone, in_batch = tensors(pair, 2, (1, m, n_embd))
        if not torch.allclose(alone, in_batch, atol=1e-5):
            raise Fail("DownProjectBlock: a sequence's bottleneck depends on the other sequences of the batch")


def observe_down_causal(ctx, positions):
    """Beside the student's code: a DownProjectBlock (m = 8, n_embd 32) on a batch of 2 sequences of 20 and on
    the same batch with input row t changed, for each t of `positions` (check_down_causal decides)."""
    import torch

    block = build_block(ctx, "DownProjectBlock", perceiver_config(ctx.student("model")))
    with torch.no_grad():
        return changes(ctx, lambda x: run_down(ctx, block, x, 8), [torch.randn(2, 20, 32)], positions, 0)


def _causal_and_used(report, positions, shape, moved_earlier, left_alone):
    """For each position p that changes reported: the output rows before p stayed as they were (else the message
    moved_earlier(p, those rows)), and row p changed (else left_alone(p)): a causal block that uses its input."""
    for p, changed in zip(positions, changed_rows(report, positions, shape)):
        if any(changed[:p]):
            raise Fail(moved_earlier(p, [r for r in range(p) if changed[r]]))
        if not changed[p]:
            raise Fail(left_alone(p))


def check_down_causal(ctx, report, positions):
    """Changing input position t leaves bottleneck rows j < t as they were and changes row t."""
    _causal_and_used(report, positions, (2, 8, 32),
                     lambda t, rows: f"DownProjectBlock is not causal: changing input position {t} changed bottleneck "
                                     f"rows {rows}; row j may only depend on inputs 0..j",
                     lambda t: f"DownProjectBlock: changing input position {t} did not change bottleneck row {t} "
                               "(the bottleneck must attend to the input)")


def observe_up_queries(ctx, shapes, positions):
    """Beside the student's code: an UpProjectBlock (m = 8, n_embd 32) run on a bottleneck y and an input x of
    each (B, T) of `shapes` (run_up fails at once on an output of another shape than x's), then on a batch of 2
    sequences of 20 and on the same batch with x's row t changed, for each t of `positions`."""
    import torch

    block = build_block(ctx, "UpProjectBlock", perceiver_config(ctx.student("model")))
    with torch.no_grad():
        for b, t in shapes:
            run_up(ctx, block, torch.randn(b, 8, 32), torch.randn(b, t, 32))
        base = [torch.randn(2, 8, 32), torch.randn(2, 20, 32)]
        return changes(ctx, lambda y, x: run_up(ctx, block, y, x), base, positions, 1)


def check_up_queries(ctx, report, positions):
    """Output row t depends on x only through x[t] (x is the query: each position asks the bottleneck for
    itself)."""
    for t, changed in zip(positions, changed_rows(report, positions, (2, 20, 32))):
        if not changed[t] or any(changed[:t] + changed[t + 1:]):
            raise Fail(f"UpProjectBlock: changing x at position {t} changed output rows "
                       f"{[i for i, c in enumerate(changed) if c]}; row t must depend on x at position t only "
                       "(x gives the queries; the bottleneck y gives keys and values)")


def observe_up_causal(ctx, positions):
    """Beside the student's code: an UpProjectBlock (m = 8, n_embd 32) on a bottleneck of 2 x 8 rows and an
    input of 2 x 20, and on the same with bottleneck row j changed, for each j of `positions`."""
    import torch

    block = build_block(ctx, "UpProjectBlock", perceiver_config(ctx.student("model")))
    with torch.no_grad():
        base = [torch.randn(2, 8, 32), torch.randn(2, 20, 32)]
        return changes(ctx, lambda y, x: run_up(ctx, block, y, x), base, positions, 0)


def check_up_causal(ctx, report, positions):
    """Changing bottleneck row j leaves output rows t < j as they were and changes row j."""
    _causal_and_used(report, positions, (2, 20, 32),
                     lambda j, rows: f"UpProjectBlock is not causal: changing bottleneck row {j} changed output rows "
                                     f"{rows}; row t may only use bottleneck rows 0..t",
                     lambda j: f"UpProjectBlock ignores the bottleneck: changing its row {j} did not change output "
                               f"row {j}")


def observe_basis(ctx, sizes):
    """Beside the student's code: for each (m, n_embd, n_head), a down block's basis C (is it learnable, its
    values) and the block's output before and after C changes (check_basis decides)."""
    import torch

    cases = []
    for m, n_embd, n_head in sizes:
        cfg = perceiver_config(ctx.student("model"), m, n_embd, n_head=n_head)
        block = build_block(ctx, "DownProjectBlock", cfg, seed=m)
        basis = find_basis(block, m, n_embd)
        case = {"learnable": bool(basis.requires_grad), "values": basis.detach().float().cpu().clone()}
        with torch.no_grad():
            x = torch.randn(2, 20, n_embd)
            out = run_down(ctx, block, x, m)
            basis.add_(torch.randn_like(basis))
            case["outputs"] = [out, run_down(ctx, block, x, m)]
        cases.append(case)
    return cases


def check_basis(ctx, report, sizes):
    """The judge of the basis C (1g-4-basic): learnable, drawn by xavier_uniform_, and the query of the block."""
    import math

    import torch

    if not isinstance(report, list) or len(report) != len(sizes) or not all(isinstance(c, dict) for c in report):
        raise Fail("the test reported no outputs of the student's code to check")
    for (m, n_embd, _), case in zip(sizes, report):
        if case.get("learnable") is not True:
            raise Fail("DownProjectBlock's basis C must be learnable (an nn.Parameter that requires grad)")
        (values,) = tensors([case.get("values")], 1)
        if values.numel() != m * n_embd:
            raise Fail("the test reported no outputs of the student's code to check")
        # xavier_uniform_ on (1, m, C): U(-b, b), b = sqrt(6 / (m*C + C)); on an (m, C) tensor: b = sqrt(6 / (m +
        # C)).  Either is accepted.  A uniform sample of m*C >= 256 values has max |C| <= 0.8 b with probability
        # 0.8**256 < 1e-24.
        # Uniform, not normal: max |C| / std(C) is sqrt(3) = 1.73 for a uniform sample; the test asks < 2.15.
        # For m*C >= 256 uniform values the sample std falls 19 % below its expectation (ratio >= 2.15) with
        # probability < 1e-8; 256 normal values (xavier_normal_) stay below 2.15 std with probability
        # (1 - 0.0316)**256 < 3e-4, and a real student's xavier_normal_ basis measured 2.4-4.7.
        low = math.sqrt(6.0 / (m * n_embd + n_embd))
        high = math.sqrt(6.0 / (m + n_embd))
        top = values.abs().max().item()
        if not (within(top, 0.8 * low, high + 1e-6, "the basis C's largest value")
                and at_most(top / values.std().item(), 2.15, "the basis C's max/std")):
            raise Fail(f"DownProjectBlock's basis C ranges over +-{top:.3g} (max/std {top / values.std().item():.2f}, "
                       f"a uniform sample gives about 1.73); initialise it with nn.init.xavier_uniform_ (for shape "
                       f"(1, {m}, {n_embd}) that is U(-{low:.3g}, {low:.3g}))")
        before, after = tensors(case.get("outputs"), 2, (2, m, n_embd))
        if torch.allclose(after, before, atol=1e-4):
            raise Fail("DownProjectBlock ignores its basis C: changing C does not change the output (C gives "
                       "the queries of the cross-attention)")


def observe_perceiver_models(ctx, bottlenecks, length):
    """Beside the student's code: initialize_perceiver_model(mconf, m) for each m (None: called without it), and
    which of the handout's blocks its model runs on a batch of `length` tokens, at which lengths (perceiver_runs;
    check_perceiver_models decides)."""
    import torch

    model = ctx.student("model")
    cases = []
    for m in bottlenecks:
        net = perceiver_model(ctx, gpt_config(model, n_layer=4, n_head=2), *([m] if m else []))
        case = {"type": type(net).__name__, "is_gpt": isinstance(net, model.GPT)}
        if case["is_gpt"]:
            case["runs"] = perceiver_runs(ctx, net.eval(), torch.randint(0, 30, (2, length)))
        cases.append(case)
    return cases


def check_perceiver_models(ctx, report, bottlenecks, length):
    """The judge of initialize_perceiver_model (1g-8-basic): one down block to m positions, middle Blocks at m,
    one up block back to `length`."""
    if not isinstance(report, list) or len(report) != len(bottlenecks) or not all(isinstance(c, dict)
                                                                                  for c in report):
        raise Fail("the test reported no outputs of the student's code to check")
    for m, case in zip(bottlenecks, report):
        call_note = "" if m else " (called without bottleneck_dim, whose default is 32)"
        m = m or 32
        if case.get("is_gpt") is not True:
            raise Fail(f"initialize_perceiver_model returned a {case.get('type')}, not a model.GPT")
        runs = case.get("runs")
        if not isinstance(runs, list) or not all(isinstance(r, list) and len(r) == 3 for r in runs):
            raise Fail("the test reported no outputs of the student's code to check")
        downs = [tuple(r) for r in runs if r[0] == "down"]
        ups = [tuple(r) for r in runs if r[0] == "up"]
        middle = sorted({r[1] for r in runs if r[0] == "block"})
        if not downs or not ups:
            raise Fail("initialize_perceiver_model returned a model that runs no DownProjectBlock/UpProjectBlock: "
                       "the config it builds the GPT from must ask for the perceiver variant")
        if len(downs) != 1 or len(ups) != 1 or downs[0][2] != m or ups[0][2] != length:
            raise Fail(f"the perceiver must run one DownProjectBlock down to bottleneck_dim = {m} positions and one "
                       f"UpProjectBlock back to the input length {length}{call_note}; it ran {downs + ups}")
        if middle != [m]:
            raise Fail(f"the perceiver's middle Blocks ran on {middle} positions, not bottleneck_dim = {m}"
                       f"{call_note}: initialize_perceiver_model must set mconf.bottleneck_dim = bottleneck_dim")


def observe_causal_perceiver(ctx, positions):
    """Beside the student's code: initialize_perceiver_model(GPTConfig(30, 64, 3 layers, 2 heads, n_embd 32), 8),
    the kinds of blocks its forward runs, and its logits on 2 sequences of 64 tokens and on the same sequences
    with the tokens from each position t on changed."""
    import torch

    net = perceiver_model(ctx, gpt_config(ctx.student("model"), n_layer=3, n_head=2), 8)
    net.eval()
    kinds = sorted({kind for kind, _, _ in perceiver_runs(ctx, net, torch.randint(0, 30, (1, 16)))})
    outputs = []
    if {"down", "up"} <= set(kinds):
        with torch.no_grad():
            torch.manual_seed(1)
            idx = torch.randint(0, 30, (2, 64))
            base, _ = call("the perceiver GPT's forward", ctx.submission_dir, net, idx)
            outputs.append(require_tensor(base, "the perceiver GPT's forward", (2, 64, 30)))
            for t in positions:
                changed = idx.clone()
                changed[:, t:] = (idx[:, t:] + torch.randint(1, 30, (2, 64 - t))) % 30
                out, _ = call("the perceiver GPT's forward", ctx.submission_dir, net, changed)
                outputs.append(out)
    return {"kinds": kinds, "outputs": outputs}


def check_causal_perceiver(ctx, report, positions):
    """The judge of observe_causal_perceiver: a perceiver (down and up blocks ran), whose logits before t do not
    change with the tokens from t on, and some logit from t on does."""
    import torch

    report = report if isinstance(report, dict) else {}
    if not {"down", "up"} <= set(report.get("kinds") or ()):
        raise Fail("initialize_perceiver_model returned a model that runs no DownProjectBlock/UpProjectBlock, so "
                   "there is no perceiver to check: the config it builds the GPT from must ask for the perceiver "
                   "variant")
    base, *outs = tensors(report.get("outputs"), len(positions) + 1, (2, 64, 30))
    for t, out in zip(positions, outs):
        if not torch.allclose(out[:, :t], base[:, :t], atol=1e-5):
            raise Fail(f"the perceiver is not causal: changing the tokens from position {t} on changed the "
                       f"logits before position {t}")
        if torch.equal(out[:, t:], base[:, t:]):
            raise Fail(f"the perceiver ignores its input: changing the tokens from position {t} on changed no "
                       "logits")
