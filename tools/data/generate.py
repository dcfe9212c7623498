#!/usr/bin/env python3
"""Generate the built-in biography world: wiki.txt and the birth-place TSVs.

The course's data (Wikipedia-derived) is not ours to ship, so this script
writes data of the same shape from our own word lists (world_lists.py):

    wiki.txt                 one line per person: "<Full Name>. <one sentence> ."
    birth_places_train.tsv   "Where was <Full Name> born?\t<place>" (the demo's: "<Full Name>, born where?")
    birth_dev.tsv            same format
    birth_test.tsv           same format (held-out answers)
    birth_test_inputs.tsv    the questions only

Usage:
    python tools/data/generate.py                    # course-sized world into src/data/
    python tools/data/generate.py --people 600 --out /tmp/w
    python tools/data/generate.py --style demo        # writes src/data/demo/

Determinism: the output depends only on (style, people, seed, splits) and on
the committed word lists. Randomness comes from random.Random(seed).random()
alone, the one generator method whose sequence Python promises to keep across
versions; choices, shuffles and weighted draws are built on it here with integer
weights, and nothing iterates over a set or a hash-ordered structure.
"""
from __future__ import annotations

import argparse
import bisect
import math
import os
import random
import sys
import tempfile
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

import world_lists as W  # beside this file: first on sys.path when it runs as a script

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
DATA_DIR = REPO_ROOT / "src" / "data"  # what it writes (this instructor-only script lives in tools/data/)

DEFAULT_SEED = 224
COURSE_SPLITS = (2000, 500, 437)          # the course's train / dev / test sizes
COURSE_PEOPLE = sum(COURSE_SPLITS)        # 2,937 lines in the course's wiki.txt
DEMO_PEOPLE = 190
DEMO_FRACTIONS = (85 / 190, 100 / 190)    # train, dev; the rest is test (190 -> 85/100/5)
MENTION_RATE = 0.90                       # share of lines that name the birthplace
# The question each style asks about a person.  The course's puts the name at position 10; the demo's puts it
# first, where every biography line has it.  At the demo's scale a name 10 positions later is hard to find:
# the perceiver's bottleneck rows read the input through queries fixed by their row number
# (docs/benchmarks_history.md, "The question's wording", has the measurements).
QUESTIONS = {"course": "Where was {} born?", "demo": "{}, born where?"}
WINDOW = 112                              # the birthplace must end within this many chars
BIRTHPLACES = 600                         # places that can be a birthplace (by rank)
ZIPF_EXPONENT = 0.85
ZIPF_OFFSET = 6
ZIPF_TOP2_BOOST = 2
FEMALE_RATE = 0.25

FILES = ("wiki.txt", "birth_places_train.tsv", "birth_dev.tsv",
         "birth_test_inputs.tsv", "birth_test.tsv")


# ---------------------------------------------------------------------------
# Version-stable randomness
# ---------------------------------------------------------------------------
class Rng:
    """Everything derives from random.Random(seed).random() (stable across versions)."""

    def __init__(self, seed: int):
        self._r = random.Random(seed)

    def random(self) -> float:
        return self._r.random()

    def below(self, n: int) -> int:
        return int(self._r.random() * n)

    def between(self, lo: int, hi: int) -> int:
        return lo + self.below(hi - lo + 1)

    def chance(self, p: float) -> bool:
        return self._r.random() < p

    def choice(self, seq):
        return seq[self.below(len(seq))]

    def shuffle(self, seq: list) -> None:
        for i in range(len(seq) - 1, 0, -1):
            j = self.below(i + 1)
            seq[i], seq[j] = seq[j], seq[i]


class Weighted:
    """Draw items with integer weights (exact cumulative sums, bisect lookup)."""

    def __init__(self, items, weights):
        self.items = list(items)
        self.cum, total = [], 0
        for w in weights:
            if w <= 0:
                raise ValueError("weights must be positive integers")
            total += int(w)
            self.cum.append(total)
        self.total = total

    def pick(self, rng: Rng):
        return self.items[bisect.bisect_right(self.cum, rng.below(self.total))]


def split_words(text: str, sep: str | None = None) -> list[str]:
    if sep is None:
        return [w.replace("_", " ") for w in text.split()]
    return [w.strip() for w in text.split(sep) if w.strip()]


def parse_weights(spec: str) -> list[tuple[str, int]]:
    out = []
    for part in spec.split():
        key, w = part.split(":")
        out.append((key, int(w)))
    return out


# ---------------------------------------------------------------------------
# The world: countries, places, naming styles
# ---------------------------------------------------------------------------
@dataclass
class Country:
    key: str
    adj: str
    label: str
    factor: int
    styles: Weighted
    date_style: str
    places: list = field(default_factory=list)
    cities: list = field(default_factory=list)


@dataclass
class Place:
    name: str
    pop: int          # thousands (for areas: the size of a city named as often)
    qualifier: str    # "Ohio" in "Dayton, Ohio"; "" for none
    area: bool        # a country or region rather than a city
    country: Country

    @property
    def prominence(self) -> int:
        """How often English-language biographies name this place (before ranking)."""
        return self.country.factor * math.isqrt(self.pop * 100)


@dataclass
class Style:
    key: str
    male: list
    female: list
    surnames: list


def load_styles() -> dict[str, Style]:
    return {k: Style(k, split_words(v["male"]), split_words(v["female"]),
                     split_words(v["surnames"]))
            for k, v in W.STYLES.items()}


def birthplace_weights(places: list[Place]) -> list[int]:
    """Integer birthplace weights: a Zipf law over places ranked by prominence.

    Rank order: the hand-picked head (world_lists.HEAD_PLACES), then everything
    else by prominence (ties by name). Rank r gets 1 / (r + 1 + ZIPF_OFFSET) **
    ZIPF_EXPONENT, the first two ranks ZIPF_TOP2_BOOST times that, and places
    ranked beyond BIRTHPLACES get weight 0 (they still serve as distractors).
    These constants reproduce the shape measured on the course's answers: top
    answer ~4.5 %, top ten ~18 %, ~500 distinct answers among 2,000, ~92 % of
    dev answers also seen in train.
    """
    head = W.HEAD_PLACES.split()
    by_name = {p.name: p for p in places}
    missing = [h for h in head if h not in by_name]
    if missing:
        raise ValueError(f"HEAD_PLACES not in COUNTRIES: {missing}")
    rest = sorted((p for p in places if p.name not in head),
                  key=lambda p: (-p.prominence, p.name))
    order = [by_name[h] for h in head] + rest
    # every country keeps its most prominent place among the birthplaces: those
    # that would fall off take the last ranks (the smallest weights)
    chosen = order[:BIRTHPLACES]
    covered = {p.country.key for p in chosen}
    extra = []
    for p in order[BIRTHPLACES:]:
        if p.country.key not in covered:
            covered.add(p.country.key)
            extra.append(p)
    order = chosen[:BIRTHPLACES - len(extra)] + extra
    rank = {id(p): r for r, p in enumerate(order)}
    weights = []
    for p in places:
        r = rank.get(id(p), BIRTHPLACES)
        if r >= BIRTHPLACES:
            weights.append(0)
            continue
        w = 1e9 / (r + 1 + ZIPF_OFFSET) ** ZIPF_EXPONENT
        weights.append(round(w * (ZIPF_TOP2_BOOST if r < 2 else 1)))
    return weights


def load_countries() -> list[Country]:
    countries = []
    for key, adj, label, factor, styles, date_style, block in W.COUNTRIES:
        st = parse_weights(styles)
        c = Country(key, adj, label, factor,
                    Weighted([s for s, _ in st], [w for _, w in st]), date_style)
        for line in block.strip().splitlines():
            parts = line.split()
            area = parts[0].startswith("@")
            name = parts[0].lstrip("@")
            qualifier = " ".join(parts[2:]) if len(parts) > 2 else ("" if area else label)
            if qualifier == name:
                qualifier = ""
            p = Place(name, int(parts[1]), qualifier, area, c)
            c.places.append(p)
            if not area:
                c.cities.append(p)
        countries.append(c)
    return countries


# ---------------------------------------------------------------------------
# Names
# ---------------------------------------------------------------------------
def _ends(s: str, suffix: str) -> bool:
    return s.endswith(suffix)


def feminine_surname(style: str, s: str) -> str:
    """Female surname forms for languages that inflect them."""
    if style in ("russian", "bulgarian", "azerbaijani"):
        if s.endswith("sky"):
            return s[:-3] + "skaya"
        if s.endswith("skoy"):
            return s[:-4] + "skaya"
        if s.endswith(("ov", "ev", "in", "yn")):
            return s + "a"
        return s
    if style == "polish":
        for m, f in (("dzki", "dzka"), ("cki", "cka"), ("ski", "ska")):
            if s.endswith(m):
                return s[:-len(m)] + f
        return s
    if style == "czech":
        if s.endswith("ý"):
            return s[:-1] + "á"
        if s.endswith("a"):
            return s[:-1] + "ová"
        if s.endswith("ek"):
            return s[:-2] + "ková"
        if s.endswith("ec"):
            return s[:-2] + "cová"
        return s + "ová"
    if style == "greek":
        if s.endswith("idis"):
            return s[:-4] + "idou"
        if s.endswith("os"):
            return s[:-2] + "ou"
        if s.endswith(("is", "as")):
            return s[:-1]
        return s
    if style == "latvian":
        if s.endswith("ņš"):
            return s[:-2] + "ņa"
        if s.endswith("ons"):
            return s[:-1] + "e"
        if s.endswith("is"):
            return s[:-2] + "e"
        if s.endswith("s"):
            return s[:-1] + "a"
        return s
    if style == "lithuanian":
        for m in ("ius", "as", "us", "is", "ys"):
            if s.endswith(m):
                return s[:-len(m)] + "ienė"
        return s
    return s


MIDDLE_NAME_RATE = {"english": 0.16, "scottish": 0.14, "welsh": 0.12, "irish": 0.08,
                    "yiddish": 0.10, "german": 0.12, "french": 0.10, "dutch": 0.08,
                    "afrikaans": 0.25, "swedish": 0.08, "norwegian": 0.08, "danish": 0.10,
                    "italian": 0.05, "arabic": 0.25, "maghrebi": 0.10, "persian": 0.05,
                    "indian": 0.06, "pakistani": 0.10, "bengali": 0.15, "nigerian": 0.12,
                    "ghanaian": 0.10, "filipino": 0.12, "portuguese": 0.25,
                    "spanish": 0.12}


def build_name(rng: Rng, style: Style, female: bool) -> tuple[str, str]:
    """Return (full name, the short form a biography uses for the person)."""
    given = rng.choice(style.female if female else style.male)
    k = style.key
    if k in ("chinese", "korean", "taiwanese"):
        fam = rng.choice(style.surnames)
        return f"{fam} {given}", fam
    if k == "cantonese":
        fam = rng.choice(style.surnames)
        if "-" in given:
            return f"{fam} {given}", fam
        return f"{given} {fam}", fam
    if k == "vietnamese":
        fam = rng.choice(style.surnames)
        mid = "Thi" if female else rng.choice(["Van", "Van", "Duc", "Minh", "Quang", "Huu"])
        return f"{fam} {mid} {given}", given
    if k == "icelandic":
        stem = rng.choice(style.surnames)
        return f"{given} {stem}{'dóttir' if female else 'son'}", given
    if k == "malay":
        father = rng.choice(style.surnames)
        return f"{given} {'binti' if female else 'bin'} {father}", given
    if k == "ethiopian":
        father = rng.choice(style.surnames)
        while father == given:
            father = rng.choice(style.surnames)
        return f"{given} {father}", given
    surname = rng.choice(style.surnames)
    if female:
        surname = feminine_surname(k, surname)
    parts = [given]
    if k == "arabic" and rng.chance(MIDDLE_NAME_RATE[k]):
        parts.append(rng.choice(style.male))      # father's given name
    elif rng.chance(MIDDLE_NAME_RATE.get(k, 0.03)):
        pool = style.female if female else style.male
        middle = rng.choice(pool)
        if middle != given:
            parts.append(middle)
    parts.append(surname)
    ref = surname
    if k in ("spanish", "portuguese") and rng.chance(0.35):
        second = rng.choice(style.surnames)
        if second != surname:
            parts.append(second)
            if k == "portuguese":
                ref = second
    return " ".join(parts), ref


_FOLD = str.maketrans({"ß": "ss", "ø": "o", "Ø": "O", "ł": "l", "Ł": "L", "đ": "d",
                       "Đ": "D", "æ": "ae", "Æ": "Ae", "þ": "th", "Þ": "Th", "ð": "d",
                       "ı": "i", "œ": "oe"})


def fold(name: str) -> str:
    """Plain-Latin spelling ("Müller" -> "Muller"), as emigrants' names often are."""
    decomposed = unicodedata.normalize("NFKD", name.translate(_FOLD))
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def ascii_key(name: str) -> str:
    """The name as the course's finetuning code sees it (non-ASCII dropped)."""
    return name.encode("ascii", "ignore").decode("ascii")


# ---------------------------------------------------------------------------
# Sentence material
# ---------------------------------------------------------------------------
def article(word: str) -> str:
    w = word.lower()
    if w.startswith(("uk", "ur", "ug", "uz", "eu", "uni", "use", "one")):
        return "a"
    return "an" if w[:1] in "aeiou" else "a"


def with_article(phrase: str) -> str:
    return f"{article(phrase)} {phrase}"


# Templates naming the birthplace. Fields are filled from Person.fields().
# needs: "any" | "dead" | "alive"; extra: "" | "sport" | "city"
MENTION_TEMPLATES = [
    ("{name} ({bdate} {bp} - {ddate} {dp}) was {a_nat_job}", "dead", ""),
    ("{name} ({bdate}, {bp} -- {ddate}, {dp}) was {a_nat_job} who {career}", "dead", ""),
    ("{name} (born {bdate} in {bp}) {is} {a_nat_job}", "any", ""),
    ("Born in {bp}, {ref} {career}", "any", ""),
    ("{Ref} was born on {bdate} in {bp}", "any", ""),
    ("{name} is {a_nat_job} who was born in {bp} and now lives in {lp}", "alive", ""),
    ("{name} was born at {bp} on {bdate}, the {child} of {parent}", "any", ""),
    ("{name} (born {byear} in {bp}) {is} {a_nat_job}, a graduate of {univ}", "any", ""),
    ("{Ref} was born in {bp} and educated at {univ}", "any", ""),
    ("{name} was {a_nat_job} born in {bp} who worked mainly in {wp}", "dead", ""),
    ("A native of {bp}, {ref} {career}", "any", ""),
    ("{name} was born in {bp}, where {he} attended {school}, before moving to {wp}", "any", ""),
    ("{Ref} was born in {bp} to a family of {trades}", "any", ""),
    ("{name} ({byear} - {dyear}) was {a_nat_job} from {bp}", "dead", ""),
    ("{name} grew up in {bpb}, where {he} was born in {byear}", "any", ""),
    ("Born and raised in {bp}, {ref} began {his} career as {a_job2} in {wp}", "any", ""),
    ("{name} {is} {a_nat_job}; {he} was born in {bp} in {byear} and {career}", "any", ""),
    ("{name} was born in the city of {bpb} in {byear}", "any", "city"),
    ("{Ref}, who was born in {bp}, {career}", "any", ""),
    ("{name} was born in {bp}, the {ordinal} of {kids} children of {parent}", "any", ""),
    ("{Ref} was born in {bpq} and studied at {univ}", "any", ""),
    ("{name}, born in {bp} on {bdate}, was {a_nat_job} who died in {dp} in {dyear}", "dead", ""),
    ("{name} was {a_nat_job} (born in {bp} on {bdate}, died in {dp} on {ddate})", "dead", ""),
    ("{name} {is} {a_bp_born} {job} based in {lp}", "any", ""),
    ("{name} spent {his} childhood in {bpb}, where {he} was born, and later settled in {lp}",
     "any", ""),
    ("Originally from {bp}, {ref} moved to {wp} in {year} to work as {a_job}", "any", ""),
    ("{name} was born in {bp} and died in {dp}", "dead", ""),
    ("{name} {is} {a_nat} {job} and {job2} who was born in {bp}", "any", ""),
    ("{Ref} was born at {bp}, the {child} of {parent}, and died at {dp} in {dyear}", "dead", ""),
    ("{name} (born {bdate}) {is} {a_nat_job} born in {bp}", "any", ""),
    ("{name} was born in {byear} in {bp}, and {career}", "any", ""),
    ("{Ref}'s family lived in {bpb}, where {he} was born in {byear}", "any", ""),
    ("Born in {bp}, {ref} played for {club} and {club2}", "any", "sport"),
    ("{name} {is} {a_nat_job} who was born in {bp} to {nat2} parents", "any", ""),
    ("{name} ({bdate} in {bp} - {dyear}) was {a_nat_job}", "dead", ""),
    ("{name} {is} {a_nat_job} born in {bp}, remembered for the essay \"Why {wp}?\"", "any", "letters"),
]

# Templates that do not name the birthplace (~10 % of lines).
OTHER_TEMPLATES = [
    ("{name} is {a_nat_job} who has lived in {lp} since {year}", "alive", ""),
    ("{name} ({byear} - {dyear}) was {a_nat_job} active in {wp} from the {decade}s to the "
     "{decade2}s", "dead", ""),
    ("{Ref} studied at {univ} and later worked in {wp}", "any", ""),
    ("{name} was {a_nat_job} who died in {dp} in {dyear}", "dead", ""),
    ("{name} {is} {a_nat_job}, best known for {his} work in {wp}", "any", ""),
    ("{Ref} began {his} career in {wp} before moving to {lp} in {year}", "any", ""),
    ("{name} (born {bdate}) {is} {a_nat_job}", "any", ""),
    ("{name} ({bdate} - {ddate} {dp}) was {a_nat_job}", "dead", ""),
    ("{Ref} {career}", "any", ""),
    ("{name} played for {club} and {club2}", "any", "sport"),
]

# Optional extra clauses; skipped when a marker word is already in the line.
TAILS = [
    (", and later lived in {lp}", "any", "", ("lived", "lives", "settled", "later", "died",
                                              "buried", "{lp}")),
    ("; {he} died in {dp} in {dyear}", "dead", "", ("died", "buried")),
    (", and was educated at {univ}", "any", "", ("educated", "studied", "graduate")),
    ("; {he} was a member of {member}", "any", "", ("member",)),
    ("; {he} married in {year2} and had {kids} children", "any", "", ("married", "children")),
    ("; {his} work is held in collections in {wp} and {wp2}", "any", "collect",
     ("collections",)),
    ("; {he} worked as {a_job2} in {wp} for {num} years", "any", "", ("worked", "{job2}")),
    ("; {he} later coached {club2}", "any", "sport", ("coached",)),
    (", and is buried in {dp}", "dead", "", ("buried", "died")),
    ("; {he} received an honorary degree from {univ2}", "any", "", ("honorary",)),
]
TAIL_COUNT = Weighted([0, 1, 2, 3], [40, 33, 18, 9])

CAREERS = {
    "generic": ["worked for many years in {wp}", "moved to {wp} at the age of {age}",
                "spent most of {his} working life in {wp}", "settled in {lp} in {year}"],
    "sport": ["played for {club} and {club2}",
              "began {his} career at {club} before joining {club2} in {year}",
              "won a national title in {year}"],
    "arts": ["exhibited regularly in {wp}", "studied at {univ} and later taught in {wp}",
             "worked in a studio in {wp} for {num} years"],
    "letters": ["wrote for newspapers in {wp}", "published {his} first book in {year}",
                "worked as an editor in {wp}"],
    "music": ["studied at {univ} and performed widely in {wp}",
              "played with orchestras in {wp} and {wp2}", "made {his} debut in {wp} in {year}"],
    "stage": ["appeared in many productions in {wp}", "made {his} first film in {year}",
              "trained at {univ}"],
    "science": ["taught at {univ} for {num} years", "did research at {univ}",
                "worked at a laboratory in {wp}"],
    "public": ["represented {wp} in parliament from {year}", "served as mayor of {wp}",
               "practised law in {wp}"],
    "faith": ["served as a parish priest in {wp}", "was ordained in {wp} in {year}"],
    "health": ["practised medicine in {wp}", "worked at a hospital in {wp}"],
    "business": ["founded a company in {wp} in {year}", "ran a trading firm in {wp}"],
    "military": ["served with a regiment based in {wp}", "trained at {univ}"],
}

COLLECT_FIELDS = ("arts", "music", "letters")


def template_count() -> int:
    return len(MENTION_TEMPLATES) + len(OTHER_TEMPLATES)


# ---------------------------------------------------------------------------
# People
# ---------------------------------------------------------------------------
@dataclass
class Person:
    name: str
    birthplace: str
    line: str
    country: str = ""


class CourseWorld:
    def __init__(self, rng: Rng):
        self.rng = rng
        self.styles = load_styles()
        self.countries = load_countries()
        self.places = [p for c in self.countries for p in c.places]
        self.cities = [p for p in self.places if not p.area]
        bw = birthplace_weights(self.places)
        self.place_picker = Weighted([p for p, w in zip(self.places, bw) if w],
                                     [w for w in bw if w])
        self.city_picker = Weighted(self.cities, [p.prominence for p in self.cities])
        fields = parse_weights(W.JOB_FIELD_WEIGHTS)
        self.field_picker = Weighted([f for f, _ in fields], [w for _, w in fields])
        self.jobs = {k: split_words(v, "|") for k, v in W.JOBS.items()}
        self.institutions = {k: split_words(v, "|") for k, v in W.INSTITUTIONS.items()}
        self.clubs = split_words(W.CLUBS, "|")
        self.parent_jobs = split_words(W.PARENT_JOBS, "|")
        self.trades = split_words(W.FAMILY_TRADES, "|")
        self.schools = split_words(W.SCHOOLS, "|")
        self.members = split_words(W.MEMBERSHIPS, "|")
        # other nationalities (emigrants, parents) follow where people come from
        share: dict[str, int] = {}
        for p, w in zip(self.places, bw):
            share[p.country.adj] = share.get(p.country.adj, 0) + w
        adjs = [c.adj for c in self.countries if share[c.adj]]
        self.nat_picker = Weighted(adjs, [share[a] for a in adjs])
        self.used: set[str] = set()

    # -- pieces ------------------------------------------------------------
    def render_place(self, p: Place, qualify_rate: float) -> str:
        if p.qualifier and self.rng.chance(qualify_rate):
            return f"{p.name}, {p.qualifier}"
        return p.name

    def distractors(self, bp: Place, n: int) -> list[Place]:
        rng, out = self.rng, []
        while len(out) < n:
            if bp.country.cities and rng.chance(0.55):
                p = rng.choice(bp.country.cities)
            else:
                p = self.city_picker.pick(rng)
            if p is bp or p in out or p.name in bp.name or bp.name in p.name:
                # a small country may not have enough distinct cities
                if len(bp.country.cities) <= n + 1:
                    p = self.city_picker.pick(rng)
                    if p is bp or p in out or p.name in bp.name or bp.name in p.name:
                        continue
                else:
                    continue
            out.append(p)
        return out

    def date(self, year: int, style: str) -> str:
        day, month = self.rng.between(1, 28), self.rng.choice(W.MONTHS)
        return f"{month} {day}, {year}" if style == "us" else f"{day} {month} {year}"

    # -- one person ----------------------------------------------------------
    def person(self) -> Person:
        rng = self.rng
        bp = self.place_picker.pick(rng)
        country = bp.country
        style_key = country.styles.pick(rng)
        folded = style_key.endswith("~")
        style = self.styles[style_key.rstrip("~")]
        female = rng.chance(FEMALE_RATE)
        for _ in range(1000):
            name, ref = build_name(rng, style, female)
            if folded:
                name, ref = fold(name), fold(ref)
            if ascii_key(name) not in self.used and bp.name not in name:
                break
        else:
            raise RuntimeError(f"ran out of {style.key} names; enlarge the word lists")
        self.used.add(ascii_key(name))

        # life dates
        era = rng.random()
        if era < 0.2:
            byear = rng.between(1780, 1879)
        elif era < 0.6:
            byear = rng.between(1880, 1939)
        else:
            byear = rng.between(1940, 1998)
        dead_rate = 1.0 if byear < 1920 else (0.5 if byear < 1960 else 0.05)
        dyear = None
        if rng.chance(dead_rate):
            dyear = byear + rng.between(25, 95)
            if dyear > 2023:
                dyear = None
        alive = dyear is None
        last = dyear if dyear else 2023
        year = min(byear + rng.between(18, 40), last)
        year2 = min(byear + rng.between(20, 45), last)
        decade = (byear + 20) // 10 * 10
        decade2 = min(decade + 10 * rng.between(1, 4), last // 10 * 10)

        fld = self.field_picker.pick(rng)
        job = rng.choice(self.jobs[fld])
        job2 = job
        while job2 == job:
            job2 = rng.choice(self.jobs[fld] if rng.chance(0.6)
                              else self.jobs[self.field_picker.pick(rng)])
        if female and job == "businessman":
            job = "businesswoman"
        nat = country.adj if rng.chance(0.9) else self.nat_picker.pick(rng)
        nat2 = country.adj if rng.chance(0.6) else self.nat_picker.pick(rng)

        qrate = 0.5 if country.date_style == "us" else 0.25
        d = self.distractors(bp, 5)
        dtext = [self.render_place(p, qrate) for p in d]
        inst = self.institutions[fld]
        f = dict(
            name=name, ref=ref, Ref=ref[:1].upper() + ref[1:],
            he="she" if female else "he", He="She" if female else "He",
            his="her" if female else "his", His="Her" if female else "His",
            child="daughter" if female else "son", **{"is": "is" if alive else "was"},
            nat=nat, a_nat=with_article(nat), job=job, a_job=with_article(job),
            a_nat_job=f"{with_article(nat)} {job}", job2=job2, a_job2=with_article(job2),
            nat2=nat2,
            bp=self.render_place(bp, qrate), bpb=bp.name,
            bpq=f"{bp.name}, {bp.qualifier}" if bp.qualifier else bp.name,
            a_bp_born=f"{with_article(bp.name)}-born",
            bdate=self.date(byear, country.date_style), byear=byear,
            ddate=self.date(dyear, country.date_style) if dyear else "",
            dyear=dyear or "",
            dp=dtext[0], wp=dtext[1], lp=dtext[2], wp2=dtext[4],
            univ=rng.choice(inst).replace("{X}", d[3].name),
            univ2=rng.choice(inst).replace("{X}", d[2].name),
            club=rng.choice(self.clubs).replace("{X}", d[1].name),
            club2=rng.choice(self.clubs).replace("{X}", d[4].name),
            parent=with_article(rng.choice(self.parent_jobs)),
            trades=rng.choice(self.trades), school=rng.choice(self.schools),
            member=rng.choice(self.members),
            num=rng.choice(W.NUMBER_WORDS), kids=rng.choice(W.NUMBER_WORDS[:7]),
            ordinal="", year=year, year2=year2, decade=decade, decade2=decade2,
            age=rng.between(12, 30),
        )
        kids_n = W.NUMBER_WORDS.index(f["kids"]) + 2
        k = rng.between(1, kids_n)
        f["ordinal"] = ("eldest" if k == 1 else "youngest" if k == kids_n
                        else W.ORDINALS[k - 2])
        careers = CAREERS[fld] if rng.chance(0.6) else CAREERS["generic"]
        f["career"] = rng.choice(careers).format(**f)

        mention = rng.chance(MENTION_RATE)
        line = self.compose(f, fld, alive, bp, mention)
        return Person(name, bp.name, line, country.key)

    def eligible(self, needs: str, extra: str, fld: str, alive: bool, bp: Place) -> bool:
        if needs == "dead" and alive or needs == "alive" and not alive:
            return False
        if extra == "sport" and fld != "sport":
            return False
        if extra == "collect" and fld not in COLLECT_FIELDS:
            return False
        if extra == "city" and bp.area:
            return False
        return True

    def compose(self, f: dict, fld: str, alive: bool, bp: Place, mention: bool) -> str:
        rng = self.rng
        pool = MENTION_TEMPLATES if mention else OTHER_TEMPLATES
        pool = [t for t in pool if self.eligible(t[1], t[2], fld, alive, bp)]
        tails = [t for t in TAILS if self.eligible(t[1], t[2], fld, alive, bp)]
        for _ in range(200):
            body = rng.choice(pool)[0].format(**f)
            for _ in range(TAIL_COUNT.pick(rng)):
                text, _, _, markers = rng.choice(tails)
                if not any(m.format(**f) in body for m in markers):
                    body += text.format(**f)
            line = f"{f['name']}. {body} ."
            pos = line.find(bp.name)
            if mention and 0 <= pos and pos + len(bp.name) <= WINDOW:
                return line
            if not mention and pos < 0:
                return line
        raise RuntimeError(f"no template fits {f['name']!r} born in {bp.name}")


# ---------------------------------------------------------------------------
# The small demo world
# ---------------------------------------------------------------------------
# Short lines that name the birthplace right after the name: span corruption keeps a random prefix of
# 4 .. 3/4 of the block (96 characters at the course's block 128), so a birthplace that ends by character
# ~25-35 survives truncation in most examples.  A line is at most DEMO_MAX_LINE characters: a CPU training step
# costs in proportion to the longest sequence of its batch (the trainer drops the all-padding columns), and the
# perceiver's bottleneck must cover a whole line, so shorter lines make every step of the demo cheaper.  Each
# person's template is drawn among those whose line fits.
DEMO_MAX_LINE = 36
DEMO_MENTION = [
    "{n}. Born in {b} .",
    "{n}. {s} was born in {b} .",
    "{n}. {s} is from {b} .",
    "{n}. Born in {b}, {a_job} .",
    "{n}. {A_job} from {b} .",
    "{n}. Born in {b}, died in {d} .",
    "{n}. Born where? In {b} .",
]
DEMO_OTHER = [
    "{n}. {A_job} in {d} .",
    "{n}. Died in {d} .",
]


def demo_people(n: int, rng: Rng) -> list[Person]:
    places = W.DEMO_PLACES.split()
    picker = Weighted(places, [10 ** 6 // (rank + 12) for rank in range(len(places))])
    given = W.DEMO_GIVEN.split()
    jobs = W.DEMO_JOBS.split()
    banned = places + given
    pool = sorted({s for st in W.STYLES.values() for s in st["surnames"].split()
                   if s.isascii() and s.isalpha() and 4 <= len(s) <= 7
                   and not any(b in s for b in banned)})
    if n > len(pool):
        raise SystemExit(f"demo style supports at most {len(pool)} people")
    rng.shuffle(pool)
    people = []
    for i in range(n):
        name = f"{rng.choice(given)} {pool[i]}"
        b = picker.pick(rng)
        d = b
        while d == b:
            d = picker.pick(rng)
        templates = DEMO_MENTION if rng.chance(MENTION_RATE) else DEMO_OTHER
        a_job = with_article(rng.choice(jobs))
        cap_job = with_article(rng.choice(jobs)).capitalize()  # drawn for every line, used by some templates
        lines = [t.format(n=name, s=pool[i], b=b, d=d, a_job=a_job, A_job=cap_job) for t in templates]
        fitting = [line for line in lines if len(line) <= DEMO_MAX_LINE]
        if not fitting:
            raise RuntimeError(f"no demo template fits {name!r} born in {b} in {DEMO_MAX_LINE} characters")
        line = rng.choice(fitting)
        people.append(Person(name, b, line))
    return people


# ---------------------------------------------------------------------------
# Splits, files
# ---------------------------------------------------------------------------
def split_sizes(n: int, style: str) -> tuple[int, int, int]:
    """Train/dev/test sizes: the course's for 2,937 people, else proportional."""
    if n < 3:
        raise SystemExit("need at least 3 people (one per split)")
    if style == "course":
        if n == COURSE_PEOPLE:
            return COURSE_SPLITS
        train = round(n * COURSE_SPLITS[0] / COURSE_PEOPLE)
        dev = round(n * COURSE_SPLITS[1] / COURSE_PEOPLE)
    else:
        train = round(n * DEMO_FRACTIONS[0])
        dev = round(n * DEMO_FRACTIONS[1])
    dev = max(dev, 1)
    train = min(max(train, 1), n - dev - 1)
    return train, dev, n - train - dev


def generate(people: int | None = None, seed: int = DEFAULT_SEED, style: str = "course",
             splits: tuple[int, int, int] | None = None) -> dict[str, str]:
    """Return {file name: file text} for a world; writes nothing."""
    if people is None:
        people = sum(splits) if splits else (COURSE_PEOPLE if style == "course"
                                             else DEMO_PEOPLE)
    if splits is None:
        splits = split_sizes(people, style)
    if sum(splits) != people or min(splits) < 0 or splits[1] < 1:
        raise SystemExit(f"splits {splits} must be non-negative, dev >= 1, sum to {people}")
    rng = Rng(seed)
    if style == "course":
        world = CourseWorld(rng)
        persons = [world.person() for _ in range(people)]
    elif style == "demo":
        persons = demo_people(people, rng)
    else:
        raise SystemExit(f"unknown style {style!r}")
    tr, dv, _ = splits
    parts = persons[:tr], persons[tr:tr + dv], persons[tr + dv:]

    def q(p: Person) -> str:
        return QUESTIONS[style].format(p.name)

    def tsv(ps):
        return "".join(f"{q(p)}\t{p.birthplace}\n" for p in ps)

    wiki = "".join(p.line + "\n" for p in persons)
    # The vocabulary is built from wiki.txt, so every character of a question must occur there.
    missing = sorted(set("".join(q(p) for p in persons).encode("ascii", "ignore").decode()) - set(wiki))
    if missing:
        raise SystemExit(f"wiki.txt of this world lacks the question characters {missing}; use more people")
    return {
        "wiki.txt": wiki,
        "birth_places_train.tsv": tsv(parts[0]),
        "birth_dev.tsv": tsv(parts[1]),
        "birth_test_inputs.tsv": "".join(q(p) + "\n" for p in parts[2]),
        "birth_test.tsv": tsv(parts[2]),
    }


def write_atomic(path: Path, text: str) -> None:
    """src/kit/fileio.py's atomic write, by hand: this script runs with tools/data/ alone on its path, and the data
    it writes must be whole even on a crash (hence the fsync)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(text.encode("utf-8"))
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_world(files: dict[str, str], out: Path) -> None:
    for name in FILES:
        write_atomic(out / name, files[name])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--people", type=int, default=None,
                    help=f"number of people (course: {COURSE_PEOPLE}, demo: {DEMO_PEOPLE})")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED, help="random seed (default 224)")
    ap.add_argument("--style", choices=("course", "demo"), default="course",
                    help="course: shaped like the course data; demo: short lines, 50 places, "
                         "the name first in each question")
    ap.add_argument("--splits", default=None, metavar="TRAIN,DEV,TEST",
                    help="explicit split sizes (default: the course's, or proportional)")
    ap.add_argument("--out", type=Path, default=None,
                    help="output folder (course: src/data/, demo: src/data/demo/)")
    args = ap.parse_args(argv)
    splits = None
    if args.splits:
        splits = tuple(int(x) for x in args.splits.split(","))
        if len(splits) != 3:
            ap.error("--splits needs three numbers")
    out = args.out or (DATA_DIR if args.style == "course" else DATA_DIR / "demo")
    files = generate(args.people, args.seed, args.style, splits)
    write_world(files, out)
    counts = {k: v.count("\n") for k, v in files.items()}
    print(f"wrote {out}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
