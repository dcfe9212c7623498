"""The examples of the student's CharCorruptionDataset (part e), as data, and how a judge reads them.

grader.py's part (e) tests lean on this.  Beside the student's code, a test only draws examples from the
student's dataset and reports them as data (observe_examples, observe_whole_line); the judge decodes them
(Examples, whole_parts) and checks them (the check_* functions, one a test, given the numbers the test drew
with).  Where a draw cannot even be read as text (not a pair of tensors of the vocabulary's ids, whole numbers,
of one length up to LONGEST) the student's side fails it at once: failing early can only cost the student, never
earn a point.  Whether they are LongTensors of the length the model takes is 1e-4's question, and whether the
padding fills them 1e-5's: a wrong length or dtype loses those parts, not every part.  Below, the bounds on a false
failure of each number the part (e) checks decide on.
"""

from kit import course
from checks.bars import at_least, within
from graderUtil import Fail, call

PAD, MASK = course.PAD_CHAR, course.MASK_CHAR
# the longest example read as text: the tests' longest line (600 characters) left whole, with its MASK_CHARs and
# padding, fits; a truncation that is never applied then loses 1e-0 (and the shape's and padding's parts) alone
LONGEST = 1024

# False failures.  Every sampling test of grader.py seeds random, NumPy and torch alike first, so a given
# implementation always gets the same verdict.  The thresholds also hold without the seed, for any
# implementation of either variant, with probability of a false failure below 1e-6:
# - truncation coverage: a long line's truncated length is uniform on 4..L, L = int(block_size*3/4) or
#   int(block_size*7/8); the test asks for every value of 4..int(block_size*3/4).  Each shows up in N draws
#   except with probability <= K * (1 - 1/(L-3))**N, K the number of values asked for: N=4000, block 128
#   (K=93, L-3 <= 109) gives 1e-14; N=2000, block 50 (K=34, L-3 <= 40) gives 4e-21.
# - masked-length mean: each ratio masked/truncated lies in [0, 1], so by Hoeffding's inequality the mean of
#   N=4000 draws is more than t away from its expectation with probability <= 2*exp(-2*N*t*t).  Plausible
#   implementations (uniform 1..n/2, 0..n/2, n/8..3n/8, Gaussian around n/4, ...) have expectations in
#   [0.23, 0.27] (block size 128), so the window [0.15, 0.35] leaves t >= 0.08: probability 2*exp(-51).
# - the whole line: with block size 128 a draw keeps a line of 40 characters whole with probability >= 57/93
#   when the length is drawn from 4..L, and >= 1/37 when it is drawn from 4..min(len(line), L) (a reading real
#   students take).  1e-0 asks that one of 2000 draws does: none does with probability <= (36/37)**2000 = 2e-24.
#   1e-3 draws until 1000 examples keep the line whole, up to 50,000 draws: fewer than 1000 with probability
#   < 1e-20 (mean 1351, Chernoff).
# - "more or less than 1/4" (1e-3): at n=40 the spec wants a masked length that can fall on either side of
#   10.  Plausible correct draws give each side probability >= 0.15: uniform on 1..20 (P(>10) = 0.5, P(<10) =
#   0.45), 0..20, 5..15 (5/11 each), 1..2n/4-1, round(gauss(n/4, sd)) for sd >= 1 (>= 0.16 each), n/4 times
#   uniform(0.5, 1.5).  Even at 2% a side, 1000 draws miss a side with probability <= 2 * 0.98**1000 = 4e-9.
#   Draws that never exceed 1/4 (min(randint(1, n), n // 4); int(gauss(n/4, 0.1)), which gives 9 or 10)
#   fail, as they should.  Over the 4000 examples of a long line (all truncated lengths) each side must
#   reach 5 %: with each side's probability >= 0.15, Hoeffding gives <= 2*exp(-2*4000*0.1**2) = 4e-35.
# - "random at every truncated length" (1e-3): of the truncated lengths n >= 16 seen >= 20 times among those
#   4000 examples, at most half may show a single masked length.  Plausible correct draws give no length a
#   probability above 1/2 at n >= 16 (round(gauss(n/4, 1)): 0.38), so one group agrees with probability
#   <= 0.5**19 = 2e-6, and half of the >= 30 groups with far less.  A masked length fixed by n (n // 4 on
#   long lines, computed from the line rather than drawn) fails.
# - "examples differ" (1e-6): 20 draws of a line of >= 80 characters are all identical only if one truncated
#   length comes up 20 times; no length has probability above 33/109 (the line kept whole, 7/8 variant), so
#   this happens with probability <= (33/109)**19 < 1e-9 per line.


def random_lines(seed, lengths, alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJ .,'-0123456789"):
    """The lines of a test's corpus, one of each length: random characters, the same for a given seed."""
    import random

    rng = random.Random(seed)
    return ["".join(rng.choice(alphabet) for _ in range(n)) for n in lengths]


def _specials(ds):
    """(PAD_CHAR, MASK_CHAR) as the student's dataset has them: an instance attribute (the course's code) or
    a class attribute; the handout's characters otherwise."""
    return getattr(ds, "PAD_CHAR", PAD), getattr(ds, "MASK_CHAR", MASK)


def corruption_dataset(ctx, lines, block_size):
    dataset = ctx.student("dataset")
    return call(f"CharCorruptionDataset(text, {block_size})", ctx.submission_dir, dataset.CharCorruptionDataset,
                "\n".join(lines) + "\n", block_size)


def _example(ctx, ds, idx):
    """ds[idx] as (x's ids, y's ids, x's dtype, y's dtype), after checking it can be read as text: a pair of 1-D
    tensors of one length, at most LONGEST, of the vocabulary's ids (whole numbers: a float tensor of ids is read
    too).  The lengths the model takes (block_size - 1, the padded string of block_size characters shifted, or
    block_size: one sentence of the course's spec gives block_size as their length) and torch.long are checked by
    1e-4 and 1e-5, not here."""
    import torch

    item = call(f"CharCorruptionDataset.__getitem__({idx})", ctx.submission_dir, ds.__getitem__, idx)
    if not isinstance(item, (tuple, list)) or len(item) != 2:
        raise Fail(f"CharCorruptionDataset.__getitem__ must return a pair (x, y), not {type(item).__name__}")
    x, y = item
    if x is None or y is None:
        raise Fail("CharCorruptionDataset.__getitem__ returned None for x or y: its part (e) code is missing")
    block = int(ds.block_size)
    for name, t in (("x", x), ("y", y)):
        if not torch.is_tensor(t):
            raise Fail(f"CharCorruptionDataset.__getitem__: {name} is a {type(t).__name__}, not a torch tensor")
        if not (t.dtype in _integer_dtypes() or t.dtype.is_floating_point and bool(torch.isfinite(t).all())
                and torch.equal(t, t.round())):
            raise Fail(f"CharCorruptionDataset.__getitem__: {name} has dtype {t.dtype}, not torch.long")
        if t.dim() != 1 or not 0 < t.numel() <= LONGEST:
            raise Fail(f"CharCorruptionDataset.__getitem__: {name} has shape {tuple(t.shape)}; block_size is "
                       f"{block}, so it must have shape ({block - 1},) (the padded string of block_size "
                       f"characters, shifted by one) or ({block},)")
        if int(t.min()) < 0 or int(t.max()) >= int(ds.vocab_size):
            raise Fail(f"CharCorruptionDataset.__getitem__: {name} holds ids outside the vocabulary")
    if x.numel() != y.numel():
        raise Fail(f"CharCorruptionDataset.__getitem__: x has {x.numel()} ids and y {y.numel()}; they must have "
                   "the same length (y is x shifted by one)")
    return x.long().tolist(), y.long().tolist(), str(x.dtype), str(y.dtype)


def _integer_dtypes():
    import torch

    return (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)


def _vocabulary(ds):
    """The student dataset's vocabulary as data: its characters by id, the ids of PAD and MASK, its specials."""
    pad, mask = _specials(ds)
    return {"itos": [str(ds.itos[i]) for i in range(int(ds.vocab_size))], "pad": str(pad), "mask": str(mask),
            "pad_id": ds.stoi.get(PAD), "mask_id": ds.stoi.get(MASK)}


def _pack(rows):
    """Rows of ids as one tensor, each padded with 0 to the longest (the report's `lengths` say where each ends)."""
    import torch

    if not rows:
        return torch.zeros((0, 0), dtype=torch.uint8)
    width = max(len(r) for r in rows)
    small = all(max(r, default=0) < 256 for r in rows)  # not a bar: ids, to pick a dtype
    return torch.tensor([list(r) + [0] * (width - len(r)) for r in rows], dtype=torch.uint8 if small else torch.long)


def _observed(vocab, idxs, examples):
    """The report of `examples` (_example's tuples) of lines `idxs` (a list): what the judge's Examples reads."""
    return dict(vocab, idx=idxs, x=_pack([e[0] for e in examples]), y=_pack([e[1] for e in examples]),
                lengths=[len(e[0]) for e in examples], dtypes=sorted({d for e in examples for d in e[2:]}))


def observe_examples(ctx, ds, idxs):
    """Beside the student's code: ds[idx] for each idx in turn, as data for the judge."""
    idxs = list(idxs)
    return _observed(_vocabulary(ds), idxs, [_example(ctx, ds, idx) for idx in idxs])


def observe_whole_line(ctx, ds, line, want=1000, cap=50000):
    """Beside the student's code: draws of `line` (ds[0]) that kept it whole (truncated length len(line)), at
    least `want` of them, drawing up to `cap` times (a truncation drawn from 4..min(len(line), L) keeps a line of
    40 characters whole in only 1 of 37 draws).  The filter is the judge's own parse; the judge parses again."""
    vocab = _vocabulary(ds)
    kept = []
    for _ in range(cap):
        example = _example(ctx, ds, 0)
        p, m, s = _split_either("".join(vocab["itos"][i] for i in example[0]), vocab["pad"], vocab["mask"], line)
        if len(p + m + s) == len(line):
            kept.append(example)
            if len(kept) >= int(want):
                break
    return _observed(vocab, [0] * len(kept), kept)


def _pieces(s, pad, mask):
    """(prefix, first, second) of an example's text s: prefix⁇first⁇second⁇ (or, the older variant, without the
    closing ⁇) and then PADs; a Fail where it holds another number of MASK_CHARs."""
    body = s.rstrip(pad)
    if body.count(mask) == 3 and body.endswith(mask):
        body = body[:-1]  # the closing MASK_CHAR of the handout's version
    if body.count(mask) != 2:
        raise Fail("CharCorruptionDataset.__getitem__: x must read prefix + MASK_CHAR + suffix + MASK_CHAR + "
                   f"masked_content + MASK_CHAR, then PAD_CHARs; it has {s.rstrip(pad).count(mask)} MASK_CHARs "
                   f"before the padding, e.g. {s[:70]!r}")
    prefix, first, second = body.split(mask)
    return prefix, first, second


def _rebuilds(line, pad, *parts):
    """Whether the parts, in this order, are the beginning of the line (its truncation)."""
    original = "".join(parts)
    return pad not in original and line.startswith(original)


# The two orders an example's pieces may be read in: the handout's (prefix⁇suffix⁇masked⁇), and the masked content
# and the suffix swapped (prefix⁇masked⁇suffix⁇), a rearrangement's bug (1e-1's) that leaves the span itself as drawn
HANDOUT, SWAPPED = "handout", "swapped"


def _split(s, pad, mask, line, order=HANDOUT):
    """(prefix, masked, suffix) of an example's text s, checked to read prefix⁇suffix⁇masked⁇ (or, the older
    variant, without the closing ⁇) and then PADs, and to rebuild the start of the line; with order SWAPPED, read
    as prefix⁇masked⁇suffix⁇.  A Fail says what it saw: where the handout's order does not rebuild the line but the
    swapped one does, that the masked content and the suffix are swapped."""
    prefix, first, second = _pieces(s, pad, mask)
    masked, suffix = (first, second) if order == SWAPPED else (second, first)
    if _rebuilds(line, pad, prefix, masked, suffix):
        return prefix, masked, suffix
    if order == HANDOUT and _rebuilds(line, pad, prefix, first, second):
        raise Fail("CharCorruptionDataset.__getitem__: the masked content and the suffix are swapped: x reads "
                   "prefix + MASK_CHAR + masked_content + MASK_CHAR + suffix, where the suffix comes right after the "
                   f"prefix's MASK_CHAR and the masked content last; for {line[:40]!r}... x reads {s[:70]!r}")
    raise Fail("CharCorruptionDataset.__getitem__: prefix + masked_content + suffix must be the beginning of "
               f"the line (its truncation); for {line[:40]!r}... x reads {s[:70]!r}")


def _split_either(s, pad, mask, line):
    """_split's (prefix, masked, suffix) in the handout's order, or where only the swapped order rebuilds the line,
    in that one; the handout's Fail where neither does."""
    try:
        return _split(s, pad, mask, line)
    except Fail as handout:
        try:
            return _split(s, pad, mask, line, SWAPPED)
        except Fail:
            raise handout from None


def dataset_order(texts, pad, mask, lines):
    """The order in which every one of a dataset's example texts (each of its line) reads: SWAPPED where only that
    one reads them all (1e-1 fails the swap; the parts that judge the span itself read it so, and do not charge it
    again), else HANDOUT (where neither reads them all, _split's Fail in the handout's order says why)."""
    def reads(order):
        try:
            for s, line in zip(texts, lines):
                _split(s, pad, mask, line, order)
        except Fail:
            return False
        return True

    return SWAPPED if not reads(HANDOUT) and reads(SWAPPED) else HANDOUT


class Examples:
    """In the judge: the examples a student's worker reported for one dataset, checked to be data the dataset
    could have given (what _example demands), then read as text."""

    def __init__(self, report):
        import torch

        if not isinstance(report, dict) or not all(k in report for k in ("itos", "pad", "mask", "x", "y", "idx")):
            raise Fail("the test reported no examples of the dataset to check")
        self.itos, self.pad, self.mask = report["itos"], report["pad"], report["mask"]
        self.pad_id, self.mask_id = report.get("pad_id"), report.get("mask_id")
        self.idx = report["idx"]
        self.lengths, self.dtypes = report.get("lengths"), report.get("dtypes")
        x, y = report["x"], report["y"]
        # a report comes from the student's process: each field is checked before anything reads it
        if (not isinstance(self.itos, list) or not all(isinstance(c, str) for c in self.itos)
                or not isinstance(self.pad, str) or not isinstance(self.mask, str)
                or len(self.pad) != 1 or len(self.mask) != 1 or self.pad == self.mask
                or not isinstance(self.idx, list) or not torch.is_tensor(x) or not torch.is_tensor(y)
                or x.dtype not in (torch.uint8, torch.int64) or y.dtype != x.dtype
                or x.shape != y.shape or x.dim() != 2 or x.size(0) != len(self.idx) or x.size(1) > LONGEST
                or not isinstance(self.lengths, list) or len(self.lengths) != x.size(0)
                or not all(type(n) is int and 0 < n <= x.size(1) for n in self.lengths)
                or not isinstance(self.dtypes, list) or not all(isinstance(d, str) for d in self.dtypes)):
            raise Fail("the test's report of the dataset's examples is malformed")
        if x.numel() and (int(min(x.min(), y.min())) < 0 or int(max(x.max(), y.max())) >= len(self.itos)):
            raise Fail("the test's report of the dataset's examples is malformed")
        self.x = [row[:n] for row, n in zip(x.long().tolist(), self.lengths)]
        self.y = [row[:n] for row, n in zip(y.long().tolist(), self.lengths)]

    def __len__(self):
        return len(self.x)

    def text(self, ids):
        return "".join(self.itos[i] for i in ids)

    def kept(self, ids):
        """The example's characters of the line, without its PAD_CHARs and MASK_CHARs: its truncation, rearranged."""
        return "".join(c for c in self.text(ids) if c not in (self.pad, self.mask))

    def parts(self, k, line, order=HANDOUT):
        return _split(self.text(self.x[k]), self.pad, self.mask, line, order)

    def order(self, line):
        """The order every example of `line` reads in (dataset_order)."""
        return dataset_order([self.text(x) for x in self.x], self.pad, self.mask, [line] * len(self))


def whole_parts(report, line):
    """The judge's (prefix, masked, suffix) of the reported draws that kept `line` whole, in the order the dataset
    writes them (Examples.order): none, where the truncation never keeps it whole (1e-0's to fail)."""
    seen = Examples(report)
    order = seen.order(line)
    found = [seen.parts(k, line, order) for k in range(len(seen))]
    if any(len(p + m + s) != len(line) for p, m, s in found):
        raise Fail("the test's report of the dataset's examples is malformed")
    return found


# -- the checks of part (e): each reads what its test reported; grader.py gives the numbers ----------------


def _no_examples():
    return Fail("the test reported no examples of the dataset to check")


def _length_problem(seen, block):
    """Why the examples are not all of one length the model takes (block - 1 or block), or None."""
    lengths = sorted(set(seen.lengths))
    if len(lengths) == 1 and lengths[0] in (block - 1, block):
        return None
    had = f"{lengths[0]}" if len(lengths) == 1 else f"from {lengths[0]} to {lengths[-1]}"
    return (f"with block_size {block}, x and y have {had} ids; PAD_CHARs must fill the string up to block_size "
            f"characters, so that every x and y has {block - 1} ids (the padded string shifted by one) or every one "
            f"{block}")


def check_vocabulary(ctx, report, block, lines):
    """1e-4: PAD_CHAR id 0, MASK_CHAR id 1, then the distinct characters of `lines`, sorted; one example a line,
    each a pair of LongTensors of length block - 1 or block."""
    seen = Examples(report)
    if (seen.pad, seen.mask) != (PAD, MASK):
        raise Fail("PAD_CHAR must be '\\u25A1' and MASK_CHAR '\\u2047'")
    if seen.pad_id != 0 or seen.mask_id != 1 or seen.itos[:2] != [PAD, MASK]:
        raise Fail("the vocabulary must give PAD_CHAR id 0 and MASK_CHAR id 1")
    if seen.itos[2:] != sorted(set("\n".join(lines))):
        raise Fail("the vocabulary must list the corpus's distinct characters, sorted, from id 2 on")
    if len(seen) != len(lines):
        raise _no_examples()
    if seen.dtypes != ["torch.int64"]:
        raise Fail(f"CharCorruptionDataset.__getitem__: x and y have dtype {', '.join(seen.dtypes)}; they must be "
                   "LongTensors (torch.long)")
    problem = _length_problem(seen, block)
    if problem:
        raise Fail(f"CharCorruptionDataset.__getitem__: {problem}")


def check_truncation(ctx, report, draws_by_block, whole_line, whole_draws):
    """1e-0: over draws_by_block[block] examples of a long line, every truncated length of 4..int(block*3/4)
    occurs and none lies outside 4..int(block*7/8); some of `whole_draws` examples of `whole_line` (block size
    128) keep it whole."""
    for block, draws in draws_by_block.items():
        seen = Examples((report or {}).get(block))
        top, accepted = int(block * 3 / 4), int(block * 7 / 8)
        if len(seen) != draws:
            raise _no_examples()
        lengths = {len(seen.kept(x)) for x in seen.x}
        # what the examples show is prefix + masked + suffix: a length one off may be the draw's, or a split that
        # loses or repeats a character of the truncated text (a suffix that stops one short, say)
        one_off = (" If the truncated length is drawn so, prefix + masked + suffix lose a character of the truncated "
                   "text or add one: the suffix runs from the end of the masked span to the end of the truncated "
                   "text, no further")
        if min(lengths) < 4 or max(lengths) > accepted:
            raise Fail(f"with block_size {block} the truncated length (prefix + masked + suffix) ranged over "
                       f"{min(lengths)}..{max(lengths)}; it must be drawn from 4..{top} (int(block_size * 3/4))."
                       + (one_off if min(lengths) == 3 else ""))
        missing = sorted(set(range(4, top + 1)) - lengths)
        if missing:
            raise Fail(f"with block_size {block}, {draws} examples of a long line never had a truncated length of "
                       f"{missing[:8]}{'...' if len(missing) > 8 else ''}: draw it uniformly from 4..{top}, both "
                       "ends included."
                       + (one_off if missing in ([4], [top]) else ""))
    seen = Examples((report or {}).get("whole"))
    if seen.idx != [0] * whole_draws:
        raise _no_examples()
    if max(len(seen.kept(x)) for x in seen.x) < len(whole_line):
        raise Fail(f"with block_size 128, {whole_draws:,} examples of a line of {len(whole_line)} characters never "
                   f"kept it whole: {len(whole_line)} is one of the lengths 4..{int(128 * 3 / 4)} that may be drawn, "
                   "and a line no longer than the drawn length stays whole")


def check_rearrangement(ctx, report, lines, draws):
    """1e-1: each of `draws` examples (line k % len(lines)) reads prefix MASK suffix MASK masked (MASK) then
    PADs, and prefix + masked + suffix is the line's beginning."""
    seen = Examples(report)
    if seen.idx != [k % len(lines) for k in range(draws)]:
        raise _no_examples()
    for k, idx in enumerate(seen.idx):
        seen.parts(k, lines[idx])


def check_padding(ctx, report, blocks, draws):
    """1e-5: for each block size, PAD_CHARs fill each of `draws` examples up to block_size and appear nowhere
    else."""
    for block in blocks:
        seen = Examples((report or {}).get(block))
        if len(seen) != draws:
            raise _no_examples()
        problem = _length_problem(seen, block)
        if problem:
            raise Fail(f"CharCorruptionDataset.__getitem__: {problem}")
        for x in seen.x:  # x holds the padded string but its last character, a PAD_CHAR that 1e-2 checks in y
            s = seen.text(x)
            body = s.rstrip(seen.pad)
            if seen.pad in body:
                raise Fail(f"CharCorruptionDataset.__getitem__: PAD_CHAR may only appear at the end; got {s[:70]!r}")
            if not body or len(body) > int(block * 7 / 8) + 3:
                raise Fail("CharCorruptionDataset.__getitem__: the text before the padding must be the truncated "
                           f"line plus the MASK_CHARs; got {len(body)} characters with block_size {block}")


def check_shift(ctx, report, draws):
    """1e-2: in each of `draws` examples y is x shifted by one, and its last target is a PAD_CHAR (where the example
    holds one: an example without padding is 1e-5's to fail)."""
    seen = Examples(report)
    if len(seen) != draws:
        raise _no_examples()
    pad_id = seen.itos.index(seen.pad) if seen.pad in seen.itos else None
    for x, y in zip(seen.x, seen.y):
        if x[1:] != y[:-1]:
            raise Fail("CharCorruptionDataset.__getitem__: y must be x shifted by one (x = s[:-1], y = s[1:]); "
                       f"got x={seen.text(x[:30])!r}..., y={seen.text(y[:30])!r}...")
        if y[-1] != pad_id and pad_id in x + y:
            raise Fail("CharCorruptionDataset.__getitem__: the last target must be the padded string's last "
                       "character (a PAD_CHAR)")


def check_random(ctx, report, lines, repeats):
    """1e-6: `repeats` draws of each of `lines` lines, in turn, are not all the same example."""
    seen = Examples(report)
    if seen.idx != [idx for idx in range(lines) for _ in range(repeats)]:
        raise _no_examples()
    for idx in range(lines):
        if len({tuple(x) for x, i in zip(seen.x, seen.idx) if i == idx}) < 2:
            raise Fail(f"CharCorruptionDataset.__getitem__: {repeats} draws of line {idx} gave the same example "
                       "each time; the truncation and the masked span must be drawn at random on every call")


def check_masked_lengths(ctx, report, line, whole_line, draws):
    """The judge of the masked span's length (1e-3-basic): about 1/4 of the truncated length on average over
    `draws` examples of a long `line`, random at every truncated length, and on draws that keep `whole_line` (40
    characters) whole, both shorter and longer than 1/4.  Its false-failure bounds are at the top of this file."""
    seen = Examples((report or {}).get("long"))
    if len(seen) != draws:
        raise _no_examples()
    order = seen.order(line)  # a swapped suffix and span is the rearrangement's to fail (1e-1), not the span's
    pairs = [(len(p + m + s), len(m)) for p, m, s in (seen.parts(k, line, order) for k in range(len(seen)))]
    mean = sum(k / n for n, k in pairs) / len(pairs)
    if not within(mean, 0.15, 0.35, "the masked content's mean share of the truncated length"):
        raise Fail(f"CharCorruptionDataset.__getitem__: the masked content is {mean:.3f} of the truncated length "
                   f"on average over {draws} examples; the handout asks for about 1/4")
    above = sum(4 * k > n for n, k in pairs) / len(pairs)  # not a bar: lengths (whole numbers) counted
    below = sum(4 * k < n for n, k in pairs) / len(pairs)  # not a bar: lengths (whole numbers) counted
    if not (at_least(above, 0.05, "the share of masked contents above 1/4")
            and at_least(below, 0.05, "the share of masked contents below 1/4")):
        raise Fail(f"CharCorruptionDataset.__getitem__: over {draws} examples the masked content was longer than 1/4 "
                   f"of the truncated length in {100 * above:.1f} % and shorter in {100 * below:.1f} %; its length "
                   "must be random, with a chance of being both more and less than 1/4")
    by_length = {}  # truncated length n >= 16 -> the masked lengths drawn at n
    for n, k in pairs:
        if n >= 16:  # not a bar: a truncated length (a whole number)
            by_length.setdefault(n, []).append(k)
    groups = [n for n, ks in by_length.items() if len(ks) >= 20]
    fixed = sorted(n for n in groups if len(set(by_length[n])) < 2)
    if groups and len(fixed) * 2 > len(groups):
        raise Fail("CharCorruptionDataset.__getitem__: at truncated lengths such as "
                   f"{fixed[:6]} the masked content always had the same length; it must be drawn at random")
    found = whole_parts(report.get("whole"), whole_line)
    if not found:
        return  # no draw kept the line whole: a truncation that never does so loses 1e-0, not this part
    lengths = sorted({len(m) for p, m, s in found})
    if lengths[0] >= 10 or lengths[-1] <= 10:
        raise Fail("CharCorruptionDataset.__getitem__: with a truncated length of 40 the masked content had only "
                   f"the lengths {lengths} over {len(found):,} examples; its length must be random, with a chance of "
                   "being both shorter and longer than 1/4 of the truncated length (10)")
