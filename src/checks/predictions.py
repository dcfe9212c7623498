"""The prediction files against the submitted params, decided in the judge: no student code runs here.

Accuracy points are for predictions the submitted model really makes.  The judge of a prediction test loads the
params file that goes with the predictions into the course's model and decodes every question the course's way
(greedy: the most probable next character after question + MASK, until MASK or course.ANSWER_CHARS characters,
the context cropped to block_size).  A line counts as correct only if the file says it, the params say it, and
it is the right answer.

Why not the student's own forward, as before: the student's code could look at the answer it was asked to
check (a forward that peeks one token ahead passes any file).  Here the model is the grader's: the parameter
names and the structure come from the reference's code (the given GPT and Block are the same for everyone), and
the forward pass is written out with plain tensor operations (checks.decoder), so that it can keep a
key/value cache (seconds instead of minutes on one core) and compute each reading of the perceiver's blocks
that the grader accepts.

The params are read as the course's model by checks.params: outside the perceiver's blocks by the given
code's names, the student's own blocks in every reading of the handout's block that the grader accepts.  The
judge keeps the reading whose answers agree best with the file (`choose_pair`).  That choice is sound: each
reading is a correct perceiver as the handout describes it, so whichever one the params were trained in is a
right reading, and no choice can make the params say an answer they do not give in some correct reading of the
course's model.

Answers that the params give are not yet answers of a model that learned: params written by hand can answer one
frequent place to every question.  A file that clears its bar is therefore also asked whether its params learned
their task (checks.learned, by the thresholds row's "learned" rules).  Those three modules are the judge's own:
they ship with the hidden tests (grader.JUDGE_ONLY_FILES), so this module imports them where a judge needs them.
"""

from pathlib import Path

from kit import course
from checks.bars import at_least, at_most
from graderUtil import Fail
from grading.registry import PredictionsNotFromParams
from kit.baseline import baseline
from kit.fileio import read_lines, read_tsv

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


# -- the reading of the perceiver's blocks -------------------------------------------------------------------


def best_pair(fitted, score, enough=lambda value: False):
    """The reading of the perceiver's blocks (down, up) with the highest score(pair) (ties: the first reading);
    the first whose score is `enough` is taken at once.  Every pair when there are few; else one block at a time
    until neither changes (a third LayerNorm, or projections whose names do not say which is which, make hundreds
    of pairs).  Any reading is a correct perceiver as the handout describes it, so the best one is a right one."""
    _, downs, ups = fitted
    if len(downs) * len(ups) == 1:
        return 0, 0

    def best(pairs):
        found = None
        for pair in pairs:
            value = score(pair)
            if enough(value):
                return pair
            if found is None or value > found[0]:  # not a bar: the best of the readings
                found = value, pair
        return found[1]

    if len(downs) * len(ups) <= 64:
        return best([(i, j) for i in range(len(downs)) for j in range(len(ups))])
    pair = (0, 0)
    for _ in range(4):
        before = pair
        pair = best([(i, pair[1]) for i in range(len(downs))])
        pair = best([(pair[0], j) for j in range(len(ups))])
        if pair == before:
            break
    return pair


def choose_pair(fitted, questions, answers, stoi):
    """The reading whose teacher-forced answers agree best with a fixed sample of the file's lines (ties: the most
    log-probability, then the first reading); the first one that agrees on every sampled line is taken at once."""
    from checks.decoder import agreement_score  # the judge's own modules (grader.JUDGE_ONLY_FILES)
    from checks.params import weights

    step = max(1, len(questions) // SAMPLE)
    sample = list(range(0, len(questions), step))[:SAMPLE]
    qs, ans = [questions[i] for i in sample], [answers[i] for i in sample]
    shared = {}  # each down block's bottleneck, computed once for every reading of the up block (decoder.logits)
    return best_pair(fitted, lambda pair: agreement_score(weights(fitted, *pair), qs, ans, stoi, shared),
                     lambda value: value[0] == len(sample))


# -- the check -----------------------------------------------------------------------------------------------


def params_agreement(ctx, fname, params_name, variant, target, questions, predictions):
    """For each line of the prediction file (stripped): does the submitted params' greedy answer say the same?
    Returns those verdicts and the reading of the params that gave them ((fitted, pair), see checks.params).
    A Fail when the params cannot be found, loaded or fitted, or when more lines disagree than the slack."""
    from checks.decoder import greedy_answers
    from checks.params import weights

    stoi = vocab(ctx)
    unknown = sorted({ch for q in questions for ch in q if ch not in stoi})
    if unknown:
        raise Fail(f"the questions hold characters that wiki.txt lacks ({unknown[:5]}): a problem of the grading "
                   "set-up")
    try:
        fitted = submitted_params(ctx, params_name, variant, target)
    except Fail as e:
        raise Fail(f"{fname} earns no accuracy points: {e}") from None
    pair = choose_pair(fitted, questions, predictions, stoi)
    try:
        decoded = [a.strip() for a in greedy_answers(weights(fitted, *pair), questions, stoi)]
    except Fail as e:
        raise Fail(f"{fname} earns no accuracy points: {params_name}: {e}") from None
    differ = [i for i, (p, a) in enumerate(zip(predictions, decoded)) if p != a]
    allowed = int(allowed_disagreements(len(questions)))
    if len(differ) > allowed:
        shown = "; ".join(f"line {i + 1}: the file says {predictions[i]!r}, the params give {decoded[i]!r}"
                          for i in differ[:3])
        raise PredictionsNotFromParams(
            f"{fname} earns no accuracy points: it does not match {params_name}, whose greedy answers differ "
            f"on {len(differ)} of {len(questions)} lines (at most {allowed} may: near-ties between a GPU and "
            f"this CPU). {shown}. Submit the params and the predictions of the same run")
    return [p == a for p, a in zip(predictions, decoded)], (fitted, pair)


def vocab(ctx):
    """The course's vocabulary of the data's corpus, computed once per grading."""
    if "course_vocab" not in ctx.cache:
        from checks.params import course_vocab

        ctx.cache["course_vocab"] = course_vocab(ctx.data_path(course.DATA_FILES["corpus"]))
    return ctx.cache["course_vocab"]


def submitted_params(ctx, params_name, variant, target):
    """The submitted params file params_name loaded and fitted to the course's model (checks.params.fit: every
    reading of its blocks), once per grading; a Fail where it is missing or cannot be read as that model."""
    path = next((d / params_name for d in (ctx.predictions_dir, ctx.submission_dir) if (d / params_name).is_file()),
                None)
    if path is None:
        raise Fail(f"{params_name} is missing from {ctx.shown_predictions_dir} (./run.sh {target} writes it; "
                   "submit it with the predictions)")
    key = ("candidates", params_name)
    if key not in ctx.cache:
        from checks.params import fit, load_params, reference_model

        try:
            ref = reference_model(ctx, variant, len(vocab(ctx)))
            state = load_params(path, params_name)
            ctx.cache[key] = fit(state, ref, variant, params_name, len(vocab(ctx)))
            ctx.cache[("state", params_name)] = state  # as loaded: what descent() compares by name
        except Fail as e:
            ctx.cache[key] = e
    if isinstance(ctx.cache[key], Fail):
        raise ctx.cache[key]
    return ctx.cache[key]


def learning_check(ctx, params_name, reading, target, answers_file):
    """(problem, facts) of learned.check for the params in the reading that gave the file, by the rule of
    the thresholds row's "learned" section for params_name; (None, []) where it has none.  Computed once per
    params file and reading: a dev and a test file share it."""
    rule = ctx.thresholds.get("learned", {}).get(params_name)
    if not rule:
        return None, []
    from checks import learned
    from checks.params import weights

    fitted, pair = reading
    source = course.TARGET[target].reads  # the params it was finetuned from, if any

    def source_params():  # the params it was finetuned from, fitted (a Fail where they cannot be)
        return submitted_params(ctx, source, course.WRITTEN_BY[source].variant, course.WRITTEN_BY[source].name)

    def pretrained():  # in the reading of its blocks that predicts a fixed sample of the statistic's lines best
        fitted_source = source_params()
        sample = learned.pretraining_sequences(ctx.data_path(course.DATA_FILES["corpus"]), vocab(ctx),
                                               ctx.data_path(answers_file))[:SAMPLE]
        shared = {}  # each down block's bottleneck, computed once for every reading of the up block
        return weights(fitted_source, *best_pair(fitted_source, lambda p: learned.fit_score(
            learned.text_record(weights(fitted_source, *p), sample, shared))))

    def descent():  # how far the params are from those they were finetuned from (checks.lineage)
        from checks.lineage import descent_problem, drift_record
        from checks.params import read_names

        fitted_source = source_params()
        parent = ctx.cache[("state", source)]
        record = drift_record(ctx.cache[("state", params_name)], parent, read_names(parent, fitted_source))
        problem = descent_problem(record, params_name, source)
        if problem:
            raise Fail(problem)
        return record

    key = ("learned", params_name, pair)
    if key not in ctx.cache:
        ctx.cache[key] = learned.check(weights(fitted, *pair), rule, params_name, target, vocab(ctx),
                                       ctx.data_path(course.DATA_FILES["train"]),
                                       ctx.data_path(course.DATA_FILES["corpus"]), ctx.data_path(answers_file),
                                       pretrained, descent)
    return ctx.cache[key]


def check_london_baseline(ctx, report, train_file, dev_file):
    """1d-2's number, in the judge, from the data alone: the dev accuracy of always answering the most common
    birthplace of the training file (ties: the place seen first)."""
    try:
        place, correct, total = baseline(ctx.data_path(train_file), ctx.data_path(dev_file))
    except (Fail, OSError, ValueError) as e:
        return f"not computed: {e}"
    return (f"always answering '{place}' (the most common training birthplace) gets {correct}/{total} = "
            f"{100.0 * correct / total:.2f}% on dev")


def read_questions(path):
    return [fields[0] for fields in read_tsv(path)]


# -- the tests of a prediction file ------------------------------------------------------------------------
#
# grader.py registers one test per prediction file.  Beside the student's code (which it never runs) the test
# checks only that the file is there with one line per question (observe_file); the judge scores it against the
# answers the student's side never sees, counting a line only where the params give it too (check_file).

EVALUATIONS = [t for t in course.TARGETS if t.function == "evaluate"]
# prediction file: (the question set it answers, "dev" or "test"; the run.sh target that writes it)
PREDICTIONS = {t.writes: (t.data, t.name) for t in EVALUATIONS}
QUESTION_FILES = {split: course.DATA_FILES[split] for split in ("dev", "test")}
# prediction file: (params file, variant, the run.sh target that writes the params)
PARAMS_FOR = {t.writes: (t.reads, t.variant, course.WRITTEN_BY[t.reads].name) for t in EVALUATIONS}


def file_problem(fname, predictions_dir, questions, shown=None):
    """Why the prediction file cannot be graded (missing, or not one line per question: `questions` is the
    question file, or None where it is absent), or ''.  The one rule of both sides of a prediction test."""
    path = Path(predictions_dir) / fname
    if not path.is_file():
        return missing(fname, shown or predictions_dir)
    return "" if questions is None else miscounted(fname, len(read_lines(path)), len(read_tsv(questions)))


def missing(fname, predictions_dir):
    return f"{fname} is missing from {predictions_dir}: ./run.sh {PREDICTIONS[fname][1]} writes it"


def miscounted(fname, lines, questions):
    """Why a file of `lines` lines cannot answer `questions` questions, or ''."""
    if lines == questions:
        return ""
    return (f"{fname} has {lines} lines but there are {questions} questions: one predicted place per line, in the "
            "order of the questions")


def observe_file(ctx, fname):
    """Beside the student's code, none of which runs: only that the file is there with one line per question
    (check_file decides the rest)."""
    split, _ = PREDICTIONS[fname]
    problem = file_problem(fname, ctx.predictions_dir, ctx.data_path(QUESTION_FILES[split]),
                           ctx.shown_predictions_dir)
    if problem:
        raise Fail(problem)


def pending_note(fname, predictions_dir, data_dir, shown=None, row=None):
    """Where the answers are absent (a student's machine): the same local check, never an expected value, and
    whether the params that go with the file descend from the pretrain file beside them (descent_note), which
    needs no answer.  shown: the folder to name in a message (the student's, where predictions_dir is the
    sandbox's copy of it); row: the thresholds row the grading uses."""
    split, _ = PREDICTIONS[fname]
    questions = Path(data_dir) / QUESTION_FILES[split]
    problem = (file_problem(fname, predictions_dir, questions if questions.is_file() else None, shown)
               or descent_note(fname, predictions_dir, row))
    return f" (note: {problem})" if problem else ""


def descent_note(fname, predictions_dir, row):
    """Why the judge will find that the finetuned params of a prediction file were not finetuned from the pretrain
    file beside them, by the row's drift bar (checks.lineage), told before the student submits; '' where they
    were, or where either file is absent or cannot be read here (the judge says why).  On the student's own files,
    every weight matrix of the pretrain file is compared (checks.lineage.trainable: not a mask buffer): the judge's
    model reads every one of a correct run's."""
    params_name, _, target = PARAMS_FOR[fname]
    source = course.TARGET[target].reads
    bar = (((row or {}).get("learned") or {}).get(params_name) or {}).get("max_finetune_drift")
    child, parent = Path(predictions_dir) / params_name, Path(predictions_dir) / str(source)
    if source is None or bar is None or not (child.is_file() and parent.is_file()):
        return ""
    from checks.lineage import descent_problem, drift_record, far_problem, load_params, trainable

    try:
        before = load_params(parent, source)
        record = drift_record(load_params(child, params_name), before, trainable(before))
        near = not descent_problem(record, params_name, source) and at_most(record["drift"], bar, "the drift")
    except Exception:  # noqa: BLE001 - whatever the files hold: the judge's own check says what is wrong
        return ""
    if near:
        return ""
    return (f"{far_problem(params_name, source, record['drift'], bar, 'a finetuning')}, and {fname} will earn no "
            f"accuracy points. Run ./run.sh {target} and the evaluations again, and submit the files of that run")


def check_file(ctx, report, fname, gold_files):
    """The accuracy against the answers, in the judge: the student's code never sees them.  A line is correct
    when it is the right answer and the submitted params give it too (params_agreement)."""
    split, _ = PREDICTIONS[fname]
    gold_path = ctx.data_path(gold_files[split])
    gold = read_tsv(gold_path)
    if any(len(fields) < 2 for fields in gold):
        raise Fail(f"{gold_path} has no answer column (a problem of the grading set-up)")
    questions = read_questions(ctx.data_path(QUESTION_FILES[split]))
    if len(questions) != len(gold):
        raise Fail(f"{gold_path.name} and {QUESTION_FILES[split]} disagree (a problem of the grading set-up)")
    answers = [fields[1].strip() for fields in gold]
    path = ctx.predictions_dir / fname
    if not path.is_file():
        raise Fail(missing(fname, ctx.shown_predictions_dir))
    predictions = [p.strip() for p in read_lines(path)]
    problem = miscounted(fname, len(predictions), len(answers))
    if problem:
        raise Fail(problem)
    agree, reading = params_agreement(ctx, fname, *PARAMS_FOR[fname], questions, predictions)
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
    if correct < min_correct or not at_least(correct, min_accuracy * total - 1e-9, f"{fname}'s correct lines"):
        raise Fail(f"{fname}: {score}; needs {' and '.join(needs)} (thresholds '{ctx.threshold_row}')")
    # enough right answers: now, are they a model's that learned its task, or a constant's (checks.learned)
    problem, facts = learning_check(ctx, PARAMS_FOR[fname][0], reading, PARAMS_FOR[fname][2], gold_files["test"])
    if problem:
        raise Fail(f"{fname} earns no accuracy points ({score}): {problem}")
    return f"{fname}: {score}" + (f"; {PARAMS_FOR[fname][0]}: {', '.join(facts)}" if facts else "")
