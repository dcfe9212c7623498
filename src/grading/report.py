"""What a grading run says: the summary a student reads and Gradescope's results.json, each showing a hidden
test's result only as its visibility allows."""

from pathlib import Path

PENDING_MESSAGE = "hidden - graded after submission"

# Who sees a hidden test's result (points.json's "hidden_visibility", or --hidden-visibility): Gradescope's
# visibility values.  "visible" is the course's grader's behaviour (it marks no test after_published); any other
# value keeps every hidden test's result, and the hidden total, out of everything a student sees before then:
# the summary, the top-level output of results.json, and the grader's printed lines (Gradescope's stdout).
VISIBILITIES = {"visible": "now", "after_due_date": "after the due date",
                "after_published": "when grades are published", "hidden": "to the course staff only"}


def points_of(spec):
    return 0 if spec.info else spec.points


def concealed(spec, visibility, result=None):
    """Whether a test's result is kept from the student: a hidden test's, and a test that a hidden one vouched
    for (its result would tell theirs), unless hidden results are shown now."""
    return visibility != "visible" and (spec.hidden or bool((result or {}).get("vouched_by")))


def is_practice(spec):
    """A practice check: 0 points and not info, a check beyond the handout's graded items."""
    return not spec.info and not points_of(spec)


def unshown_practice(specs, results):
    """The practice checks whose student file was not handed in: neither the summary nor results.json shows
    them (Gradescope shows each test of results.json as a row), so that a student never reads "part g failed"
    from a check the handout does not grade and a file it does not ask for."""
    return {s.id for s in specs if is_practice(s) and results[s.id].get("missing") is True}


def first_screen(specs, order, solution_dir, have_answers, own_submission):
    """The header's lines after its folders: which hidden tests will be pending, for want of the reference solution
    or of the held-out answers; and, where the grader grades its own checkout's submission with the answers there
    but no reference (`python grader.py` in the instructor's copy, which grades the reference itself), the one
    command that grades a student's folder."""
    missing = {"solution": solution_dir is None, "answers": not have_answers}
    pending = [specs[t] for t in order if specs[t].hidden and any(missing.get(n) for n in specs[t].needs)]
    lines = []
    if pending:
        lines.append(f"pending ({len(pending)} tests, {sum(points_of(s) for s in pending)} points): "
                     + ", ".join(s.id for s in pending))
    if own_submission and have_answers and solution_dir is None:
        submission = Path(own_submission)
        lines.append(f"this is the instructor's copy (the held-out answers are here): {submission} is the reference "
                     "solution itself")
        lines.append("to grade a student's folder, as root (off root nothing is isolated): "
                     f"python3 {submission.parent / 'grader.py'} --submission-dir FOLDER --solution-dir {submission}")
    return lines


def format_summary(specs, results, header, visibility="visible"):
    lines = list(header)
    lines.append("")
    width = max(len(s.id) for s in specs) if specs else 10
    # Practice checks go under a heading of their own after the graded tests (and only with their file)
    practice = [s for s in specs if is_practice(s)]
    shown = [s for s in practice if s.id not in unshown_practice(specs, results)]
    graded = [s for s in specs if s not in practice]
    for spec in graded + shown:
        if shown and spec is shown[0]:
            lines += ["", "Practice checks (0 points, beyond the handout's graded items):"]
        elif spec in graded and (spec is graded[0] or spec.part != graded[graded.index(spec) - 1].part):
            lines.append(part_heading(spec.part, [s for s in graded if s.part == spec.part], results, visibility))
        r = results[spec.id]
        pts = points_of(spec)
        status = r["status"]
        if concealed(spec, visibility, r):
            lines.append(f"{spec.id:<{width}}  {f'-/{pts}':>7}  {'-':>6}  {'HIDDEN':<7}  {spec.description}")
            lines.append(f"{'':<{width}}  {'':>7}  {'':>6}  {'':<7}  -> its result is shown "
                         f"{VISIBILITIES[visibility]}")
            continue
        if status == "pending":
            earned = f"-/{pts}"
            secs = "-"
        else:
            earned = f"{r['score']:g}/{pts}"
            secs = f"{r['seconds']:.1f}s"
        tag = {"passed": "PASS", "failed": "FAIL", "pending": "PENDING", "info": "INFO"}[status]
        extra = " [extra credit]" if spec.extra_credit and pts else ""
        lines.append(f"{spec.id:<{width}}  {earned:>7}  {secs:>6}  {tag:<7}  {spec.description}{extra}")
        if r["message"] and status != "passed":
            for i, text in enumerate(r["message"].splitlines()[:6]):
                lines.append(f"{'':<{width}}  {'':>7}  {'':>6}  {'':<7}  {'-> ' if i == 0 else '   '}{text}")
    lines.append("")

    hide = visibility != "visible"

    def total(kind):
        chosen = [s for s in specs if s.kind == kind and not s.extra_credit
                  and not (kind == "basic" and concealed(s, visibility, results[s.id]))]
        earned = sum(results[s.id]["score"] for s in chosen if results[s.id]["status"] != "pending")
        maximum = sum(points_of(s) for s in chosen)
        pending = sum(points_of(s) for s in chosen if results[s.id]["status"] == "pending")
        graded = [s for s in chosen if results[s.id]["status"] in ("passed", "failed") and points_of(s)]
        passed = sum(1 for s in graded if results[s.id]["status"] == "passed")
        return chosen, earned, maximum, pending, passed, len(graded)

    for kind in ("basic", "hidden"):
        chosen, earned, maximum, pending, passed, graded = total(kind)
        if not chosen:
            continue
        if kind == "hidden" and hide:
            vouched = [s for s in specs if not s.extra_credit and not s.hidden
                       and concealed(s, visibility, results[s.id])]
            also = (f", and {len(vouched)} basic tests worth {sum(points_of(s) for s in vouched)} points that they "
                    "vouch for" if vouched else "")
            lines.append(f"Hidden tests: {len(chosen)} tests worth {maximum} points{also}, their results shown "
                         f"{VISIBILITIES[visibility]}")
            continue
        line = f"Total {kind}: {earned:g}/{maximum} points ({passed} of {graded} graded tests passed"
        if pending:
            n_pending = sum(1 for s in chosen if results[s.id]["status"] == "pending")
            line += f"; {n_pending} tests worth {pending} points pending: {PENDING_MESSAGE}"
        lines.append(line + ")")
    core = [s for s in specs if not s.extra_credit]
    if core and any(s.kind == "basic" for s in core) and any(s.kind == "hidden" for s in core) and not hide:
        earned = sum(results[s.id]["score"] for s in core if results[s.id]["status"] != "pending")
        lines.append(f"Total: {earned:g}/{sum(points_of(s) for s in core)} points")
    extra = [s for s in specs if s.extra_credit]
    if extra:
        earned = sum(results[s.id]["score"] for s in extra if results[s.id]["status"] != "pending")
        lines.append(f"Extra credit: {earned:g}/{sum(s.points for s in extra)} points")
    return "\n".join(lines)


def part_heading(part, specs, results, visibility):
    """The summary's line above a part's tests (the handout's order): the points it earned of those shown, and how
    many of its points are pending or hidden from the student until later."""
    shown = [s for s in specs if not concealed(s, visibility, results[s.id]) and results[s.id]["status"] != "pending"]
    earned = sum(results[s.id]["score"] for s in shown)
    later = sum(points_of(s) for s in specs if s not in shown)
    extra = " (extra credit)" if all(s.extra_credit for s in specs) else ""
    return (f"part {part}{extra}: {earned:g}/{sum(points_of(s) for s in shown)} points"
            + (f", {later} more pending or shown later" if later else ""))


def results_json(specs, results, output, seconds, visibility="visible"):
    """Gradescope's results.json.  Every test carries its status explicitly in extra_data.status (passed,
    failed, info or pending) and, where Gradescope has a word for it, in status (passed or failed)."""
    tests = []
    unshown = unshown_practice(specs, results)
    for spec in [s for s in specs if s.id not in unshown]:
        r = results[spec.id]
        out = r["message"] or ("passed" if r["status"] == "passed" else "")
        if r.get("output") and r["status"] == "failed":
            out += f"\n\nOutput of your code:\n{r['output']}"
        entry = {"name": f"{spec.id}: {spec.description}", "number": spec.id, "score": r["score"],
                 "max_score": points_of(spec), "output": out,
                 "visibility": visibility if concealed(spec, visibility, r) else "visible",
                 "extra_data": {"status": r["status"]}}
        if r.get("reason") and r["status"] == "failed":  # a judge's kind of failure (protocol.REASONS)
            entry["extra_data"]["reason"] = r["reason"]
        if r["status"] in ("passed", "failed"):
            entry["status"] = r["status"]
        elif r["status"] == "info":
            entry["status"] = "passed"  # it ran; it has no points to lose
        if spec.extra_credit and points_of(spec):
            entry["tags"] = ["extra credit"]
        elif is_practice(spec):
            entry["tags"] = ["practice"]
        tests.append(entry)
    data = {"execution_time": int(round(seconds)), "output": output, "visibility": "visible",
            "stdout_visibility": "visible" if visibility == "visible" else "hidden", "tests": tests}
    if visibility == "visible":
        data["score"] = sum(t["score"] for t in tests)
    # else no top-level score: Gradescope adds up the tests' scores itself, and nothing of ours that a
    # student sees states the total of the hidden tests
    return data
