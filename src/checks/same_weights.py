"""The hidden tests of the code: the student's model or block and the reference's, given the same weights.

grader.py's 1c-0-hidden (the vanilla model) and 1g-3-hidden/1g-4-hidden (the perceiver's blocks) lean on this.
The weights are set by shape alone (fill_by_shape), so no attribute name matters.  Beside the student's code:
the student's module filled and run on fixed inputs, its parameter shapes and outputs observed
(observe_vanilla_logits, observe_block_outputs).  In the judge: the reference's module filled the same way, its
shapes and outputs compared with the report (reported_shapes, check_shapes, assert_close), for a block in every
reading of it that the course's text allows (block_readings, check_block_outputs).
"""

from checks.bars import at_most
from graderUtil import Fail, Mismatch, call
from checks.perceiver import build_block, find_basis, perceiver_config, require_tensor
from checks.readings import READINGS
from checks.training import vanilla_config, vanilla_model


def _fill_value(shape, n_embd):
    """The value every parameter of this shape gets in fill_by_shape (see there)."""
    import zlib

    import torch

    d = n_embd
    if len(shape) == 3 and shape[0] == 1:  # (1, m, d) or (1, block, d): the same values as (m, d)
        return _fill_value(shape[1:], d).unsqueeze(0)
    gen = torch.Generator().manual_seed(zlib.crc32(repr(tuple(shape)).encode()))
    if shape == (d, d):  # symmetric: a layer may compute x @ W or x @ W.T
        w = torch.randn(d, d, generator=torch.Generator().manual_seed(7)) / d ** 0.5
        return (w + w.T) / 2
    if shape == (d,):
        return 1.0 + 0.2 * torch.randn(d, generator=torch.Generator().manual_seed(8))
    for k in (2, 3):  # key/value (or query/key/value) projections fused into one layer
        if shape == (k * d, d):
            return torch.cat([_fill_value((d, d), d)] * k)
        if shape == (k * d,):
            return torch.cat([_fill_value((d,), d)] * k)
    return torch.randn(shape, generator=gen) / max(1, shape[-1]) ** 0.5


def fill_by_shape(module, n_embd):
    """Give a module weights without knowing any attribute name: every parameter gets a value that depends on
    its shape only (_fill_value).  Done to the student's module and to the reference's alike, parameters of one
    shape then hold equal values (the four n_embd x n_embd attention projections, the layer norms and biases,
    ...), so it does not matter which of them plays which role, and the (d, d) matrix is symmetric, so neither
    does x @ W versus x @ W.T.  Parameters, never buffers: a course-style copy of the given code keeps its
    attention masks in the state dict.  Returns the parameter shapes, sorted."""
    import torch

    with torch.no_grad():
        for p in module.parameters():
            p.copy_(_fill_value(tuple(p.shape), n_embd).to(p.dtype))
    return sorted(tuple(p.shape) for p in module.parameters())


def reported_shapes(report):
    """The parameter shapes a student's worker reported (for a judge)."""
    if not isinstance(report, dict) or not isinstance(report.get("shapes"), list):
        raise Fail("the test reported nothing to compare with the reference")
    return sorted(tuple(int(n) for n in s) for s in report["shapes"] if isinstance(s, (list, tuple)))


def check_shapes(shapes, ref_shapes, what, flexible=()):
    """The student's parameter shapes are the reference's.  The number of parameters of a `flexible` shape may
    differ (a third LayerNorm, for a block that normalises both the query and the keys/values, computes what
    the reference's LayerNorm computes)."""
    squeeze = lambda s: s[1:] if len(s) == 3 and s[0] == 1 else s  # noqa: E731  ((1, m, d) and (m, d) alike)
    fixed = lambda ss: sorted(s for s in map(squeeze, ss) if s not in flexible)  # noqa: E731
    if fixed(shapes) != fixed(ref_shapes):
        missing = sorted(set(ref_shapes) - set(shapes))[:4]
        extra = sorted(set(shapes) - set(ref_shapes))[:4]
        raise Fail(f"{what} does not have the parameters the handout describes"
                   + (f"; none of shape {missing}" if missing else "")
                   + (f"; unexpected shapes {extra}" if extra else "")
                   + f" ({len(shapes)} parameters, the handout's has {len(ref_shapes)})")


def assert_close(got, want, what, atol=1e-4):
    import torch

    if not torch.is_tensor(got):
        raise Fail(f"{what}: expected a tensor, got {type(got).__name__}")
    if tuple(got.shape) != tuple(want.shape):
        raise Fail(f"{what} have shape {tuple(got.shape)}, not the reference's shape")
    diff = (got.detach().float().cpu() - want.detach().float().cpu()).abs().max().item()
    if not at_most(diff, atol, f"the largest difference of {what} from the reference's"):
        raise Fail(f"{what} differ from the reference's (largest difference {diff:.3g}) when both hold the same "
                   "weights")


def block_readings(ctx, ref, cls, m, args, broad=False):
    """The outputs of the block in each reading the handout and the course's hints allow
    (readings.READINGS: where the attention sub-layer's layer norm goes and where its residual starts;
    8 of 26 real solutions we graded dropped that residual), computed with the reference's layers, which hold the
    same weights as the student's, so every LayerNorm is the same function.  The MLP sub-layer is Block's in
    every reading: h + mlp(layer_norm(h)).

    broad: also the blocks that are not the handout's but still compute a cross-attention block from these
    weights: no layer norm on the attention's inputs, the MLP sub-layer without its layer norm or without its
    residual.  Outputs among these are a genuine block's (a student's bug, not a forged report): such a mismatch
    still vouches for the basic tests of the block (registry.Mismatch).  A block without an MLP, or with other
    layers, already differs in its parameter shapes."""
    import torch.nn as nn

    attention = ctx.solution("attention").CausalCrossAttention
    ln = next(m for m in ref.modules() if isinstance(m, nn.LayerNorm))
    attn = next(m for m in ref.modules() if isinstance(m, attention))
    mlp = next(c for c in ref.children() if not isinstance(c, (nn.LayerNorm, attention)))
    if cls == "DownProjectBlock":
        (x,) = args
        query, kv = find_basis(ref, m, x.size(-1)).reshape(1, m, x.size(-1)), x
    else:
        y, x = args
        query, kv = x, y
    readings = READINGS + (((False, False, "query"), (False, False, "none")) if broad else ())
    norm_names = {(True, False): "layer norm on the query", (False, True): "layer norm on the keys/values",
                  (True, True): "layer norm on both", (False, False): "no layer norm"}
    sublayers = {"": lambda h: h + mlp(ln(h))}
    if broad:
        sublayers.update({", MLP without its layer norm": lambda h: h + mlp(h),
                          ", MLP without its residual": lambda h: mlp(ln(h))})
    outputs = {}
    for norm_q, norm_kv, start in readings:
        q, k = (ln(query) if norm_q else query), (ln(kv) if norm_kv else kv)
        h = {"query": query, "normalised query": q, "none": 0}[start] + attn(k, q)
        name = norm_names[norm_q, norm_kv] + (f", residual from the {start}" if start != "none" else ", no residual")
        for sub_name, sublayer in sublayers.items():
            outputs[name + sub_name] = sublayer(h)
    return outputs


def _block_inputs(cls, input_shapes):
    """The inputs on which a block is compared with the reference (fixed: the judge draws the same)."""
    import torch

    gen = torch.Generator().manual_seed(7)
    if cls == "DownProjectBlock":
        return [(torch.randn(b, t, 32, generator=gen),) for b, t in input_shapes]
    return [(torch.randn(b, 8, 32, generator=gen), torch.randn(b, t, 32, generator=gen)) for b, t in input_shapes]


def observe_block_outputs(ctx, cls, input_shapes):
    """Beside the student's code: the block's parameter shapes and its outputs on _block_inputs, with weights
    set by shape (fill_by_shape); the judge (check_block_outputs) compares them with the reference's layers."""
    import torch

    mine = build_block(ctx, cls, perceiver_config(ctx.student("model")))
    shapes = fill_by_shape(mine, 32)
    outputs = []
    with torch.no_grad():
        for args in _block_inputs(cls, input_shapes):
            shape = (args[0].size(0), 8, 32) if cls == "DownProjectBlock" else tuple(args[1].shape)
            got = call(f"{cls}.forward", ctx.submission_dir, mine, *args)
            outputs.append(require_tensor(got, f"{cls}.forward", shape).detach().float().cpu())
    return {"shapes": shapes, "outputs": outputs}


def check_block_outputs(ctx, report, cls, input_shapes):
    """The judge: the student's block and the reference's layers, given the same weights by shape
    (fill_by_shape), agree in one of the readings the course's text allows (block_readings), the same one for
    every input.  Where they do not, but the student's outputs are those of a cross-attention block built from
    these weights in some other way (block_readings' broad family: a missing layer norm, say), the failure is a
    Mismatch: the comparison's point is lost, the basic tests that count with it still count."""
    import torch

    ref_model = ctx.solution("model")
    ref_cfg = perceiver_config(ref_model)
    ref = getattr(ref_model, cls)(ref_cfg).eval()
    check_shapes(reported_shapes(report), fill_by_shape(ref, 32), cls, flexible=((32,),))
    inputs = _block_inputs(cls, input_shapes)
    outputs = report.get("outputs")
    if not isinstance(outputs, list) or len(outputs) != len(inputs):
        raise Fail(f"the test reported no outputs of {cls} to compare")
    agree, first_miss, seen = None, None, []
    with torch.no_grad():
        for args, got in zip(inputs, outputs):
            readings = block_readings(ctx, ref, cls, ref_cfg.bottleneck_dim, args)
            want = ref(*args)
            if not any(torch.allclose(out, want, atol=1e-5) for out in readings.values()):
                raise Fail(f"the reference's {cls} is none of the readings (a problem of the grading set-up)")
            got = require_tensor(got, f"{cls}.forward", tuple(want.shape)).float()
            seen.append((args, got))
            diffs = _diffs(got, readings)
            agree = _close(diffs) if agree is None else agree & _close(diffs)
            if not agree and first_miss is None:  # the message's example: the first input no reading agrees on
                first_miss = (", ".join(str(tuple(a.shape)) for a in args), min(diffs.values()))
        if agree:
            return
        # only now the broad family: a block that still computes a cross-attention block from these weights is a
        # student's bug, its basic tests count (Mismatch); anything else is no block of the kind at all
        genuine = None
        for args, got in seen:
            close = _close(_diffs(got, block_readings(ctx, ref, cls, ref_cfg.bottleneck_dim, args, broad=True)))
            genuine = close if genuine is None else genuine & close
    shapes, nearest = first_miss
    raise (Mismatch if genuine else Fail)(
        f"{cls}'s outputs for inputs {shapes} differ from the handout's block when both hold the same weights "
        f"(largest difference {nearest:.3g} from the nearest reading: cross-attention with a residual "
        "connection, a layer norm on the query and/or the keys/values, then Block's MLP sub-layer with its own "
        "residual)")


def _diffs(got, readings):
    """The largest difference of the student's outputs from each reading's."""
    return {name: (got - out.float()).abs().max().item() for name, out in readings.items()}


def _close(diffs):
    """The readings whose outputs the student's agree with."""
    return {name for name, d in diffs.items() if at_most(d, 1e-4, f"the largest difference from the reading {name!r}")}


def _vanilla_inputs(sizes):
    """Two sequences of 100 tokens (fixed: the judge draws the same)."""
    import torch

    return torch.randint(0, sizes["vocab"], (2, 100), generator=torch.Generator().manual_seed(224))


def observe_vanilla_logits(ctx, sizes):
    """Beside the student's code: initialize_vanilla_model's model of the given sizes, with weights set by shape
    (fill_by_shape), its parameter shapes and its logits on _vanilla_inputs (check_vanilla_logits decides)."""
    import torch

    net, _ = vanilla_model(ctx, sizes)
    shapes = fill_by_shape(net, sizes["n_embd"])
    net.eval()
    with torch.no_grad():
        got, _ = call("the vanilla GPT's forward", ctx.submission_dir, net, _vanilla_inputs(sizes))
    got = require_tensor(got, "the vanilla GPT's forward", (2, 100, sizes["vocab"]))
    return {"shapes": shapes, "logits": got.detach().float().cpu()}


def check_vanilla_logits(ctx, report, sizes):
    """The judge: the reference's vanilla model, filled the same way, has the reported parameter shapes and
    computes the reported logits."""
    import torch

    ref_helper, ref_model = ctx.solution("helper"), ctx.solution("model")
    ref = ref_helper.initialize_vanilla_model(vanilla_config(ref_model, sizes)).eval()
    check_shapes(reported_shapes(report), fill_by_shape(ref, sizes["n_embd"]), "the vanilla model")
    with torch.no_grad():
        want, _ = ref(_vanilla_inputs(sizes))
    assert_close(report.get("logits"), want, "the vanilla model's logits")
