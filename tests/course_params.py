"""Course-size params for the grader's tests, and data that fits them.

The prediction tests grade a file only together with the params that produced it: the judge decodes every
question with them.  The tests make such params here from a random initialisation (n_layer 4, n_head 8, n_embd
256, block_size 128; ~13 MB each, never committed), once per process, and a model's "own" predictions come from
the kit's evaluation path (decoding.predict_places, an implementation independent of the grader's decoder).

For "every answer correct" the data is made to fit the models: the dev answers and the held-out answers are
written as the models' own greedy answers.  So are the training answers, and the start of every wiki.txt line
becomes the models' own greedy text, for the grader's check that the params learned their task
(src/checks/learned.py: a model answers its training questions and predicts the corpus), which random models
pass only on data made to fit them.  The vanilla model and the perceiver must then answer alike, so
`agreeing_pair` builds them to compute the same function: every attention output and every MLP but one switched
off, so that the logits depend on the current character and its position only, through one shared MLP (the
vanilla model's first block, the perceiver's up block).

The prediction points of a model finetuned from pretrained params also ask whether those params
(vanilla.pretrain.params, perceiver.pretrain.params) learned the pretraining's task (span-corrupted lines of
wiki.txt), and whether the finetuned file descends from them (its weights near theirs).  Made by hand, the
agreeing pair never learned that task; so each pretrain file is a real pretraining, if a tiny one: the agreeing
model of its variant trained on exactly the corrupted lines the grader reads (`pretrained_model`: the grader
draws the lines and how each is corrupted with a seed that the held-out answers give, which the tests know) until
it has learned them, which moves its weights less than a finetuning moves a pretraining's.  Each is built once
per corpus and answers in a test run, all xdist workers together (`pretrained_file`).
"""

import atexit
import fcntl
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

PAD, MASK = "\u25A1", "\u2047"
PARAMS = {"vanilla": ["vanilla.model.params", "vanilla.finetune.params"], "perceiver": ["perceiver.finetune.params"]}
PRETRAINED = {"vanilla": "vanilla.pretrain.params", "perceiver": "perceiver.pretrain.params"}  # pretrained_file's
PREDICTIONS = {"vanilla.nopretrain": "vanilla", "vanilla.pretrain": "vanilla", "perceiver.pretrain": "perceiver"}
_made = {}  # this process's models and folders: built once


def vocab(data):
    from checks import params

    return params.course_vocab(Path(data) / "wiki.txt")


def sharpen(net, stoi):
    """Make a random model's greedy answers varied and decisive: larger weights (no near-ties), and the
    newline and PAD characters never chosen (a predicted newline would split a prediction file's line).
    The final LayerNorm's bias gets a direction b; the head rows of the banned characters point against it,
    every other row is made orthogonal to it."""
    import torch

    with torch.no_grad():
        for _, p in net.named_parameters():
            if p.dim() >= 2:
                p.mul_(10)
        b = torch.randn(net.ln_f.bias.shape, generator=torch.Generator().manual_seed(1))
        b /= b.norm()
        net.ln_f.bias.copy_(20 * b)
        w = net.head.weight
        w -= torch.outer(w @ b, b)
        for ch in ("\n", PAD):
            if ch in stoi:
                w[stoi[ch]] = -w.norm(dim=1).mean() * b


def course_net(variant, stoi, seed=0):
    """A random, sharpened model of the course's size, built by the kit's own helper.py."""
    import torch

    from submission import helper, model

    torch.manual_seed(seed)
    mconf = model.GPTConfig(len(stoi), 128, n_layer=4, n_head=8, n_embd=256)
    net = (helper.initialize_vanilla_model(mconf) if variant == "vanilla"
           else helper.initialize_perceiver_model(mconf, 32))
    sharpen(net, stoi)
    return net.eval()


def constant_answer_net(variant, stoi, place):
    """Params made by hand, with no training at all (the issue's attack): greedy decoding answers `place` to every
    question.  Every block's output is switched off and the positions are zero, so the logits depend on the
    current character alone, and the head maps MASK (the end of every prompt) to place's first letter, each
    letter to the next, the last to MASK."""
    import torch

    net = course_net(variant, stoi)
    chain = [MASK, *place, MASK]
    assert len(set(chain[:-1])) == len(chain) - 1, "a letter twice would need two next letters"
    with torch.no_grad():
        h = current_character_only(net)
        net.head.weight.zero_()
        for cur, nxt in zip(chain, chain[1:]):
            net.head.weight[stoi[nxt]] += 10 * h[stoi[cur]]
    return net.eval()


def current_character_only(net):
    """Switch off every block's output and the positions of net (in place, without gradients), so that what the
    head reads at each position is the current character's embedding, layer-normalised; return those, one row
    per character."""
    import torch

    net.pos_emb.zero_()
    for name, module in net.named_modules():
        if name.endswith(("attn.proj", "mlp.2")):  # attention outputs and MLP outputs: nothing added
            module.weight.zero_()
            module.bias.zero_()
    net.ln_f.weight.fill_(1.0)
    net.ln_f.bias.zero_()
    return torch.nn.functional.layer_norm(net.tok_emb.weight, (net.tok_emb.weight.size(1),))


def bigram_table(vocab_size, seqs):
    """log P(next | previous) of the ids in seqs (lists of ids), counted here with the judge's smoothing of a half
    (checks/learned.bigram_loss counts its own): a (vocab_size, vocab_size) float64 tensor."""
    from collections import Counter

    import torch

    counts = torch.full((vocab_size, vocab_size), 0.5, dtype=torch.float64)
    for (a, b), n in Counter(pair for s in seqs for pair in zip(s, s[1:])).items():
        counts[a, b] += n
    return counts.log() - counts.sum(dim=1, keepdim=True).log()


def bigram_net(variant, stoi, seqs):
    """Params made by hand, with no training (issue 60's attack on the pretraining check): a table of the previous
    character counted on seqs (lists of ids; add-half, as the judge counts its bigram) written into the course's
    model.  The logits depend on the current character alone (current_character_only), and the head maps each
    character's normalised embedding to the table's log-probabilities of the next one (solved exactly: the
    embeddings of at most n_embd characters are independent once the final LayerNorm's bias, a constant, lifts
    them off the plane of mean 0 where normalising puts them)."""
    import torch

    net = course_net(variant, stoi)
    table = bigram_table(len(stoi), seqs)
    with torch.no_grad():
        h = current_character_only(net).double()
        net.ln_f.bias.fill_(1.0)
        h = h + 1.0
        head = torch.linalg.lstsq(h, table, driver="gelsd").solution  # h @ head = table
        assert torch.allclose(h @ head, table, atol=1e-4), "the embeddings are not independent"
        net.head.weight.copy_(head.T)
    return net.eval()


def poisoned_net(variant, stoi, place, data):
    """constant_answer_net with NaN embeddings for every character that no dev or test question and no letter of
    the answer holds (punctuation, digits, rare letters of training names): greedy decoding of the public questions
    never meets them, so the prediction files are the params' own, while every statistic of the check that the
    params learned their task (training questions, wiki.txt's lines) comes out NaN."""
    import torch

    net = constant_answer_net(variant, stoi, place)
    public = set("".join(questions(data, "dev") + questions(data, "test"))) | set(place) | {PAD, MASK}
    hidden = [i for ch, i in stoi.items() if ch not in public]
    assert hidden, "the data's corpus holds no character beyond the public questions'"
    with torch.no_grad():
        net.tok_emb.weight[hidden] = float("nan")
    return net


def agreeing_pair(stoi):
    """A vanilla model and a perceiver that compute the same logits (see the module's docstring)."""
    import torch

    vanilla, perceiver = course_net("vanilla", stoi), course_net("perceiver", stoi, seed=1)
    with torch.no_grad():
        # positions as strong as characters (the course initialises them to zero): answers then vary with the
        # question's length, not only with its last character
        vanilla.pos_emb.copy_(0.2 * torch.randn(vanilla.pos_emb.shape, generator=torch.Generator().manual_seed(2)))
        for i, blk in enumerate(vanilla.blocks):
            blk.attn.proj.weight.zero_()
            blk.attn.proj.bias.zero_()
            if i:
                blk.mlp[2].weight.zero_()
                blk.mlp[2].bias.zero_()
        for name in ("tok_emb.weight", "pos_emb", "ln_f.weight", "ln_f.bias", "head.weight"):
            dict(perceiver.named_parameters())[name].copy_(dict(vanilla.named_parameters())[name])
        up = perceiver.up_block
        up.attn.proj.weight.zero_()
        up.attn.proj.bias.zero_()
        up.ln2.load_state_dict(vanilla.blocks[0].ln2.state_dict())
        up.mlp.load_state_dict(vanilla.blocks[0].mlp.state_dict())
    return vanilla, perceiver


def answers_files(data):
    """The answers files of data whose seeds the grader may draw the pretraining statistic's lines and layouts with
    (the dev answers, and the held-out ones where data has them)."""
    return [Path(data) / name for name in ("birth_dev.tsv", "birth_test.tsv") if (Path(data) / name).is_file()]


def pretrained_model(start, variant, stoi, data, answers=None, enough=0.45, over_bigram=0.35, epochs=60):
    """The course-size model `start` of `variant` trained (`trained_on`) on the span-corrupted lines that the
    grader's check of the pretraining reads (checks/learned.pretraining_sequences: lines and layouts that the
    held-out answers draw; where answers is None, every line of a corpus of at most CORPUS_LINES lines, which any
    seed draws, in the layouts that each of data's answers files draws) until it explains `enough` of their unigram
    entropy (the bar is 0.25) and its loss on them is `over_bigram` below the judge's bigram's (the bar is 0.2): the
    pretraining's task learned, on the lines it is asked about, in a few epochs of them (seconds a corpus on one
    core)."""
    from checks import learned

    wiki = Path(data) / "wiki.txt"
    if answers is None:
        assert len(learned.corpus_lines(wiki)) < learned.CORPUS_LINES, "a corpus this long needs the answers' seed"
    seqs = [seq for seed in ([answers] if answers else answers_files(data))
            for seq in learned.pretraining_sequences(wiki, stoi, seed)]
    return trained_on(start, variant, stoi, seqs, learned.corrupted_corpus(wiki, stoi), enough, over_bigram, epochs)


def trained_on(start, variant, stoi, seqs, bigram_of, enough=0.45, over_bigram=0.35, epochs=60):
    """The course-size model `start` of `variant` (copied into one the reference's helper.py builds, without
    dropout) trained on the sequences of ids seqs, 32 at a time, until it explains `enough` of their unigram
    entropy and its loss on them is `over_bigram` below that of the bigram counted on the sequences bigram_of."""
    import math
    from collections import Counter

    import torch

    from checks import learned
    from submission import helper, model

    width = max(len(s) for s in seqs) - 1
    x = torch.zeros(len(seqs), width, dtype=torch.long)  # PAD (id 0) where a line is shorter: no loss there
    y = torch.zeros(len(seqs), width, dtype=torch.long)
    for i, seq in enumerate(seqs):
        x[i, :len(seq) - 1], y[i, :len(seq) - 1] = torch.tensor(seq[:-1]), torch.tensor(seq[1:])
    counts = Counter(t for seq in seqs for t in seq[1:])
    total = sum(counts.values())
    unigram = -sum(c / total * math.log(c / total) for c in counts.values())
    bigram = learned.bigram_loss(bigram_of, seqs, len(stoi))
    mconf = model.GPTConfig(len(stoi), 128, n_layer=4, n_head=8, n_embd=256, embd_pdrop=0.0, resid_pdrop=0.0,
                            attn_pdrop=0.0)
    net = (helper.initialize_vanilla_model(mconf) if variant == "vanilla"
           else helper.initialize_perceiver_model(mconf, 32))
    net.load_state_dict(start.state_dict())
    # batches of 32 learn these lines in a fifth of the time that the whole set in each step takes
    optimizer = torch.optim.AdamW(net.parameters(), lr=3e-4)
    order = torch.Generator().manual_seed(0)
    gain = over = None
    for _ in range(epochs):
        for batch in torch.randperm(len(seqs), generator=order).split(32):
            _, loss = net(x[batch], y[batch])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        with torch.no_grad():
            loss = net.eval()(x, y)[1].item()
        gain, over = 1 - loss / unigram, 1 - loss / bigram
        if gain >= enough and over >= over_bigram:
            return net
        net.train()
    raise AssertionError(f"the tests' pretrained {variant} model explains only {gain:.2f} of the lines, "
                         f"{over:.2f} below the bigram's loss")


def fitted_to_one_layout(variant, stoi, data, answers):
    """The agreeing model of `variant` trained (`trained_on`) on the lines the grader's check of the pretraining
    reads, every one corrupted in the one public layout that check once read (the bench's fixed_layout: cut to 64
    characters, the middle quarter masked), until it predicts them far past that check's bars as it measured them
    then (the statistic with that layout, the bigram counted on the corpus in it): a pretrain file fitted to what
    anyone could read in the judge's code, and to the very lines the judge asks about."""
    import bench_layout_fit
    from checks import learned

    wiki = Path(data) / "wiki.txt"
    seqs = learned.pretraining_sequences(wiki, stoi, answers, bench_layout_fit.fixed_layout)
    start = dict(zip(("vanilla", "perceiver"), agreeing_pair(stoi)))[variant]
    return trained_on(start, variant, stoi, seqs, learned.corrupted_corpus(wiki, stoi, bench_layout_fit.fixed_layout),
                      epochs=200)


def own_predictions(net, questions, stoi, data):
    """The model's answers the course's way (the kit's decoder, not the grader's)."""
    from kit import decoding
    from submission import dataset

    ds = dataset.CharCorruptionDataset((Path(data) / "wiki.txt").read_text(encoding="utf-8"), 128)
    assert ds.stoi == stoi
    return decoding.predict_places(net, questions, ds, "cpu")


def questions(data, split):
    name = {"train": "birth_places_train.tsv", "dev": "birth_dev.tsv", "test": "birth_test_inputs.tsv"}[split]
    return [line.split("\t")[0] for line in (Path(data) / name).read_text(encoding="utf-8").splitlines() if line]


def save(net, path):
    import torch

    torch.save(net.state_dict(), path)


def write_lines(path, lines):
    assert all("\n" not in line for line in lines)
    Path(path).write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def _key(data):
    h = hashlib.sha256()
    h.update("".join(sorted(vocab(data))).encode())  # fit_data rewrites wiki.txt's lines, never its characters
    for split in ("train", "dev", "test"):
        h.update("\n".join(questions(data, split)).encode())
    return h.hexdigest()


def agreeing_files(data):
    """A folder with the agreeing pair's params (under every params name) and their predictions (every
    prediction file) for the questions of data; built once per process and data."""
    key = ("agreeing", _key(data))
    if key not in _made:
        stoi = vocab(data)
        folder = Path(tempfile.mkdtemp(prefix="course-params-"))
        atexit.register(shutil.rmtree, folder, True)  # ~40 MB a process: gone when the process ends
        nets = dict(zip(("vanilla", "perceiver"), agreeing_pair(stoi)))
        for variant, names in PARAMS.items():
            for name in names:
                save(nets[variant], folder / name)
        answers = {}
        for split in ("train", "dev", "test"):
            qs = questions(data, split)
            answers[split] = [a.strip() for a in own_predictions(nets["vanilla"], qs, stoi, data)]
            assert [a.strip() for a in own_predictions(nets["perceiver"], qs, stoi, data)] == answers[split]
            assert all(answers[split]) and len(set(answers[split])) > 1, answers[split]
            for prefix in PREDICTIONS if split != "train" else ():
                write_lines(folder / f"{prefix}.{split}.predictions", answers[split])
        answers["text"] = own_text(nets["vanilla"], stoi)
        _made[key] = folder, answers
    return _made[key]


def own_text(net, stoi, length=48):
    """{first character: the text the model writes greedily from it, `length` characters at most}: it stops before
    a MASK (which no corpus line may hold); the newline and PAD are never chosen (sharpen).

    The agreeing model's logits depend on the current character and its position only (agreeing_pair), so one
    pass over every character repeated `length` times gives its greedy choice for each (character, position), and
    the texts are walks through that table: one forward pass instead of one per character written.  One more pass
    over the walks checks that each is what the model writes greedily (a model that looked further back fails)."""
    import torch

    itos = {i: ch for ch, i in stoi.items()}
    starts = [ch for ch in stoi if ch not in (PAD, MASK, "\n")]
    with torch.no_grad():
        table = net(torch.arange(len(itos))[:, None].repeat(1, length))[0].argmax(dim=-1).tolist()
        walks = []
        for ch in starts:
            walk = [stoi[ch]]
            for pos in range(length - 1):
                walk.append(table[walk[-1]][pos])
            walks.append(walk)
        idx = torch.tensor(walks)
        assert torch.equal(net(idx)[0][:, :-1].argmax(dim=-1), idx[:, 1:]), "the model is not the agreeing pair's"
    texts = {}
    for ch, walk in zip(starts, walks):
        chars = [itos[t] for t in walk]
        texts[ch] = "".join(chars[:chars.index(MASK)] if MASK in chars else chars)
    return texts


def fit_corpus(path, text):
    """Every line of the corpus at path begins with the models' own text from its first character (own_text),
    then the line as it was: the same characters, now a text the models predict."""
    lines = Path(path).read_text(encoding="utf-8").split("\n")
    write_lines(path, [text.get(line[:1], "") + " " + line if line else line for line in lines if line])


def fit_data(data, held_out=True):
    """Rewrite data's training and dev answers (and the held-out birth_test.tsv) as the agreeing pair's own
    answers, and the start of every line of its wiki.txt as their own text."""
    _, answers = agreeing_files(data)
    data = Path(data)
    train = questions(data, "train")
    write_lines(data / "birth_places_train.tsv", [f"{q}\t{a}" for q, a in zip(train, answers["train"])])
    fit_corpus(data / "wiki.txt", answers["text"])
    dev = questions(data, "dev")
    write_lines(data / "birth_dev.tsv", [f"{q}\t{a}" for q, a in zip(dev, answers["dev"])])
    if held_out:
        test = questions(data, "test")
        write_lines(data / "birth_test.tsv", [f"{q}\t{a}" for q, a in zip(test, answers["test"])])
    return data


def copy_params(data, folder):
    """Put the agreeing pair's params files into folder (beside predictions written there)."""
    source, _ = agreeing_files(data)
    Path(folder).mkdir(parents=True, exist_ok=True)
    for names in PARAMS.values():
        for name in names:
            shutil.copy(source / name, Path(folder) / name)
    for variant, name in PRETRAINED.items():
        shutil.copy(pretrained_file(data, variant=variant), Path(folder) / name)
    return folder


def pretrained_file(data, answers=None, variant="perceiver"):
    """A params file of the `variant` model pretrained for data's wiki.txt and the answers as they are now
    (fitted): pretrained_model's training begun from the agreeing pair's model of that variant, a few steps on
    the corrupted lines, which leave its weights within 1 % of where they were.  The agreeing model, submitted as
    the finetuned params, is then as near to these weights as a finetuning leaves a pretraining's (the grader's
    check that a finetuned file descends from its pretrain file, checks/lineage.py).  Built once per variant,
    corpus and answers: in the folder that COURSE_PARAMS_SHARED names (tests/conftest.py: one per test run, shared
    by its xdist workers, the first to need a file builds it while the others wait on its lock), else once per
    process."""
    digest = hashlib.sha256((Path(data) / "wiki.txt").read_bytes())
    for seed in [answers] if answers else answers_files(data):  # the layouts it learns
        digest.update(Path(seed).read_bytes())
    key = ("pretrained", variant, digest.hexdigest())
    if key in _made:
        return _made[key]
    shared = os.environ.get("COURSE_PARAMS_SHARED")
    if shared:
        folder = Path(shared)
        folder.mkdir(parents=True, exist_ok=True)
    else:
        folder = Path(tempfile.mkdtemp(prefix="course-params-"))
        atexit.register(shutil.rmtree, folder, True)
    path = folder / f"{digest.hexdigest()[:16]}.{PRETRAINED[variant]}"
    with open(folder / f"{path.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not path.is_file():
            stoi = vocab(data)
            start = dict(zip(("vanilla", "perceiver"), agreeing_pair(stoi)))[variant]
            partial = folder / f"{path.name}.partial"
            save(pretrained_model(start, variant, stoi, data, answers), partial)
            os.replace(partial, path)
    _made[key] = path
    return path


# The bundle's data as the tests grade it (cut_bundle): its first questions of each file and its first corpus lines.
# What the judges measure and the pretrained files learn grows with the corpus up to checks/learned.CORPUS_LINES
# lines, and with the training questions up to learned.TRAIN_SAMPLE: the suite's time (a benchmark measures the
# full files).
BUNDLE_QUESTIONS = 30
BUNDLE_LINES = 32


def cut_bundle(source, keep=BUNDLE_QUESTIONS, lines=BUNDLE_LINES):
    """In an unpacked Gradescope bundle (source/): the data cut to its first `keep` training, dev and test questions
    (the held-out answers alike) and its corpus to its first `lines` lines, with one more line that holds every
    character of the corpus, so that the vocabulary stays the data set's.  The answers stay the data set's own.
    Returns a function that has the bundle's points.json recognise the data's birth_dev.tsv as it is then, by the
    row that recognised the data set's own files (none where no row did): the caller calls it once the data is
    final (fit_bundle rewrites the answers first)."""
    import grader  # noqa: F401  (configures the harness: the file that identifies a data set)
    import graderUtil

    source = Path(source)
    data = source / "starter" / "src" / "data"
    points = source / "starter" / "src" / "points.json"
    table = json.loads(points.read_text(encoding="utf-8"))
    row = graderUtil.recognising_row(table["thresholds"], graderUtil.normalized_sha256(data / "birth_dev.tsv"))
    for path in (data / "birth_places_train.tsv", data / "birth_dev.tsv", data / "birth_test_inputs.tsv",
                 source / "answers" / "birth_test.tsv"):
        write_lines(path, path.read_text(encoding="utf-8").splitlines()[:keep])
    corpus = (data / "wiki.txt").read_text(encoding="utf-8")
    every = "".join(sorted(set(corpus) - {"\n"}))
    write_lines(data / "wiki.txt", [line for line in corpus.split("\n") if line][:lines] + [every])

    def recognise():
        if row is not None:
            table["thresholds"]["rows"][row][graderUtil.identity_key()].append(
                graderUtil.normalized_sha256(data / "birth_dev.tsv"))
            points.write_text(json.dumps(table, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")

    return recognise


def fit_bundle(source, keep=BUNDLE_QUESTIONS, lines=BUNDLE_LINES):
    """In an unpacked Gradescope bundle (source/): the data cut (cut_bundle) and made to fit the agreeing pair
    (fit_data), its held-out answers theirs too.  The fitted files stand in for the bundle's data set: where a
    thresholds row recognised it (the course's files), the bundle's points.json has that row recognise the fitted
    birth_dev.tsv too, so that they are graded by the row the data set's own files get.  Returns the files a student
    uploads for every prediction point: {name: bytes}."""
    source = Path(source)
    data = source / "starter" / "src" / "data"
    recognise = cut_bundle(source, keep, lines)
    fit_data(data, held_out=False)
    _, answers = agreeing_files(data)
    test = questions(data, "test")
    write_lines(source / "answers" / "birth_test.tsv", [f"{q}\t{a}" for q, a in zip(test, answers["test"])])
    recognise()
    folder, _ = agreeing_files(data)
    files = {p.name: p.read_bytes() for p in folder.iterdir()}
    answers = source / "answers" / "birth_test.tsv"
    return dict(files, **{name: pretrained_file(data, answers, variant).read_bytes()
                          for variant, name in PRETRAINED.items()})
