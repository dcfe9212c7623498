"""The two sides of every grader test (docs/security.md): beside the student's code a test only observes (the
observe_* functions of src/checks/), and its check, which alone decides, never touches student code.

Read from the source: every function a check can reach, through the names it calls in src/checks/ and grader.py,
is walked for what touches student code (ctx.student, graderUtil.call, ctx.report, the package `submission`, an
observe_* function).  At run time a judge's Context refuses ctx.student as well (grading/context.py); this test
finds the mistake before a grading does."""

import ast
import functools
import inspect
from pathlib import Path

import pytest

from conftest import SRC

import grader


def _modules(src=SRC):
    """{module name: source} of the grader's check modules and grader.py."""
    found = {f"checks.{p.stem}": p.read_text(encoding="utf-8") for p in sorted((src / "checks").glob("*.py"))}
    found["grader"] = (src / "grader.py").read_text(encoding="utf-8")
    return found


class Sides:
    """The module-level functions and classes of some modules, what each refers to, and what touches student
    code."""

    def __init__(self, sources):
        self.defs, self.imports = {}, {}
        for module, text in sources.items():
            tree = ast.parse(text)
            for node in tree.body:
                if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                    self.defs[module, node.name] = node
            for node in ast.walk(tree):  # imports inside functions too (checks import torch and each other late)
                if isinstance(node, ast.ImportFrom) and node.module:
                    for alias in node.names:
                        target = f"{node.module}.{alias.name}"
                        self.imports[module, alias.asname or alias.name] = (
                            (target, None) if target in sources else (node.module, alias.name))
                elif isinstance(node, ast.Import):
                    for alias in node.names:
                        self.imports[module, alias.asname or alias.name] = (alias.name, None)

    def resolve(self, module, name):
        """The (module, name) of a definition that `name`, used in `module`, refers to, or None."""
        if (module, name) in self.defs:
            return module, name
        return self.imports.get((module, name))

    def touches(self, module, node):
        """Why this definition's own body touches student code, or None."""
        for sub in ast.walk(node):
            if isinstance(sub, ast.Attribute) and sub.attr in ("student", "report"):
                return f"ctx.{sub.attr}"
            if isinstance(sub, ast.Name) and self.resolve(module, sub.id) == ("graderUtil", "call"):
                return "graderUtil.call (it runs a student's function)"
            if isinstance(sub, ast.Name) and sub.id.startswith("observe_"):
                return sub.id
            if isinstance(sub, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in sub.names] + ([sub.module] if isinstance(sub, ast.ImportFrom) else [])
                if any(n and n.split(".")[0] == "submission" for n in names):
                    return "the package submission"
        return None

    def reached(self, module, name):
        """Every definition (module, name) reaches, itself included, through the names its body uses."""
        seen, todo = set(), [(module, name)]
        while todo:
            here = todo.pop()
            if here in seen or here not in self.defs:
                continue
            seen.add(here)
            for sub in ast.walk(self.defs[here]):
                if isinstance(sub, ast.Name):
                    todo.append(self.resolve(here[0], sub.id))
                elif isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name):
                    target = self.resolve(here[0], sub.value.id)  # module.function, e.g. learned.check
                    if target and target[1] is None:
                        todo.append((target[0], sub.attr))
        return seen

    def problems(self, module, name):
        """'module.name -> ... touches X' for each definition reached from (module, name) that touches student code."""
        found = []
        for where in sorted(self.reached(module, name)):
            why = self.touches(where[0], self.defs[where])
            if why:
                found.append(f"{module}.{name} reaches {where[0]}.{where[1]}, which uses {why}")
        return found


SIDES = Sides(_modules())


def _unwrapped(fn):
    """A registered function, out of its functools.partial and, for a hidden test's judge-only function
    (graderUtil.judge_only), the function of the checks module it stands for, imported."""
    import importlib

    while isinstance(fn, functools.partial):
        fn = fn.func
    if hasattr(fn, "judge_only"):
        module, name = fn.judge_only
        fn = getattr(importlib.import_module(module), name)
    return fn


def _judges():
    """(test id, module, name) of every registered test's check, unwrapped (_unwrapped)."""
    for tid, spec in grader.REGISTRY.items():
        fn = _unwrapped(spec.check)
        yield tid, fn.__module__, fn.__name__


def test_every_test_is_decided_by_a_check_of_the_checks_package():
    for tid, module, name in _judges():
        assert module.startswith("checks.") and name.startswith("check_"), f"{tid} is decided by {module}.{name}"
        assert (module, name) in SIDES.defs, f"{tid}: {module}.{name} is not a module-level function"


def test_no_check_reaches_student_code():
    """Every check_* function of src/checks/ (the registered ones and the written part's, which a check runs by
    name on a replay) reaches nothing that touches student code."""
    checks = [key for key in SIDES.defs if key[0].startswith("checks.") and key[1].startswith("check_")]
    assert len(checks) > 25
    problems = [p for module, name in checks for p in SIDES.problems(module, name)]
    assert not problems, "\n".join(problems)


def test_what_runs_beside_the_student_is_named_observe():
    """The functions that touch student code are the observing side's: observe_*, and the helpers they build and
    run the student's objects with; none of them is called check_*."""
    touching = {key for key in SIDES.defs
                if any(SIDES.touches(where[0], SIDES.defs[where]) for where in SIDES.reached(*key))}
    assert {("checks.training", "observe_finetune"), ("checks.dataset", "observe_examples")} <= touching
    assert not [key for key in touching if key[1].startswith("check_")]


@pytest.mark.parametrize("body, reason", [
    ("    return helper(ctx)\n\ndef helper(ctx):\n    return ctx.student('model')\n", "ctx.student"),
    ("    return observe_it(ctx)\n\ndef observe_it(ctx):\n    return 1\n", "observe_it"),
    ("    from submission import model\n", "the package submission"),
    ("    return call('f', None, len, report)\n", "graderUtil.call"),
])
def test_the_walk_finds_a_check_that_reaches_student_code(body, reason):
    source = "from graderUtil import call\n\ndef check_it(ctx, report):\n" + body
    problems = Sides({"checks.planted": source}).problems("checks.planted", "check_it")
    assert problems and reason in problems[0]


def test_registered_functions_are_where_the_walk_looks():
    """The walk reads src/checks/ and grader.py: the checks it judges are the ones the grader runs."""
    for tid, module, name in _judges():
        fn = _unwrapped(grader.REGISTRY[tid].check)
        assert Path(inspect.getsourcefile(fn)).resolve().is_relative_to(SRC.resolve() / "checks")


def test_a_test_without_a_check_is_refused_when_it_is_registered():
    """A verdict reached beside student code could be the student's code's: grader_test refuses a test without a
    check at once, so that grader.py cannot even be imported with one."""
    from grading.registry import REGISTRY, grader_test

    for check in (None, "check_padding"):
        with pytest.raises(TypeError, match="9z-0-basic has no check"):
            grader_test("9z-0-basic", "a test without a judge", check=check, observe=lambda ctx: None)
    assert "9z-0-basic" not in REGISTRY
    assert all(callable(spec.check) for spec in grader.REGISTRY.values())
