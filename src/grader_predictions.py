"""The prediction files against the submitted params, decided in the judge: no student code runs here.

Accuracy points are for predictions the submitted model really makes.  The judge of a prediction test loads the
params file that goes with the predictions into the course's model and decodes every question the course's way
(greedy: the most probable next character after question + MASK, until MASK or course.ANSWER_CHARS characters,
the context cropped to block_size).  A line counts as correct only if the file says it, the params say it, and
it is the right answer.

Why not the student's own forward, as before: the student's code could look at the answer it was asked to
check (a forward that peeks one token ahead passes any file).  Here the model is the grader's: the parameter
names and the structure come from the reference's code (the given GPT and Block are the same for everyone), and
the forward pass is written out with plain tensor operations (grader_decoder.py), so that it can keep a
key/value cache (seconds instead of minutes on one core) and compute each reading of the perceiver's blocks
that the grader accepts.  A self-check ties it to the reference's code: on a random model of the course's size,
one of its readings must give the reference model's logits (`_self_check`).

The perceiver's blocks are the student's own classes, so their parameter names are the student's.  They are
mapped onto the roles of the handout's block (basis C, attention layer norm(s), query/key/value/output
projections, MLP layer norm, the MLP's two layers) by shape, by name where the names say it (the given Block's
ln1/ln2, attention's key/query/value/proj, or q/k/v/out-like names) and by registration order otherwise, and every
reading the grader accepts (grader_same_weights.block_readings: the layer norm on the query, the keys/values or
both, the residual from the query, from its normalised form or none; a third LayerNorm for the query) is a
candidate.  The judge keeps the candidate whose answers agree best with the file.  That choice is sound: each
candidate is a correct perceiver as the handout describes it, so whichever one the params were trained in is a
right reading, and no choice can make the params say an answer they do not give in some correct reading of the
course's model.
"""

import re
from pathlib import Path

import course
from grader_decoder import agreement_score, greedy_answers, logits
from graderUtil import Fail, count_lines, read_prediction_lines, read_tsv_rows

PAD, MASK = course.PAD_CHAR, course.MASK_CHAR
MODEL = course.MODEL  # the handout's model (run.py's defaults)

# Lines of a file that may disagree with its params before the file earns nothing.  A model trained and
# evaluated on a GPU in bf16 and decoded here on a CPU in fp32 computes logits that differ in the third
# significant digit; a greedy answer changes only where the top two characters are that close, a near-tie
# that a trained model meets on a handful of lines at most.  Two lines (or 0.5 % on longer files) covers that,
# and it can never add points: a disagreeing line counts as wrong.  It stays far below every threshold (the
# perceiver's 2.4 % dev / 2.0 % test on the course's data are 12 and 9 lines).
SLACK_LINES = 2
SLACK_FRACTION = 0.005
SAMPLE = 16  # lines of the file that choose among the perceiver's readings (teacher-forced, one pass each)


def allowed_disagreements(n):
    return max(SLACK_LINES, int(SLACK_FRACTION * n + 1e-9))


# -- the params file ---------------------------------------------------------------------------------------


def course_vocab(wiki_path):
    """stoi of the pretraining corpus as the handout builds it: PAD 0, MASK 1, then the sorted characters."""
    chars = sorted(set(Path(wiki_path).read_text(encoding="utf-8")) - {PAD, MASK})
    return {ch: i for i, ch in enumerate([PAD, MASK] + chars)}


def load_params(path, params_name):
    """The params file as {name: float32 tensor}, names without torch.compile's / DataParallel's prefix."""
    import torch

    try:
        state = torch.load(path, map_location="cpu", weights_only=True)  # plain tensors: no code of the student's
    except Exception as e:  # noqa: BLE001 - whatever the file holds
        raise Fail(f"{params_name} could not be loaded ({type(e).__name__}: {str(e).strip()[:200]})") from None
    if not isinstance(state, dict):
        raise Fail(f"{params_name} does not hold a state dict (train() saves model.state_dict())")
    out = {}
    for k, v in state.items():
        if isinstance(k, str) and torch.is_tensor(v) and v.is_floating_point():
            out[k.removeprefix("_orig_mod.").removeprefix("module.")] = v.detach().float()
    return out


# -- the roles of the parameters ---------------------------------------------------------------------------
#
# A model's weights as the forward pass below uses them: {"tok", "pos", "ln_f", "head", "blocks": [block],
# "down", "up"}; a block {"ln1", "attn": {"q", "k", "v", "o"}, "ln2", "fc1", "fc2"} (a layer: (weight, bias));
# a perceiver block {"C" (down only), "ln_q", "ln_kv" (a layer or None), "res" ("query", "normalised query" or
# "none": where the residual around the cross-attention starts, grader_same_weights.block_readings), "attn",
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
        layouts = [(a, None, "query", b), (a, None, "normalised query", b), (None, a, "query", b),
                   (a, a, "query", b), (a, a, "normalised query", b),
                   (a, None, "none", b), (None, a, "none", b), (a, a, "none", b)]
    else:  # a LayerNorm of its own for the query: any of the three may be the query's, the keys' or the MLP's
        layouts = []
        for i in range(3):
            for j in range(3):
                k = 3 - i - j
                if i != j:
                    for res in ("query", "normalised query", "none"):
                        layouts.append((norms[i][1], norms[j][1], res, norms[k][1]))
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


def weights(fitted, down, up):
    base, downs, ups = fitted
    return base if base["variant"] == "vanilla" else dict(base, down=downs[down], up=ups[up])


def choose(fitted, questions, answers, stoi):
    """The reading of the perceiver's blocks (down, up) whose teacher-forced answers agree best with a fixed
    sample of the file's lines (ties: the most log-probability, then the first reading); the first one that
    agrees on every sampled line is taken at once.  Every pair when there are few; else one block at a time
    until neither changes (a third LayerNorm, or projections whose names do not say which is which, make
    hundreds of pairs)."""
    _, downs, ups = fitted
    if len(downs) * len(ups) == 1:
        return weights(fitted, 0, 0)
    step = max(1, len(questions) // SAMPLE)
    sample = list(range(0, len(questions), step))[:SAMPLE]
    qs, ans = [questions[i] for i in sample], [answers[i] for i in sample]

    def best(pairs):
        found = None
        for pair in pairs:
            agree, logp = agreement_score(weights(fitted, *pair), qs, ans, stoi)
            if agree == len(sample):
                return pair
            if found is None or (agree, logp) > found[0]:
                found = (agree, logp), pair
        return found[1]

    if len(downs) * len(ups) <= 64:
        return weights(fitted, *best([(i, j) for i in range(len(downs)) for j in range(len(ups))]))
    pair = (0, 0)
    for _ in range(4):
        before = pair
        pair = best([(i, pair[1]) for i in range(len(downs))])
        pair = best([(pair[0], j) for j in range(len(ups))])
        if pair == before:
            break
    return weights(fitted, *pair)


# -- the reference's code ------------------------------------------------------------------------------------


def reference_model(ctx, variant, vocab_size):
    """The reference's model in the course configuration (random weights): the given code's names and shapes."""
    import torch

    key = ("reference_model", variant, vocab_size)
    if key not in ctx.cache:
        model_mod, helper = ctx.solution("model"), ctx.solution("helper")
        mconf = model_mod.GPTConfig(vocab_size, MODEL["block_size"], n_layer=MODEL["n_layer"],
                                    n_head=MODEL["n_head"], n_embd=MODEL["n_embd"])
        torch.manual_seed(0)
        net = (helper.initialize_vanilla_model(mconf) if variant == "vanilla"
               else helper.initialize_perceiver_model(mconf, course.BOTTLENECK_DIM))
        ctx.cache[key] = net.float().eval()
        _self_check(ctx.cache[key], variant, vocab_size)
    return ctx.cache[key]


def _self_check(net, variant, vocab_size):
    """One of this module's readings gives the reference model's logits (its params mapped like a student's)."""
    import torch

    state = {k: v.detach().float() for k, v in net.state_dict().items() if v.is_floating_point()}
    gen = torch.Generator().manual_seed(3)
    idx = torch.randint(0, vocab_size, (2, 45), generator=gen)
    with torch.no_grad():
        want = net(idx)[0].float()
        fitted = fit(state, net, variant, "the reference's params", vocab_size)
        pairs = ((i, j) for i in range(len(fitted[1])) for j in range(len(fitted[2])))
        same = any(torch.allclose(logits(weights(fitted, *pair), idx), want, atol=1e-4) for pair in pairs)
    if not same:
        raise Fail(f"the grader's {variant} model differs from the reference's (a problem of the grading set-up)")


# -- the check -----------------------------------------------------------------------------------------------


def params_agreement(ctx, fname, params_name, variant, target, questions, predictions):
    """For each line of the prediction file (stripped): does the submitted params' greedy answer say the same?
    A Fail when the params cannot be found, loaded or fitted, or when more lines disagree than the slack."""
    path = next((d / params_name for d in (ctx.predictions_dir, ctx.submission_dir) if (d / params_name).is_file()),
                None)
    if path is None:
        raise Fail(f"{fname} earns no accuracy points: {params_name} is missing from {ctx.predictions_dir} "
                   f"(./run.sh {target} writes it; submit it with the predictions)")
    if "course_vocab" not in ctx.cache:
        ctx.cache["course_vocab"] = course_vocab(ctx.data_path(course.DATA_FILES["corpus"]))
    stoi = ctx.cache["course_vocab"]
    unknown = sorted({ch for q in questions for ch in q if ch not in stoi})
    if unknown:
        raise Fail(f"the questions hold characters that wiki.txt lacks ({unknown[:5]}): a problem of the grading "
                   "set-up")
    key = ("candidates", params_name)
    if key not in ctx.cache:
        try:
            ref = reference_model(ctx, variant, len(stoi))
            ctx.cache[key] = fit(load_params(path, params_name), ref, variant, params_name, len(stoi))
        except Fail as e:
            ctx.cache[key] = e
    if isinstance(ctx.cache[key], Fail):
        raise Fail(f"{fname} earns no accuracy points: {ctx.cache[key]}")
    chosen = choose(ctx.cache[key], questions, predictions, stoi)
    decoded = [a.strip() for a in greedy_answers(chosen, questions, stoi)]
    differ = [i for i, (p, a) in enumerate(zip(predictions, decoded)) if p != a]
    allowed = allowed_disagreements(len(questions))
    if len(differ) > allowed:
        shown = "; ".join(f"line {i + 1}: the file says {predictions[i]!r}, the params give {decoded[i]!r}"
                          for i in differ[:3])
        raise Fail(f"{fname} earns no accuracy points: it does not match {params_name}, whose greedy answers differ "
                   f"on {len(differ)} of {len(questions)} lines (at most {allowed} may: near-ties between a GPU and "
                   f"this CPU). {shown}. Submit the params and the predictions of the same run")
    return [p == a for p, a in zip(predictions, decoded)]


def read_questions(path):
    return [fields[0] for fields in read_tsv_rows(path)]


# -- the tests of a prediction file ------------------------------------------------------------------------
#
# grader.py registers one test per prediction file.  Beside the student's code (which it never runs) the test
# checks only that the file is there with one line per question (file_test); the judge scores it against the
# answers the student's side never sees, counting a line only where the params give it too (file_judge).

EVALUATIONS = [t for t in course.TARGETS if t.function == "evaluate"]
# prediction file: (the question set it answers, "dev" or "test"; the run.sh target that writes it)
PREDICTIONS = {t.writes: (t.data, t.name) for t in EVALUATIONS}
QUESTION_FILES = {split: course.DATA_FILES[split] for split in ("dev", "test")}
# prediction file: (params file, variant, the run.sh target that writes the params)
PARAMS_FOR = {t.writes: (t.reads, t.variant, course.WRITTEN_BY[t.reads].name) for t in EVALUATIONS}


def file_test(fname):
    """Test of a prediction file, beside the student's code: only that the file is there with one line per
    question (no student code runs; the judge, file_judge, decides the rest)."""

    split, target = PREDICTIONS[fname]

    def file_problem(predictions_dir, questions):
        """Why the prediction file cannot be graded (missing, or not one line per question), or ''."""
        path = Path(predictions_dir) / fname
        if not path.is_file():
            return f"{fname} is missing from {predictions_dir}: ./run.sh {target} writes it"
        if questions is not None:
            n, lines = count_lines(questions), len(read_prediction_lines(path))
            if n != lines:
                return (f"{fname} has {lines} lines but there are {n} questions: one predicted place "
                        "per line, in the order of the questions")
        return ""

    def run(ctx):
        problem = file_problem(ctx.predictions_dir, ctx.data_path(QUESTION_FILES[split]))
        if problem:
            raise Fail(problem)

    def pending_note(predictions_dir, data_dir):
        """Where the answers are absent (a student's machine): the same local check, never an expected value."""
        questions = Path(data_dir) / QUESTION_FILES[split]
        problem = file_problem(predictions_dir, questions if questions.is_file() else None)
        return f" (note: {problem})" if problem else ""

    run.predictions_file = fname
    run.pending_note = pending_note
    return run


def file_judge(fname, gold_files):
    """The accuracy against the answers, in the judge: the student's code never sees them.  A line is correct
    when it is the right answer and the submitted params give it too (params_agreement)."""

    def judge(ctx, report):
        split, target = PREDICTIONS[fname]
        gold_path = ctx.data_path(gold_files[split])
        gold = read_tsv_rows(gold_path)
        if any(len(fields) < 2 for fields in gold):
            raise Fail(f"{gold_path} has no answer column (a problem of the grading set-up)")
        questions = read_questions(ctx.data_path(QUESTION_FILES[split]))
        if len(questions) != len(gold):
            raise Fail(f"{gold_path.name} and {QUESTION_FILES[split]} disagree (a problem of the grading set-up)")
        answers = [fields[1].strip() for fields in gold]
        path = ctx.predictions_dir / fname
        if not path.is_file():
            raise Fail(f"{fname} is missing from {ctx.predictions_dir}: ./run.sh {target} writes it")
        predictions = [p.strip() for p in read_prediction_lines(path)]
        if len(predictions) != len(answers):
            raise Fail(f"{fname} has {len(predictions)} lines but there are {len(answers)} questions: one "
                       "predicted place per line, in the order of the questions")
        agree = params_agreement(ctx, fname, *PARAMS_FOR[fname], questions, predictions)
        correct = sum(1 for p, a, ok in zip(predictions, answers, agree) if ok and p == a)
        total = len(answers)
        rule = ctx.thresholds.get(fname, {})
        min_correct = int(rule.get("min_correct", 0))
        min_accuracy = float(rule.get("min_accuracy", 0.0))
        score = f"{correct}/{total} correct ({100.0 * correct / total:.2f}%)"
        differ = agree.count(False)
        if differ:
            score += (f"; {differ} line{'s' if differ > 1 else ''} that {PARAMS_FOR[fname][0]} does not give "
                      f"(line {agree.index(False) + 1} first) counted as wrong")
        needs = []
        if min_correct:
            needs.append(f"at least {min_correct} correct")
        if min_accuracy:
            needs.append(f"at least {100 * min_accuracy:g}%")
        if correct < min_correct or correct < min_accuracy * total - 1e-9:
            raise Fail(f"{fname}: {score}; needs {' and '.join(needs)} (thresholds '{ctx.threshold_row}')")
        return f"{fname}: {score}"

    return judge
