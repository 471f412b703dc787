"""Check the package's layers: no import runs back up, no circle, no module that only re-exports.

    python tools/check_layers.py            # exit 1 and list the violations, if any
    python tools/check_layers.py --graph    # also print the import graph between units

The package is cut into *units*: each subpackage, each top-level module, and the root
``__init__``. Each unit sits on a layer (``LAYERS``):

0. shared core: the root's private modules (``_validation``, ``_wrapping``, ``_parallel``, ...),
   ``evalues`` (betting, testing, Learn-then-Test p-values) and ``risks``;
1. evaluation: ``evaluation`` (scoring back-ends, stores, tables) and ``datasets``;
2. methods, side by side: ``selective``, ``autoeval``, ``online``, ``bandits``;
3. faces: ``plotting``, ``studies``, ``cli``, ``demo``, ``__main__``.

Rules, checked on every ``import`` / ``from ... import`` in the package's source (at any depth,
deferred and ``TYPE_CHECKING`` imports included: an arrow is an arrow):

* a unit imports only units on its own layer or below (the root ``__init__`` only layer 0, so
  that the package imports in any order);
* the graph between units has no circle;
* a unit on layer 2 or 3 is reached from another unit only through its public names (no module
  path component and no imported name starting with ``_``): private helpers are shared only by
  the shared layers (0 and 1);
* no module other than a package's ``__init__`` consists of imports alone (a re-export module: a
  second home for names that live elsewhere).
"""

import argparse
import ast
import sys
from pathlib import Path

PACKAGE = "sklearn_riskcontrol"
ROOT = Path(__file__).resolve().parents[1] / PACKAGE

LAYERS = {
    "evalues": 0, "risks": 0,
    "evaluation": 1, "datasets": 1,
    "selective": 2, "autoeval": 2, "online": 2, "bandits": 2,
    "plotting": 3, "studies": 3, "cli": 3, "demo": 3, "__main__": 3,
}
SHARED = 1  # units on this layer or below may share private names


def module_name(path):
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def unit(module):
    """``sklearn_riskcontrol.selective._score`` -> ``selective``; the root -> ``__init__``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def layer(u):
    if u == "__init__" or (u.startswith("_") and u != "__main__"):
        return 0  # the root and its private modules
    if u not in LAYERS:
        raise SystemExit(f"tools/check_layers.py: unit {u!r} has no layer: add it to LAYERS")
    return LAYERS[u]


def imports(path, module):
    """``(target module, imported names, line)`` of every import of the package in ``path``."""
    tree = ast.parse(path.read_text(), filename=str(path))
    is_package = path.name == "__init__.py"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == PACKAGE:
                    yield alias.name, [], node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != PACKAGE:
                continue
            names = [a.name for a in node.names]
            if target == PACKAGE or node.module is None:  # `from . import x`: x may be a module
                for name in names:
                    yield (f"{target}.{name}" if not name[0].isupper() else target), [], node.lineno
            else:
                yield target, names, node.lineno


def only_reexports(path):
    body = ast.parse(path.read_text()).body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]

    def is_all(node):
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        return any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets)

    return bool(body) and all(isinstance(n, (ast.Import, ast.ImportFrom))
                              or (isinstance(n, (ast.Assign, ast.AnnAssign)) and is_all(n))
                              for n in body)


def check():
    """``(violations, edges)``: messages, and ``{(from unit, to unit): first location}``."""
    violations, edges = [], {}
    for path in sorted(ROOT.rglob("*.py")):
        module = module_name(path)
        src = unit(module)
        where = path.relative_to(ROOT.parent)
        if path.name != "__init__.py" and only_reexports(path):
            violations.append(f"{where}: only re-exports names that live elsewhere (a second "
                              "home): import them from their home and delete this module")
        for target, names, line in imports(path, module):
            dst = unit(target)
            if dst == src:
                continue
            edges.setdefault((src, dst), f"{where}:{line}")
            if layer(dst) > layer(src):
                violations.append(f"{where}:{line}: {src} (layer {layer(src)}) imports {target} "
                                  f"(layer {layer(dst)}): an arrow back up")
            private = [p for p in target.split(".")[1:] if p.startswith("_")] + \
                      [n for n in names if n.startswith("_")]
            if layer(dst) > SHARED and private:
                violations.append(f"{where}:{line}: {src} imports private {private} from "
                                  f"{target}: another method's or face's internals; use its "
                                  "public API")
    violations += [f"circle between units: {' -> '.join(c)}" for c in _circles(edges)]
    return violations, edges


def _circles(edges):
    graph = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
    found, state = [], {}

    def visit(node, stack):
        state[node] = "open"
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                found.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return found


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graph", action="store_true", help="print the graph between units")
    args = parser.parse_args(argv)
    violations, edges = check()
    if args.graph:
        for (a, b), where in sorted(edges.items(), key=lambda e: (layer(e[0][0]), e[0])):
            print(f"{a} (layer {layer(a)}) -> {b} (layer {layer(b)})   e.g. {where}")
    for v in violations:
        print(v)
    print(f"{len(violations)} violation(s) in {sum(1 for _ in ROOT.rglob('*.py'))} modules")
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
