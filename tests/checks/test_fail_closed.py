"""Every check fails closed: no comparison of a measured number against a bar can pass a NaN, an inf or a
non-number (checks/bars.py says why and holds the comparisons that do it).

Read from the source, as test_sides.py reads it: every order comparison (<, <=, >, >=) in src/checks/ outside
bars.py must compare values that cannot be floats, as far as the walk can see: int and str literals, len(), int(),
.count(), .numel(), .size(), .dim(), shapes, the kit's UPPER_CASE constants, sets and tuples of those, arithmetic
and min/max/sum over them, and names that the same function binds only to such values (a loop over range()
included).  A float of any kind is compared through bars.at_least / at_most / within, which check it first.  A
comparison that orders things without judging them (choosing the best of several readings, say) says so with the
comment `# not a bar` on its line."""

import ast
from pathlib import Path

import pytest

from conftest import SRC

CHECKS = SRC / "checks"
ORDER = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)
INT_CALLS = {"len", "int", "ord", "range", "bars.number", "number"}  # int() of NaN raises: it never passes
INT_METHODS = {"count", "numel", "size", "dim", "index", "bit_length"}
CONTAINERS = {"set", "frozenset", "tuple", "sorted", "list"}
PRAGMA = "# not a bar"


def _name(func):
    """'len', 'bars.number', 'x.size' for a call's function, '' where it is not a plain name."""
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return f"{func.value.id}.{func.attr}"
    return ""


class Scope:
    """The names one function (or the module) binds, with what it binds them to."""

    def __init__(self, node, outer=None):
        self.outer, self.bound = outer, {}
        args = node.args if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) else None
        if args:
            for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
                if a is not None:
                    self.bound.setdefault(a.arg, []).append(None)  # a parameter: could be anything
        for sub in self._own(node):
            if isinstance(sub, ast.Assign):
                for target in sub.targets:
                    self._bind(target, sub.value)
            elif isinstance(sub, (ast.AugAssign, ast.AnnAssign)) and sub.value is not None:
                self._bind(sub.target, sub.value if isinstance(sub, ast.AnnAssign) else
                           ast.BinOp(sub.target, sub.op, sub.value))
            elif isinstance(sub, ast.NamedExpr):
                self._bind(sub.target, sub.value)
            elif isinstance(sub, (ast.For, ast.comprehension)):
                self._bind(sub.target, sub.iter, loop=True)
            elif isinstance(sub, (ast.With,)):
                for item in sub.items:
                    if item.optional_vars is not None:
                        self._bind(item.optional_vars, None)
            elif isinstance(sub, ast.ExceptHandler) and sub.name:
                self.bound.setdefault(sub.name, []).append(None)

    @staticmethod
    def _own(node):
        """The nodes of this scope, not of the functions defined inside it."""
        stack = list(ast.iter_child_nodes(node))
        while stack:
            sub = stack.pop()
            yield sub
            if not isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                stack.extend(ast.iter_child_nodes(sub))

    def _bind(self, target, value, loop=False):
        if isinstance(target, ast.Name):
            if loop:  # a loop variable: an int only where it runs over range()
                value = value if isinstance(value, ast.Call) and _name(value.func) == "range" else None
            self.bound.setdefault(target.id, []).append(value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            values = value.elts if (isinstance(value, (ast.Tuple, ast.List)) and not loop
                                    and len(value.elts) == len(target.elts)) else [None] * len(target.elts)
            for t, v in zip(target.elts, values):
                self._bind(t, v)

    def values(self, name):
        scope = self
        while scope is not None:
            if name in scope.bound:
                return scope.bound[name]
            scope = scope.outer
        return [None]


class Walk:
    """The order comparisons of one module on values that may be floats: [(line, source)]."""

    def __init__(self, text):
        self.text, self.lines = text, text.splitlines()
        self.found = []
        self._visit(ast.parse(text), None)

    def _visit(self, node, outer):
        scope = Scope(node, outer)
        for sub in Scope._own(node):
            if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                self._visit(sub, scope)
            elif isinstance(sub, ast.Compare) and any(isinstance(op, ORDER) for op in sub.ops):
                if PRAGMA in self.lines[sub.lineno - 1]:
                    continue
                if not all(self.safe(e, scope, set()) for e in [sub.left, *sub.comparators]):
                    self.found.append((sub.lineno, ast.get_source_segment(self.text, sub)))

    def safe(self, e, scope, seen):
        """Whether e cannot be a float, as far as the walk can see."""
        if isinstance(e, ast.Constant):
            return isinstance(e.value, (int, str)) or (isinstance(e.value, float) and e.value == e.value)
        if isinstance(e, ast.Name):
            if e.id.isupper():  # a constant of the kit's
                return True
            if e.id in seen:
                return True  # x = x + 1: decided by the other bindings
            values = scope.values(e.id)
            return all(v is not None and self.safe(v, scope, seen | {e.id}) for v in values)
        if isinstance(e, ast.Attribute):
            return e.attr.isupper() or e.attr in ("shape",)
        if isinstance(e, ast.Subscript):
            base = e.value
            return ((isinstance(base, ast.Attribute) and base.attr == "shape")
                    or (isinstance(base, ast.Name) and base.id.isupper())
                    or self.safe_container(base, scope, seen))
        if isinstance(e, ast.UnaryOp):
            return self.safe(e.operand, scope, seen)
        if isinstance(e, ast.BinOp):
            return self.safe(e.left, scope, seen) and self.safe(e.right, scope, seen)
        if isinstance(e, ast.IfExp):
            return self.safe(e.body, scope, seen) and self.safe(e.orelse, scope, seen)
        if isinstance(e, ast.Compare):  # a bool
            return True
        if isinstance(e, (ast.Set, ast.SetComp)):
            return True  # set comparisons are inclusion, not order
        if isinstance(e, ast.Tuple):
            return all(self.safe(x, scope, seen) for x in e.elts)
        if isinstance(e, ast.Call):
            name = _name(e.func)
            if name in INT_CALLS or name in ("set", "frozenset"):
                return True
            if isinstance(e.func, ast.Attribute) and e.func.attr in INT_METHODS:
                return True
            if name in ("min", "max", "sum", "abs"):
                return all(self.safe_container(a, scope, seen) if name != "abs" else self.safe(a, scope, seen)
                           for a in e.args if not isinstance(a, ast.Starred))
        return False

    def safe_container(self, e, scope, seen):
        """Whether every element of the iterable e cannot be a float."""
        if isinstance(e, (ast.GeneratorExp, ast.ListComp, ast.SetComp)):
            inner = Scope(ast.Module(body=[], type_ignores=[]), scope)
            for gen in e.generators:
                inner._bind(gen.target, gen.iter, loop=True)
            return self.safe(e.elt, inner, seen)
        if isinstance(e, (ast.List, ast.Tuple, ast.Set)):
            return all(self.safe(x, scope, seen) for x in e.elts)
        if isinstance(e, ast.Call) and _name(e.func) in CONTAINERS and e.args:
            return self.safe_container(e.args[0], scope, seen)
        if isinstance(e, ast.Name) and not e.id.isupper() and e.id not in seen:
            values = scope.values(e.id)
            return all(v is not None and self.safe_container(v, scope, seen | {e.id}) for v in values)
        return self.safe(e, scope, seen)


def fail_open(path):
    return Walk(Path(path).read_text(encoding="utf-8")).found


def test_no_check_compares_a_number_that_can_be_nan():
    found = {p.name: fail_open(p) for p in sorted(CHECKS.glob("*.py")) if p.name != "bars.py"}
    found = {name: f for name, f in found.items() if f}
    assert not found, "comparisons that a NaN passes; use checks.bars: " + "; ".join(
        f"{name}:{line}: {src}" for name, rows in found.items() for line, src in rows)


@pytest.mark.parametrize("source", [
    # the learned check as it was: gain < bar passes a NaN gain
    "def check(r, rule):\n    gain = r['question_gain']\n    if gain < float(rule['bar']):\n        raise Fail('x')\n",
    # an accuracy from a division, a tolerance on a tensor, a parameter, a float from a tensor
    "def f(correct, total):\n    acc = correct / total\n    return acc >= 0.1\n",
    "def f(a, b, tol):\n    return (a - b).abs().max() > tol\n",
    "def f(x):\n    return x > 3\n",
    "def f(t):\n    error = float(t.norm())\n    if error > 1e-3:\n        raise Fail('x')\n",
    "def f(rows):\n    for r in rows:\n        if r < 0:\n            return 1\n",
    "def f(t):\n    top = t.abs().max().item()\n    return 0.8 <= top <= 2\n",
])
def test_the_walk_finds_a_planted_fail_open_comparison(source):
    assert Walk(source).found, source


@pytest.mark.parametrize("source", [
    "def f(xs):\n    return len(xs) > 1\n",
    "def f(xs, n):\n    k = len(xs)\n    k += 1\n    return k >= int(n)\n",
    "def f(xs):\n    return min(len(x) for x in xs) < 4\n",
    "def f(n):\n    for i in range(n):\n        if i > 2:\n            return i\n",
    "def f(x, bar):\n    return bars.at_least(x, bar, 'x')\n",
    "def f(x):\n    return number(x, 'x') > 2\n",
])
def test_the_walk_passes_comparisons_of_whole_numbers(source):
    assert not Walk(source).found, source
