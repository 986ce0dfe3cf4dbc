"""The library's layout, over every .py file under nnfuzz/: none is over 400 lines, and no nnfuzz module
imports, directly or through others, itself.

An import is any ``import``/``from ... import`` statement in the module, at module level or inside a
function (a function-level import closes a cycle just as well, only later); relative imports are
resolved; imports under ``if TYPE_CHECKING:`` are skipped (they never run). ``from pkg import name``
depends on ``pkg.name`` where that is a module, else on ``pkg``. Python also runs the ``__init__`` of
each enclosing package, but that is not an import the code states, so it is not an edge here: a
package may re-export its own modules."""
import ast
import pathlib
from typing import Dict, List, Set

import nnfuzz

ROOT = pathlib.Path(nnfuzz.__file__).parent
MAX_LINES = 400


def module_files(root: pathlib.Path) -> Dict[str, pathlib.Path]:
    """``{dotted module name: file}`` of every .py file under ``root`` (a package's ``__init__.py`` is
    the package's name)."""
    mods = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        mods[".".join(parts)] = path
    return mods


def _type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or \
        (isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _imports(node: ast.AST):
    """Every import statement under ``node``, at any depth, except those in a TYPE_CHECKING branch."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _type_checking(child):
            for alt in child.orelse:
                yield from _imports_in(alt)
        else:
            yield from _imports_in(child)


def _imports_in(node: ast.AST):
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        yield node
    yield from _imports(node)


def _module_of(name: str, mods) -> str:
    """The longest prefix of dotted ``name`` that is one of ``mods`` ("" if none)."""
    parts = name.split(".")
    while parts and ".".join(parts) not in mods:
        parts.pop()
    return ".".join(parts)


def import_graph(mods: Dict[str, pathlib.Path]) -> Dict[str, Set[str]]:
    """``{module: the modules of ``mods`` it imports}``, one entry per file."""
    graph = {}
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        deps = set()
        for node in _imports(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                if node.level:
                    base = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                    base = ".".join(base + ([node.module] if node.module else []))
                else:
                    base = node.module
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            deps.update(m for m in (_module_of(t, mods) for t in targets) if m and m != name)
        graph[name] = deps
    return graph


def cycles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """The strongly connected components of ``graph`` with more than one module (Tarjan's algorithm,
    iterative), each as a sorted list."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    found = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def a_cycle(graph: Dict[str, Set[str]], component: List[str]) -> List[str]:
    """One import cycle through ``component``'s first module, as the modules in import order, ending
    where it starts: ``[a, b, a]`` says a imports b and b imports a."""
    inside, start = set(component), component[0]
    path, seen = [start], {start}
    todo = [iter(sorted(graph[start] & inside))]
    while todo:
        w = next(todo[-1], None)
        if w is None:
            todo.pop()
            path.pop()
        elif w == start:
            return path + [start]
        elif w not in seen:
            seen.add(w)
            path.append(w)
            todo.append(iter(sorted(graph[w] & inside)))
    raise AssertionError(f"{component} is no cycle")


def test_no_nnfuzz_file_is_over_400_lines():
    files = sorted(ROOT.rglob("*.py"))
    assert len(files) > 100, f"only {len(files)} files under {ROOT}"
    long = [(str(p.relative_to(ROOT.parent)), n) for p in files if (n := len(p.read_text().splitlines())) > MAX_LINES]
    assert not long, f"files over {MAX_LINES} lines (split each along a seam, named for what each part holds): {long}"


def test_no_import_cycle_among_nnfuzz_modules():
    mods = module_files(ROOT)
    graph = import_graph(mods)
    assert len(graph) == len(list(ROOT.rglob("*.py"))), "a file was not walked (two files with one module name?)"
    found = [a_cycle(graph, c) for c in cycles(graph)]
    assert not found, f"import cycles (each module imports the next): {found}"


def test_the_cycle_finder_sees_function_level_and_relative_imports(tmp_path):
    pkg = tmp_path / "toy"
    (pkg / "sub").mkdir(parents=True)
    files = {
        "__init__.py": "from toy.a import A\n",
        "a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from toy import c\nA = 1\n"
                "def f():\n    from .sub import b\n",
        "sub/__init__.py": "",
        "sub/b.py": "import toy.sub.d\n",
        "sub/d.py": "from .. import a\n",
        "c.py": "from toy.a import A\n",
    }
    for rel, text in files.items():
        (pkg / rel).write_text(text)
    mods = module_files(pkg)
    graph = import_graph(mods)
    assert graph["toy.a"] == {"toy.sub.b"}                     # function level counts, TYPE_CHECKING not
    assert graph["toy.sub.d"] == {"toy.a"}                     # `from .. import a`: the module toy.a
    assert graph["toy.c"] == {"toy.a"} and graph["toy"] == {"toy.a"}
    assert cycles(graph) == [["toy.a", "toy.sub.b", "toy.sub.d"]]
    assert a_cycle(graph, ["toy.a", "toy.sub.b", "toy.sub.d"]) == ["toy.a", "toy.sub.b", "toy.sub.d", "toy.a"]
    (pkg / "a.py").write_text("A = 1\n")
    assert cycles(import_graph(mods)) == []
