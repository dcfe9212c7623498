"""Fast evaluation (src/kit/decoding.py): incremental decoding with a key/value cache (CachedDecoder) and
batched greedy prediction (predict_places) must give what the course's one-question-at-a-time loop
(predict_place, through utils.sample) gives."""

import copy
import random

import pytest
import torch
from torch import nn

from conftest import make_world, on_each_device, small_config
from kit.decoding import MAX_ANSWER_CHARS, SLOWER, CachedDecoder, fast_decoder, predict_place, predict_places
from submission.dataset import CharCorruptionDataset, NameDataset
from submission.model import GPT
from submission.trainer import make_optimizer, TrainerConfig

VOCAB, BLOCK = 30, 64


def set_attn_impl(model, impl):
    for m in model.modules():
        if hasattr(m, "attn_impl"):
            m.attn_impl = impl


@pytest.mark.parametrize("impl", ["math", "fused"])
@pytest.mark.parametrize("perceiver", [False, True])
@pytest.mark.parametrize("chunks", [[1] * 12, [5, 1, 1, 20, 1], [3, 30, 1, 1], [40, 1, 1]])
def test_cached_step_matches_full_forward(perceiver, impl, chunks):
    # bottleneck 8: the chunk boundaries fall before, across and after the bottleneck length
    torch.manual_seed(0)
    model = GPT(small_config(VOCAB, BLOCK, perceiver=perceiver, bottleneck_dim=8)).eval()
    torch.nn.init.normal_(model.pos_emb, std=0.5)  # GPT starts them at zero: make positions matter
    set_attn_impl(model, impl)
    idx = torch.randint(0, VOCAB, (3, sum(chunks)))
    decoder, start = CachedDecoder(model), 0
    for size in chunks:
        step = decoder.step(idx[:, start : start + size])
        start += size
        with torch.no_grad():
            full = model(idx[:, :start])[0][:, -1]
        assert step.shape == (3, VOCAB)
        assert torch.allclose(step, full, atol=1e-5), (start, (step - full).abs().max())


def test_decoder_select_keeps_rows():
    torch.manual_seed(0)
    model = GPT(small_config(VOCAB, BLOCK)).eval()
    torch.nn.init.normal_(model.pos_emb, std=0.5)
    idx = torch.randint(0, VOCAB, (4, 10))
    decoder = CachedDecoder(model)
    decoder.step(idx[:, :6])
    decoder.select(torch.tensor([3, 1]))
    step = decoder.step(idx[[3, 1], 6:])
    with torch.no_grad():
        full = model(idx[[3, 1]])[0][:, -1]
    assert torch.allclose(step, full, atol=1e-5)


def test_cached_step_refuses_training_mode():
    model = GPT(small_config(VOCAB, BLOCK))
    with pytest.raises(AssertionError, match="eval mode"):
        CachedDecoder(model).step(torch.zeros(1, 3, dtype=torch.long))


@pytest.mark.parametrize("perceiver", [False, True])
def test_the_model_is_left_as_it_was(perceiver):
    """The cache lives in the decoder: after decoding, the attention modules have no instance-level forward
    left, and the model's forward pass computes what it did before."""
    torch.manual_seed(0)
    model = GPT(small_config(VOCAB, BLOCK, perceiver=perceiver, bottleneck_dim=8)).eval()
    idx = torch.randint(0, VOCAB, (2, 20))
    with torch.no_grad():
        before = model(idx)[0]
        CachedDecoder(model).step(idx)
        after = model(idx)[0]
    assert not any("forward" in vars(m) for m in model.modules())
    assert torch.equal(before, after)


def train_briefly(model, datasets, steps=150, seed=0):
    """A few fp32 AdamW steps on a mix of the given datasets, so the model answers with real margins."""
    random.seed(seed)
    torch.manual_seed(seed)
    opt = make_optimizer(model, TrainerConfig(learning_rate=3e-3))
    model.train()
    examples = [ex for ds in datasets for ex in ds]
    for _ in range(steps):
        x, y = map(torch.stack, zip(*random.sample(examples, 16)))
        _, loss = model(x, y)
        model.zero_grad()
        loss.backward()
        opt.step()
    return model.eval()


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    path = tmp_path_factory.mktemp("world")
    people = make_world(path)
    vocab = CharCorruptionDataset((path / "wiki.txt").read_text(encoding="utf-8"), BLOCK)
    names = NameDataset((path / "birth_places_train.tsv").read_text(encoding="utf-8"), vocab)
    random.seed(1)
    corruption = [vocab[i] for i in range(len(vocab))]
    models = {}
    for perceiver in (False, True):
        torch.manual_seed(3)
        cfg = small_config(vocab.vocab_size, BLOCK, perceiver=perceiver, bottleneck_dim=8)
        models[perceiver] = train_briefly(GPT(cfg), [names, corruption])
    # questions of many lengths: short ones (below the bottleneck length), the world's own, long
    # ones, and ones too long to decode without cropping (they take the reference path)
    questions = [f"Where was {n} born?" for n, _ in people]
    (a, _), (b, place) = people[0], people[-1]
    questions += ["Oslo?", "Where?", "Who was born in Lima?", "Ana", "a" * 25 + "?", f"Where was {b} really born?",
                  "Where was the first person born?", f"Where was {a} born and later worked in {place}?",
                  f"Where was {a} born? Where was {b} born? Nobody knows."]
    return vocab, models, questions


@pytest.mark.slow  # hundreds of questions, one at a time as well
@pytest.mark.parametrize("perceiver", [False, True])
@pytest.mark.parametrize("batch_size", [256, 5])
@pytest.mark.parametrize("device", on_each_device())
def test_batched_predictions_identical_to_one_at_a_time(trained, perceiver, batch_size, device):
    vocab, models, questions = trained
    device = torch.device(device)
    model = copy.deepcopy(models[perceiver]).to(device)
    reference = [predict_place(model, q, vocab, device) for q in questions]
    assert predict_places(model, questions, vocab, device, batch_size=batch_size) == reference
    # the check has teeth: answers differ between questions, some stop early, and some prompts
    # are too long for the batched path
    assert len(set(reference)) > 3
    assert any(len(p) < MAX_ANSWER_CHARS for p in reference)
    assert any(len(q) + 1 + MAX_ANSWER_CHARS - 1 > BLOCK for q in questions)


@pytest.mark.slow  # hundreds of questions, one at a time as well
@pytest.mark.parametrize("perceiver", [False, True])
def test_batched_predictions_with_a_shared_prefix(trained, perceiver):
    """All of the world's questions start with "Where was " (10 positions, more than the bottleneck of
    8): the shared positions are computed once and copied to every row."""
    vocab, models, questions = trained
    model = models[perceiver]
    device = torch.device("cpu")
    same = [q for q in questions if q.startswith("Where was ")]
    reference = [predict_place(model, q, vocab, device) for q in same]
    assert predict_places(model, same, vocab, device) == reference


@pytest.mark.slow  # the models the module trains first, for a few hundred steps
def test_batched_predictions_notice_a_position_shift(trained):
    """Left-padding the prompts (shifting their positions) changes answers: the comparison above
    would catch a decoder that got absolute positions wrong."""
    vocab, models, questions = trained
    model = models[False]
    device = torch.device("cpu")
    reference = [predict_place(model, q, vocab, device) for q in questions[:20]]
    shifted = [predict_place(model, "    " + q, vocab, device) for q in questions[:20]]
    assert shifted != reference


class DownWithOtherNames(nn.Module):
    """A correct DownProjectBlock as a student might write it, with other names and another basis shape than the
    reference's: the basis is a (m, n_embd) matrix called `queries`, lifted to a batch of one in forward; the
    layers are called norm, cross, post_norm and feed_forward.  Built from a reference block, so that it holds
    the same weights and computes the same function."""

    def __init__(self, reference, whole_basis_only=False):
        super().__init__()
        self.queries = nn.Parameter(reference.C.detach()[0].clone())
        self.norm, self.cross = reference.ln1, reference.attn
        self.post_norm, self.feed_forward = reference.ln2, reference.mlp
        self.m, self.whole_basis_only = self.queries.size(0), whole_basis_only

    def forward(self, x_input):
        q = self.queries.unsqueeze(0)
        if self.whole_basis_only:  # valid too, but a slice of the basis no longer fits: exactly m rows
            q = q.expand(x_input.size(0), self.m, -1)
        h = q + self.cross(self.norm(x_input), self.norm(q))
        return h + self.feed_forward(self.post_norm(h))


def with_down_block(model, **kwargs):
    twin = copy.deepcopy(model)
    twin.down_block = DownWithOtherNames(twin.down_block, **kwargs)
    return twin.eval()


@pytest.mark.slow  # hundreds of questions, one at a time as well
@pytest.mark.parametrize("whole_basis_only", [False, True])
def test_a_down_block_with_other_names_takes_the_fast_path(trained, whole_basis_only, capsys):
    """The basis is found by what it is, not by its name: a correct block with other names and a (m, n_embd)
    basis decodes on the fast path (the basis sliced), with the answers of the one-at-a-time loop; a block
    that accepts only its whole basis runs on the fast path too (the whole basis, the new rows kept)."""
    vocab, models, questions = trained
    model = with_down_block(models[True], whole_basis_only=whole_basis_only)
    device = torch.device("cpu")
    reference = [predict_place(models[True], q, vocab, device) for q in questions]
    assert [predict_place(model, q, vocab, device) for q in questions] == reference  # the same function
    decoder, why = fast_decoder(model, vocab.encode(questions[0] + vocab.MASK_CHAR), device)
    assert why is None and decoder.basis == (None if whole_basis_only else "queries")
    capsys.readouterr()
    assert predict_places(model, questions, vocab, device, batch_size=5) == reference
    assert capsys.readouterr().err == ""


@pytest.mark.slow  # the models the module trains first, for a few hundred steps
def test_the_slice_of_the_basis_is_tried_first(trained):
    """The reference's block runs on a slice of its basis C, not on the whole basis (which costs more)."""
    vocab, models, questions = trained
    decoder, _ = fast_decoder(models[True], vocab.encode(questions[0] + vocab.MASK_CHAR), torch.device("cpu"))
    assert decoder.basis == "C"


def _cached_step_tilted(model):
    """A cached step that runs but whose logits are wrong (tilted towards later tokens: enough to change
    answers, so only the fallback keeps the predictions right)."""
    original = CachedDecoder.step

    def tilted(self, *args, **kwargs):
        logits = original(self, *args, **kwargs)
        return logits + torch.linspace(0, 2, logits.size(-1))

    return CachedDecoder, "step", tilted


def _cached_step_raises(model):
    def broken(self, *args, **kwargs):
        raise RuntimeError("the cache broke")

    return CachedDecoder, "step", broken


@pytest.mark.slow  # hundreds of questions, one at a time as well
@pytest.mark.parametrize("perceiver", [False, True])
@pytest.mark.parametrize("breakage, why", [(_cached_step_tilted, "differ from the forward pass's by"),
                                           (_cached_step_raises, "RuntimeError: the cache broke")])
def test_batched_predictions_fall_back_when_cached_decoding_disagrees(trained, perceiver, breakage, why,
                                                                     monkeypatch, capsys):
    """The fallback keeps the answers right and says, in one line, why it was taken and what it costs; it does
    not call the model wrong (the model is what the answers come from)."""
    vocab, models, questions = trained
    model = models[perceiver]
    device = torch.device("cpu")
    reference = [predict_place(model, q, vocab, device) for q in questions]
    monkeypatch.setattr(*breakage(model))
    capsys.readouterr()
    assert predict_places(model, questions, vocab, device) == reference
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert why in err and "one at a time" in err and SLOWER in err
    assert "disagree" not in err


@pytest.mark.slow  # the models the module trains first, for a few hundred steps
@pytest.mark.parametrize("perceiver", [False, True])
def test_batched_predictions_use_the_fast_path_on_a_sound_model(trained, perceiver, capsys):
    vocab, models, questions = trained
    predict_places(models[perceiver], questions, vocab, torch.device("cpu"))
    assert capsys.readouterr().err == ""
