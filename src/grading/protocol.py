"""What a worker may send the parent, and the checks on it: the messages of the protocol (their kinds, fields and
bounds) and the report a student's worker hands to a judge (its size, its archive's members)."""

import io
import os
import stat
from pathlib import Path

MESSAGE_CHARS = 1500  # longest failure message kept
OUTPUT_CHARS = 1000  # head and tail of a test's captured output kept

REPORT_BYTES = 16 << 20  # largest report a student's worker may hand to a judge
# What a report may unpack to.  torch.save writes a zip archive whose members are stored, not compressed, so a
# report's members fill at most its own REPORT_BYTES; a member that claims more, or is compressed (1 MB of
# DEFLATE can inflate to gigabytes inside the judge's torch.load), is refused before anything loads it.
REPORT_UNPACKED_BYTES = 64 << 20
REPORT_MEMBERS = 4096  # a report of a few dozen tensors has a few dozen members
# What a loaded report may hold, counted as a walk through it visits its values: a list that holds the same list
# twice, forty levels deep, pickles to 1.6 KB and loads as shared references, but any code that walks it (a
# judge's message that formats it, a comparison) visits 2**40 values.  Grading the reference, the largest report
# (part e's examples, 1e-0) visited 16,210; a walk past REPORT_VALUES stops and the report is refused.
REPORT_VALUES = 1_000_000
# The protocol between a worker and the parent: no honest line is longer (a result's message and output are
# cut to MESSAGE_CHARS and 2 * OUTPUT_CHARS characters, JSON-escaped twice), and no honest worker sends more
# messages than ready and done, plus start, result and an import/imported pair per student module for a test.
MESSAGE_LINE_BYTES = 256 << 10
MESSAGES_PER_WORKER = 8
MESSAGES_PER_TEST = 40


# What each message of the protocol holds: its fields and their types.  A string field has a length bound.
_STR = str
MESSAGE_FIELDS = {
    "ready": {},
    "start": {"id": _STR},
    "import": {"module": _STR},
    "imported": {},
    "result": {"id": _STR, "status": _STR, "message": _STR, "output": _STR, "seconds": float},
    "done": {},
}
# Fields a message may leave out: a judge's result says whether its failed comparison still vouches for the tests
# that count with it (registry.Mismatch), and the parent takes that word from a judge only; a result says whether
# the test failed only because its student file was not handed in (registry.MissingFile); a judge's failed result
# may say what kind of failure it is, one of REASONS (registry.Fail.reason), which results.json carries in the
# test's extra_data for the tools that act on it (the class report's roster), never read from its message.
OPTIONAL_FIELDS = {"result": {"vouches": bool, "missing": bool, "reason": str}}
FIELD_CHARS = {"id": 100, "module": 100, "status": 10, "message": MESSAGE_CHARS + 100,
               "output": 2 * OUTPUT_CHARS + 200, "reason": 40}
# the kinds of failure a judge states: a prediction file whose lines its params file does not give
# (registry.PredictionsNotFromParams)
REASONS = ("predictions-not-from-params",)


def check_message(msg, specs):
    """Why msg (a dict a worker signed) is not a well-formed message of the protocol, or None.  Exactly the
    fields of its kind (MESSAGE_FIELDS), each of its type, strings of bounded length, test ids that exist, a
    result's status passed or failed and its seconds a finite number >= 0."""
    import math

    if not isinstance(msg, dict):
        return "a message that is not a JSON object"
    ev = msg.get("ev")
    if not isinstance(ev, str) or ev not in MESSAGE_FIELDS:
        return "a message of no known kind"
    fields, optional = MESSAGE_FIELDS[ev], OPTIONAL_FIELDS.get(ev, {})
    if not {"ev", *fields} <= set(msg) <= {"ev", *fields, *optional}:
        return f"a {ev!r} message with other fields than {', '.join(sorted(fields)) or 'none'}"
    for name, kind in {**fields, **{k: v for k, v in optional.items() if k in msg}}.items():
        value = msg[name]
        if kind is bool:
            if not isinstance(value, bool):
                return f"a {ev!r} message whose {name} is not true or false"
        elif kind is float:
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                return f"a {ev!r} message whose {name} is not a number of seconds"
        elif not isinstance(value, kind) or len(value) > FIELD_CHARS[name]:
            return f"a {ev!r} message whose {name} is not a string of at most {FIELD_CHARS[name]} characters"
    if "id" in fields and msg["id"] not in specs:
        return f"a {ev!r} message for a test that does not exist"
    if ev == "import" and not msg["module"].isidentifier():
        return "an 'import' message for no module"
    if ev == "result" and msg["status"] not in ("passed", "failed"):
        return "a result whose status is neither passed nor failed"
    if ev == "result" and "reason" in msg and (msg["reason"] not in REASONS or msg["status"] != "failed"):
        return "a result whose reason is none of the protocol's, or that did not fail"
    return None


def loaded_report_problem(obj):
    """Why a report that torch.load gave cannot go to a judge, or None: a walk through it, each shared value
    visited as often as it is referred to (as any code that walks it would), visits at most REPORT_VALUES
    values.  A tensor, a number or a string counts as one."""
    stack, visited = [obj], 0
    while stack:
        value = stack.pop()
        visited += 1
        if visited > REPORT_VALUES:
            return (f"what the test reported holds more than {REPORT_VALUES:,} values (counting each place a "
                    "shared value is used): it is not judged")
        if isinstance(value, dict):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, (list, tuple, set, frozenset)):
            stack.extend(value)
    return None


def report_problem(data):
    """Why the bytes of a report cannot be loaded safely, or None: it must be the zip archive torch.save writes,
    with at most REPORT_MEMBERS members, each stored as is (torch.save compresses nothing), at most
    REPORT_UNPACKED_BYTES together.  Read with zipfile, which unpacks nothing here."""
    import zipfile

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = archive.infolist()
    except Exception:  # noqa: BLE001 - zipfile raises many kinds on a damaged archive
        return "what the test reported is not a file that torch.save writes"
    if len(members) > REPORT_MEMBERS:
        return f"what the test reported has {len(members)} parts, more than the {REPORT_MEMBERS} a report may have"
    unpacked = sum(m.file_size for m in members)
    if unpacked > REPORT_UNPACKED_BYTES:
        return (f"what the test reported unpacks to {unpacked / 2**20:.0f} MiB, more than the "
                f"{REPORT_UNPACKED_BYTES >> 20} MiB a report may hold")
    if any(m.compress_type != zipfile.ZIP_STORED or m.compress_size != m.file_size for m in members):
        return "what the test reported is compressed, and torch.save never compresses: it is not loaded"
    return None


def take_report(src_dir, tid, dst_dir, uid=None):
    """Copy the report of test tid from a student's worker folder into dst_dir, only if it is a regular file of
    at most REPORT_BYTES (owned by uid, when given) that report_problem accepts: never following a link, never
    blocking on a FIFO.  None if copied or if there is none; else why it was refused (the test fails)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(Path(src_dir) / f"{tid}.report", flags)
    except FileNotFoundError:
        return None
    except OSError:
        return "what the test reported is not a regular file"
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or (uid is not None and st.st_uid != uid):
            return "what the test reported is not a regular file of the test's own"
        data = b""
        while len(data) <= REPORT_BYTES:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            data += chunk
    except OSError:
        return "what the test reported could not be read"
    finally:
        os.close(fd)
    if len(data) > REPORT_BYTES:
        return f"what the test reported is larger than the {REPORT_BYTES >> 20} MiB a report may be"
    problem = report_problem(data)
    if problem is None:
        (Path(dst_dir) / f"{tid}.report").write_bytes(data)
    return problem
