"""A copier's disguise of a classmate's params: transforms that leave what a model computes as it was while every
weight moves as far as an independent run's (the tests of tools/params_similarity.py plant it).

Three symmetries of the course's GPT, each exact in real arithmetic:
- the residual stream's dimensions permuted everywhere: embeddings, the perceiver's basis C, every LayerNorm's gain
  and bias, the inputs of every projection that reads the stream and the outputs of every one that writes it (a
  LayerNorm's mean and variance do not depend on the order of the dimensions);
- each attention layer's heads permuted, each head's queries and keys turned by one orthogonal matrix (their dot
  products stay as they were) and its values by another, which the output projection turns back;
- each MLP's hidden units permuted (GELU acts on each unit alone).
The same draws go into every file of one copier (a pretrain file and the files finetuned from it keep their
lineage's drift), and the logits stay within float32 rounding of the source's.
"""

import re

N_HEAD = 8  # the course's model: the heads of every attention layer (queries of n_embd / N_HEAD dimensions each)


def _generator(seed, prefix):
    import torch

    return torch.Generator().manual_seed(seed * 1000003 + sum(ord(c) * 31 ** i for i, c in enumerate(prefix)) % 99991)


def _orthogonal(n, g):
    import torch

    q, r = torch.linalg.qr(torch.randn(n, n, generator=g, dtype=torch.float64))
    return q * torch.sign(torch.diagonal(r))[None, :]


def disguise(state, seed=7):
    """A state dict ({name: tensor}) of the course's vanilla model or perceiver, transformed as the module says."""
    import torch

    out = {k: v.detach().clone().double() for k, v in state.items()}
    d = out["tok_emb.weight"].shape[1]
    perm = torch.randperm(d, generator=torch.Generator().manual_seed(seed))
    # the residual stream: every tensor with a dimension of the stream
    for name, t in out.items():
        if name in ("tok_emb.weight", "head.weight"):
            out[name] = t[:, perm]
        elif name in ("pos_emb",) or name.endswith(".C"):
            out[name] = t[..., perm]
        elif re.search(r"ln\w*\.(weight|bias)$", name):
            out[name] = t[perm]
        elif re.search(r"attn\.(key|query|value)\.weight$", name) or re.search(r"mlp\.0\.weight$", name):
            out[name] = t[:, perm]  # reads the stream
        elif re.search(r"(attn\.proj|mlp\.2)\.weight$", name):
            out[name] = t[perm, :]  # writes it
        elif re.search(r"(attn\.proj|mlp\.2)\.bias$", name):
            out[name] = t[perm]
    # each attention layer: heads permuted, queries and keys turned together, values turned and turned back
    for prefix in sorted({n.rsplit(".", 2)[0] for n in out if re.search(r"attn\.query\.weight$", n)}):
        g = _generator(seed, prefix)
        hs = d // N_HEAD
        order = torch.randperm(N_HEAD, generator=g)
        qk = [_orthogonal(hs, g) for _ in range(N_HEAD)]
        vv = [_orthogonal(hs, g) for _ in range(N_HEAD)]

        def turned(t, turns):  # rows of t (out dims) by head: head h's rows become turns[h] @ rows of order[h]
            rows = t.reshape(N_HEAD, hs, *t.shape[1:])
            return torch.cat([torch.tensordot(turns[h], rows[order[h]], dims=1) for h in range(N_HEAD)])

        for part, turns in (("query", qk), ("key", qk), ("value", vv)):
            out[f"{prefix}.{part}.weight"] = turned(out[f"{prefix}.{part}.weight"], turns)
            out[f"{prefix}.{part}.bias"] = turned(out[f"{prefix}.{part}.bias"], turns)
        proj = out[f"{prefix}.proj.weight"].reshape(-1, N_HEAD, hs)  # columns by head
        out[f"{prefix}.proj.weight"] = torch.cat([proj[:, order[h]] @ vv[h].T for h in range(N_HEAD)], dim=1)
    # each MLP's hidden units
    for prefix in sorted({n.rsplit(".", 2)[0] for n in out if re.search(r"mlp\.0\.weight$", n)}):
        hidden = torch.randperm(out[f"{prefix}.0.weight"].shape[0], generator=_generator(seed, prefix))
        out[f"{prefix}.0.weight"] = out[f"{prefix}.0.weight"][hidden]
        out[f"{prefix}.0.bias"] = out[f"{prefix}.0.bias"][hidden]
        out[f"{prefix}.2.weight"] = out[f"{prefix}.2.weight"][:, hidden]
    return {k: v.to(state[k].dtype) for k, v in out.items()}
