"""Value tables: build, save, load and find them (user cache, then the package).

A table file is a compressed ``.npz`` holding

``values``  float32, shape ``(2 ** n_boxes, n_flags, cap + 1)``
    Expected points still to come from each turn-start state under optimal
    play (0 for unreachable states); widened to float64 when loaded.
``second``  float32, the same shape
    Their second moment E[X**2] under the same policy
    (:mod:`table.strategy.moments`); format 2 on.
``lump``    float32, shape ``model.shape + (3,)``
    ``A, B, C``: the chance that the lump box is still scored above 0, and
    ``E[X I]``, ``E[X**2 I]`` (:mod:`table.strategy.moments`); optional (a file
    without it gives one normal per player in :mod:`table.strategy.win_chances`).
``meta``  a JSON string
    ``format``, ``solver`` (versions), ``ruleset``, ``variant``, ``spec``
    (rules document version), ``fingerprint`` (hash of the score tables),
    ``expected`` (float64 value of an empty card), ``build_seconds``.

A file whose ``meta`` does not match the running code is *stale* and is
rebuilt.  Where files live: :func:`cache_dir`; tables shipped with the package
(``table/strategy/data``) are used when the cache has none.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import numpy as np
import numpy.typing as npt

from table.rules import Card, Ruleset, find_ruleset
from table.strategy._progress import TextProgress
from table.strategy.errors import StaleTablesError
from table.strategy.model import SPEC_VERSION, Model, check_variant
from table.strategy.moments import solve_moments
from table.strategy.solver import solve

#: File layout version; bump when the file format changes.
FORMAT_VERSION = 2
#: Solver version; bump when the solver's results change.
SOLVER_VERSION = "1"
#: Tables shipped inside the package.
PACKAGE_DATA = Path(__file__).with_name("data")


def cache_dir() -> Path:
    """Folder of the strategy tables in the user's cache.

    ``$DICETABLE_CACHE/strategy`` if that variable is set (tests point it at a
    temporary folder), else ``$XDG_CACHE_HOME/dicetable/strategy``, else
    ``~/.cache/dicetable/strategy``.
    """
    env = os.environ.get("DICETABLE_CACHE")
    if env:
        return Path(env) / "strategy"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "dicetable" / "strategy"


def file_name(ruleset: str, variant: str) -> str:
    """File name of one table, e.g. ``yahtzee-forced.npz``."""
    return f"{ruleset}-{variant}.npz"


@dataclass(frozen=True)
class StrategyTable:
    """The optimal-play value table of one ruleset and variant.

    Parameters
    ----------
    model : Model
        Ruleset, variant and score tables.
    values : ndarray of shape ``model.shape``, dtype float32 or float64
        Expected points still to come from each turn-start state.
    expected : float
        Expected final score from an empty card (exact, float64).
    build_seconds : float
        Wall time the build took, in seconds (0 if unknown).
    second : ndarray of shape ``model.shape``, optional
        Second moment of the points still to come (None: not known).
    lump : ndarray of shape ``model.shape + (3,)``, optional
        ``A, B, C`` of the lump box (see the module; None: not known).

    Examples
    --------
    >>> table = get_table("generala")            # doctest: +SKIP
    >>> round(table.expected, 4)                 # doctest: +SKIP
    162.4695
    """

    model: Model
    values: npt.NDArray[np.floating] = field(repr=False)
    expected: float
    build_seconds: float = 0.0
    second: npt.NDArray[np.floating] | None = field(default=None, repr=False)
    lump: npt.NDArray[np.floating] | None = field(default=None, repr=False)

    @property
    def ruleset(self) -> Ruleset:
        return self.model.ruleset

    @property
    def variant(self) -> str:
        return self.model.variant

    def future(self, card: Card) -> float:
        """Expected points still to come from the start of a turn on ``card`` (with upper bonus)."""
        mask, flag, upper = self.model.state_of(card)
        return float(self.values[mask, flag, upper])

    def expected_final(self, card: Card) -> float:
        """Expected final total of ``card`` under optimal play from the next turn on."""
        return self.model.banked(card) + self.future(card)

    def final_moments(self, card: Card) -> tuple[float, float]:
        """Mean and variance (points, points squared) of ``card``'s final total from the next turn on.

        Raises ValueError if the table has no second moment (built by an old format).
        """
        if self.second is None:
            raise ValueError("this strategy table has no second moment; rebuild it with 'dicetable strategy build'")
        state = self.model.state_of(card)
        mean, second = float(self.values[state]), float(self.second[state])
        return self.model.banked(card) + mean, max(0.0, second - mean * mean)

    def meta(self) -> dict[str, object]:
        """The metadata written with the table (see the module docstring)."""
        return {
            "format": FORMAT_VERSION,
            "solver": SOLVER_VERSION,
            "ruleset": self.ruleset.id,
            "variant": self.variant,
            "spec": SPEC_VERSION,
            "fingerprint": self.model.fingerprint,
            "expected": self.expected,
            "build_seconds": self.build_seconds,
            "shape": list(self.values.shape),
        }

    def save(self, path: Path) -> Path:
        """Write the table to ``path`` atomically (float32 values); return ``path``."""
        path.parent.mkdir(parents=True, exist_ok=True)
        values = np.nan_to_num(self.values.astype(np.float32), nan=0.0)
        arrays = {"values": values, "meta": np.array(json.dumps(self.meta()))}
        if self.second is not None:
            arrays["second"] = np.nan_to_num(self.second.astype(np.float32), nan=0.0)
        if self.lump is not None:
            arrays["lump"] = np.nan_to_num(self.lump.astype(np.float32), nan=0.0)
        fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                np.savez_compressed(fh, **arrays)
            os.chmod(tmp, 0o644)  # mkstemp makes 0600; tables are not secret
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return path


def build_table(
    ruleset: Ruleset | str,
    variant: str | None = None,
    *,
    progress: Callable[[int, int], None] | None = None,
    moments: bool = True,
) -> StrategyTable:
    """Solve ``ruleset`` / ``variant`` now (no files); see :func:`table.strategy.solver.solve`.

    ``moments=False`` solves the means only (about 2.7x faster: no win chances from it; for checks of
    the expected values).
    """
    model = Model.of(ruleset, variant)
    started = time.perf_counter()
    if not moments:
        values = solve(model, progress)
        return StrategyTable(model, values, float(values[0, 0, 0]), time.perf_counter() - started)
    values, stats = solve_moments(model, progress, lump=True)
    seconds = time.perf_counter() - started
    return StrategyTable(model, values, float(values[0, 0, 0]), seconds, stats[..., 0], stats[..., 1:])


def load_table(path: Path, model: Model) -> StrategyTable:
    """Read a table file written for ``model``.

    Raises
    ------
    OSError
        If the file cannot be read.
    StaleTablesError
        If the file is damaged or was written for other rules, another variant
        or another format or solver version (rebuild it with
        ``dicetable strategy build``).
    """
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(str(data["meta"]))
            values = data["values"].astype(np.float64)  # the solver's arithmetic is float64
            second = data["second"].astype(np.float64) if "second" in data else None
            lump = data["lump"] if "lump" in data else None  # float32: only win chances read it
    except (ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
        raise StaleTablesError(
            f"{path} is not a strategy table ({exc}); delete it or run 'dicetable strategy build {model.ruleset.id}'"
        ) from None
    expected = {
        "format": FORMAT_VERSION,
        "solver": SOLVER_VERSION,
        "ruleset": model.ruleset.id,
        "variant": model.variant,
        "spec": SPEC_VERSION,
        "fingerprint": model.fingerprint,
        "shape": list(model.shape),
    }
    for key, want in expected.items():
        if meta.get(key) != want:
            raise StaleTablesError(
                f"{path} is stale: {key} is {meta.get(key)!r}, this dicetable needs {want!r}; "
                f"run 'dicetable strategy build {model.ruleset.id}' to rebuild it"
            )
    if lump is not None and lump.shape != values.shape + (3,):
        lump = None
    if second is None or second.shape != values.shape:
        raise StaleTablesError(f"{path} has no second moment; run 'dicetable strategy build {model.ruleset.id}'")
    return StrategyTable(model, values, float(meta["expected"]), float(meta["build_seconds"]), second, lump)


_LOADED: dict[tuple[str, str], StrategyTable] = {}


def get_table(
    ruleset: Ruleset | str,
    variant: str | None = None,
    *,
    build: bool = True,
    stream: TextIO | None = None,
    directory: Path | None = None,
) -> StrategyTable:
    """The table of ``ruleset`` / ``variant``, loaded once per process.

    Looks in ``directory`` (default :func:`cache_dir`), then in the tables
    shipped with the package; builds and saves it in ``directory`` when it is
    missing or stale.

    Parameters
    ----------
    ruleset : Ruleset or str
    variant : str, optional
        Yahtzee: ``forced`` (default), ``free``, ``free_choice`` or ``none``;
        other rulesets: ``standard`` (default).
    build : bool, optional
        If False, raise instead of building.
    stream : text stream, optional
        Where to draw a progress bar while building (e.g. ``sys.stderr``).
    directory : Path, optional
        Cache folder to use instead of :func:`cache_dir`.

    Raises
    ------
    FileNotFoundError
        If ``build`` is False and no usable table exists.
    UnknownVariantError, UnknownRulesetError
        On bad names.
    """
    rs = find_ruleset(ruleset) if isinstance(ruleset, str) else ruleset
    variant = check_variant(rs, variant)
    folder = directory or cache_dir()
    key = (str(folder), f"{rs.id}/{variant}")
    if key in _LOADED:
        return _LOADED[key]
    model = Model.of(rs, variant)
    name = file_name(rs.id, variant)
    for path in (folder / name, PACKAGE_DATA / name):
        if path.is_file():
            try:
                table = load_table(path, model)
            except StaleTablesError:
                continue
            _LOADED[key] = table
            return table
    if not build:
        raise FileNotFoundError(
            f"no strategy table for {rs.id} ({variant}) in {folder}; run 'dicetable strategy build {rs.id}' first"
        )
    table = build_with_bar(model, stream)
    try:
        table.save(folder / name)
    except OSError as exc:  # a read-only cache still gets a working table, rebuilt next time
        if stream is not None:
            print(f"warning: could not save the {rs.id} table in {folder}: {exc}", file=stream)
    _LOADED[key] = table
    return table


def build_with_bar(model: Model, stream: TextIO | None) -> StrategyTable:
    """Build ``model``'s table, drawing a progress bar on ``stream`` if given."""
    if stream is None:
        return build_table(model.ruleset, model.variant)
    bar = TextProgress(stream, f"building {model.ruleset.id} ({model.variant})")
    table = build_table(model.ruleset, model.variant, progress=bar)
    bar.close()
    return table


def clear_memory_cache() -> None:
    """Forget tables loaded in this process (tests use it)."""
    _LOADED.clear()


def default_stream() -> TextIO | None:
    """``sys.stderr`` when it is a terminal, else None (no bar in logs and pipes)."""
    return sys.stderr if sys.stderr.isatty() else None
