"""What the scripts of src/ run on (run.py, demo.py, examples.py, collect_submission.py, london_baseline.py,
plot_losses.py): the driver's side of the assignment, outside the student's files.  One job a module:

  course       the course's facts: model size, bottleneck, data files, the run.sh targets and the deliverables
               (run.py, the grader, collect_submission, the demo and the instructor's tools read them here)
  training     training runs around the student's Trainer: the numerics per device, compile, the loss log, the
               TensorBoard writer, the per-epoch checkpoint and --resume
  watch        every training run watches its learning: a loss that is not a number stops it, a plateau warns
  decoding     answering the questions: the course's greedy loop and the batched one with a key/value cache
  params_file  reading, checking and loading parameter files (one sentence per problem)
  parts        the checks that a student part is still empty, named in one sentence
  fileio       atomic writes and the TSV reader
  upload       which file of an upload is graded (collect_submission, grade_class and Gradescope read it)
  datafolder   a data folder checked against the course's shape, and its thresholds row (the instructor's
               release, grade_class and experiment; the starter leaves it out)

Nothing here is imported on import of the package: the grader's copy holds course.py, fileio.py and baseline.py
of it (grader.GRADING_FILES), and most of the other modules import the student's package.
"""
