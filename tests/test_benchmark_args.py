"""benchmarks/*.py: a bad path or value is one line on stderr that says what to do, exit 2 (no traceback, no usage)."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(script, *argv, cwd=ROOT):
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), *argv], capture_output=True, text=True, cwd=cwd, timeout=120
    )
    return proc.returncode, proc.stderr


@pytest.mark.parametrize(
    ("script", "argv", "said"),
    [
        (
            "speed.py",
            ["{tmp}/nope"],
            "beside this checkout); give the folder holding labels.json",
        ),
        ("perturbations.py", ["--dev", "x"], "unknown option --dev; see python benchmarks/perturbations.py --help"),
        ("perturbations.py", ["{tmp}", "--quick"], "has no labels.json"),
        ("perturbations.py", ["--json", "{tmp}/nope/x.json"], "does not exist; make it first"),
        ("stress_sets.py", ["--save", "{tmp}/a_file", "--n", "1"], "is a file; give a folder"),
        ("oblique.py", ["--train-dir", "{tmp}/nope"], "argument --train-dir: "),
        ("audit_power.py", ["{tmp}/a_file"], "is a file; give a folder"),  # it made a folder named --help
        ("livetray.py", ["--throws", "0"], "argument --throws: 0 must be above 0"),
        ("live_photos.py", ["--dev", "{tmp}/nope"], "is not a folder"),
    ],
)
def test_a_bad_path_or_value_is_one_line_and_exit_2(tmp_path, script, argv, said):
    (tmp_path / "a_file").write_text("not a folder")
    status, err = _run(script, *(a.format(tmp=tmp_path) for a in argv))
    assert status == 2, err
    assert err.count("\n") == 1 and said in err, err
    assert err.startswith(f"{script}: ") and "Traceback" not in err and "usage:" not in err
    assert not (tmp_path / "a_file").is_dir()


def test_help_is_still_whole(tmp_path):
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "audit_power.py"), "--help"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode == 0 and proc.stdout.startswith("usage: audit_power.py")
    assert list(tmp_path.iterdir()) == []  # --help is not taken for the output folder


def test_a_bad_file_met_after_parsing_is_one_line(tmp_path):
    dev = tmp_path / "dev"
    dev.mkdir()
    (dev / "labels.json").write_text('{"images": []}')  # passes the parser's check; load_dataset refuses it
    status, err = _run("speed.py", str(dev))
    assert status == 2 and err.count("\n") == 1 and "lists no images" in err, err
