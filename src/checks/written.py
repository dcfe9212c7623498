"""Extra-credit checks for the written part: attention exploration (3a-3e) and
the attention cost of the two models (1g).

grader.py registers each ``check_*`` function as a test (its points are in
points.json: 3a 2, 3b 2, 3c 3, 3d 3 extra credit, as in the handout; 3e and
the 1g cost check are practice).  A check takes the imported student module
``submission.attention_exploration``, returns None when the construction is
right and raises Fail with a short reason otherwise (``not
implemented: ...`` when a function returns None), as every check does.

How false failures are ruled out. Every instance is drawn from a
torch.Generator with a fixed seed, so a check gives the same verdict on every
run. Beyond that, each tolerance is derived so that ANY construction meeting
the contract in the module's docstrings passes with probability at least
1 - 1e-6 over the random draw, had the seeds been chosen freely; the bound is
stated next to each check.

    * Weights on fixed keys (3a, 3b, 3c-0, 3d-0, 3d-1): a logit margin of
      ``scale`` puts every weight within (n - 1) exp(-scale) of its target;
      the checks allow n exp(-scale) + 1e-9. Nothing random is involved.
    * Tiny-noise keys (3c-0, 3d-0): the noise is scaled so that each logit
      moves by at most N(0, 1e-6); over at most 64 samples * 16 keys * 2
      heads all stay within 7e-3 except with probability < 6e-9, and then
      each weight moves by at most a factor exp(0.014), i.e. by less than
      0.015 (allowance 0.02).
    * Spread under the 3d(ii) perturbation (3d-2): the stray of c from
      (v_a + v_b) / 2 lies in [0, 1], so by Hoeffding the mean over 8000
      samples exceeds its expectation by 0.05 with probability at most
      exp(-2 * 8000 * 0.05^2) = exp(-40). The limit is 0.2. On these
      instances (estimated from 400000 samples each) a two-head design that
      picks a with one head and b with the other strays 0.044-0.062 in
      expectation, heads that only lean towards a or b (q1 = beta (2 mu_a +
      mu_b), q2 likewise) about 0.166, for which the bound is still
      exp(-2 * 8000 * 0.034^2) < 1e-8; a single head strays 0.41-0.44.
    * 3e and 1g are deterministic: exact formulas, tolerances far above
      rounding.
"""

import hashlib
import math
import numbers

import torch

import attention_simulation as sim  # src/'s, beside grader.py
from checks.bars import at_least, at_most
from graderUtil import Fail

DTYPE = torch.float64
MODULE = "submission/attention_exploration.py"


# ----------------------------------------------------------------------------
# Calling the student's code and checking what comes back
# ----------------------------------------------------------------------------

def _call(module, name, *args):
    fn = getattr(module, name, None)
    if fn is None:
        raise Fail(f"not implemented: {MODULE} has no function {name}")
    try:
        out = fn(*args)
    except NotImplementedError:
        raise Fail(f"not implemented: {name} raised NotImplementedError") from None
    except Exception as err:  # a crash in student code is a failed check, not a grader crash
        raise Fail(f"{name} raised {type(err).__name__}: {err}") from None
    if out is None:
        raise Fail(f"not implemented: {name} returned None")
    return out


def _parts(out, count, name):
    """A tuple/list of ``count`` items, none of them None."""
    if not isinstance(out, (tuple, list)) or len(out) != count:
        raise Fail(f"{name} must return a tuple of {count} tensors, got {type(out).__name__}")
    if any(part is None for part in out):
        raise Fail(f"not implemented: {name} returned None inside its tuple")
    return out


def _tensor(x, what):
    if isinstance(x, dict) and "unsupported" in x:  # recorded as data (_data): its type was no tensor
        raise Fail(f"{what} must be a torch tensor, got {x['unsupported']}")
    try:
        t = torch.as_tensor(x.detach() if isinstance(x, torch.Tensor) else x)
    except Exception:
        raise Fail(f"{what} must be a torch tensor, got {type(x).__name__}") from None
    if t.is_complex() or t.dtype == torch.bool:
        raise Fail(f"{what} must be a real float tensor, got dtype {t.dtype}")
    t = t.to(DTYPE)
    if not torch.isfinite(t).all():
        raise Fail(f"{what} contains NaN or inf")
    return t


def _vector(x, d, what):
    t = _tensor(x, what)
    if t.numel() != d or sum(size != 1 for size in t.shape) > 1:
        raise Fail(f"{what} must have shape ({d},), got {tuple(t.shape)}")
    return t.reshape(d)


def _matrix(x, cols, what, rows=None):
    t = _tensor(x, what)
    if t.dim() != 2 or t.shape[1] != cols or (rows is not None and t.shape[0] != rows):
        want = f"({rows if rows is not None else 'p'}, {cols})"
        raise Fail(f"{what} must have shape {want}, got {tuple(t.shape)}")
    return t


def _expect_weights(weights, target, tol, context):
    """Every weight within tol of its target, else a readable failure."""
    gap = (weights - target).abs()
    worst = int(gap.argmax())
    if not at_most(gap[worst], tol, f"{context}: the attention weight's distance from its target"):
        raise Fail(
            f"{context}: attention weight on key {worst} is {weights[worst]:.4f}, "
            f"should be {target[worst]:.4f} (within {tol:.1e})")


def _margin_tolerance(n, scale):
    return n * math.exp(-scale) + 1e-9


# ----------------------------------------------------------------------------
# Instances (fixed seeds)
# ----------------------------------------------------------------------------

def _unit(v):
    return v / v.norm()


def _copy_instance(n, d, seed):
    """n unit keys in R^d and an index j. One other key has cosine 0.6 with
    k_j (so a query must account for similar keys); no key has cosine above
    0.9 with k_j (so the needed query stays short)."""
    gen = torch.Generator().manual_seed(seed)
    j = int(torch.randint(n, (1,), generator=gen))
    keys = torch.empty(n, d, dtype=DTYPE)
    keys[j] = _unit(torch.randn(d, generator=gen, dtype=DTYPE))
    for i in range(n):
        if i == j:
            continue
        while True:
            k = _unit(torch.randn(d, generator=gen, dtype=DTYPE))
            if k @ keys[j] <= 0.9:  # not a bar: drawing the instance
                break
        keys[i] = k
    near = (j + 1) % n
    w = torch.randn(d, generator=gen, dtype=DTYPE)
    w = _unit(w - (w @ keys[j]) * keys[j])
    keys[near] = 0.6 * keys[j] + 0.8 * w
    return keys, j


def _pair_instance(n, d, seed):
    """n orthonormal rows in R^d and two distinct indices a, b."""
    gen = torch.Generator().manual_seed(seed)
    rows = sim.orthonormal_rows(n, d, gen)
    a, b = (int(i) for i in torch.randperm(n, generator=gen)[:2])
    return rows, a, b, gen


# (n, d, scale, seed)
COPY_CASES = [(2, 2, 10.0, 11), (5, 2, 8.0, 12), (6, 3, 12.0, 13), (8, 16, 6.0, 14), (16, 64, 15.0, 15)]
PAIR_CASES = [(2, 2, 10.0, 21), (3, 5, 6.0, 22), (8, 8, 12.0, 23), (16, 32, 15.0, 24)]
# 3d-2 needs the scale large enough that a single head snaps to v_a or v_b.
SPREAD_CASES = [(2, 4, 8.0, 31), (4, 8, 10.0, 32), (8, 12, 12.0, 33)]
SPREAD_SAMPLES = 8000
SPREAD_LIMIT = 0.2
NOISE_SAMPLES = 64
NOISE_ALLOWANCE = 0.02
# (d, beta, seed) for 3e
KQV_CASES = [(4, 10.0, 41), (5, 20.0, 42), (12, 50.0, 43), (32, 10.0, 44)]


def _describe(n, d, scale, **indices):
    where = ", ".join(f"{k}={v}" for k, v in indices.items())
    return f"n={n} keys in d={d}, {where}, scale={scale:g}"


# ----------------------------------------------------------------------------
# 3a, 3b: fixed keys
# ----------------------------------------------------------------------------

def check_3a(module):
    for n, d, scale, seed in COPY_CASES:
        keys, j = _copy_instance(n, d, seed)
        q = _vector(_call(module, "copy_query", keys.clone(), j, scale), d, "copy_query's q")
        target = torch.zeros(n, dtype=DTYPE)
        target[j] = 1.0
        _expect_weights(sim.attention_weights(keys, q), target, _margin_tolerance(n, scale),
                        "copy_query, " + _describe(n, d, scale, j=j))


def check_3b(module):
    for n, d, scale, seed in PAIR_CASES:
        keys, a, b, _ = _pair_instance(n, d, seed)
        q = _vector(_call(module, "average_query", keys.clone(), a, b, scale), d, "average_query's q")
        _expect_weights(sim.attention_weights(keys, q), sim.target_weights(n, a, b),
                        _margin_tolerance(n, scale), "average_query, " + _describe(n, d, scale, a=a, b=b))


# ----------------------------------------------------------------------------
# 3c, 3d: random keys around orthonormal means
# ----------------------------------------------------------------------------

def _tiny_noise_std(queries):
    """Isotropic key noise that moves each head's logits by at most N(0, 1e-6)."""
    longest = max(float(q.norm()) for q in queries)
    return 1e-3 / max(longest, 1e-12)


def _expect_target_on_means(means, queries, target, scale, context):
    """The heads' averaged weights with every key at its mean."""
    _expect_weights(sim.head_average_weights(means, queries), target,
                    _margin_tolerance(means.shape[0], scale), context + ", keys at their means")


def _check_means_and_noise(means, queries, target, scale, gen, context):
    """Averaged weights of the heads on the mean keys, then on keys with tiny noise."""
    _expect_target_on_means(means, queries, target, scale, context)
    keys = sim.sample_keys(means, NOISE_SAMPLES, gen, _tiny_noise_std(queries))
    weights = sim.head_average_weights(keys, queries)
    worst = int((weights - target).abs().amax(dim=1).argmax())
    _expect_weights(weights[worst], target, _margin_tolerance(means.shape[0], scale) + NOISE_ALLOWANCE,
                    context + ", keys with tiny noise")


def check_3c(module):
    for n, d, scale, seed in PAIR_CASES:
        means, a, b, gen = _pair_instance(n, d, seed)
        q = _vector(_call(module, "gaussian_average_query", means.clone(), a, b, scale), d,
                    "gaussian_average_query's q")
        _check_means_and_noise(means, [q], sim.target_weights(n, a, b), scale, gen,
                               "gaussian_average_query, " + _describe(n, d, scale, a=a, b=b))


def _two_heads(module, means, a, b, scale):
    d = means.shape[1]
    out = _parts(_call(module, "two_head_queries", means.clone(), a, b, scale), 2, "two_head_queries")
    return [_vector(q, d, f"two_head_queries' q{h}") for h, q in enumerate(out, start=1)]


def check_3d_average(module):
    for n, d, scale, seed in PAIR_CASES:
        means, a, b, gen = _pair_instance(n, d, seed)
        heads = _two_heads(module, means, a, b, scale)
        _check_means_and_noise(means, heads, sim.target_weights(n, a, b), scale, gen,
                               "two_head_queries, c = (c1 + c2)/2, " + _describe(n, d, scale, a=a, b=b))


def check_3d_distinct(module):
    for n, d, scale, seed in PAIR_CASES:
        means, a, b, _ = _pair_instance(n, d, seed)
        heads = _two_heads(module, means, a, b, scale)
        context = "two_head_queries, " + _describe(n, d, scale, a=a, b=b)
        _expect_target_on_means(means, heads, sim.target_weights(n, a, b), scale, context)
        alpha1, alpha2 = (sim.attention_weights(means, q) for q in heads)
        differ = 0.5 * float((alpha1 - alpha2).abs().sum())
        if not at_least(differ, 0.5, f"{context}: the total variation between the heads' weights"):
            raise Fail(
                f"{context}: the two heads attend alike (total variation {differ:.3f} < 0.5 between "
                f"their weights); q1 = q2, or queries that differ only slightly, are forbidden")


def check_3d_spread(module):
    for n, d, scale, seed in SPREAD_CASES:
        means, a, b, gen = _pair_instance(n, d, seed)
        heads = _two_heads(module, means, a, b, scale)
        target = sim.target_weights(n, a, b)
        context = "two_head_queries, " + _describe(n, d, scale, a=a, b=b)
        # Without this, q1 = q2 = 0 would not stray at all when n = 2.
        _expect_target_on_means(means, heads, target, scale, context)
        keys = sim.sample_keys(means, SPREAD_SAMPLES, gen, _tiny_noise_std(heads), perturbed=a)
        mean_stray = float(sim.stray(sim.head_average_weights(keys, heads), target).mean())
        if not at_most(mean_stray, SPREAD_LIMIT, f"{context}: the mean stray of c's weights"):
            raise Fail(
                f"{context}: with k_a perturbed as in 3d(ii), c's weights stray {mean_stray:.3f} on average "
                f"from (v_a + v_b)/2 (limit {SPREAD_LIMIT}; a single head strays about 0.42): "
                f"the heads do not make c more stable than one head")


# ----------------------------------------------------------------------------
# 3e: key, query and value matrices
# ----------------------------------------------------------------------------

def check_3e(module):
    for d, beta, seed in KQV_CASES:
        gen = torch.Generator().manual_seed(seed)
        u_a, u_b, u_c, u_d = beta * sim.orthonormal_rows(4, d, gen)
        out = _parts(_call(module, "kqv_matrices", u_a.clone(), u_b.clone(), u_c.clone(), u_d.clone()),
                     3, "kqv_matrices")
        K = _matrix(out[0], d, "K")
        Q = _matrix(out[1], d, "Q", rows=K.shape[0])
        V = _matrix(out[2], d, "V", rows=d)
        x = torch.stack([u_d + u_b, u_a, u_c + u_b])
        keys, queries, values = x @ K.T, x @ Q.T, x @ V.T
        outputs = torch.softmax(queries @ keys.T, dim=-1) @ values
        context = f"kqv_matrices, d={d}, beta={beta:g}"
        for i, target, name in ((1, u_b, "u_b"), (0, u_b - u_c, "u_b - u_c")):
            error = float((outputs[i] - target).norm())
            if not at_most(error, 1e-3 * beta, f"{context}: ||c_{i + 1} - ({name})||"):
                raise Fail(
                    f"{context}: ||c_{i + 1} - ({name})|| = {error:.3g} > 1e-3 * beta = {1e-3 * beta:.3g}")


# ----------------------------------------------------------------------------
# 1g: attention cost
# ----------------------------------------------------------------------------

# (L, ell, m). The expected counts are stored as salted SHA-256 digests so
# that this file, which ships with the student release, does not print the
# answer; regenerate with cost_digests(reference_module).
COST_POINTS = [(2, 64, 8), (3, 100, 7), (4, 128, 32), (6, 256, 16), (12, 1024, 64)]
COST_DIGESTS = {
    "vanilla_attention_cost": [
        "cb14ff2457408d431e49b3504aad04ca886289d1b4aa521249d00c3eba8d7bdf",
        "1a4ad32d0fb7c2188f480dc20b9fea1e1fc68f1ef82ecf6e404840923878c952",
        "756fd35f37d9746e1a2e951219005b9a614a9e32e767ea55837f2bd36d63fdbb",
        "382984bb06d540dd4329ec745d68bca5d1934d26d7b81cd8e338a63ae85d25a0",
        "9e2ce059c10988f20b357990b258d9c653b5fa7071e3d42a102c5f87ee4afeab",
    ],
    "perceiver_attention_cost": [
        "a4efa870f68ca83490c61051bff112e34d9d6026589755279921e691b1f469b2",
        "522283f33d73fa754622a9a425a0c83fbf997893d3b2e71298e25d4c4398b292",
        "ef1908eb6c2ec8e7cf3a637224a0be941ab957f06e49c8582477771187bda492",
        "1eb1cf860d6ba028cfd51e32520ee328ffee9a09c7a70960389da2e6d2a36004",
        "a06d3460001ec2908105350d31f2bb83b4dd132bbfc4696f8dfa805266e9fd22",
    ],
}


def _cost_digest(name, L, ell, m, value):
    return hashlib.sha256(f"cs224n-written-1g|{name}|{L}|{ell}|{m}|{value}".encode()).hexdigest()


def _count(value, call):
    if isinstance(value, bool):
        raise Fail(f"{call} must return a number, got bool")
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        value = value.item()
    if not isinstance(value, numbers.Real):
        kind = value["unsupported"] if isinstance(value, dict) and "unsupported" in value else type(value).__name__
        raise Fail(f"{call} must return a number, got {kind}")
    if not math.isfinite(value) or value != int(value):
        raise Fail(f"{call} = {value} is not a whole number of query-key scores")
    return int(value)


def cost_digests(module):
    """The digests of a (reference) module's answers, for COST_DIGESTS."""
    return {name: [_cost_digest(name, *point, _count(getattr(module, name)(*point), name))
                   for point in COST_POINTS]
            for name in COST_DIGESTS}


def check_1g(module):
    for name, digests in COST_DIGESTS.items():
        for point, digest in zip(COST_POINTS, digests):
            L, ell, m = point
            call = f"{name}(L={L}, ell={ell}, m={m})"
            value = _count(_call(module, name, L, ell, m), call)
            if _cost_digest(name, L, ell, m, value) != digest:
                raise Fail(f"{call} = {value} is not the number of query-key scores "
                                     f"under the counting convention in the docstring")
