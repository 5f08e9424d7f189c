"""The headless core imports neither Textual nor Rich, nor the configuration loader
(``ranktop.tui.settings``): every module of ``ranktop.tui.core``, found by walking the
package (not from a list), is imported in a fresh interpreter and the modules it pulled in
are checked."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

FORBIDDEN = ("textual", "rich", "ranktop.tui.settings")

CHECK = textwrap.dedent("""
    import importlib, json, pkgutil, sys
    package = importlib.import_module(sys.argv[1])
    forbidden = tuple(sys.argv[2].split(","))
    found = {}
    names = [info.name for info in pkgutil.walk_packages(package.__path__, sys.argv[1] + ".")]
    for name in [sys.argv[1], *names]:
        before = set(sys.modules)
        importlib.import_module(name)
        pulled = sorted(m for m in set(sys.modules) - before
                        if any(m == f or m.startswith(f + ".") for f in forbidden))
        if pulled:
            found[name] = pulled
    print(json.dumps({"modules": names, "violations": found}))
""")


def contract_violations(package: str, extra_path: str = "") -> tuple[list[str], dict]:
    """(modules walked, {module: forbidden modules it pulled in}) for ``package``."""
    env_path = [extra_path] if extra_path else []
    code = f"import sys; sys.path[:0] = {env_path!r}\n{CHECK}"
    result = subprocess.run([sys.executable, "-c", code, package, ",".join(FORBIDDEN)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    return answer["modules"], answer["violations"]


def test_the_core_imports_neither_textual_nor_rich_nor_the_settings():
    modules, violations = contract_violations("ranktop.tui.core")
    assert "ranktop.tui.core.detect" in modules and "ranktop.tui.core.analysis" in modules
    assert violations == {}


def test_the_contract_catches_a_core_module_that_imports_textual(tmp_path):
    package = tmp_path / "fakecore"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "clean.py").write_text("import json\n")
    (package / "leaky.py").write_text("from textual.widget import Widget\n")
    modules, violations = contract_violations("fakecore", str(tmp_path))
    assert sorted(modules) == ["fakecore.clean", "fakecore.leaky"]
    assert list(violations) == ["fakecore.leaky"]
    assert "textual" in violations["fakecore.leaky"]


def test_the_contract_catches_a_core_module_that_imports_the_settings(tmp_path):
    package = tmp_path / "fakecore"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "clean.py").write_text("from ranktop.tui.core.config_values import MetricDef\n")
    (package / "leaky.py").write_text("from ranktop.tui.settings.config import Settings\n")
    modules, violations = contract_violations("fakecore", str(tmp_path))
    assert sorted(modules) == ["fakecore.clean", "fakecore.leaky"]
    assert list(violations) == ["fakecore.leaky"]
    assert "ranktop.tui.settings.config" in violations["fakecore.leaky"]
