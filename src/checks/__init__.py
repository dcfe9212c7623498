"""The grader's checks: what grader.py's tests observe beside the student's code and how their judges decide.
One topic a module, each holding both sides of its tests (docs/security.md says why the two sides are apart):

  dataset       part (e): CharCorruptionDataset's examples, and the statistics that judge them
  training      parts (c), (f), (g): what initialize_vanilla_model, finetune, pretrain and train build and call
  perceiver     part (g): the down and up blocks probed by shape and causality, the perceiver model
  same_weights  the hidden comparisons: the student's model and blocks against the reference at the same weights
  predictions   the prediction files, judged with the params that produced them
  params        a params file read as the course's model (the judge's, without the student's code)
  decoder       that model's forward pass and greedy answers, in plain tensor operations
  learned       whether those params learned their task (training questions, the corpus, the held-out people)
  bars          comparisons of a measured number against a bar, each failing closed (NaN, inf, not a number)
  written       the written part's constructions (attention_exploration.py)
  replay        how a written check runs twice: recorded beside the student's code, replayed in the judge
  readings      the readings of a perceiver block the grader accepts

same_weights, params, decoder, learned and readings are the hidden tests' judges' own (grader.JUDGE_ONLY_FILES): the
Gradescope bundle and the instructor's class grading hold them; a student starter does not.
"""
