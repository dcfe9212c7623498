"""Watch c move: sample keys as in 3c(ii) and 3d(ii) and see where c lands.

    python attention_simulation.py [--samples N] [--seed S] [--png PATH]

uses YOUR queries from submission/attention_exploration.py (3c(i) and 3d(i)),
draws keys k_i ~ N(mu_i, sigma^2 I) with sigma^2 tiny, except that k_a gets the
extra covariance (1/2) mu_a mu_a^T of 3c(ii), and reports, for the single head
and for the two heads, how much weight c puts on v_a and v_b across samples
(mean, std, min, max and a text histogram). With --png it also plots the
histograms, if matplotlib is installed (it is optional).

The sampling helpers below are shared with the written-part checks
(checks/written.py).
"""

import argparse
import math
import sys

import torch

# Variance of the extra key noise along mu_a in 3c(ii)/3d(ii).
EXTRA_VARIANCE = 0.5


def orthonormal_rows(n, d, generator, dtype=torch.float64):
    """n random orthonormal vectors in R^d (n <= d), as the rows of an (n, d) tensor."""
    gaussian = torch.randn(d, n, generator=generator, dtype=dtype)
    basis, _ = torch.linalg.qr(gaussian)
    return basis.T.contiguous()


def sample_keys(means, n_samples, generator, iso_std, perturbed=None):
    """Draw n_samples sets of keys, k_i = mu_i + iso_std * z_i with z_i ~ N(0, I).

    If ``perturbed`` is an index a, key a also gets g * mu_a with
    g ~ N(0, EXTRA_VARIANCE), i.e. covariance iso_std^2 I + (1/2) mu_a mu_a^T
    when mu_a has unit norm.

    Returns an (n_samples, n, d) tensor.
    """
    n, d = means.shape
    noise = torch.randn(n_samples, n, d, generator=generator, dtype=means.dtype)
    keys = means + iso_std * noise
    if perturbed is not None:
        g = math.sqrt(EXTRA_VARIANCE) * torch.randn(n_samples, 1, generator=generator, dtype=means.dtype)
        keys[:, perturbed, :] += g * means[perturbed]
    return keys


def attention_weights(keys, q):
    """softmax_i(k_i^T q) along the key axis; keys (..., n, d), q (d,) -> (..., n)."""
    return torch.softmax(keys @ q, dim=-1)


def head_average_weights(keys, queries):
    """Weights of the values in c = mean of the heads' outputs; one query per head."""
    return torch.stack([attention_weights(keys, q) for q in queries]).mean(dim=0)


def target_weights(n, a, b, dtype=torch.float64):
    """The weights of c = (v_a + v_b) / 2: 1/2 on a and b, 0 elsewhere."""
    target = torch.zeros(n, dtype=dtype)
    target[a] = target[b] = 0.5
    return target


def stray(weights, target):
    """Total-variation distance (1/2) sum_i |w_i - t_i| per sample, in [0, 1]."""
    return 0.5 * (weights - target).abs().sum(dim=-1)


def summarize(values):
    """mean, std, min and max of a 1-D tensor, as floats."""
    return {
        "mean": values.mean().item(),
        "std": values.std(unbiased=False).item(),
        "min": values.min().item(),
        "max": values.max().item(),
    }


def text_histogram(values, steps=10, width=40):
    """Histogram of values in [0, 1], one line per value k/steps (k = 0..steps),
    counting the values that round to it: '~0.5  ######   43.1%'."""
    nearest = torch.round(values.clamp(0.0, 1.0) * steps).long()
    counts = torch.bincount(nearest, minlength=steps + 1).tolist()
    total = max(values.numel(), 1)
    lines = []
    for k, count in enumerate(counts):
        bar = "#" * round(width * count / total)
        lines.append(f"~{k / steps:.1f} {bar:<{width}} {100 * count / total:5.1f}%")
    return "\n".join(lines)


class NotImplementedYet(Exception):
    """A construction this simulation needs returned None."""


def simulate(module, n_samples=2000, seed=0, n_keys=4, dim=8, scale=10.0, a=0, b=1, iso_var=1e-6):
    """Sample 3c(ii)/3d(ii) keys and compute c's weights for both designs.

    ``module`` provides gaussian_average_query and two_head_queries (the
    student module). Returns a dict with, for "single" and "two": "weights"
    ((n_samples, n) tensor), "weight_a" and "weight_b" (the weights of v_a and
    v_b per sample) and "stray" (distance of the weights from
    (1/2, 1/2, 0, ...) per sample).
    """
    generator = torch.Generator().manual_seed(seed)
    means = orthonormal_rows(n_keys, dim, generator)
    q = module.gaussian_average_query(means, a, b, scale)
    heads = module.two_head_queries(means, a, b, scale)
    if q is None:
        raise NotImplementedYet("gaussian_average_query (3c(i)) returned None")
    if heads is None or any(h is None for h in heads):
        raise NotImplementedYet("two_head_queries (3d(i)) returned None")
    designs = {"single": [torch.as_tensor(q, dtype=means.dtype)],
               "two": [torch.as_tensor(h, dtype=means.dtype) for h in heads]}
    target = target_weights(n_keys, a, b)
    keys = sample_keys(means, n_samples, generator, math.sqrt(iso_var), perturbed=a)
    result = {}
    for name, queries in designs.items():
        weights = head_average_weights(keys, queries)
        result[name] = {
            "weights": weights,
            "weight_a": weights[:, a],
            "weight_b": weights[:, b],
            "stray": stray(weights, target),
        }
    return result


def report(result):
    """The printed summary of ``simulate``'s result."""
    titles = {
        "single": "3c(ii) single head, k_a ~ N(mu_a, sigma^2 I + 1/2 mu_a mu_a^T)",
        "two": "3d(ii) two heads, c = (c_1 + c_2) / 2, same keys",
    }
    lines = []
    for name, title in titles.items():
        run = result[name]
        lines.append(title)
        for label in ("weight_a", "weight_b", "stray"):
            s = summarize(run[label])
            lines.append(f"  {label:<9} mean {s['mean']:.3f}  std {s['std']:.3f}"
                         f"  min {s['min']:.3f}  max {s['max']:.3f}")
        lines.append("  histogram of the weight of v_a in c:")
        lines.extend("    " + line for line in text_histogram(run["weight_a"]).splitlines())
        lines.append("")
    single = summarize(result["single"]["weight_a"])["std"]
    two = summarize(result["two"]["weight_a"])["std"]
    lines.append(f"std of the weight of v_a: single head {single:.3f}, two heads {two:.3f}")
    lines.append("(stray = (1/2) sum_i |w_i - t_i|: how far c's weights are from (v_a + v_b) / 2)")
    return "\n".join(lines)


def plot(result, path):
    """Write the two histograms to a PNG. Returns False when matplotlib is missing."""
    try:
        import matplotlib
    except ImportError:
        return False
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(9, 3.5), sharey=True)
    for ax, (name, title) in zip(axes, (("single", "one head (3c ii)"), ("two", "two heads (3d ii)"))):
        ax.hist(result[name]["weight_a"].numpy(), bins=20, range=(0.0, 1.0))
        ax.set_title(title)
        ax.set_xlabel("weight of $v_a$ in $c$  (0: $c=v_b$, 1: $c=v_a$)")
    axes[0].set_ylabel("samples")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def main(argv=None, module=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=2000, help="key samples to draw (default 2000)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--png", metavar="PATH", help="also plot to this PNG (needs matplotlib)")
    parser.add_argument("--keys", type=int, default=4, help="number of keys n (default 4)")
    parser.add_argument("--dim", type=int, default=8, help="key dimension d >= n (default 8)")
    parser.add_argument("--scale", type=float, default=10.0, help="the scale beta passed to your queries")
    args = parser.parse_args(argv)
    if args.keys < 2 or args.dim < args.keys or args.samples < 1:
        parser.error("need --samples >= 1 and 2 <= --keys <= --dim")
    if module is None:
        from submission import attention_exploration as module
    try:
        result = simulate(module, args.samples, args.seed, args.keys, args.dim, args.scale)
    except NotImplementedYet as err:
        print(f"{err}: implement it first.")
        return 1
    print(report(result))
    if args.png:
        if plot(result, args.png):
            print(f"wrote {args.png}")
        else:
            print("matplotlib is not installed; skipping the plot")
    return 0


if __name__ == "__main__":
    sys.exit(main())
