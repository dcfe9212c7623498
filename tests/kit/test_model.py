"""The model spec: shapes, causality, the loss, the perceiver blocks, and the fast paths' exactness."""

import math

import pytest
import torch
from torch.nn import functional as F

from conftest import small_config
from submission.attention import CausalCrossAttention, CausalSelfAttention
from submission.model import GPT, DownProjectBlock, GPTConfig, UpProjectBlock
from submission.trainer import Trainer, TrainerConfig, trim_padding

VOCAB, BLOCK = 30, 64


def make(perceiver, seed=0, **kw):
    torch.manual_seed(seed)
    return GPT(small_config(VOCAB, BLOCK, perceiver=perceiver, **kw)).eval()


def test_config_defaults():
    cfg = GPTConfig(10, 16, n_layer=1)
    assert (cfg.embd_pdrop, cfg.resid_pdrop, cfg.attn_pdrop) == (0.1, 0.1, 0.1)
    assert cfg.perceiver is False and cfg.bottleneck_dim is None and cfg.n_layer == 1


@pytest.mark.parametrize("perceiver", [False, True])
def test_logits_and_loss_shapes(perceiver):
    model = make(perceiver)
    idx = torch.randint(0, VOCAB, (3, 40))
    logits, loss = model(idx)
    assert logits.shape == (3, 40, VOCAB) and loss is None
    logits, loss = model(idx, idx)
    assert loss.shape == () and torch.isfinite(loss)
    assert model.get_block_size() == BLOCK


def test_perceiver_layer_structure():
    model = make(True)
    assert len(model.blocks) == model.config.n_layer - 2
    assert isinstance(model.down_block, DownProjectBlock) and isinstance(model.up_block, UpProjectBlock)
    assert len(make(False).blocks) == model.config.n_layer


@pytest.mark.parametrize("perceiver", [False, True])
@pytest.mark.parametrize("t", [5, 20, 63])
def test_changing_later_tokens_never_changes_earlier_logits(perceiver, t):
    model = make(perceiver)
    torch.manual_seed(1)
    idx = torch.randint(0, VOCAB, (2, BLOCK))
    changed = idx.clone()
    changed[:, t:] = torch.randint(0, VOCAB, (2, BLOCK - t))
    with torch.no_grad():
        a, _ = model(idx)
        b, _ = model(changed)
    assert torch.allclose(a[:, :t], b[:, :t], atol=1e-5)
    assert not torch.allclose(a[:, t:], b[:, t:], atol=1e-3)  # the test can see a change


def test_loss_ignores_pad():
    model = make(False)
    idx = torch.randint(0, VOCAB, (2, 20))
    targets = torch.randint(2, VOCAB, (2, 20))
    targets[:, 10:] = 0
    logits, loss = model(idx, targets)
    expected = F.cross_entropy(logits[:, :10].reshape(-1, VOCAB), targets[:, :10].reshape(-1))
    assert torch.allclose(loss, expected, atol=1e-6)


def test_basis_shape_and_xavier_range():
    cfg = small_config(VOCAB, BLOCK, perceiver=True, bottleneck_dim=12)
    block = DownProjectBlock(cfg)
    assert isinstance(block.C, torch.nn.Parameter)
    assert block.C.shape == (1, 12, cfg.n_embd)
    # xavier_uniform_ on a (1, m, C) tensor: fan_in = m * C, fan_out = 1 * C (PyTorch's fan rule)
    bound = math.sqrt(6.0 / (12 * cfg.n_embd + cfg.n_embd))
    assert block.C.abs().max() <= bound
    assert block.C.abs().max() > 0.8 * bound  # really spread over the range, not e.g. zeros or N(0, 0.02)
    # GPT's own initialisation must not overwrite the basis
    model = make(True, bottleneck_dim=12)
    assert model.down_block.C.abs().max() > 0.8 * bound


def test_down_and_up_blocks_shapes_and_roles():
    cfg = small_config(VOCAB, BLOCK, perceiver=True, bottleneck_dim=8)
    torch.manual_seed(0)
    down, up = DownProjectBlock(cfg).eval(), UpProjectBlock(cfg).eval()
    x = torch.randn(3, 20, cfg.n_embd)
    y = down(x)
    assert y.shape == (3, 8, cfg.n_embd)
    out = up(y, x)
    assert out.shape == (3, 20, cfg.n_embd)
    with torch.no_grad():
        down.C.add_(1.0)  # the basis really is the query
    assert not torch.allclose(down(x), y)


def test_attention_mask_is_causal_for_cross_attention():
    cfg = small_config(VOCAB, BLOCK)
    torch.manual_seed(0)
    attn = CausalCrossAttention(cfg).eval()
    kv, q = torch.randn(1, 30, cfg.n_embd), torch.randn(1, 10, cfg.n_embd)
    out = attn(kv, q)
    kv2 = kv.clone()
    kv2[:, 10:] += 5.0  # keys beyond the last query position are invisible to every query
    assert torch.allclose(out, attn(kv2, q), atol=1e-6)
    kv2[:, 9] += 5.0
    assert not torch.allclose(out[:, 9], attn(kv2, q)[:, 9], atol=1e-4)


@pytest.mark.parametrize("cls", [CausalSelfAttention, CausalCrossAttention])
def test_fused_attention_matches_plain_math(cls):
    cfg = small_config(VOCAB, BLOCK)
    torch.manual_seed(0)
    attn = cls(cfg).eval()
    x, q = torch.randn(2, 33, cfg.n_embd), torch.randn(2, 17, cfg.n_embd)
    args = (x,) if cls is CausalSelfAttention else (x, q)
    attn.attn_impl = "math"
    plain = attn(*args)
    attn.attn_impl = "fused"
    assert torch.allclose(plain, attn(*args), atol=1e-5)


@pytest.mark.parametrize("impl, fused", [("auto", True), ("math", False), ("fused", True)])
def test_attn_impl_picks_the_kernel(impl, fused, monkeypatch):
    """"math" spells the formula out; "fused" and the default, "auto", go through scaled_dot_product_attention,
    on a CPU too."""
    calls = []
    sdpa = F.scaled_dot_product_attention
    monkeypatch.setattr(F, "scaled_dot_product_attention", lambda *a, **k: calls.append(1) or sdpa(*a, **k))
    cfg = small_config(VOCAB, BLOCK)
    cfg.attn_impl = impl
    x = torch.randn(2, 9, cfg.n_embd)
    CausalSelfAttention(cfg)(x)
    CausalCrossAttention(cfg)(x, x[:1, :4])
    assert len(calls) == (2 if fused else 0)


def test_auto_attention_keeps_bf16_scores_in_fp32_as_on_a_gpu(monkeypatch):
    """Under bf16 autocast "auto" takes the fused kernel on a CPU too: it computes the scores and the softmax in
    fp32 (as CUDA's kernels do), where the math would round the scores to bf16 first.  Its output is the nearer
    to the fp32 math's."""
    calls = []
    sdpa = F.scaled_dot_product_attention
    monkeypatch.setattr(F, "scaled_dot_product_attention", lambda *a, **k: calls.append(1) or sdpa(*a, **k))
    cfg = small_config(VOCAB, BLOCK)
    torch.manual_seed(0)
    attn = CausalSelfAttention(cfg).eval()
    x = 3 * torch.randn(4, 40, cfg.n_embd)
    attn.attn_impl = "math"
    exact = attn(x)
    outputs = {}
    for impl in ("math", "auto"):
        attn.attn_impl = impl
        with torch.autocast("cpu", dtype=torch.bfloat16):
            outputs[impl] = attn(x).float()
    assert len(calls) == 1  # auto: fused
    assert (outputs["auto"] - exact).abs().mean() < (outputs["math"] - exact).abs().mean()


@pytest.mark.parametrize("perceiver", [False, True])
def test_fused_model_matches_plain_math(perceiver):
    model = make(perceiver)
    idx = torch.randint(0, VOCAB, (2, 50))
    outputs = []
    for impl in ("math", "fused"):
        for m in model.modules():
            if hasattr(m, "attn_impl"):
                m.attn_impl = impl
        outputs.append(model(idx, idx))
    assert torch.allclose(outputs[0][0], outputs[1][0], atol=1e-4)
    assert torch.allclose(outputs[0][1], outputs[1][1], atol=1e-5)


@pytest.mark.parametrize("perceiver", [False, True])
@pytest.mark.parametrize("answer_end", [4, 30])  # 4 < bottleneck: the perceiver keeps its bottleneck length
def test_trimming_padding_keeps_loss_and_gradients(perceiver, answer_end):
    model = make(perceiver)
    torch.manual_seed(2)
    x = torch.randint(2, VOCAB, (4, BLOCK - 1))
    y = torch.randint(2, VOCAB, (4, BLOCK - 1))
    y[:, answer_end:] = 0
    y[0, :2] = 0
    min_len = model.config.bottleneck_dim if perceiver else 1  # what the Trainer keeps
    xt, yt = trim_padding(x, y, min_len)
    assert xt.size(1) == max(answer_end, min_len)
    results = []
    for a, b in ((x, y), (xt, yt)):
        model.zero_grad()
        _, loss = model(a, b)
        loss.backward()
        results.append((loss.detach(), [p.grad.clone() for p in model.parameters()]))
    assert torch.allclose(results[0][0], results[1][0], atol=1e-6)
    for g_full, g_trim in zip(results[0][1], results[1][1]):
        assert torch.allclose(g_full, g_trim, atol=1e-6)
    # the Trainer's own forward pass trims to that length, and gets the full block's loss
    lengths, forward = [], model.forward
    model.forward = lambda idx, targets=None: lengths.append(idx.size(1)) or forward(idx, targets)
    trainer = Trainer(model, None, None, TrainerConfig())
    trainer.device = torch.device("cpu")
    assert torch.allclose(trainer.batch_loss(x, y), results[0][0], atol=1e-6)
    assert lengths == [max(answer_end, min_len)]
