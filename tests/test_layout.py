"""The package layout the design guide asks for: the runtime never loads the lab, and vision never imports table.

What runs at the table (``vision``'s sources, tray, detection, reading, watcher; the ``play``,
``watch`` and ``read`` commands) is kept apart from what measures and trains it
(``vision.lab``: evaluation, stress sets, training; ``vision.render``: the synthetic renderer,
which only the synthetic camera source, the lab and the demo may load).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
VISION = ROOT / "vision"

#: Module name prefixes the runtime must never load.
LAB_PREFIXES = ("vision.lab", "vision.render", "torch")

#: Runtime files that may import vision.render: the synthetic camera source and its scene model.
RENDER_IMPORTERS = {"vision/sources/synthetic.py", "vision/sources/_world.py"}


def _is_lab(name: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in LAB_PREFIXES)


def _imported_modules(path: Path) -> list[tuple[int, str, bool]]:
    """``(line, module, top_level)`` for every import in `path`; ``from vision import lab`` gives ``vision.lab``."""
    tree = ast.parse(path.read_text(), str(path))
    top = {id(node) for node in tree.body}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name, id(node) in top) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.lineno, node.module, id(node) in top))
            out += [(node.lineno, f"{node.module}.{alias.name}", id(node) in top) for alias in node.names]
    return out


def _runtime_files() -> list[Path]:
    lab, render = VISION / "lab", VISION / "render"
    return [p for p in sorted(VISION.rglob("*.py")) if lab not in p.parents and render not in p.parents]


def test_the_runtime_path_of_play_watch_and_read_loads_no_lab_module(tmp_path):
    """In a fresh interpreter: import the runtime, then read frames and watch them as ``dicetable play`` does."""
    render = pytest.importorskip("vision.render", reason="vision.render (the synthetic tray renderer) is not there")
    import cv2

    tray = render.render_tray([1, 2, 3, 4, 5], seed=0, style="round")
    frames = tmp_path / "frames"
    frames.mkdir()
    for k in range(12):  # still frames: the watcher reads them
        cv2.imwrite(str(frames / f"frame_{k:03d}.png"), tray.image)
    code = textwrap.dedent(f"""
        import argparse, json, sys
        import vision, vision.reader, vision.watch, vision.sources, vision.annotate, vision.liveview
        import vision.sources.capture, vision.sources.files, vision.sources.picam
        import table.cli, table.app, table.app.seats, table.app.camera, table.display.server, table.inputs
        import table.commands.play, table.commands.watch, table.commands.read, table.commands._live
        from table.commands._live import make_reader
        from vision.sources import open_source

        profile, make = table.commands.play.make_watch(
            argparse.Namespace(profile="default", profiles_dir=None, reader="model"))
        with open_source({f"images:{frames}"!r}) as source:
            watcher, see = make(source)
            for frame in source:
                see(frame)
                watcher.update(frame)
            reader, _ = make_reader("model", source, profile.geometry)
        reading = reader(vision.load_image({str(frames / "frame_000.png")!r}))
        print(json.dumps({{"dice": len(reading.dice), "modules": sorted(sys.modules)}}))
    """)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["dice"] > 0  # the networks really ran
    assert "vision.detect" in result["modules"] and "vision.face" in result["modules"]
    assert [m for m in result["modules"] if _is_lab(m)] == []


def test_no_runtime_file_imports_the_lab():
    found = [
        f"{p.relative_to(ROOT)}:{line} imports {name}"
        for p in _runtime_files()
        for line, name, _ in _imported_modules(p)
        if name == "vision.lab" or name.startswith("vision.lab.")
    ]
    assert found == []


def test_only_the_synthetic_source_imports_the_renderer():
    found = [
        f"{p.relative_to(ROOT)}:{line} imports {name}"
        for p in _runtime_files()
        for line, name, _ in _imported_modules(p)
        if (name == "vision.render" or name.startswith("vision.render."))
        and p.relative_to(ROOT).as_posix() not in RENDER_IMPORTERS
    ]
    assert found == []
    # vision.sources opens the synthetic source only when it is asked for
    eager = [
        name
        for _, name, top in _imported_modules(VISION / "sources" / "__init__.py")
        if top and name.startswith("vision.sources.synthetic")
    ]
    assert eager == []


def test_vision_never_imports_table():
    found = [
        f"{p.relative_to(ROOT)}:{line} imports {name}"
        for p in sorted(VISION.rglob("*.py"))
        for line, name, _ in _imported_modules(p)
        if name == "table" or name.startswith("table.")
    ]
    assert found == []


def test_the_import_scan_sees_every_form_of_import(tmp_path):
    path = tmp_path / "sample.py"
    path.write_text(
        "import vision.lab.evaluate\nfrom vision import lab\n"
        "def f():\n    from vision.lab.training import data\n    import table.rules as r\n"
    )
    names = {name for _, name, _ in _imported_modules(path)}
    assert {"vision.lab.evaluate", "vision.lab", "vision.lab.training", "table.rules"} <= names
    assert [top for _, name, top in _imported_modules(path) if name == "vision.lab.training"] == [False]


def test_the_game_package_does_no_io():
    """table.game is a pure state machine: the session that writes events to the store lives in table.app."""
    io_modules = ("sqlite3", "table.store", "table.app", "table.display", "socket", "threading", "vision")
    bad = [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for path in sorted((ROOT / "table" / "game").rglob("*.py"))
        for line, name, _ in _imported_modules(path)
        if any(name == m or name.startswith(m + ".") for m in io_modules)
    ]
    assert bad == []


def test_no_module_is_over_450_lines():
    """One file, one job: the largest module in table/, vision/ and calibration/ stays readable."""
    long = {
        str(p.relative_to(ROOT)): n
        for top in ("table", "vision", "calibration")
        for p in (ROOT / top).rglob("*.py")
        if (n := len(p.read_text().splitlines())) > 450
    }
    assert long == {}
