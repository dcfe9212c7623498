"""helper.py: the exact course hyperparameters, loading and saving parameters (and src/kit/params_file.py,
which checks and loads parameter files for run.py)."""

from types import SimpleNamespace

import pytest
import torch

from kit import training
from conftest import small_config
from kit.params_file import load_params
from submission import helper
from submission.dataset import CharCorruptionDataset
from submission.model import GPT, GPTConfig
from submission.trainer import Trainer, TrainerConfig, lr_multiplier


@pytest.fixture
def corpus(world):
    path, _ = world
    return path, CharCorruptionDataset((path / "wiki.txt").read_text(encoding="utf-8"), 64)


def tconf_values(tconf):
    names = ["max_epochs", "batch_size", "learning_rate", "lr_decay", "warmup_tokens", "final_tokens", "num_workers"]
    return {n: getattr(tconf, n) for n in names}


def test_initialize_models():
    cfg = small_config(20)
    assert isinstance(helper.initialize_vanilla_model(cfg), GPT)
    cfg = small_config(20)
    model = helper.initialize_perceiver_model(cfg, bottleneck_dim=16)
    assert cfg.perceiver is True and cfg.bottleneck_dim == 16
    assert model.perceiver and model.down_block.C.shape[1] == 16


def test_pretrain_hyperparameters(corpus):
    _, ds = corpus
    model = GPT(small_config(ds.vocab_size))
    tconf, trainer = helper.pretrain(ds, 64, model, pretrain_lr=6e-3)
    assert tconf_values(tconf) == dict(max_epochs=650, batch_size=128, learning_rate=6e-3, lr_decay=True,
                                       warmup_tokens=512 * 20, final_tokens=200 * len(ds) * 64, num_workers=4)
    assert isinstance(trainer, Trainer) and trainer.train_dataset is ds and trainer.config is tconf
    assert trainer.test_dataset is None


@pytest.mark.parametrize("pretrained", [False, True])
def test_finetune_hyperparameters(corpus, tmp_path, pretrained):
    path, ds = corpus
    model = GPT(small_config(ds.vocab_size))
    params = None
    if pretrained:
        params = tmp_path / "p.params"
        torch.save(GPT(small_config(ds.vocab_size)).state_dict(), params)
    tconf, trainer = helper.finetune(params, path / "birth_places_train.tsv", ds, 64, model, finetune_lr=6e-4)
    assert tconf_values(tconf) == dict(max_epochs=10 if pretrained else 75, batch_size=256, learning_rate=6e-4,
                                       lr_decay=True, warmup_tokens=512 * 20, final_tokens=200 * len(ds) * 64,
                                       num_workers=4)
    assert len(trainer.train_dataset) == 30  # the lines of birth_places_train.tsv
    assert tconf.betas == (0.9, 0.95) and tconf.grad_norm_clip == 1.0 and tconf.weight_decay == 0.1


def test_finetune_really_loads_the_params(corpus, tmp_path):
    path, ds = corpus
    torch.manual_seed(1)
    source = GPT(small_config(ds.vocab_size))
    torch.save(source.state_dict(), tmp_path / "p.params")
    torch.manual_seed(2)
    model = GPT(small_config(ds.vocab_size))
    assert not torch.equal(model.head.weight, source.head.weight)
    helper.finetune(tmp_path / "p.params", path / "birth_places_train.tsv", ds, 64, model)
    for (name, a), b in zip(model.state_dict().items(), source.state_dict().values()):
        assert torch.equal(a, b), name


@pytest.fixture(scope="module")
def cuda_tagged_save():
    """torch.save that records every tensor as living on cuda:0, as a GPU-trained file does (registered
    once: torch cannot sort two packages of the same priority)."""
    state = {"on": False}

    def tagger(obj):
        return "cuda:0" if state["on"] and obj.device.type == "cpu" else None

    torch.serialization.register_package(1, tagger, lambda obj, location: None)

    def save(obj, path):
        state["on"] = True
        try:
            torch.save(obj, path)
        finally:
            state["on"] = False

    return save


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks loading a GPU file on a CPU-only machine")
def test_gpu_saved_params_load_on_cpu(tmp_path, cuda_tagged_save):
    cfg = small_config(20)
    source = GPT(cfg)
    cuda_tagged_save(source.state_dict(), tmp_path / "gpu.params")
    with pytest.raises(RuntimeError, match="CUDA"):
        torch.load(tmp_path / "gpu.params", weights_only=True)  # the file really says "cuda"
    model = load_params(GPT(small_config(20)), tmp_path / "gpu.params")
    assert torch.equal(model.head.weight, source.head.weight)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks loading a GPU file on a CPU-only machine")
def test_finetune_loads_gpu_saved_params_on_cpu(corpus, tmp_path, cuda_tagged_save):
    path, ds = corpus
    source = GPT(small_config(ds.vocab_size))
    cuda_tagged_save(source.state_dict(), tmp_path / "gpu.params")
    model = GPT(small_config(ds.vocab_size))
    helper.finetune(tmp_path / "gpu.params", path / "birth_places_train.tsv", ds, 64, model)
    assert torch.equal(model.head.weight, source.head.weight)


def test_load_params_rejects_the_other_variant_and_size(tmp_path):
    torch.save(GPT(small_config(20)).state_dict(), tmp_path / "v.params")
    with pytest.raises(ValueError, match="vanilla parameters but the model is perceiver"):
        load_params(GPT(small_config(20, perceiver=True)), tmp_path / "v.params")
    bigger = GPTConfig(20, 64, n_layer=2, n_head=2, n_embd=64)
    with pytest.raises(ValueError, match="same model-size flags"):
        load_params(GPT(bigger), tmp_path / "v.params")


def test_load_params_names_a_different_corpus_and_a_corrupt_file(tmp_path):
    torch.save(GPT(small_config(23)).state_dict(), tmp_path / "other.params")
    with pytest.raises(ValueError, match=r"trained on a different pretraining corpus \(vocab 23 vs 20"):
        load_params(GPT(small_config(20)), tmp_path / "other.params")
    data = (tmp_path / "other.params").read_bytes()
    (tmp_path / "cut.params").write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="not a readable parameter file.*truncated or corrupt"):
        load_params(GPT(small_config(23)), tmp_path / "cut.params")


def with_course_masks(model):
    """The state dict as the course's code saves it: every attention layer also stores its causal mask
    as a (1, 1, block, block) buffer."""
    state = dict(model.state_dict())
    block = model.get_block_size()
    for name, module in model.named_modules():
        if name.endswith("attn"):
            state[f"{name}.mask"] = torch.tril(torch.ones(block, block)).view(1, 1, block, block)
    return state


@pytest.mark.parametrize("perceiver", [False, True])
def test_course_trained_files_with_mask_buffers_load_and_evaluate(corpus, tmp_path, perceiver):
    from kit.decoding import predict_places, read_questions

    path, ds = corpus
    torch.manual_seed(0)
    trained = GPT(small_config(ds.vocab_size, perceiver=perceiver)).eval()
    state = with_course_masks(trained)
    masks = [k for k in state if k.endswith("attn.mask")]
    assert len(masks) == 2  # two layers: two Blocks (vanilla), or the down and up blocks (perceiver)
    torch.save(state, tmp_path / "course.params")
    torch.manual_seed(1)
    fresh = load_params(GPT(small_config(ds.vocab_size, perceiver=perceiver)), tmp_path / "course.params").eval()
    for (name, a), (_, b) in zip(trained.named_parameters(), fresh.named_parameters()):
        assert torch.equal(a, b), name
    questions = read_questions(path / "birth_dev.tsv")
    assert predict_places(fresh, questions, ds, "cpu") == predict_places(trained, questions, ds, "cpu")


@pytest.mark.parametrize("perceiver", [False, True])
def test_finetune_from_a_course_trained_file_after_run_checks_it(corpus, tmp_path, perceiver):
    """finetune loads with a plain load_state_dict, as the course says; run.py's check_params (which runs
    before it) makes the model keep its own attention masks, so the course's files load there too."""
    import run

    path, ds = corpus
    torch.manual_seed(0)
    source = GPT(small_config(ds.vocab_size, perceiver=perceiver))
    torch.save(with_course_masks(source), tmp_path / "course.params")
    torch.manual_seed(1)
    model = GPT(small_config(ds.vocab_size, perceiver=perceiver))
    with pytest.raises(RuntimeError, match="Unexpected key"):  # what the check is for
        helper.finetune(tmp_path / "course.params", path / "birth_places_train.tsv", ds, 64, model)
    run.check_params(SimpleNamespace(reading_params_path=str(tmp_path / "course.params")), model)
    helper.finetune(tmp_path / "course.params", path / "birth_places_train.tsv", ds, 64, model)
    for (name, a), b in zip(model.named_parameters(), source.parameters()):
        assert torch.equal(a, b), name
    assert set(model.state_dict()) == set(source.state_dict())  # the model's own masks stay unsaved


def test_train_saves_params_and_learns(corpus, tmp_path):
    path, ds = corpus
    torch.manual_seed(0)
    model = GPT(small_config(ds.vocab_size))
    tconf, trainer = helper.finetune(None, path / "birth_places_train.tsv", ds, 64, model)
    # 80 steps, the first 20 still warming up: the loss falls to about 0.63 of its start (0.70-0.71 after 15 epochs)
    tconf.max_epochs, tconf.batch_size, tconf.num_workers, tconf.show_progress = 20, 8, 0, False
    losses = training.record_losses(trainer)
    helper.train(model, tmp_path / "out.params", trainer)
    saved = torch.load(tmp_path / "out.params", weights_only=True)
    assert all(torch.equal(saved[k], v) for k, v in model.state_dict().items())
    first = sum(l for _, _, l, _ in losses[:4]) / 4
    last = sum(l for _, _, l, _ in losses[-4:]) / 4
    assert last < 0.7 * first


def test_lr_schedule_warmup_then_cosine_to_ten_percent():
    cfg = TrainerConfig(warmup_tokens=100, final_tokens=1100)
    assert lr_multiplier(50, cfg) == pytest.approx(0.5)
    assert lr_multiplier(100, cfg) == pytest.approx(1.0)
    assert lr_multiplier(600, cfg) == pytest.approx(0.5)
    assert lr_multiplier(1100, cfg) == pytest.approx(0.1)
    assert lr_multiplier(5000, cfg) == pytest.approx(0.1)


def test_precision_rule():
    cpu = torch.device("cpu")
    assert training.resolve_precision(cpu, "fp32") == "fp32"
    assert training.resolve_precision(cpu, "bf16") == "bf16"
    assert training.resolve_precision(cpu, "auto") == ("bf16" if training.cpu_has_native_bf16() else "fp32")
    # the CPU's path is its own: the attention in scaled_dot_product_attention, the fused AdamW; fast is auto there
    auto = training.resolve_numerics(cpu, "auto")
    assert training.resolve_numerics(cpu, "fast") == auto and auto.attention == "auto" and not auto.tf32
    assert auto.fused_adamw == ("cpu" in training.fused_adamw_devices()) and not auto.pin_memory
    assert training.resolve_precision(torch.device("mps"), "auto") == "fp32"
    with pytest.raises(ValueError, match="unknown precision"):
        training.resolve_precision(cpu, "fp16")


@pytest.mark.parametrize("precision", ["bf16", "fp32"])
def test_the_trainer_applies_the_precision_it_is_given(precision):
    """bf16: every forward pass of training runs under bf16 autocast; fp32: none does."""
    torch.manual_seed(0)
    model = GPT(small_config(20))
    seen, forward = [], model.forward

    def recording_forward(*args, **kwargs):
        seen.append(torch.is_autocast_enabled("cpu"))
        return forward(*args, **kwargs)

    model.forward = recording_forward
    x = torch.randint(1, 20, (8, 16))
    data = torch.utils.data.TensorDataset(x, x)
    Trainer(model, data, None, TrainerConfig(max_epochs=1, batch_size=4, device="cpu", precision=precision,
                                             show_progress=False)).train()
    assert seen == [precision == "bf16"] * 2


def test_loss_stays_fp32_under_bf16_autocast():
    torch.manual_seed(0)
    model = GPT(small_config(20))
    idx = torch.randint(1, 20, (2, 16))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits, loss = model(idx, idx)
    assert logits.dtype == torch.bfloat16 and loss.dtype == torch.float32
    assert all(p.dtype == torch.float32 for p in model.parameters())


def test_one_dataloader_for_the_whole_run(corpus, tmp_path, monkeypatch):
    """The course made a new DataLoader (and started its workers) every epoch; ours is made once, with
    persistent workers, and iterated once per epoch."""
    from submission import trainer as trainer_module

    made = []

    class CountingLoader(trainer_module.DataLoader):
        def __init__(self, *args, **kwargs):
            made.append(kwargs)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(trainer_module, "DataLoader", CountingLoader)
    path, ds = corpus
    model = GPT(small_config(ds.vocab_size))
    tconf, trainer = helper.finetune(None, path / "birth_places_train.tsv", ds, 64, model)
    tconf.max_epochs, tconf.batch_size, tconf.num_workers, tconf.show_progress = 3, 16, 1, False
    losses = training.record_losses(trainer)
    helper.train(model, tmp_path / "out.params", trainer)
    assert len(made) == 1 and made[0]["persistent_workers"] is True
    assert {epoch for epoch, *_ in losses} == {1, 2, 3}


COURSE_STYLE_SCRIPT = """
import torch
import submission

names = ["CharCorruptionDataset", "NameDataset", "finetune", "pretrain", "train", "initialize_vanilla_model",
         "initialize_perceiver_model", "GPT", "GPTConfig", "Trainer", "TrainerConfig", "sample",
         "evaluate_places", "CausalSelfAttention", "CausalCrossAttention"]
for name in names:
    assert name in dir(submission), name
from submission import GPT, GPTConfig, NameDataset  # the course's tests import names like this too

text = open(WIKI, encoding="utf-8").read()
corruption = submission.CharCorruptionDataset(text, 64)
names_data = NameDataset(open(TRAIN, encoding="utf-8").read(), corruption)
mconf = GPTConfig(corruption.vocab_size, 64, n_layer=2, n_head=2, n_embd=32)
model = submission.initialize_vanilla_model(mconf)
assert isinstance(model, GPT) and isinstance(model.blocks[0].attn, submission.CausalSelfAttention)
tconf, trainer = submission.finetune(None, TRAIN, corruption, 64, model, 6e-4)
assert isinstance(tconf, submission.TrainerConfig) and isinstance(trainer, submission.Trainer)
tconf, trainer = submission.pretrain(corruption, 64, model, 6e-3)
assert tconf.max_epochs == 650
perceiver = submission.initialize_perceiver_model(GPTConfig(corruption.vocab_size, 64, n_layer=2, n_head=2,
                                                            n_embd=32), 8)
assert isinstance(perceiver.down_block.attn, submission.CausalCrossAttention)
x = corruption.encode("Where was")[None]
assert submission.sample(model, x, 3).shape == (1, x.size(1) + 3)
assert submission.evaluate_places(TRAIN, ["nowhere"] * len(names_data)) == (float(len(names_data)), 0.0)
assert callable(submission.train)
print("course API ok")
"""


@pytest.mark.slow  # a script in a process of its own
def test_the_package_exposes_the_course_api_to_a_script_run_from_src(world):
    import subprocess
    import sys

    from conftest import SRC

    path, _ = world
    script = f"WIKI = {str(path / 'wiki.txt')!r}\nTRAIN = {str(path / 'birth_places_train.tsv')!r}\n"
    r = subprocess.run([sys.executable, "-c", script + COURSE_STYLE_SCRIPT], cwd=SRC, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and "course API ok" in r.stdout, r.stderr[-3000:]
