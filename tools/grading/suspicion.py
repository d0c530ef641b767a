"""What in a submission looks like an attempt to fool the grader: a report for the instructor, never a penalty.

    suspicions(submission, release) -> list of lines: "cell N, line L: <what> (<the code>)"
    skip_tags(submission, release) -> list of (cell index, tag): a grading skip tag on a cell that is not a
                                      released demonstration (the graders would skip a check so tagged)

Both compare with the notebook the students were given (the release): only a cell whose source differs
from every released cell is the student's own, and only the student's own cells are read (not a check
cell: the graders run the released check whatever the submission holds, and an edited check is reported
as such). A code cell is
parsed (Python's ast; IPython's magics and shell lines are left out first) and these are reported:

- attribute assignment on a module the checks use (numpy, torch, math, builtins, IPython, otter, nbgrader,
  sys, os, inspect): `np.allclose = ...`, `setattr(np, ...)`, `builtins.__import__ = ...`;
- IPython hooks that change what a cell runs or what its failure reports: input transformers, AST
  transformers, custom exception handlers, event callbacks;
- frame walking: `sys._getframe`, the `inspect` module, `f_back`, `f_globals`, `f_locals`, `gi_frame`;
- a redefinition of the book's check helpers (check_form, check_array, check_weights, check_equal and
  their parts, compare_with_note) or of a grader's entry point (`grader.check`, `Notebook`);
- a class that defines comparison or array-protocol methods (`__eq__`, `__array_ufunc__`,
  `__torch_function__`, ...) or derives from a number or array type;
- ending the process or the kernel: `os._exit`, `sys.exit`, `exit()`, `quit()`, `os.kill`, `signal`;
- file and process access: `open` of an absolute path or one with `..`, `os` and `shutil` file functions,
  `subprocess`, `os.system`, `glob` of an absolute path;
- the markers of nbgrader's hidden tests in a cell of the student's.

A cell that does not parse is reported as such (a student's syntax error is not cheating, but the
instructor may want to look).
"""
from __future__ import annotations

import ast
import re

from tools.grading import grading_runtime as runtime

GUARDED_MODULES = {"np", "numpy", "torch", "math", "builtins", "__builtins__", "IPython", "otter", "nbgrader",
                   "sys", "os", "inspect", "F", "nn"}
CHECK_HELPERS = {"check_form", "check_array", "check_weights", "check_equal", "_as_values", "_checked_values", "_index",
                 "compare_with_note", "note_verdict"}
COMPARISON_METHODS = {"__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__bool__", "__hash__",
                      "__array__", "__array_ufunc__", "__array_function__", "__array_priority__",
                      "__torch_function__", "__float__", "__int__", "__index__", "__abs__", "__sub__", "__rsub__"}
NUMBER_BASES = {"int", "float", "complex", "ndarray", "Tensor", "np.ndarray", "numpy.ndarray", "torch.Tensor",
                "generic", "np.generic", "np.float64", "float64"}
IPYTHON_HOOKS = {"input_transformers_cleanup", "input_transformers_post", "input_transformer_manager",
                 "ast_transformers", "set_custom_exc", "register", "set_hook", "custom_exceptions", "showtraceback",
                 "run_cell", "run_cell_magic", "events"}
# names that only IPython's hooks have: reported wherever they are read
IPYTHON_ONLY = {"input_transformers_cleanup", "input_transformers_post", "input_transformer_manager",
                "ast_transformers", "set_custom_exc", "custom_exceptions"}
FRAME_ATTRIBUTES = {"f_back", "f_globals", "f_locals", "gi_frame", "tb_frame", "cr_frame"}
FRAME_FUNCTIONS = {"_getframe", "currentframe", "stack", "getouterframes", "getinnerframes", "trace",
                   "_current_frames", "settrace", "setprofile"}
EXITS = {("os", "_exit"), ("sys", "exit"), ("os", "kill"), ("os", "abort"), ("os", "killpg")}
FILE_FUNCTIONS = {("os", "listdir"), ("os", "scandir"), ("os", "walk"), ("os", "remove"), ("os", "unlink"),
                  ("os", "rename"), ("os", "chdir"), ("os", "system"), ("os", "popen"), ("shutil", "copy"),
                  ("shutil", "copy2"), ("shutil", "copyfile"), ("shutil", "rmtree"), ("shutil", "move"),
                  ("os", "makedirs"), ("os", "mkdir")}
HIDDEN_MARKERS = re.compile(f"{re.escape(runtime.HIDDEN_BEGIN)}|{re.escape(runtime.HIDDEN_END)}")
SKIP_TAGS = {runtime.SKIP_TAG, "skip-execution", "nbval-skip"}


def _dotted(node) -> str:
    """`np.testing.assert_allclose` -> "np.testing.assert_allclose"; "" for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    if isinstance(node, ast.Call):
        inner = _dotted(node.func)
        return (inner + "()." + ".".join(reversed(parts))) if inner and parts else (inner + "()" if inner else "")
    return ""


def _code(source: str) -> str:
    """The cell as Python: IPython's magics and shell escapes left out (each replaced by `pass`)."""
    lines = []
    for line in source.split("\n"):
        stripped = line.lstrip()
        lines.append(line[:len(line) - len(stripped)] + "pass" if stripped.startswith(("%", "!")) else line)
    return "\n".join(lines)


def _path_argument(call: ast.Call) -> bool:
    """Whether a call's first argument is a literal path outside the notebook's folder."""
    if not call.args or not isinstance(call.args[0], ast.Constant) or not isinstance(call.args[0].value, str):
        return False
    path = call.args[0].value
    return path.startswith(("/", "~")) or ".." in path.replace("\\", "/").split("/")


def cell_findings(source: str) -> list[tuple[int, str]]:
    """(line, what) for everything suspect in one code cell of a student's."""
    found = []
    for k, line in enumerate(source.split("\n"), start=1):
        if HIDDEN_MARKERS.search(line):
            found.append((k, "the marker of nbgrader's hidden tests"))
    try:
        tree = ast.parse(_code(source))
    except SyntaxError as error:
        return found + [(error.lineno or 1, "the cell does not parse as Python")]
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 1)
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                name = _dotted(target)
                root = name.split(".", 1)[0].split("(", 1)[0]
                if isinstance(target, ast.Attribute) and root in GUARDED_MODULES:
                    found.append((line, f"assigns to {name}, an attribute of a module the checks use"))
                if isinstance(target, ast.Attribute) and target.attr in IPYTHON_ONLY | {"showtraceback"}:
                    found.append((line, f"changes IPython's {target.attr}"))   # (not `self.events = ...`)
                if isinstance(target, ast.Name) and target.id in CHECK_HELPERS:
                    found.append((line, f"redefines the check helper {target.id}"))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in CHECK_HELPERS:
            found.append((line, f"redefines the check helper {node.name}"))
        elif isinstance(node, ast.ClassDef):
            methods = sorted(n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.Assign))
                             and getattr(n, "name", None) in COMPARISON_METHODS)
            methods += sorted(t.id for n in node.body if isinstance(n, ast.Assign) for t in n.targets
                              if isinstance(t, ast.Name) and t.id in COMPARISON_METHODS)
            bases = [_dotted(b) for b in node.bases if _dotted(b) in NUMBER_BASES]
            if methods:
                found.append((line, f"class {node.name} defines {', '.join(methods)} (how its objects compare)"))
            if bases:
                found.append((line, f"class {node.name} derives from {', '.join(bases)}"))
        elif isinstance(node, ast.Call):
            name = _dotted(node.func)
            parts = name.replace("()", "").split(".")
            last = parts[-1] if parts else ""
            if name in ("setattr", "delattr") and node.args and _dotted(node.args[0]).split(".", 1)[0] in GUARDED_MODULES:
                found.append((line, f"{name} on {_dotted(node.args[0])}, a module the checks use"))
            elif name in ("exit", "quit") or tuple(parts[-2:]) in EXITS or parts[0] == "signal":
                found.append((line, f"ends the process or the kernel ({name})"))
            elif last in IPYTHON_HOOKS and ("get_ipython" in name or "events" in parts or "ip" == parts[0]):
                found.append((line, f"installs an IPython hook ({name})"))
            elif parts[0] == "subprocess" or tuple(parts[-2:]) in FILE_FUNCTIONS:
                found.append((line, f"reaches files or processes ({name})"))
            elif name in ("open", "io.open", "Path", "pathlib.Path", "glob.glob", "glob") and _path_argument(node):
                found.append((line, f"{name} of a path outside the notebook's folder"))
            elif name == "__import__" or (last in ("import_module",) and "importlib" in name):
                found.append((line, f"imports by name at run time ({name})"))
        elif isinstance(node, ast.Attribute) and node.attr in IPYTHON_ONLY:
            found.append((line, f"reaches IPython's {node.attr}"))
        elif isinstance(node, ast.Attribute) and (node.attr in FRAME_ATTRIBUTES or (
                node.attr in FRAME_FUNCTIONS and _dotted(node.value) in ("sys", "inspect", "threading"))):
            found.append((line, f"walks the interpreter's frames ({_dotted(node) or node.attr})"))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for module in modules:
                if module.split(".")[0] in ("inspect", "ctypes", "gc", "signal", "subprocess", "socket"):
                    found.append((line, f"imports {module}"))
    return sorted(set(found))


def _released_sources(release) -> set[str]:
    return {cell.source.strip() for cell in release.cells}


def suspicions(submission, release) -> list[str]:
    """One line per suspect thing in the student's own cells: "cell N, line L: what (the line)"."""
    given = _released_sources(release)
    out = []
    for index, cell in enumerate(submission.cells):
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        meta = cell.get("metadata", {}).get("nbgrader", {}) or {}
        if source.strip() in given or runtime.is_check_cell({"cell_type": "code", "metadata": {"nbgrader": meta}}):
            continue    # a released cell, or a check cell (the graders run the released check whatever it holds)
        if cell.get("cell_type") == "code":
            findings = cell_findings(source)
        else:
            findings = [(k, "the marker of nbgrader's hidden tests") for k, line in enumerate(source.split("\n"), 1)
                        if HIDDEN_MARKERS.search(line)]
        lines = source.split("\n")
        for line, what in findings:
            text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
            out.append(f"cell {index}, line {line}: {what}" + (f" ({text[:80]})" if text else ""))
    return out


def skip_tags(submission, release) -> list[tuple[int, str]]:
    """(cell index, tag) for every grading skip tag on a cell whose source is not a released cell that
    carries that tag: a student's check or answer tagged to be skipped."""
    allowed = {}
    for cell in release.cells:
        for tag in cell.get("metadata", {}).get("tags", []):
            if tag in SKIP_TAGS:
                allowed.setdefault(tag, set()).add(cell.source.strip())
    out = []
    for index, cell in enumerate(submission.cells):
        source = cell.get("source", "")
        source = ("".join(source) if isinstance(source, list) else source).strip()
        for tag in cell.get("metadata", {}).get("tags", []):
            if tag in SKIP_TAGS and source not in allowed.get(tag, set()):
                out.append((index, tag))
    return out
