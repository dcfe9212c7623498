"""The readings of a perceiver block that the grader accepts: the hidden tests' judges alone read them (the
comparison at the same weights, same_weights; a params file read as the course's model, params).  Like those
judges, this module ships with the hidden tests (grader.JUDGE_ONLY_FILES), not with the student starter."""

# The readings of a perceiver block's attention sub-layer that the handout and the course's hints allow, in one
# place for the two judges that follow them: same_weights.block_readings computes each from the
# reference's layers, checks.params maps a submitted params file onto each.  A reading is (layer norm on the
# query, layer norm on the keys/values, where the residual around the cross-attention starts).  The course's
# hints put the layer norm on C (down block) and on y (up block); a copy of Block puts it on the attention's
# input (the keys/values of the down block, the query of the up block); so either or both.  The residual may
# start from the query, from its normalised form (where the query is normalised) or nowhere ("none"): the
# handout's equations (3) and (4) define the block's first output as the cross-attention alone, and Block's
# residual cannot be copied as it is into the down block (T rows in, m out).  The readings with a residual come
# first: a prediction file's judge takes the first reading that agrees with the file.
ATTENTION_NORMS = ((True, False), (False, True), (True, True))
READINGS = tuple([(q, kv, start) for q, kv in ATTENTION_NORMS
                  for start in (("query", "normalised query") if q else ("query",))]
                 + [(q, kv, "none") for q, kv in ATTENTION_NORMS])
