"""Whether the params behind a prediction file are a model that learned its task, decided in the judge: no student
code runs here.

A prediction file earns accuracy points only with the params that produced it (checks/predictions.py).  That alone
does not show learning: params written by hand, whose greedy answer is one frequent place for every question,
produce their own file, and a constant answer scores what the most common place scores (about 5 % of the
questions: above the perceiver's bar and 1d's "at least 1 correct").  So the params must also show that they
learned what their run.sh target trains, each with a statistic that no constant answer and no untrained model can
reach, and that correct work reaches with a wide margin (the bars are in points.json's thresholds row, "learned",
set from correct runs by the instructor's experiment tool, which calibrates the row):

- every finetuned model (vanilla.model.params, vanilla.finetune.params, perceiver.finetune.params) knows which
  answer goes with which of its own training questions (birth_places_train.tsv): it finds each answer more probable
  after its own question than after another one (`training_record`'s question_gain), by more than chance gives
  (its question_evidence: the mean gain in standard errors of the rows' own spread).  Params that ignore the
  question, as a constant answer does, find every answer as probable after any question: a gain of 0 on every
  row.  (How many of those questions the params answer, beside what the most common place gets, is reported too:
  correct perceivers answer few more than that on the course's data, so the gain is the check);
- a model finetuned from pretrained params (vanilla.finetune.params, perceiver.finetune.params) has read the
  corpus: it predicts the next character of wiki.txt's lines with a loss far below the unigram entropy of those
  characters, the least loss of any model that ignores what came before (`corpus_record`);
- the params it was finetuned from (vanilla.pretrain.params, perceiver.pretrain.params: files the handout asks
  for) learned the pretraining's own task: they predict span-corrupted lines of wiki.txt (prefix ⁇ suffix ⁇ span)
  far below the unigram entropy of their characters, nearly as well as the same lines as plain text and far
  better than a table of the previous character that anyone can count from the corpus (`pretraining_record`'s
  gain, share and gain over the judge's bigram); and the finetuned params are those params moved a little
  (checks.lineage: a finetuning's 80 steps leave a pretraining's weights near where they were; a model of another
  run is far from them).  A plain next-character model of the corpus learns its text, not where a corrupted line
  goes on after a ⁇: span corruption teaches that, over the pretraining's epochs.  The lines, and how each is
  corrupted (its truncation, and the length and place of its span, drawn as CharCorruptionDataset draws them), are
  drawn by a seed that the held-out answers give: a sample of the corpus that no student knows, which a model
  predicts only as well as it predicts the corrupted corpus, and layouts that a model fitted to one public layout
  of the lines does not predict.  Where the span starts is the spec's one free choice, so each line is read with
  its span at the drawn place and at the places that never move (first, last, in the middle: PLACES), and the
  params pass where they pass in one of those readings.  (The held-out people, whom only a model that read the
  corpus can know, are measured too, `heldout_record`: correct perceivers know too few of them on the course's data
  for a bar.)

Each is computed on fixed samples of the data files with the judge's own forward pass (decoder.logits,
teacher-forced: one pass, no decoding), so a params file gets the same numbers in every grading.
"""

import functools
import hashlib
import math
import random
from collections import Counter
from pathlib import Path
from typing import Callable, NamedTuple

from kit import course
from checks.bars import at_least, at_most, number
from checks.decoder import logits
from checks.lineage import far_problem
from graderUtil import Fail
from kit.fileio import read_tsv

MASK = course.MASK_CHAR
BLOCK = course.MODEL["block_size"]
TRAIN_SAMPLE = 500  # training questions asked: every k-th of the file (a share's error is ~2 points at 500)
CORPUS_LINES = 256  # wiki.txt lines that each of the two corpus statistics reads
# characters of each line: the start of a biography, where span corruption shows the model plain text (the
# prefix before the masked span is at most 3/4 of a line cut to at most 96 characters)
CORPUS_CHARS = 48
PRETRAIN_CHARS = int(BLOCK * 3 / 4)  # the longest truncation of the course's spec: 96 characters (see `layout`)
MIN_CHARS = 8  # a line the pretraining statistic reads has at least these many characters
PUBLIC_LAYOUTS = "layouts:public"  # the seed of the bigram baseline's layouts (`corrupted_corpus`): anyone's
BATCH = 128  # sequences per forward pass: the judge's memory stays small on the course's model
# Nats one row can add to a gain or take from it.  A gain is a mean over rows, so without a bound a few rows
# could decide it: params scaled up until their log-probabilities run to thousands of nats gain or lose that much
# on rows where they know nothing, and a random such model clears any bar by chance about half the time.
# Bounded, the mean of a model that knows nothing stays within about LINE_CLIP / sqrt(rows) of 0, and a model
# that knows an answer (a few nats per character) still counts it in full or nearly.
LINE_CLIP = 10.0
EVIDENCE_CAP = 1000.0  # `evidence` stays a finite number, every row's gain equal included


def every_kth(items, n):
    """At most n items, evenly spread over items (the first included): the same sample in every grading."""
    step = max(1, math.ceil(len(items) / n))
    return items[::step][:n]


def _forward(w, seqs, shared=None):
    """log-probabilities (B, T, vocab) of right-padded seqs (lists of ids), BATCH at a time: a list of tensors.
    shared: a dict kept over calls on these seqs with readings of one params file (decoder.logits')."""
    import torch

    out = []
    with torch.no_grad():
        for start in range(0, len(seqs), BATCH):
            chunk = seqs[start:start + BATCH]
            longest = max(len(s) for s in chunk)
            idx = torch.tensor([s + [0] * (longest - len(s)) for s in chunk])  # causal: padding changes nothing
            out.extend(torch.log_softmax(logits(w, idx, None if shared is None else shared.setdefault(start, {}))
                                         .float(), dim=-1))
    return out


def _usable(rows, stoi):
    """(prompt ids, answer ids + the closing MASK) for each (question, answer) row whose characters the
    vocabulary holds and whose answer the course's decoding can give (at most course.ANSWER_CHARS characters)."""
    usable = []
    for question, answer in rows:
        if answer and not any(ch not in stoi for ch in question + answer) and len(answer) <= course.ANSWER_CHARS:
            tail = [stoi[ch] for ch in answer] + ([stoi[MASK]] if len(answer) < course.ANSWER_CHARS else [])
            usable.append(([stoi[ch] for ch in question + MASK], tail))
    return usable


def question_gains(w, rows, stoi):
    """For each (question, answer) row: whether the params answer it as the course's greedy decoding would (every
    answer character and the closing MASK the most probable next character, with the answer fed in: exactly when
    greedy decoding gives that answer), and how much more probable (in nats) they find the answer after its own
    question than after the next row's question, clipped to +-LINE_CLIP.  Params that ignore the question, a
    constant answer made by hand included, find every answer as probable after any question: 0.  A row too long
    for the block is left out.  (answered, [gain per row])."""
    import torch

    usable = _usable(rows, stoi)
    seqs, tails = [], []
    for k, (_, tail) in enumerate(usable):
        for prompt in (usable[k][0], usable[(k + 1) % len(usable)][0]):  # its own question, the next row's
            if len(prompt) + len(tail) - 1 <= BLOCK:
                seqs.append(prompt + tail[:-1])
                tails.append((len(prompt) - 1, tail))
            else:  # too long for the block: the row is left out, both ways
                seqs.append(None)
                tails.append(None)
    kept = [k for k in range(len(seqs)) if seqs[k] is not None]
    logps = dict(zip(kept, _forward(w, [seqs[k] for k in kept]) if kept else []))
    answered, gains = 0, []
    for k in range(0, len(seqs), 2):
        if k not in logps or k + 1 not in logps:
            continue
        (start, tail), (other, _) = tails[k], tails[k + 1]
        target = torch.tensor(tail)
        own = logps[k][start:start + len(tail)]
        answered += int(torch.equal(own.argmax(dim=-1), target))
        lp_own = own.gather(1, target[:, None]).sum()
        lp_other = logps[k + 1][other:other + len(tail)].gather(1, target[:, None]).sum()
        gains.append(float((lp_own - lp_other).clamp(-LINE_CLIP, LINE_CLIP)))  # NaN stays NaN: the check fails it
    return answered, gains


def _mean(values):
    return round(sum(values) / len(values), 4) if values else None


def evidence(gains):
    """How many standard errors the mean gain of the rows is above 0: mean / (sd / sqrt(rows)), the rows' own
    spread measuring the chance in it (sd the sample standard deviation).  Params whose answer probabilities do not
    depend on the question gain exactly 0 on every row: 0.  Params that use the question without having learned
    it (a random model, its weights scaled up or not) gain or lose a little on each row at random: about a normal
    number of mean 0 and spread 1 (measured in docs/benchmarks.md).  None with fewer than 2 rows; NaN where a gain
    is (the bar then fails)."""
    if len(gains) < 2:
        return None
    mean = sum(gains) / len(gains)
    if not math.isfinite(mean):  # a gain that is NaN: so is the evidence
        return mean
    sd = math.sqrt(sum((g - mean) ** 2 for g in gains) / (len(gains) - 1))
    if sd == 0:  # every row the same gain: 0, or as sure as can be
        return math.copysign(EVIDENCE_CAP, mean) if mean else 0.0
    return round(max(-EVIDENCE_CAP, min(EVIDENCE_CAP, mean / (sd / math.sqrt(len(gains))))), 2)


def training_record(w, train_path, stoi):
    """What the params know of a sample of their training questions (question_gains): how many they answer
    (correct), beside what the best constant answer (the most common place, constant_place) gets
    (constant_correct), question_gain, the mean gain in nats, and question_evidence, how sure the rows make it
    that the gain is above 0 (`evidence`).
    {"asked", "correct", "constant_place", "constant_correct", "question_gain", "question_evidence"}."""
    rows = every_kth([(f[0], f[1].strip()) for f in read_tsv(train_path) if len(f) > 1], TRAIN_SAMPLE)
    correct, gains = question_gains(w, rows, stoi)
    place, count = Counter(answer for _, answer in rows).most_common(1)[0] if rows else ("", 0)
    return {"asked": len(rows), "correct": correct, "constant_place": place, "constant_correct": count,
            "question_gain": _mean(gains), "question_evidence": evidence(gains)}


def heldout_record(w, answers_path, stoi):
    """What the params know of the held-out people (the test questions, whose answers students never see; their
    biographies are in wiki.txt): question_gains over every test question, each answer against the next test
    person's question.  Only a model that read the corpus and retrieves from it knows where those people were
    born; finetuning alone teaches what a name's origin suggests, which the bar sits above.
    {"asked", "correct", "heldout_gain"}."""
    rows = [(f[0], f[1].strip()) for f in read_tsv(answers_path) if len(f) > 1]
    correct, gains = question_gains(w, rows, stoi)
    return {"asked": len(rows), "correct": correct, "heldout_gain": _mean(gains)}


def text_record(w, seqs, shared=None):
    """The params' mean loss (nats per character) predicting each next id of every sequence of ids in seqs, beside
    the unigram entropy of those ids (the least mean loss of any model that ignores the context, the best constant
    distribution): {"lines", "chars", "loss", "unigram", "gain"}, where gain = 1 - loss / unigram is the share of
    that entropy the params explain (0 for a model that learned only how often each character occurs, below 0 for
    an untrained one).  shared: a dict kept over calls on these seqs with readings of one params file (a search
    over the perceiver's readings, decoder.logits')."""
    import torch

    seqs = [s for s in seqs if len(s) > 1]
    nll, counts = 0.0, Counter()
    for logp, seq in zip(_forward(w, seqs, shared) if seqs else [], seqs):
        targets = torch.tensor(seq[1:])
        nll -= float(logp[:len(seq) - 1].gather(1, targets[:, None]).sum())
        counts.update(seq[1:])
    chars = sum(counts.values())
    if not chars:
        return {"lines": 0, "chars": 0, "loss": None, "unigram": None, "gain": None}
    unigram = -sum(c / chars * math.log(c / chars) for c in counts.values())
    loss = nll / chars
    return {"lines": len(seqs), "chars": chars, "loss": round(loss, 4), "unigram": round(unigram, 4),
            "gain": round(1 - loss / unigram, 4)}


def wiki_lines(wiki_path):
    """wiki.txt's lines of text (more than one character besides spaces)."""
    return [line for line in Path(wiki_path).read_text(encoding="utf-8").split("\n") if len(line.strip()) > 1]


def corpus_lines(wiki_path):
    """The fixed sample of wiki.txt's lines that the corpus statistic reads: every k-th line, CORPUS_LINES of them."""
    return every_kth(wiki_lines(wiki_path), CORPUS_LINES)


def bigram_loss(fitted_on, seqs, vocab_size):
    """The mean loss (nats per character) on each next id of seqs of the character bigram fitted on the sequences
    fitted_on (add-half smoothing): the best a table of the previous character can do, which anyone can write by
    hand from the public corpus.  Beside a record's gain over the unigram entropy, the gain over this
    ("bigram_gain" = 1 - loss / bigram) is what the params know beyond such a table: a pretraining's bar reads it
    (min_pretraining_bigram_gain).  A pretraining is no better than a bigram for its first 14 epochs or so and
    leaves it far behind by the end of its 650 (docs/benchmarks.md, "The bigram baseline")."""
    import torch

    def pairs(group):
        kept = [s for s in group if len(s) > 1]
        prev = torch.tensor([t for s in kept for t in s[:-1]], dtype=torch.long)
        return prev, torch.tensor([t for s in kept for t in s[1:]], dtype=torch.long)

    prev, nxt = pairs(fitted_on)
    counts = torch.bincount(prev * vocab_size + nxt, minlength=vocab_size * vocab_size).double()
    counts = counts.view(vocab_size, vocab_size) + 0.5
    logp = counts.log() - counts.sum(dim=1, keepdim=True).log()
    prev, nxt = pairs(seqs)
    return round(-float(logp[prev, nxt].mean()), 4) if len(nxt) else None


def with_bigram(record, fitted_on, seqs, vocab_size):
    """record (a text_record of seqs) with "bigram" (bigram_loss) and "bigram_gain" (None where not a number)."""
    bigram = bigram_loss(fitted_on, seqs, vocab_size)
    loss = record["loss"]
    finite = all(isinstance(v, float) and math.isfinite(v) for v in (loss, bigram))
    ratio = finite and bigram > 0  # not a bar: a ratio's domain
    return dict(record, bigram=bigram, bigram_gain=round(1 - loss / bigram, 4) if ratio else None)


def corpus_record(w, wiki_path, stoi):
    """text_record of the start (CORPUS_CHARS characters) of a sample of wiki.txt's lines, as plain text, with the
    gain over a bigram of every line's start (with_bigram)."""
    def starts(lines):
        return [[stoi[ch] for ch in line[:CORPUS_CHARS] if ch in stoi] for line in lines]

    seqs = starts(corpus_lines(wiki_path))
    return with_bigram(text_record(w, seqs), starts(wiki_lines(wiki_path)), seqs, len(stoi))


class Layout(NamedTuple):
    """How one line is corrupted: its first `length` ids kept (the truncation), the `span` ids from `start` on
    masked.  In ids: prefix MASK suffix MASK span."""
    length: int
    start: int
    span: int


def layout(n, rng):
    """A Layout for a line of n ids (at least MIN_CHARS), drawn by rng (a random.Random) as the course's
    CharCorruptionDataset draws one, within every reading of its spec: a truncation of 4 to PRETRAIN_CHARS
    characters, every length possible (a line shorter than that stays whole); a span of 1/8 to 3/8 of the kept
    text (1/4 on average, a length every reading of "random, 1/4 on average" makes often), at a place drawn
    uniformly.  A model that learned the task, wherever the span falls, predicts such lines as it predicts its
    own training examples; one fitted to a single layout does not."""
    length = min(n, rng.randint(4, PRETRAIN_CHARS))
    span = rng.randint(max(1, length // 8), max(1, 3 * length // 8))
    return Layout(length, rng.randint(0, length - span), span)


# Where the span starts is the one choice the course's spec leaves to each reading (it asks only that the three
# pieces make the document again, and either end may be empty): a place drawn anew for every example, or one that
# never moves (the prefix always empty, the suffix always empty, the span centred), are all readings 1e accepts.  A
# model learns the lines of its own reading: pretrained with the span always first, it never saw a prefix, and on
# lines whose span is elsewhere it is read below the bars the more it learned (docs/benchmarks.md, "The pretraining
# check's layouts").  So the judge reads every secret line, with its drawn truncation and span length, in each of
# these places, and params pass where they pass in one of them (`passing_reading`).  The reference's reading comes
# first: a file that passes there costs one reading, a file that passes in none all four (about 14 s on the course's
# data on 2 cores).
PLACES = {
    "drawn": lambda cut: cut.start,
    "first": lambda cut: 0,
    "last": lambda cut: cut.length - cut.span,
    "middle": lambda cut: (cut.length - cut.span) // 2,
}
PLACE_WORDS = {"drawn": "at a drawn place", "first": "first", "last": "last", "middle": "in the middle"}


def placed(draw, place):
    """draw (a Layout drawer, as `layout`) with the span moved to `place` (a key of PLACES): the same truncation and
    span length, drawn with the same random numbers."""
    if place == "drawn":
        return draw

    def moved(n, rng):
        cut = draw(n, rng)
        return cut._replace(start=PLACES[place](cut))
    return moved


def corrupted(ids, mask, drawn):
    """A line's ids corrupted by the Layout drawn: prefix MASK suffix MASK span.  The span's closing MASK (some
    readings of the spec write it, some do not) is left off.  Example, with ⁇ for mask: "Anna Berg was born in
    Oslo" with Layout(26, 10, 6) -> "Anna Berg ⁇rn in Oslo⁇was bo"."""
    kept = ids[:drawn.length]
    start, end = drawn.start, drawn.start + drawn.span
    return kept[:start] + [mask] + kept[end:] + [mask] + kept[start:end]


def _seed(answers_path):
    """The grading's secret: the SHA-256 of the held-out answers' file (line endings normalised), a file no
    student sees.  The same in every grading of a data set."""
    return hashlib.sha256(Path(answers_path).read_bytes().replace(b"\r\n", b"\n")).hexdigest()


def secret_lines(wiki_path, answers_path):
    """CORPUS_LINES of wiki.txt's lines, in their order, drawn by the grading's secret (`_seed`): the same lines in
    every grading of a data set, lines no student can know."""
    lines = wiki_lines(wiki_path)
    chosen = random.Random(_seed(answers_path)).sample(range(len(lines)), min(CORPUS_LINES, len(lines)))
    return [lines[i] for i in sorted(chosen)]


def _ids(line, stoi):
    return [stoi[ch] for ch in line if ch in stoi]


def _drawn(lines, stoi, seed, draw):
    """(plain, corrupted) id lists of the lines of at least MIN_CHARS known characters, each line's Layout drawn
    in turn by draw(its length, random.Random(seed)); plain is the kept (truncated) text."""
    rng, out = random.Random(seed), []
    for line in lines:
        ids = _ids(line, stoi)
        if len(ids) >= MIN_CHARS:
            drawn = draw(len(ids), rng)
            out.append((ids[:drawn.length], corrupted(ids, stoi[MASK], drawn)))
    return out


def pretraining_pairs(wiki_path, stoi, answers_path, draw=layout):
    """(plain, corrupted) ids of the secret sample of wiki.txt's lines (`secret_lines`), each corrupted by a Layout
    that the grading's secret draws: lines and layouts that no student can know or fit.  draw: the judge's
    `layout` (another, such as one fixed layout, for the instructor's measurements of what a model fitted to it
    gets: tools/bench/bench_layout_fit.py)."""
    return _drawn(secret_lines(wiki_path, answers_path), stoi, "layouts:" + _seed(answers_path), draw)


def pretraining_sequences(wiki_path, stoi, answers_path, draw=layout):
    """The corrupted lines of pretraining_pairs: what the pretraining statistic reads."""
    return [seq for _, seq in pretraining_pairs(wiki_path, stoi, answers_path, draw)]


def corrupted_corpus(wiki_path, stoi, draw=layout):
    """Every line of wiki.txt corrupted as the statistic corrupts its sample, each by a Layout that the public
    seed PUBLIC_LAYOUTS draws: what the pretraining's bigram baseline is counted on, as anyone can count it."""
    return [seq for _, seq in _drawn(wiki_lines(wiki_path), stoi, PUBLIC_LAYOUTS, draw)]


def pretraining_readings(w, wiki_path, stoi, answers_path, draw=layout, places=None):
    """The record of each place of the span in places (default: every one of PLACES), in turn, each computed only
    when asked for: text_record of pretraining_sequences with the span there, the pretraining's own task, with
    "place", "plain_gain", the gain on the same lines as plain text (as truncated: the same in every place),
    "share" = gain / plain_gain, and the gain over a bigram of every line of wiki.txt corrupted alike
    (with_bigram).  A model pretrained with span corruption predicts the corrupted lines of its reading nearly as
    well as the plain ones (0.83 to 0.96 on the course's data); a plain model of the corpus loses most of what it
    knows at the ⁇, where it expects the text to go on and the line jumps past the gap, then back to the missing
    span (0.15 to 0.36, in its best place).  The share is None where it is not a ratio of two finite gains, the
    plain one above 0: it then fails its bar."""
    plain_gain = None
    for place in PLACES if places is None else places:
        pairs = pretraining_pairs(wiki_path, stoi, answers_path, placed(draw, place))
        seqs = [seq for _, seq in pairs]
        if plain_gain is None:  # the kept text does not depend on where the span is
            plain_gain = text_record(w, [plain for plain, _ in pairs])["gain"]
        record = text_record(w, seqs)
        gain = record["gain"]
        finite = all(isinstance(v, float) and math.isfinite(v) for v in (gain, plain_gain))
        share = round(gain / plain_gain, 4) if finite and plain_gain > 0 else None  # not a bar: a ratio's domain
        # the bigram of every line of wiki.txt corrupted so: what a table written by hand from the public corpus knows
        bigram_of = corrupted_corpus(wiki_path, stoi, placed(draw, place))
        yield dict(with_bigram(record, bigram_of, seqs, len(stoi)), place=place, plain_gain=plain_gain, share=share)


def pretraining_records(w, wiki_path, stoi, answers_path, draw=layout, places=None):
    """{place: record} of pretraining_readings, every one computed."""
    return {r["place"]: r for r in pretraining_readings(w, wiki_path, stoi, answers_path, draw, places)}


def pretraining_record(w, wiki_path, stoi, answers_path, draw=layout, place="drawn"):
    """The record of pretraining_records with the span at one place (the reference's reading: drawn)."""
    return pretraining_records(w, wiki_path, stoi, answers_path, draw, (place,))[place]


def clears(record, bars):
    """Whether every value of record clears its bar (bars: {record key: least value}); one that is not a number
    clears none."""
    try:
        return all(at_least(record[key], bar, key) for key, bar in bars.items())
    except Fail:
        return False


def passing_reading(records, bars):
    """The record among records (an iterable, as pretraining_readings: the places after the first that clears are
    never computed) that the check reads: the first that clears bars, else the one whose lines the params predict
    best (fit_score), for the failure's message."""
    seen = []
    for record in records:
        if clears(record, bars):
            return record
        seen.append(record)
    return max(seen, key=fit_score)


def fit_score(record):
    """How well a text_record's params predict its text, for choosing among readings: minus the loss, and minus
    infinity where the loss is not a finite number."""
    loss = record["loss"]
    return -loss if isinstance(loss, float) and math.isfinite(loss) else -math.inf


# -- the check ---------------------------------------------------------------------------------------------------
#
# A rule (points.json, thresholds row, "learned": {params file: rule}) may give min_question_evidence
# (training_record's question_evidence, in standard errors), min_question_gain (its question_gain, in nats),
# min_heldout_gain (heldout_record's, in nats), min_corpus_gain (corpus_record's gain), min_pretraining_gain,
# min_pretraining_share and min_pretraining_bigram_gain (pretraining_record's gain, share and gain over the judge's
# bigram, of the params the model was finetuned from) and max_finetune_drift (checks.lineage.drift_record's drift from
# those params: at most, where every other bar is at least).  The instructor's calibration sets the gains' bars from
# correct runs.  Whether the params know their training questions is judged by the evidence alone: the question gain
# of params that ignore the question is exactly 0, and a correct model may know its questions only a little (a
# perceiver finetuned from 50 epochs of its pretraining: 0.20 nats), so the bar is not a share of what one run reached
# but QUESTION_EVIDENCE, where noise is not: random models of the course's size, their weights as made or scaled up,
# measure about 0 with a spread of 1 (docs/benchmarks.md), and 4 standard errors is a chance of about 3 in 100,000.
# The calibration refuses runs that do not clear it.  Each comparison fails closed (checks/bars.py): a statistic that
# is not a finite number, as params that make NaN give, fails its bar, and so does a bar that the check does not know
# (a misspelt key).

QUESTION_EVIDENCE = 4.0


class Statistic(NamedTuple):
    """One bar of a rule: what it measures (a record), the record's value it compares, its name and the params
    file it is of, a few words of fact for the test's message, why a value below the bar fails, and what to
    submit instead."""

    measure: Callable[[], dict]
    value: str
    what: str
    of: str
    fact: Callable[[float, dict], str]
    problem: Callable[[float, dict, float], str]
    redo: str
    passes: Callable = at_least  # the comparison with the bar: at_least for a gain, at_most for a distance


def more_probable(gain, bar, model):
    """The part of a question or held-out gain's failure that says how far below the bar it is."""
    return (f"only {gain:.2f} nats more probable after their own question than after another one, where {model} "
            f"finds them at least {bar:g} nats more probable")


def answers_few(record):
    """The end of a question statistic's failure: how many training questions the params answer."""
    return (f"it answers {record['correct']} of them (answering '{record['constant_place']}' to every one gets "
            f"{record['constant_correct']}): it has not learned them")


def below_counting(record, gain, bar, model):
    """The part of a corpus or pretraining gain's failure that says how far below the bar it is."""
    return (f"with a loss of {record['loss']} nats, {100 * gain:.0f} % below what counting characters gives "
            f"({record['unigram']}), where {model} gets at least {100 * bar:g} % below")


def below_or_above(gain):
    """A gain over a baseline in words: "12 % below" it (a loss lower than the baseline's) or "3 % above" it."""
    return f"{100 * gain:.0f} % below" if gain >= 0 else f"{-100 * gain:.0f} % above"  # not a bar: the wording


def check(w, rule, params_name, target, stoi, train_path, wiki_path, answers_path, pretrained=None, descent=None):
    """(problem, facts): why the params w are not a model that learned what ./run.sh `target` trains, by `rule`
    (None if they are), and what was measured, in a few words for the test's message.  answers_path: the test
    questions with their answers (the held-out people).  pretrained: where the rule has a pretraining bar, a
    function that gives the weights of the params the model was finetuned from (the file that `target` reads), or
    raises Fail where they cannot be read.  descent: where the rule has a drift bar, a function that gives how far
    the params are from those (checks.lineage.drift_record), or raises Fail where they cannot be compared."""
    redo = f"submit the params that your run of ./run.sh {target} trained"
    train, wiki = Path(train_path).name, Path(wiki_path).name
    source = course.TARGET[target].reads  # the params it was finetuned from (None: a model trained from scratch)
    source_target = course.WRITTEN_BY[source].name if source else None

    @functools.cache
    def pretraining():  # the span's place (a reading of the spec) where the params clear the rule's bars, if any
        bars = {stat.value: rule[key] for key, stat in statistics.items()
                if key in rule and stat.measure is pretraining}
        return passing_reading(pretraining_readings(pretrained(), wiki_path, stoi, answers_path), bars)

    training = functools.cache(lambda: training_record(w, train_path, stoi))  # two statistics read it
    pretrain_redo = (f"submit the {source} of your run of ./run.sh {source_target}, and the params and predictions "
                     "that your finetuning of it gave")
    predicts = f"{source}, which {params_name} was finetuned from, predicts span-corrupted lines of {wiki}"

    def where(r):  # the place of the span the record was read with, and the others it was read with too
        return (f"with the span {PLACE_WORDS[r['place']]} (the place it predicts best of those a reading of the spec "
                f"may choose: {', '.join(PLACE_WORDS.values())})")

    statistics = {
        "min_question_gain": Statistic(
            training, "question_gain", "the question gain", params_name,
            lambda g, r: f"{g:.2f} nats of knowledge of its training questions ({r['correct']}/{r['asked']} answered)",
            lambda g, r, bar: (f"{params_name} finds its training answers ({r['asked']} lines of {train}) "
                               f"{more_probable(g, bar, 'a model finetuned on them')}; {answers_few(r)}"), redo),
        "min_question_evidence": Statistic(
            training, "question_evidence", "the question evidence", params_name,
            lambda e, r: (f"knows its training questions: {r['question_gain']:.2f} nats, {e:.1f} standard errors "
                          f"above 0 ({r['correct']}/{r['asked']} answered)"),
            lambda e, r, bar: (f"{params_name} finds its training answers ({r['asked']} lines of {train}) "
                               f"{r['question_gain']:.2f} nats more probable after their own question than after "
                               f"another one on average, {e:.1f} standard errors from 0, where a model finetuned on "
                               f"them is at least {bar:g} above 0 and one that ignores the question is at 0; "
                               f"{answers_few(r)}"), redo),
        "min_corpus_gain": Statistic(
            lambda: corpus_record(w, wiki_path, stoi), "gain", "the corpus gain", params_name,
            lambda g, r: f"{100 * g:.0f} % of the corpus's unigram entropy explained",
            lambda g, r, bar: (f"{params_name} predicts the next character of {wiki}'s lines "
                               f"{below_counting(r, g, bar, 'a model pretrained on the corpus')}: it has not read "
                               "the corpus"), redo),
        "min_heldout_gain": Statistic(
            lambda: heldout_record(w, answers_path, stoi), "heldout_gain", "the held-out gain", params_name,
            lambda g, r: f"{g:.2f} nats of knowledge of the held-out people",
            lambda g, r, bar: (f"{params_name} finds the birthplaces of the {r['asked']} held-out people (the test "
                               f"questions; their biographies are in {wiki}) "
                               f"{more_probable(g, bar, 'a model pretrained on the corpus and finetuned')}: it has "
                               "not learned from the corpus where they were born"), redo),
        "max_finetune_drift": Statistic(
            descent, "drift", "the finetuning drift", params_name,
            lambda d, r: f"{100 * d:.0f} % away from {source}",
            lambda d, r, bar: far_problem(params_name, source, d, bar, f"finetuning {source} (./run.sh {target})"),
            pretrain_redo, at_most),
        "min_pretraining_gain": Statistic(
            pretraining, "gain", "the pretraining gain", source,
            lambda g, r: (f"{source}: {100 * g:.0f} % of span-corrupted lines' unigram entropy explained (the span "
                          f"{PLACE_WORDS[r['place']]})"),
            lambda g, r, bar: (f"{predicts} (the pretraining's task: prefix ⁇ suffix ⁇ the missing span) "
                               f"{below_counting(r, g, bar, 'a model pretrained with span corruption')}, {where(r)}: "
                               "it has not been pretrained"), pretrain_redo),
        "min_pretraining_share": Statistic(
            pretraining, "share", "the pretraining share", source,
            lambda s, r: f"corrupted lines predicted {100 * s:.0f} % as well as plain ones",
            lambda s, r, bar: (f"{predicts} only {100 * s:.0f} % as well as the same lines as plain text (gains "
                               f"{r['gain']} and {r['plain_gain']}), where a model pretrained with span corruption "
                               f"predicts them at least {100 * bar:g} % as well, {where(r)}: it learned the corpus "
                               "as plain text, not the pretraining's task"), pretrain_redo),
        "min_pretraining_bigram_gain": Statistic(
            pretraining, "bigram_gain", "the pretraining's gain over the bigram", source,
            lambda g, r: f"{source}: {below_or_above(g)} the corpus's bigram on span-corrupted lines",
            lambda g, r, bar: (f"{predicts} with a loss of {r['loss']} nats, {below_or_above(g)} what a table of the "
                               f"previous character counted on every line of {wiki} gives ({r['bigram']}), where a "
                               f"model pretrained with span corruption gets at least {100 * bar:g} % below it, "
                               f"{where(r)}: what it knows, a table written from the corpus knows too; it has not "
                               "been pretrained"),
            pretrain_redo),
    }
    unknown = sorted(set(rule) - set(statistics))
    if unknown:  # a bar misspelt in points.json fails closed, where skipping it would pass everything it guards
        return (f"the grader's thresholds row gives {params_name} bars it does not know ({', '.join(unknown)}; "
                f"it knows {', '.join(statistics)}): the instructor must correct src/points.json"), []
    facts = []
    for key, stat in statistics.items():
        if key not in rule:
            continue
        try:
            record = stat.measure()
        except Fail as e:  # the params it was finetuned from cannot be read (missing, not a model, NaN)
            return f"{e}; {stat.redo}", facts
        try:
            gain = number(record[stat.value], f"{stat.what} of {stat.of}")
            enough = stat.passes(gain, rule[key], stat.what)
        except Fail as e:  # a statistic that is not a number: params that make NaN or inf
            return (f"{stat.of} is not a model that learned its task: {e} (a trained model gives finite "
                    f"log-probabilities); {stat.redo}"), facts
        facts.append(stat.fact(gain, record))
        if not enough:
            return f"{stat.problem(gain, record, float(rule[key]))}; {stat.redo}", facts
    return None, facts
