"""The library never prints: warnings are fields of the results, progress a callback, diagnostics
`logging`. Only the CLI (``cli.py``, ``commands/``) writes to the terminal; a program's ``__main__``
block and the mock server (``testing/``, a program of its own) may too."""

import ast
from pathlib import Path

import juge

PACKAGE = Path(juge.__file__).resolve().parent
PRINTS = {"print", "echo", "secho", "write"}  # print(), typer.echo/secho, sys.stderr.write / sys.stdout.write


def is_main_block(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.If)
        and isinstance(node.test, ast.Compare)
        and isinstance(node.test.left, ast.Name)
        and node.test.left.id == "__name__"
    )


def prints_in(tree: ast.AST) -> list[int]:
    found = []
    for node in ast.iter_child_nodes(tree):
        if is_main_block(node):
            continue
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name) and f.id == "print":
                found.append(node.lineno)
            elif isinstance(f, ast.Attribute) and f.attr in PRINTS - {"print"}:
                owner = f.value
                if isinstance(owner, ast.Name) and owner.id == "typer":
                    found.append(node.lineno)
                elif isinstance(owner, ast.Attribute) and owner.attr in ("stderr", "stdout"):
                    found.append(node.lineno)
        found += prints_in(node)
    return found


def test_no_module_outside_the_cli_prints() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE)
        if relative.parts[0] in ("commands", "testing") or relative.name == "cli.py":
            continue
        offenders += [f"{relative}:{line}" for line in prints_in(ast.parse(path.read_text(encoding="utf-8")))]
    assert offenders == []
