"""The grader's harness under the course's name: grader.py holds the tests, the package grading/ the machinery
(grading/__init__.py says which module does what).  This module re-exports what grader.py, its checks, the
instructor's tools and tests use."""

from grading.cli import main
from grading.context import Context, call, seed_everything
from grading.points import (count_lines, describe_row, identity_key, load_points, normalized_sha256, prediction_lines,
                            read_prediction_lines, read_tsv_rows, recognising_row, select_thresholds)
from grading.process import Worker
from grading.protocol import REPORT_BYTES, REPORT_MEMBERS, report_problem
from grading.registry import REGISTRY, Fail, Mismatch, Spec, configure, grader_test, grading_paths
from grading.report import PENDING_MESSAGE
from grading.runner import Runner
from grading.sandbox import reclaim
from grading.cleanup import SHARED_FOLDERS, remove_folder, remove_user_files
from grading.users import WORKER_UIDS, kill_user_processes, privileged, readable_by, unused_uids, user_pids
from grading.worker import WORKER_PROCESSES

__all__ = ["Context", "Fail", "Mismatch", "PENDING_MESSAGE", "REGISTRY", "REPORT_BYTES", "REPORT_MEMBERS", "Runner",
           "SHARED_FOLDERS", "Spec", "WORKER_PROCESSES", "WORKER_UIDS", "Worker", "call", "configure", "count_lines",
           "describe_row", "grader_test", "grading_paths", "identity_key", "kill_user_processes", "load_points",
           "main", "normalized_sha256", "prediction_lines", "privileged", "read_prediction_lines", "read_tsv_rows",
           "readable_by", "reclaim", "recognising_row", "remove_folder", "remove_user_files", "report_problem",
           "seed_everything", "select_thresholds", "unused_uids", "user_pids"]
