#!/usr/bin/env python3
"""Which submissions' params files descend one from another, across a class: copied params.

A params file uploaded by two students, or one student's finetuned a few steps further by another, stays near its
source: a finetuning moves a pretraining's weights a few tenths of their size at most.  Two runs that did not come
one from the other are far apart, even from the same random start, once each trained for thousands of steps
(the drift of checks/lineage.py, which the grader measures between a student's own finetuned and pretrain files):

    drift(a, b) = |a - b| / |b|

over the weight matrices both files hold in the same shape (not biases, LayerNorm gains or 0/1 masks: every run
starts them at the same constants), where those hold at least COVER of the smaller file's.  Two files of one class
are compared both ways, and the larger of the two drifts counts: "a is within d of b" holds whichever of them was
copied.  A pair of submissions is flagged where any of their files of one variant (vanilla or perceiver: each
deliverable against the same one, and a finetuned file against the other's pretrain file, ...) is within
lineage.DRIFT_CEILING of the other.

Near is evidence only where honest runs are far.  The course's default seed gives every student the same random
start, and a run is deterministic where its code and data are: every correct student's vanilla model trained
without pretraining is one computation, and two such runs, one in float32 and one in bfloat16, ended 0.047 apart
(docs/benchmarks.md).  So a deliverable that most of the class holds near another submission's is the class's
rule, stated in the report, and no pair of two such files is flagged (COMMON_SHARE, COMMON_FROM); copying joins a
few.

A class of hundreds holds thousands of files of 13 MB each: too many to hold, and a million pairs to compare.
So each weight matrix is folded into SKETCH numbers, a count sketch (each entry added, with a sign drawn for its
position, to a bucket drawn for it: the draws depend on the tensor's name and shape and on a secret of the run
only, the same in every file of the run; a difference a student aligned with known draws would measure many times
its size), whose distances are the weights' own within 1 % on a course model's (docs/benchmarks.md; a few
% on the tests' small ones): a bucket sums a hundred entries or more, whose signs make the cross terms cancel on
average.  A matrix of SKETCH entries or fewer is kept whole.  Each file is read once, and every pair is a few
matrix products.

What weights cannot show: a copy changed in ways that leave the model's function as it was (the hidden units of
an MLP permuted, the residual stream's dimensions permuted, each head's queries and keys turned by one rotation)
is as far from its source as another run is.  So each file is also compared by what it computes (`behaviour`):
its next-character distributions on inputs the run draws from the data folder with its secret (corpus lines, and
training questions with their answers), through the judge's own forward pass (checks/decoder.py, no student
code), in the reading of the perceiver's blocks that predicts them best.  The distance of two files is the
root-mean-square Hellinger distance of their distributions over those positions (0: the same computation; 1: no
character in common), each file's square roots count-sketched like its weights.  A function-preserving disguise
computes what its source computes: 0 apart, where independent runs are tenths apart.

What is near is read against the class (`told`): for each comparison (a deliverable with the same deliverable of
every other submission; a finetuned file, on the corpus lines, with every other submission's pretrain file of its
variant) a pair is flagged where its distance stands BEHAVIOUR_Z robust spreads (of the logarithms of the class's
pair distances) below the class's median pair.  Where that cut falls below what rounding a file's own weights to
bfloat16 changes (the class's median of it: every honest run may differ by that much), the comparison cannot tell
a copy from an honest run, and says so: the class computed that deliverable as one computation.

Reading a student's params file is reading untrusted bytes (torch.load with weights_only: plain tensors, no code
of anyone's): grade_class runs this file as a process of its own with the grader's memory bound and a time limit
(compare_class), which prints one JSON object; it imports no student code.  Each submission's files have
SECONDS_PER_SUBMISSION to be read, and one whose files kill the process is left out on a second run: one upload
never costs the class its comparison.  Run by hand:

    python tools/params_similarity.py < request.json     # {"submissions": [[name, path], ...], "secret": hex,
                                                         #  "data": the data folder (no behaviour without it)}
"""

import hashlib
import io
import json
import math
import os
import random
import re
import signal
import statistics
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import srcpath
from srcpath import SRC

srcpath.use(SRC)
from kit import course  # noqa: E402
from kit.course import PARAMS_FILES, WRITTEN_BY  # noqa: E402  (the deliverables, and the target of each)
from kit import upload  # noqa: E402  (which copy of a file an upload's grading reads: the same rule)
from checks.lineage import DRIFT_CEILING, load_params, trainable  # noqa: E402  (the measure and its bar)
from graderUtil import Fail  # noqa: E402
from grading.worker import WORKER_ADDRESS_SPACE  # noqa: E402  (the memory a grading's process may take)

SKETCH = 1024  # numbers a weight matrix is folded into
# A course model has 27 weight matrices (the perceiver a few more) of 3.3 million entries: a file of more matrices
# than this is no model of the course's, and is not compared (each costs SKETCH numbers, held for the whole class)
MAX_MATRICES = 200
CACHED = 16 << 20  # entries whose sketch draws are kept for the next file (two course models' take 7 million)
# the share of the weight entries of the smaller of two files that they must hold in common (a name, a shape)
# before they are compared: a perceiver's own blocks are named as its author chose, the rest as the given code names
# it; and a file padded with a tensor the model never reads is compared as the model it holds
COVER = 0.5
# Near files are the class's rule, not evidence, for a deliverable that more than COMMON_SHARE of the submissions
# holding it hold within the ceiling of another's, in a class of COMMON_FROM such submissions or more: its runs
# were one computation (every student's vanilla model trained without pretraining, from the course's default seed,
# on one data order).  Copying joins a few students; one computation joins most.
COMMON_SHARE = 0.5
COMMON_FROM = 10
SECONDS = 60  # the comparison's time limit: this plus SECONDS_PER_FILE per params file of the class
SECONDS_PER_FILE = 4  # a course-size file's reading and behaviour take about a second (a perceiver's, two)
# a submission whose files take longer than this to read is not compared (a course-size file takes a tenth of a
# second; a file of a million tiny tensors, minutes): one upload never holds the class's comparison up.  Seconds of
# the processor's time (the reading's own, on one thread), not of the clock: on cores a training shares, the clock
# gave a course-size file 20 s and more
SECONDS_PER_SUBMISSION = 20


class ParamsPair(NamedTuple):
    """Two submissions' params files of one variant within the drift ceiling of each other."""
    a: str
    file_a: str
    b: str
    file_b: str
    drift: float  # the larger of drift(a, b) and drift(b, a)


class Nearest(NamedTuple):
    """A file and the nearest file of another submission of its variant: the class's distribution of distances."""
    name: str
    file: str
    other: str
    other_file: str
    drift: float


PAIR_COLUMNS = ["submission_a", "file_a", "submission_b", "file_b", "drift"]


def variant(fname):
    """The model a params file holds (the variant of the run.sh target that writes it)."""
    return WRITTEN_BY[fname].variant


_draws = {}  # (name, shape) -> (bucket of each entry, its sign): the same in every file, kept up to CACHED entries
# Drawn from a secret of the run (compare_class's): with draws a student could compute, a difference aligned with
# them would measure many times its size
SALT = {"secret": b""}


def draws(key, size, buckets=SKETCH):
    import torch

    key = (key, buckets)
    if key in _draws:
        return _draws[key]
    seed = int.from_bytes(hashlib.sha256(SALT["secret"] + repr(key).encode()).digest()[:8], "little")
    g = torch.Generator().manual_seed(seed)
    drawn = (torch.randint(buckets, (size,), generator=g), torch.randint(2, (size,), generator=g).double() * 2 - 1)
    if size + sum(b.numel() for b, _ in _draws.values()) <= CACHED:  # a file's odd shapes never fill the memory
        _draws[key] = drawn
    return drawn


def sketch(state, fname="the file"):
    """{(name, shape): (SKETCH numbers or fewer, |tensor|^2, entries)} of a params state's weight matrices, or a
    Fail where it holds more than MAX_MATRICES of them."""
    names = [n for n in trainable(state) if state[n].dim() >= 2]
    if len(names) > MAX_MATRICES:
        raise Fail(f"{fname} holds {len(names)} weight matrices, where a model of the course's has a few dozen")
    out = {}
    for name in names:
        t = state[name]
        flat = t.detach().reshape(-1).double()
        key = (name, tuple(t.shape))
        folded, size = folded_matrix(key, flat)
        if folded is None:
            raise Fail(f"{fname} holds weights too large to compare (near the largest float32), where a trained "
                       "model's are near 0.1")
        out[key] = (folded, size, flat.numel())
    return out


def folded_matrix(key, flat):
    """(SKETCH numbers or fewer, |flat|^2) of a matrix's entries (flat, float64): kept whole where it has SKETCH
    entries or fewer, else its count sketch (`fold`), in float32 (a class's sketches are held); (None, size) where
    they are not finite numbers in float32 (weights near its largest)."""
    import torch

    folded = (flat.clone() if flat.numel() <= SKETCH else fold(key, flat)).float()
    size = float(flat.pow(2).sum())
    return (folded, size) if bool(torch.isfinite(folded).all()) and size < float("inf") else (None, size)


def fold(key, flat, buckets=SKETCH):
    """The count sketch of a flat float64 vector: each entry added, with its drawn sign, to its drawn bucket (the
    draws of `key`, the same in every file of the run).  Distances between sketches are the vectors' own within a
    few % where a bucket sums many entries."""
    import torch

    bucket, sign = draws(key, flat.numel(), buckets)
    return torch.zeros(buckets, dtype=torch.float64).index_add_(0, bucket, flat * sign)


# -- what a file computes ------------------------------------------------------------------------------------------

PROBE_LINES = 32  # corpus lines, each its first PROBE_CHARS characters, whose next characters the files predict
PROBE_CHARS = 64
PROBE_QUESTIONS = 32  # training questions with their answers (question ⁇ answer ⁇), teacher-forced
READING_ROWS = 4  # of each part, the rows that choose the perceiver's reading: the one that predicts them best
BEHAVIOUR_SKETCH = 4096  # numbers each part of a file's behaviour is folded into (a part holds ~500,000 roots)
# A pair is flagged BEHAVIOUR_Z robust spreads below the class's median pair (log distances): a classmate's file,
# disguised, computes within float rounding of its source, orders of magnitude below independent runs, whose pairs
# lay within two spreads of their median on the tests' class (docs/benchmarks.md); at 6, a normal spread of honest
# pairs flags one in 10^9 (a copy finetuned further is the invariants' and the weights' to see)
BEHAVIOUR_Z = 6.0
# the least spread (log units) the cut is measured in: a class whose pairs lie within a few % of each other flags no
# pair for being 10 % nearer than the rest (the cut is then at least a factor exp(0.6) = 1.8 below the median)
MIN_SPREAD = 0.1
TINY = 1e-6  # distances below this are float rounding: their logarithms are taken at it
MIN_PAIRS = 3  # pairs a comparison needs for a distribution (three submissions holding a deliverable)
MASK = course.MASK_CHAR


class Probe(NamedTuple):
    """The inputs every file of a run is compared on: {part: [ids]} ("corpus", "questions") of the data set's
    vocabulary (vocab_size characters)."""
    vocab_size: int
    parts: dict


def make_probe(data_dir, secret=b""):
    """The run's Probe from the data folder: PROBE_LINES lines of wiki.txt and PROBE_QUESTIONS rows of the training
    questions, drawn with the run's secret (a student cannot fit a copy's behaviour to inputs they cannot know)."""
    from checks import learned
    from checks.params import course_vocab
    from kit.fileio import read_tsv

    data = Path(data_dir)
    wiki = data / course.DATA_FILES["corpus"]
    stoi = course_vocab(wiki)
    rng = random.Random(hashlib.sha256(b"probe" + secret).digest())
    lines = learned.wiki_lines(wiki)
    corpus = [[stoi[ch] for ch in line[:PROBE_CHARS] if ch in stoi]
              for line in rng.sample(lines, min(PROBE_LINES, len(lines)))]
    rows = [(f[0], f[1].strip()) for f in read_tsv(data / course.DATA_FILES["train"]) if len(f) > 1 and f[1].strip()]
    questions = [[stoi[ch] for ch in q + MASK + a + MASK if ch in stoi][:course.MODEL["block_size"]]
                 for q, a in rng.sample(rows, min(PROBE_QUESTIONS, len(rows)))]
    return Probe(len(stoi), {"corpus": [c for c in corpus if len(c) > 1],
                             "questions": [q for q in questions if len(q) > 1]})


def _roots(w, seqs):
    """The square roots of the next-character distributions at every position of seqs (lists of ids) under the
    judge's weights w, flattened in order (float64)."""
    import torch

    from checks.decoder import logits

    longest = max(len(seq) for seq in seqs)
    idx = torch.tensor([seq + [0] * (longest - len(seq)) for seq in seqs])  # causal: padding changes nothing
    with torch.no_grad():
        p = torch.softmax(logits(w, idx).double(), dim=-1)
    return torch.cat([p[i, :len(seq)].sqrt().reshape(-1) for i, seq in enumerate(seqs)])


_references = {}  # (variant, vocab size) -> the reference's model of the course configuration (names and shapes)


def _reference(kind, vocab_size):
    """The reference's model (this repository's src/submission, the instructor's: no student's code), whose
    parameter names and shapes checks.params.fit reads a file by."""
    if (kind, vocab_size) not in _references:
        from checks.params import course_model
        from submission import helper, model

        _references[(kind, vocab_size)] = course_model(model, helper, kind, vocab_size)
    return _references[(kind, vocab_size)]


class Computed(NamedTuple):
    """What a file computes on the run's Probe: {part: (its roots' sketch, positions)}, and `noise`, how far its
    own weights rounded to bfloat16 compute from it (distance): what every honest run may differ by."""
    parts: dict
    noise: float


def behaviour(state, fname, probe):
    """The Computed of a params state (a Fail where it is not the course's model of its variant)."""
    import torch

    from checks import learned
    from checks.params import fit, weights
    from checks.predictions import best_pair

    kind = variant(fname)
    reference = _reference(kind, probe.vocab_size)
    fitted = fit(state, reference, kind, fname, probe.vocab_size)
    sample = [seq for seqs in probe.parts.values() for seq in seqs[:READING_ROWS]]
    shared = {}  # each down block's bottleneck, computed once for every reading of the up block
    pair = best_pair(fitted, lambda p: learned.fit_score(learned.text_record(weights(fitted, *p), sample, shared)))
    w = weights(fitted, *pair)
    parts, sampled = {}, []
    for part, seqs in probe.parts.items():
        roots = _roots(w, seqs)
        folded = fold(("behaviour", part), roots, BEHAVIOUR_SKETCH).float()
        if not bool(torch.isfinite(folded).all()):
            raise Fail(f"{fname} computes distributions that are not numbers")
        positions = sum(len(seq) for seq in seqs)
        parts[part] = (folded, positions)
        # the sample's rows come first in each part: their roots are the first of the part's, in order
        sampled.append(roots[:roots.numel() // positions * sum(len(seq) for seq in seqs[:READING_ROWS])])
    # the noise, on the sample (a fourth of the work): the same reading of the weights rounded to bfloat16
    rounded = fit({k: v.bfloat16().float() for k, v in state.items()}, reference, kind, fname, probe.vocab_size)
    moved = (torch.cat(sampled) - _roots(weights(rounded, *pair), sample)).pow(2).sum()
    return Computed(parts, math.sqrt(float(moved) / (2 * sum(len(seq) for seq in sample))))


def behaviour_distances(left, right, parts):
    """The matrix of distances (root-mean-square Hellinger) between each Computed of `left` and each of `right`,
    over the probe's `parts`."""
    import torch

    moved = torch.zeros(len(left), len(right), dtype=torch.float64)
    positions = 0
    for part in parts:
        a = torch.stack([c.parts[part][0] for c in left]).double()
        b = torch.stack([c.parts[part][0] for c in right]).double()
        moved += (a.pow(2).sum(1)[:, None] + b.pow(2).sum(1)[None, :] - 2 * a @ b.T).clamp(min=0)
        positions += left[0].parts[part][1]
    return (moved / (2 * positions)).sqrt()


class BehaviourPair(NamedTuple):
    """Two submissions' files that compute alike, far beyond the class's pairs of that comparison: a flagged pair."""
    a: str
    file_a: str
    b: str
    file_b: str
    distance: float  # root-mean-square Hellinger distance of their next-character distributions
    typical: float  # the class's median pair of the comparison
    spreads: float  # how many robust spreads (log distances) below that median it lies


class Spread(NamedTuple):
    """One comparison's distribution over the class (file_a of each submission with file_b of every other): its
    pairs, their least, median and largest distance, the cut below which a pair is flagged, the noise (the
    class's median distance of a file from its own weights rounded to bfloat16), the pairs flagged, and why it
    cannot tell a copy from an honest run ('' where it can)."""
    file_a: str
    file_b: str
    pairs: int
    least: float
    median: float
    largest: float
    cut: float
    noise: float
    flagged: int
    cannot_tell: str


BEHAVIOUR_COLUMNS = ["submission_a", "file_a", "submission_b", "file_b", "distance", "class_median_pair",
                     "spreads_below_median"]


def comparisons():
    """[(file_a, file_b, parts)]: each deliverable against the same one (on every part of the probe), and each
    finetuned file against the pretrain file its target reads (on the corpus lines: what the finetuning leaves
    of its pretraining), of every other submission."""
    same = [(f, f, ("corpus", "questions")) for f in PARAMS_FILES]
    descent = [(f, course.TARGET[WRITTEN_BY[f].name].reads, ("corpus",)) for f in PARAMS_FILES
               if course.TARGET[WRITTEN_BY[f].name].reads]
    return same + descent


def log_spread(distances):
    """(median, robust spread) of the logarithms of pair distances (each taken at TINY at least): the spread is
    1.4826 times their median absolute deviation (a normal spread's estimate), at least MIN_SPREAD."""
    logs = [math.log(max(d, TINY)) for d in distances]
    centre = statistics.median(logs)
    return centre, max(1.4826 * statistics.median(abs(v - centre) for v in logs), MIN_SPREAD)


def told(distances, noise):
    """(cut, why it cannot tell or '', median) of a comparison's pair distances: the cut at BEHAVIOUR_Z robust
    spreads (1.4826 times the median absolute deviation of the log distances, at least MIN_SPREAD) below their
    median; it cannot tell where there are fewer than MIN_PAIRS pairs, or where the cut falls at or below the noise."""
    if len(distances) < MIN_PAIRS:
        return 0.0, f"{len(distances)} pair{'s' if len(distances) != 1 else ''}: too few for a distribution", None
    centre, spread = log_spread(distances)
    cut, median = math.exp(centre - BEHAVIOUR_Z * spread), math.exp(centre)
    if cut <= noise:
        return cut, (f"the class's pairs compute alike (median {median:.2g}, spread a factor {math.exp(spread):.2g}): "
                     f"the cut, {cut:.2g}, is within what rounding a file's weights to bfloat16 changes ({noise:.2g}); "
                     "one computation, where a copy cannot be told from an honest run"), median
    return cut, "", median


def compare_behaviour(computed):
    """From [(name, file, Computed)]: the flagged pairs ([BehaviourPair], the nearest first) and each comparison's
    Spread."""
    flagged, spreads = [], []
    for fa, fb, parts in comparisons():
        left = [(n, c) for n, f, c in computed if f == fa]
        right = [(n, c) for n, f, c in computed if f == fb]
        if not left or not right:
            continue
        dist = behaviour_distances([c for _, c in left], [c for _, c in right], parts).numpy()
        pairs = [(i, j, float(dist[i, j])) for i in range(len(left)) for j in range(len(right))
                 if left[i][0] != right[j][0] and (fa != fb or i < j)]
        noise = statistics.median({n: c.noise for n, c in left + right}.values())
        cut, cannot, median = told([d for _, _, d in pairs], noise)
        found = []
        if not cannot:
            _, spread = log_spread([d for _, _, d in pairs])
            for i, j, d in pairs:
                if d < cut:
                    found.append(BehaviourPair(left[i][0], fa, right[j][0], fb, round(d, 6), round(median, 6),
                                               round((math.log(median) - math.log(max(d, TINY))) / spread, 1)))
        flagged += found
        ds = [d for _, _, d in pairs]
        spreads.append(Spread(fa, fb, len(pairs), round(min(ds), 6) if ds else 0.0,
                              round(median, 6) if median is not None else 0.0, round(max(ds), 6) if ds else 0.0,
                              round(cut, 6), round(noise, 6), len(found), cannot))
    return sorted(flagged, key=lambda p: (p.distance, p.a, p.b, p.file_a, p.file_b)), spreads


def invariants(state):
    """{name: matrix} of what a course model's weights compute up to the symmetries that leave its function as it
    was: each attention layer's query-key and value-output products (W_q^T W_k and W_proj W_v: a rotation of a
    head's queries and keys together, of its values undone by the output, or a permutation of the heads, leaves them
    as they were), each MLP's W_2 W_1 (a permutation of its hidden units does), the head's weights, the positions'
    and the perceiver's basis, each read through the token embeddings E (E M E^T: a permutation of the residual
    stream's dimensions cancels).  A copy disguised by those symmetries has its source's invariants; finetuned a
    few steps further, it drifts from them as a plain copy's weights drift (docs/instructor.md)."""
    import torch

    if "tok_emb.weight" not in state or state["tok_emb.weight"].dim() != 2:
        return {}
    emb = state["tok_emb.weight"].double()
    d = emb.shape[1]

    def matrix(name):
        t = state.get(name)
        return t.double() if t is not None and tuple(t.shape) == (d, d) else None

    out = {}
    prefixes = sorted({n[:-len(".attn.query.weight")] for n in state if n.endswith(".attn.query.weight")})
    for prefix in prefixes[:MAX_MATRICES // 3]:
        q, k, v, o = (matrix(f"{prefix}.attn.{part}.weight") for part in ("query", "key", "value", "proj"))
        if q is not None and k is not None:
            out[f"{prefix}.attn.qk"] = emb @ q.T @ k @ emb.T
        if v is not None and o is not None:
            out[f"{prefix}.attn.ov"] = emb @ o @ v @ emb.T
        up, down = state.get(f"{prefix}.mlp.0.weight"), state.get(f"{prefix}.mlp.2.weight")
        if up is not None and down is not None and up.dim() == 2 and tuple(down.shape) == tuple(up.shape)[::-1] \
                and up.shape[1] == d:
            out[f"{prefix}.mlp"] = emb @ down.double() @ up.double() @ emb.T
    for name in ("head.weight", "pos_emb", "down_block.C"):
        t = state.get(name)
        if t is not None and t.dim() >= 2 and t.shape[-1] == d:
            out[name] = t.double().reshape(-1, d) @ emb.T
    return {name: torch.as_tensor(m) for name, m in out.items() if bool(torch.isfinite(m).all())}


def invariant_sketch(state):
    """sketch's {(name, shape): (SKETCH numbers, |matrix|^2, entries)} of a state's invariants: compared as the
    weights are (drifts, compare)."""
    out = {}
    for name, m in invariants(state).items():
        flat = m.reshape(-1)
        key = ("invariant:" + name, tuple(m.shape))
        folded, size = folded_matrix(key, flat)
        if folded is not None:  # weights near float32's largest: left out (their weights' sketch refuses them)
            out[key] = (folded, size, flat.numel())
    return out


class TooSlow(BaseException):
    """A submission's files took more than SECONDS_PER_SUBMISSION of processor time to read (not an Exception: the
    loader's own `except Exception` must not take it for a broken file and go on without a clock)."""


# The clock of SECONDS_PER_SUBMISSION: the process's processor time (ITIMER_PROF, user and system), which a load on
# the machine does not stretch; a reading that waits (a slow disk) is bounded by the process's own time limit, which
# leaves the submission it was reading out on the next run (compare_class)
TIMER = getattr(signal, "ITIMER_PROF", None)
TIMER_SIGNAL = getattr(signal, "SIGPROF", None)


def _too_slow(signum, frame):
    raise TooSlow


class Read(NamedTuple):
    """What read_class read: [(name, file, sketch)] of the weights, [(name, file, why it was not compared)],
    [(name, file, Computed)] of the behaviour on the probe, [(name, file, invariant_sketch)]."""
    files: list
    problems: list
    computed: list
    invariant: list


def read_class(submissions, progress=None, probe=None):
    """The Read of every params file of the submissions ([(name, path of its zip or folder)]), the copies their
    grading read (kit/upload.py), each submission's within SECONDS_PER_SUBMISSION.  progress: a stream told
    "reading K" before the K-th submission is read (compare_class's: which one stopped a process that died).
    probe: the run's Probe (make_probe), on which each file's behaviour is computed (None: none is)."""
    import torch  # before any file: a process that cannot hold torch fails as a whole, not per file

    names = upload.deliverable_names(sorted(p.name for p in (SRC / "submission").glob("*.py")))
    files, problems, computed, invariant = [], [], [], []
    timed = TIMER is not None and hasattr(signal, "setitimer")
    before = signal.signal(TIMER_SIGNAL, _too_slow) if timed else None
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the processor time a reading takes is its own: one thread's
    try:
        for k, (name, path) in enumerate(submissions):
            if progress is not None:
                print(f"reading {k}", file=progress, flush=True)
            own = Read([], [], [], [])
            try:
                if timed:
                    signal.setitimer(TIMER, SECONDS_PER_SUBMISSION)
                _read_submission(name, path, names, own, probe)
                for mine, theirs in zip((files, problems, computed, invariant), own):
                    mine += theirs
            except TooSlow:
                problems.append((name, "", f"its params files took more than {SECONDS_PER_SUBMISSION} s of "
                                           "processor time to read (a course-size file takes a tenth of a second): "
                                           "not compared"))
            finally:
                if timed:
                    signal.setitimer(TIMER, 0)
    finally:
        torch.set_num_threads(threads)
        if timed:  # the caller's handler again (a test calls this in its own process)
            signal.signal(TIMER_SIGNAL, before)
    return Read(files, problems, computed, invariant)


def _read_submission(name, path, names, read, probe=None):
    """read_class's work on one submission, into the Read `read`: its files' sketches, their invariants', what
    they compute on the probe (where there is a probe), what could not be read."""
    files, problems, computed = read.files, read.problems, read.computed
    try:
        with upload.Upload(path) as up:
            chosen = up.choose(names).chosen
            for fname in PARAMS_FILES:
                if fname not in chosen:
                    continue
                try:
                    state = load_params(io.BytesIO(up.read(chosen[fname])), fname)
                    folded = sketch(state, fname)
                except Fail as e:
                    problems.append((name, fname, upload.shown(str(e)[:400], 300)))
                    continue
                except Exception as e:  # noqa: BLE001 - whatever an upload's bytes cause: that file alone
                    problems.append((name, fname, f"{fname} could not be compared ({type(e).__name__}: "
                                                  f"{upload.shown(str(e)[:400])})"))
                    continue
                if folded:
                    files.append((name, fname, folded))
                else:
                    problems.append((name, fname, f"{fname} holds no weight matrix"))
                    continue
                held = invariant_sketch(state)
                if held:
                    read.invariant.append((name, fname, held))
                if probe is None:
                    continue
                try:
                    computed.append((name, fname, behaviour(state, fname, probe)))
                except Fail:  # not the course's model: it earns nothing (its grading says why); its weights and
                    pass  # their invariants are still compared, and the page counts the files computed
                except Exception as e:  # noqa: BLE001 - whatever an upload's tensors cause: that file alone
                    problems.append((name, fname, f"not compared by what it computes ({type(e).__name__}: "
                                                  f"{upload.shown(str(e)[:400])})"))
    except (OSError, ValueError) as e:  # an upload that cannot be read (upload.UploadError is a ValueError)
        problems.append((name, "", f"{upload.shown(str(e)[:400], 300)}: not compared"))


def drifts(sketches):
    """The matrix of the larger drift of each two of `sketches` (of one variant), and where it was measured: over
    the matrices both hold in one shape, which hold at least COVER of the smaller file's weight entries, and where
    neither is all zeros."""
    import torch

    n = len(sketches)
    moved = torch.zeros(n, n, dtype=torch.float64)  # |a - b|^2 over the matrices both hold
    size = torch.zeros(n, n, dtype=torch.float64)  # |b|^2 over them (b: the column)
    common = torch.zeros(n, n, dtype=torch.float64)  # their entries
    total = torch.tensor([float(sum(v[2] for v in s.values())) for s in sketches], dtype=torch.float64)
    for key in sorted({k for s in sketches for k in s}):
        idx = torch.tensor([i for i, s in enumerate(sketches) if key in s])
        folded = torch.stack([sketches[i][key][0] for i in idx.tolist()]).double()
        squares = folded.pow(2).sum(1)
        gram = folded @ folded.T
        rows, cols = idx[:, None], idx[None, :]
        moved[rows, cols] += (squares[:, None] + squares[None, :] - 2 * gram).clamp(min=0)
        size[rows, cols] += torch.tensor([sketches[i][key][1] for i in idx.tolist()], dtype=torch.float64)[None, :]
        common[rows, cols] += float(sketches[int(idx[0])][key][2])
    measured = (common >= COVER * torch.minimum(total[:, None], total[None, :])) & (size > 0) & (size.T > 0)
    one_way = (moved / size.clamp(min=1e-300)).sqrt()
    return torch.maximum(one_way, one_way.T), measured


class Common(NamedTuple):
    """A deliverable that most of the class holds within the ceiling of another submission's: `near` of the
    `files` submissions that hold it."""
    file: str
    near: int
    files: int


def compare(files):
    """From read_class's files: the pairs of files of different submissions within DRIFT_CEILING of each other
    ([ParamsPair], the nearest first), each file's nearest file of another submission ([Nearest]), and the
    deliverables that most of the class holds near another submission's ([Common]): the class's runs of them were
    one computation (one seed, one data order, the same code), near without copying, and no pair of two such
    files is flagged; and the files that no file of another submission could be compared with, with why."""
    near, nearest, held, twinned, alone = [], [], {}, {}, []
    for kind in sorted({variant(f) for _, f, _ in files}):
        group = [(n, f) for n, f, _ in files if variant(f) == kind]
        distance, measured = (m.numpy() for m in drifts([s for n, f, s in files if variant(f) == kind]))
        for i, (name, fname) in enumerate(group):
            best, others = None, False
            for j, (other, ofile) in enumerate(group):
                others = others or other != name
                if other == name or not measured[i, j] or not math.isfinite(float(distance[i, j])):
                    continue
                d = round(float(distance[i, j]), 4)
                if best is None or d < best.drift:
                    best = Nearest(name, fname, other, ofile, d)
                if d <= DRIFT_CEILING and ofile == fname:
                    twinned.setdefault(fname, set()).add(name)
                if i < j and d <= DRIFT_CEILING:
                    (a, fa), (b, fb) = sorted([(name, fname), (other, ofile)])
                    near.append(ParamsPair(a, fa, b, fb, d))
            held.setdefault(fname, set()).add(name)
            if best is not None:
                nearest.append(best)
            elif others:
                alone.append((name, fname, f"{fname} shares too few of its weight matrices (by name and shape) with "
                                           f"every other submission's {kind} files to be compared with them"))
    common = [Common(f, len(twinned.get(f, ())), len(names)) for f, names in sorted(held.items())
              if len(names) >= COMMON_FROM and len(twinned.get(f, ())) > COMMON_SHARE * len(names)]
    rule = {c.file for c in common}
    pairs = [p for p in near if not (p.file_a in rule and p.file_b in rule)]
    return sorted(pairs, key=lambda p: (p.drift, p.a, p.b, p.file_a, p.file_b)), nearest, common, alone


def compare_weights(files, invariant):
    """compare's four lists over the weights (files) and over their invariants (invariant_sketch's), merged: a
    pair of files is flagged where either is within the ceiling (its drift the nearer of the two), each file's
    nearest is the nearer, and a deliverable that most of the class holds near another's by either is the class's
    rule."""
    pairs, nearest, common, alone = compare(files)
    more_pairs, more_nearest, more_common, _ = compare(invariant)
    common = common + [c for c in more_common if c.file not in {k.file for k in common}]
    rule = {c.file for c in common}
    best = {}
    for p in pairs + more_pairs:
        key = (p.a, p.file_a, p.b, p.file_b)
        if key not in best or p.drift < best[key].drift:
            best[key] = p
    flagged = [p for p in best.values() if not (p.file_a in rule and p.file_b in rule)]
    nearer = {}
    for n in nearest + more_nearest:
        if (n.name, n.file) not in nearer or n.drift < nearer[n.name, n.file].drift:
            nearer[n.name, n.file] = n
    return (sorted(flagged, key=lambda p: (p.drift, p.a, p.b, p.file_a, p.file_b)), list(nearer.values()), common,
            alone)


# ----------------------------------------------------------------------------------------------------------
# As a process of its own (grade_class's side: compare_class).


def main():
    """The process compare_class runs: a request on its standard input ({"submissions": [[name, path], ...],
    "secret": hex, "address_space": bytes, "data": the data folder or null}), one JSON object on its standard
    output."""
    request = json.load(sys.stdin)
    if request.get("address_space") and os.name == "posix":  # set here, not by the parent: it may hold threads
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (request["address_space"], request["address_space"]))
    SALT["secret"] = bytes.fromhex(request.get("secret", ""))
    probe, unprobed = None, ""
    if request.get("data"):
        try:  # the data folder is the instructor's, checked by grade_class: no student's bytes
            probe = make_probe(request["data"], SALT["secret"])
        except (OSError, ValueError, Fail) as e:
            unprobed = f"the data folder could not be read ({type(e).__name__}: {str(e)[:200]})"
    else:
        unprobed = "no data folder was given"
    files, problems, computed, invariant = read_class([(str(n), str(p)) for n, p in request["submissions"]],
                                                      progress=sys.stderr, probe=probe)
    print("comparing", file=sys.stderr, flush=True)  # no submission's files are read from here on
    pairs, nearest, common, alone = compare_weights(files, invariant)
    alike, spreads = compare_behaviour(computed) if probe is not None else ([], [])
    json.dump({"files": len(files), "pairs": [list(p) for p in pairs], "nearest": [list(n) for n in nearest],
               "common": [list(c) for c in common], "problems": [list(p) for p in problems + alone],
               "behaviour": [list(p) for p in alike], "spreads": [list(s) for s in spreads],
               "computed": len(computed), "unprobed": unprobed}, sys.stdout)
    return 0


class Comparison(NamedTuple):
    """What compare_class found: the files compared, the flagged pairs, each file's nearest, the deliverables whose
    files are near in most pairs, the files that could not be compared and why, and why there is no comparison at
    all ('' where there is one); then, by what the files compute, the flagged pairs ([BehaviourPair]), each
    comparison's Spread, the files compared so, and why none were ('' where they were)."""
    files: int
    pairs: list
    nearest: list
    common: list
    problems: list
    failed: str
    behaviour: list = []
    spreads: list = []
    computed: int = 0
    unprobed: str = ""


MAX_STOPPERS = 3  # submissions whose files may stop the comparison, each left out in turn, before it gives up


def compare_class(submissions, count, data=None):
    """Run this file on the submissions ([(name, path)]) in a process of its own, within the grader's memory bound
    and SECONDS + SECONDS_PER_FILE * count seconds (count: an upper bound of the params files), and return its
    Comparison; data: the data folder, whose lines and questions the files' behaviour is compared on (None: by
    their weights alone).  Whatever the process prints is checked field by field: a Comparison with `failed` set
    says why it holds nothing.  A process that dies or runs out of time while it reads a submission's files is run again
    without that submission (at most MAX_STOPPERS times), whose files are then listed as not compared: one
    upload's bytes never cost the class its comparison."""
    # absolute (never resolved: a link stays a link, which the upload refuses): the process runs in src/, where a
    # folder typed relative to the instructor's own (../class) is another folder, or none
    left, stopped = [(name, os.path.abspath(path)) for name, path in submissions], []
    while True:
        found, reading = _compare_once(left, count, data)
        if not found.failed or reading is None or not 0 <= reading < len(left) or len(stopped) == MAX_STOPPERS:
            break
        stopped.append((left[reading][0], found.failed))
        del left[reading]
    said = [(name, "", f"its params files stopped the comparison ({why}): not compared") for name, why in stopped]
    return found._replace(problems=found.problems + said)


def _compare_once(submissions, count, data=None):
    """(Comparison, the index of the submission whose files were being read when the process failed, or None)."""
    limit = SECONDS + SECONDS_PER_FILE * count
    request = json.dumps({"submissions": [[n, str(p)] for n, p in submissions], "secret": os.urandom(16).hex(),
                          "address_space": WORKER_ADDRESS_SPACE,
                          "data": None if data is None else os.path.abspath(data)})
    try:
        proc = subprocess.run([sys.executable, __file__], input=request, capture_output=True, text=True,
                              timeout=limit, cwd=str(SRC))
    except subprocess.TimeoutExpired as e:
        stderr = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        return Comparison(0, [], [], [], [], f"it did not finish within {limit} s"), _reading(stderr)
    if proc.returncode != 0:
        said = ([line for line in proc.stderr.strip().splitlines() if not _PROGRESS.fullmatch(line)]
                or ["no output"])[-1]
        failed = f"it failed (exit status {proc.returncode}: {upload.shown(said, 300)})"
        return Comparison(0, [], [], [], [], failed), _reading(proc.stderr)
    try:
        found = json.loads(proc.stdout)
        pairs = [ParamsPair(str(a), str(fa), str(b), str(fb), float(d)) for a, fa, b, fb, d in found["pairs"]]
        nearest = [Nearest(str(a), str(fa), str(b), str(fb), float(d)) for a, fa, b, fb, d in found["nearest"]]
        common = [Common(str(f), int(n), int(m)) for f, n, m in found["common"]]
        problems = [(str(a), str(f), str(why)) for a, f, why in found["problems"]]
        alike = [BehaviourPair(str(a), str(fa), str(b), str(fb), float(d), float(t), float(z))
                 for a, fa, b, fb, d, t, z in found["behaviour"]]
        spreads = [Spread(str(fa), str(fb), int(n), float(lo), float(med), float(hi), float(cut), float(noise),
                          int(k), str(why)) for fa, fb, n, lo, med, hi, cut, noise, k, why in found["spreads"]]
        return Comparison(int(found["files"]), pairs, nearest, common, problems, "", alike, spreads,
                          int(found["computed"]), str(found["unprobed"])), None
    except (ValueError, TypeError, KeyError):
        return Comparison(0, [], [], [], [], "its output was not the comparison"), None


_PROGRESS = re.compile(r"reading (\d+)|comparing")


def _reading(stderr):
    """The index of the submission the process was reading last, from its progress lines; None where it had
    finished reading (or never began)."""
    last = None
    for line in stderr.splitlines():
        m = _PROGRESS.fullmatch(line)
        if m:
            last = int(m.group(1)) if m.group(1) is not None else None
    return last


if __name__ == "__main__":
    if sys.argv[1:]:  # it takes its request on standard input only: --help (or anything) says so
        help_asked = sys.argv[1:] in (["-h"], ["--help"])
        print(__doc__.split("\n\n")[0] + "\n\nusage: python tools/params_similarity.py < request.json  "
              "(grade_class runs it: see the module's docstring)", file=sys.stdout if help_asked else sys.stderr)
        sys.exit(0 if help_asked else 2)
    sys.exit(main())
