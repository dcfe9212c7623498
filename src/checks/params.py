"""The submitted params file read as the course's model: which tensor plays which role (no student code runs).

A prediction test's judge (checks/predictions.py) decodes the questions with the params that go with a prediction
file.  This module loads that file and maps it onto the course's model.  Outside the perceiver's blocks the names
are the given code's (GPT, Block and CausalSelfAttention are the same for everyone), taken from the reference's
model of the course configuration (`reference_model`).

The perceiver's blocks are the student's own classes, so their parameter names are the student's.  They are
mapped onto the roles of the handout's block (basis C, attention layer norm(s), query/key/value/output
projections, MLP layer norm, the MLP's two layers) by shape, by name where the names say it (the given Block's
ln1/ln2, attention's key/query/value/proj, or q/k/v/out-like names) and by registration order otherwise, and every
reading the grader accepts (readings.READINGS: the layer norm on the query, the keys/values or both,
the residual from the query, from its normalised form or none; a third LayerNorm for the query) is a candidate
(`fit`).  predictions.choose_pair keeps the candidate whose answers agree best with the file.

A self-check ties this reading to the reference's code: on a random model of the course's size, one of its
readings must give the reference model's logits (`_self_check`).
"""

import re
from pathlib import Path

from kit import course
from checks.decoder import logits
from checks.lineage import load_params  # the one loader of a params file (the student's grader's too)
from checks.readings import READINGS
from graderUtil import Fail

PAD, MASK = course.PAD_CHAR, course.MASK_CHAR
MODEL = course.MODEL  # the handout's model (run.py's defaults)

# -- the params file ---------------------------------------------------------------------------------------


def course_vocab(wiki_path):
    """stoi of the pretraining corpus as the handout builds it: PAD 0, MASK 1, then the sorted characters."""
    chars = sorted(set(Path(wiki_path).read_text(encoding="utf-8")) - {PAD, MASK})
    return {ch: i for i, ch in enumerate([PAD, MASK] + chars)}


# -- the roles of the parameters ---------------------------------------------------------------------------
#
# A model's weights as the forward pass below uses them: {"tok", "pos", "ln_f", "head", "blocks": [block],
# "down", "up"}; a block {"ln1", "attn": {"q", "k", "v", "o"}, "ln2", "fc1", "fc2"} (a layer: (weight, bias));
# a perceiver block {"C" (down only), "ln_q", "ln_kv" (a layer or None), "res" ("query", "normalised query" or
# "none": where the residual around the cross-attention starts, readings.READINGS), "attn",
# "ln2", "fc1", "fc2"}.


def _layer(state, prefix, bias=True):
    return state[f"{prefix}.weight"], state.get(f"{prefix}.bias") if bias else None


def _given_block(state, prefix):
    """The given Block (model.py's, the same for every student): ln1, ln2, attn.key/query/value/proj, mlp.0/2."""
    return {"ln1": _layer(state, f"{prefix}.ln1"), "ln2": _layer(state, f"{prefix}.ln2"),
            "attn": {r: _layer(state, f"{prefix}.attn.{n}") for r, n in
                     (("q", "query"), ("k", "key"), ("v", "value"), ("o", "proj"))},
            "fc1": _layer(state, f"{prefix}.mlp.0"), "fc2": _layer(state, f"{prefix}.mlp.2")}


FILLER = {"w", "to", "proj", "linear", "lin", "layer", "fc", "c", "attn", "attention", "self", "cross", "mat",
          "weight", "weights", "head", "heads", "in", "layers"}


def _attention_role(name):
    """'q', 'k', 'v' or 'o' when the last part of a projection's name says which it is, else None."""
    tokens = re.findall(r"[a-z]+", name.rsplit(".", 1)[-1].lower())
    if any(t.startswith("quer") for t in tokens):
        return "q"
    if any(t in ("key", "keys") for t in tokens):
        return "k"
    if any(t.startswith("val") for t in tokens):
        return "v"
    core = [t[1:] if len(t) == 2 and t[0] == "w" else t for t in tokens if t not in FILLER]
    if core in (["q"], ["k"], ["v"], ["o"]):
        return core[0]
    if core in (["out"], ["output"], ["projection"], ["dense"]) or (not core and "proj" in tokens):
        return "o"
    return None


def _modules(state, prefix):
    """The layers under prefix in registration order (a state dict keeps it): {module: {leaf: tensor}}."""
    found = {}
    for name, value in state.items():
        if name.startswith(prefix + "."):
            module, _, leaf = name[len(prefix) + 1:].rpartition(".")
            found.setdefault(module, {})[leaf] = value
    return found


def _perceiver_block(state, prefix, down, d, m, what):
    """Every way the student's block under prefix can be read as the handout's block: a list of role dicts,
    or a Fail that says which part of the block is missing."""
    modules = _modules(state, prefix)
    basis, norms, square, fc1, fc2 = [], [], [], [], []
    for module, leaves in modules.items():
        for leaf, t in leaves.items():
            shape = tuple(t.shape)
            if down and shape in ((1, m, d), (m, d)):
                basis.append(t.reshape(1, m, d))
            elif leaf == "weight" and shape == (d,) and tuple(leaves.get("bias", t).shape) == (d,):
                norms.append((module, (t, leaves.get("bias"))))
            elif leaf == "weight" and len(shape) == 2:
                layer = (module, (t, leaves.get("bias")))
                {(d, d): square, (4 * d, d): fc1, (d, 4 * d): fc2}.get(shape, []).append(layer)
    if down and len(basis) != 1:
        raise Fail(f"{what} holds {len(basis)} tensors of shape (1, {m}, {d}) for the basis C, not one")
    if len(square) != 4 or len(fc1) != 1 or len(fc2) != 1 or len(norms) not in (2, 3):
        raise Fail(f"{what} has {len(square)} projections of shape ({d}, {d}), {len(fc1) + len(fc2)} MLP layers and "
                   f"{len(norms)} LayerNorms, where the handout's block has 4 projections (query, key, value, "
                   "output), 2 MLP layers and 2 LayerNorms (3 with one of its own for the query)")
    roles = [_attention_role(name) for name, _ in square]
    if sorted(r or "" for r in roles) == ["k", "o", "q", "v"]:
        orders = [roles]
    else:  # the given attention registers key, query, value, proj; a hand-written one often q, k, v, out
        orders = [["k", "q", "v", "o"], ["q", "k", "v", "o"]]
    by_digit = sorted(norms, key=lambda n: [int(x) for x in re.findall(r"\d+", n[0])] or [0])
    if len(norms) == 2:  # one for the attention sub-layer, one for the MLP's: ln1, ln2 or registration order
        a, b = by_digit[0][1], by_digit[1][1]
        layouts = [(a if q else None, a if kv else None, res, b) for q, kv, res in READINGS]
    else:  # a LayerNorm of its own for the query: any of the three may be the query's, the keys' or the MLP's
        layouts = [(norms[i][1], norms[j][1], res, norms[3 - i - j][1])
                   for i in range(3) for j in range(3) if i != j
                   for q, kv, res in READINGS if q and kv]
    candidates = []
    for order in orders:
        attn = {r: layer for r, (_, layer) in zip(order, square)}
        for ln_q, ln_kv, res, ln2 in layouts:
            block = {"ln_q": ln_q, "ln_kv": ln_kv, "res": res, "attn": attn, "ln2": ln2, "fc1": fc1[0][1],
                     "fc2": fc2[0][1]}
            if down:
                block["C"] = basis[0]
            candidates.append(block)
    return candidates


def fit(state, reference, variant, params_name, vocab_size):
    """The course's model holding the params, or a Fail: (shared weights, the down block's readings, the up
    block's readings); weights() puts one reading of each together.
    `reference`: the reference's model of the course configuration, whose parameter names are the given code's
    outside the perceiver's blocks."""
    d, m = MODEL["n_embd"], course.BOTTLENECK_DIM
    size = (f"n_layer {MODEL['n_layer']}, n_head {MODEL['n_head']}, n_embd {d}, block_size {MODEL['block_size']}"
            + (f", bottleneck {m}" if variant == "perceiver" else ""))
    own = [(k, tuple(p.shape)) for k, p in reference.named_parameters()
           if not k.startswith(("down_block.", "up_block."))]
    missing = [k for k, _ in own if k not in state]
    wrong = [(k, s) for k, s in own if k in state and tuple(state[k].shape) != s]
    if missing or wrong:
        what = (f"lacks {len(missing)} of the model's parameters (e.g. {missing[0]})" if missing else
                f"has {wrong[0][0]} of shape {tuple(state[wrong[0][0]].shape)}, not {wrong[0][1]}")
        raise Fail(f"{params_name} does not fit the {variant} model of the course configuration ({size}): it {what}")
    if tuple(state["tok_emb.weight"].shape)[0] != vocab_size:
        raise Fail(f"{params_name} has {state['tok_emb.weight'].shape[0]} characters, not the {vocab_size} of wiki.txt")
    n_inner = len(reference.blocks)
    base = {"tok": state["tok_emb.weight"], "pos": state["pos_emb"], "ln_f": _layer(state, "ln_f"),
            "head": state["head.weight"], "blocks": [_given_block(state, f"blocks.{i}") for i in range(n_inner)],
            "variant": variant, "n_head": MODEL["n_head"]}
    if variant == "vanilla":
        return base, [None], [None]
    try:
        downs = _perceiver_block(state, "down_block", True, d, m, "its DownProjectBlock")
        ups = _perceiver_block(state, "up_block", False, d, m, "its UpProjectBlock")
    except Fail as e:
        raise Fail(f"{params_name} does not fit the course's perceiver as the handout describes it: {e}") from None
    return base, downs, ups


def read_names(state, fitted):
    """The names of the tensors of state that the fitted model reads in some reading of its blocks.  fit keeps the
    loaded tensors themselves (or views of the same elements), so a tensor is known by where its elements start
    and how many there are: another name for other elements, even of the same storage, is not among them."""
    base, downs, ups = fitted
    read = set()

    def walk(node):
        if hasattr(node, "data_ptr"):
            read.add((node.data_ptr(), node.numel()))
        elif isinstance(node, dict):
            for value in node.values():
                walk(value)
        elif isinstance(node, (list, tuple)):
            for value in node:
                walk(value)

    walk([base, downs, ups])
    return [name for name, t in state.items() if (t.data_ptr(), t.numel()) in read]


def weights(fitted, down, up):
    base, downs, ups = fitted
    return base if base["variant"] == "vanilla" else dict(base, down=downs[down], up=ups[up])


# -- the reference's code ------------------------------------------------------------------------------------


def course_model(model_mod, helper, variant, vocab_size):
    """The course configuration's model from a package's model.py and helper.py (random weights, float32, eval)."""
    import torch

    mconf = model_mod.GPTConfig(vocab_size, MODEL["block_size"], n_layer=MODEL["n_layer"], n_head=MODEL["n_head"],
                                n_embd=MODEL["n_embd"])
    torch.manual_seed(0)
    net = (helper.initialize_vanilla_model(mconf) if variant == "vanilla"
           else helper.initialize_perceiver_model(mconf, course.BOTTLENECK_DIM))
    return net.float().eval()


def reference_model(ctx, variant, vocab_size):
    """The reference's model in the course configuration (random weights): the given code's names and shapes."""
    key = ("reference_model", variant, vocab_size)
    if key not in ctx.cache:
        ctx.cache[key] = course_model(ctx.solution("model"), ctx.solution("helper"), variant, vocab_size)
        _self_check(ctx.cache[key], variant, vocab_size)
    return ctx.cache[key]


def _own_pair(net, fitted, vocab_size):
    """The reading (down, up) whose logits are net's own, or None."""
    import torch

    gen = torch.Generator().manual_seed(3)
    idx = torch.randint(0, vocab_size, (2, 45), generator=gen)
    with torch.no_grad():
        want = net(idx)[0].float()
        for pair in ((i, j) for i in range(len(fitted[1])) for j in range(len(fitted[2]))):
            if torch.allclose(logits(weights(fitted, *pair), idx), want, atol=1e-4):
                return pair
    return None


def _self_check(net, variant, vocab_size):
    """One of this module's readings gives the reference model's logits (its params mapped like a student's)."""
    state = {k: v.detach().float() for k, v in net.state_dict().items() if v.is_floating_point()}
    fitted = fit(state, net, variant, "the reference's params", vocab_size)
    if _own_pair(net, fitted, vocab_size) is None:
        raise Fail(f"the grader's {variant} model differs from the reference's (a problem of the grading set-up)")


def own_reading(path, variant, vocab_size, model_mod, helper):
    """The params file at path as the weights of the reading that the package's own model computes with them (the
    instructor's experiment tool measures the reference's runs this way)."""
    net = course_model(model_mod, helper, variant, vocab_size)
    state = load_params(path, Path(path).name)
    net.load_state_dict(state, strict=False)  # the masks are buffers the params file may lack
    fitted = fit(state, net, variant, Path(path).name, vocab_size)
    pair = _own_pair(net, fitted, vocab_size)
    if pair is None:
        raise Fail(f"no reading of {path} computes what its own model computes")
    return weights(fitted, *pair)
