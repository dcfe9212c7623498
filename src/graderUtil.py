"""The grader's harness under the course's name: grader.py holds the tests, the package grading/ the machinery
(grading/__init__.py says which module does what).  This module re-exports what grader.py, its checks and the
instructor's tools use; the instructor's tests import the grading modules they test."""

from grading.cli import main
from grading.cleanup import remove_folder
from grading.context import call, seed_everything
from grading.points import (describe_row, identity_key, load_points, normalized_sha256, recognising_row,
                            select_thresholds)
from grading.registry import REGISTRY, Fail, Mismatch, configure, grader_test, grading_paths, judge_only
from grading.report import PENDING_MESSAGE
from grading.sandbox import reclaim
from grading.users import WORKER_UIDS, privileged, readable_by

__all__ = ["Fail", "Mismatch", "PENDING_MESSAGE", "REGISTRY", "WORKER_UIDS", "call", "configure", "describe_row",
           "grader_test", "grading_paths", "identity_key", "judge_only", "load_points", "main", "normalized_sha256",
           "privileged", "readable_by", "reclaim", "recognising_row", "remove_folder", "seed_everything",
           "select_thresholds"]
