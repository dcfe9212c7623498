"""Which basic tests count: the vouching rule.  A basic test whose data only the student's process reports counts
at grading time only where the hidden comparisons named in its vouched_by vouch for that data (docs/security.md,
"Forged reports")."""


def vouch(specs, results):
    """A basic test's data comes from the student's process, which can report anything: code that writes its
    own reports passes a check of shapes and causality with zero tensors.  A hidden comparison's data must match
    a computation at the reference's weights, which only the work gives.  So a test that names such comparisons
    (vouched_by) counts only if each that ran vouches: it passed, or it failed on outputs that still came from a
    genuine block (its judge said so, "vouches": a block that computes a cross-attention block from its weights,
    with other layer norms, residual or MLP than the handout's).  Where none ran (no reference: the student's own
    run) it stands alone.  Its result records the comparisons that ran ("vouched_by")."""
    for spec in specs:
        r = results.get(spec.id)
        ran = [v for v in spec.vouched_by if results.get(v, {}).get("status") in ("passed", "failed")]
        if r is None or not ran or r["status"] not in ("passed", "failed"):
            continue
        r["vouched_by"] = ran
        refused = [v for v in ran if results[v]["status"] == "failed" and results[v].get("vouches") is not True]
        if refused and r["status"] == "passed":
            r.update(status="failed", score=0,
                     message=f"passed on its own, but it counts only when {' and '.join(refused)} finds that your "
                             "code computes what it compares, from the same weights, and it did not: shapes and "
                             "causality are judged on what your code's process reports, which only that "
                             "comparison confirms")
