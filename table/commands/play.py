"""``dicetable play``: the table itself: camera -> reading -> game -> store -> display and buttons."""

from __future__ import annotations

import argparse
import errno
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from table.app.bots import BOT_DICE
from table.cafe.settings import add_mqtt_options, settings_from
from table.commands._live import add_profile_options, add_reader_option, check_port
from table.commands._play_options import FREE_NAMES, add_turn_options, check_dice, parse_timer
from table.commands._play_parts import _buttons, _open_camera
from table.commands._running import run_until_stopped
from table.display.listening import phone_urls
from table.display.snapshot import Setup
from table.errors import UsageError
from table.rules import JOKER_VARIANTS, RULESET_IDS
from table.store import default_db_path, store_holder

if TYPE_CHECKING:
    pass


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``play`` subcommand to ``subparsers``."""
    p = subparsers.add_parser(
        "play",
        help="run the table: camera, game, display page and buttons",
        description="Run the dice table: watch the tray with the camera, put each settled roll into the game, "
        "keep the game in the store (an unfinished game is resumed after a restart), serve the "
        "display page (open the printed address; the Pi's kiosk does) and read the buttons.",
    )
    p.add_argument(
        "--camera",
        required=True,
        metavar="SOURCE",
        help="picamera2, opencv:0, opencv:FILE_OR_URL, images:DIR_OR_GLOB[@FPS] or synthetic[:SEED] "
        "(synthetic: ROLL throws the dice)",
    )
    p.add_argument(
        "--rules",
        default=None,
        metavar="ID",
        help=f"ruleset of a new game: {', '.join(RULESET_IDS)}, or free (free roll: the table reads and "
        "sums any number of dice, for other games); with --players the game starts at once, else the setup "
        "screen asks",
    )
    p.add_argument("--joker", default="forced", choices=JOKER_VARIANTS, help="Yahtzee joker variant (default forced)")
    p.add_argument(
        "--players",
        default=None,
        metavar="NAMES",
        help='player names, comma-separated: "Ann,Bo"; NAME:LEVEL seats a bot of LEVEL easy (best '
        'box now), medium (one throw of look-ahead) or optimal, e.g. "Ann,HAL:optimal"',
    )
    p.add_argument(
        "--bot-dice",
        default="tray",
        choices=BOT_DICE,
        help="who rolls a bot's dice: tray (default; a person throws them for it in the tray, the "
        "bot sets its holds and scores its box) or virtual (the app rolls them on screen)",
    )
    p.add_argument(
        "--bot-delay",
        type=float,
        default=0.8,
        metavar="S",
        help="seconds between a bot's steps, so the table can follow (default 0.8)",
    )
    p.add_argument("--bot-seed", type=int, default=None, metavar="N", help="seed of the virtual dice (default: random)")
    add_turn_options(p)
    add_profile_options(p)
    add_reader_option(p)
    add_server_options(p)
    p.add_argument(
        "--db",
        type=Path,
        default=None,
        metavar="PATH",
        help="game store (default: $DICETABLE_DB or the user data folder)",
    )
    p.add_argument(
        "--pins", type=Path, default=None, metavar="FILE", help="GPIO pin map (default firmware_config/pins.toml)"
    )
    p.add_argument(
        "--hints",
        action="store_true",
        help="show strategy hints (suggested holds glow, best box outlined, cost of each box); "
        "the MENU turns them on and off too",
    )
    p.add_argument("--no-buttons", action="store_true", help="no GPIO buttons (keyboard and page only)")
    p.add_argument(
        "--audit-mb",
        type=float,
        default=200.0,
        metavar="MB",
        help="disk budget of the audit's tray frames beside the store, oldest removed first "
        "(default 200; 0: keep none)",
    )
    p.add_argument(
        "--wait",
        action="store_true",
        help="while another dicetable holds the game store or the port, wait for it to stop instead "
        "of exiting (the systemd service does: a manual play keeps the table meanwhile)",
    )
    p.add_argument("--duration", type=float, default=None, metavar="S", help="stop after S seconds (tests)")
    add_mqtt_options(p)
    p.set_defaults(func=run)


def add_server_options(p: argparse.ArgumentParser) -> None:
    """Add ``--listen``, ``--port`` and ``--pin``."""
    p.add_argument(
        "--listen",
        default="127.0.0.1",
        metavar="ADDR",
        help="address to serve the page on (default 127.0.0.1; 0.0.0.0 lets phones on the LAN "
        "watch, and control with the PIN)",
    )
    p.add_argument("--port", type=int, default=8000, help="port of the page (default 8000; 0: any free port)")
    p.add_argument(
        "--pin",
        default=None,
        metavar="DIGITS",
        help="the table's PIN for commands from other devices (default: random, shown on the screen)",
    )


def parse_names(text: str | None) -> list[str]:
    """Split ``"Ann,Bo"`` into names; an empty text gives ``["Player 1", "Player 2"]``."""
    if not text:
        return ["Player 1", "Player 2"]
    return [n.strip() for n in text.split(",")]


def check_server_args(args: argparse.Namespace) -> None:
    """Check ``--port`` and ``--pin``.

    Raises
    ------
    UsageError
        If the port is not 0-65535 or the PIN is not 4-8 digits.
    """
    check_port(args.port)
    if args.pin is not None and not (args.pin.isdigit() and 4 <= len(args.pin) <= 8):
        raise UsageError(f"--pin must be 4 to 8 digits, got {args.pin!r}")


def make_watch(args: argparse.Namespace) -> Any:
    """The profile, and ``make_watcher(source) -> (watcher, see)`` from it and ``--reader``."""
    from calibration.profile import load_profile

    profile = load_profile(args.profile, args.profiles_dir)
    return profile, watcher_factory(profile, args.reader)


def watcher_factory(profile: Any, reader: str) -> Any:
    """``make_watcher(source) -> (watcher, see)`` for :class:`table.app.camera.CameraLoop`.

    `profile` is a calibration profile; `reader` is ``"model"`` (the pip reader) or ``"truth"`` (a synthetic
    source's own truth: :class:`vision.sources.synthetic.TruthReader`).
    """
    from calibration.procedure import make_watcher
    from table.commands._live import make_reader

    def make(source: Any) -> Any:
        read, see = make_reader(reader, source, profile.geometry)
        return make_watcher(profile, read), see

    return make


def run(args: argparse.Namespace) -> int:
    """Run the table until Ctrl-C (or --duration); exit status 0."""
    check_server_args(args)
    if not 0 <= args.bot_delay <= 60:
        raise UsageError(f"--bot-delay must be 0 to 60 seconds, got {args.bot_delay}")
    from table.app import TableApp
    from table.app.camera import CameraLoop
    from table.app.seats import check_setup
    from table.commands._play_options import announce_games
    from table.display.server import DisplayServer
    from table.inputs import load_pin_map
    from table.store import DB_ENV
    from vision.sources import open_source, parse_spec

    parse_spec(args.camera)
    mqtt = settings_from(args)  # a bad broker, table name or login file is told before anything starts
    names = parse_names(args.players)
    free = args.rules in FREE_NAMES
    setup = Setup("yahtzee" if free else args.rules or "yahtzee", args.joker, names)
    setup.timer_s = parse_timer(args.timer, free)
    setup.mode = "free_roll" if free else "scorecard"
    if free and any(":" in n for n in names):
        raise UsageError("a free roll has no bots: give only people's names in --players")
    # a bad --players is told before the port is tried
    check_setup(setup.ruleset, setup.joker, setup.names, names_example='e.g. --players "Ann,Bo"')
    profile, make = make_watch(args)
    max_dice = check_dice(args.dice, profile.dice_count)
    pin_map = None if args.no_buttons else load_pin_map(args.pins)  # a bad --pins is told before the page is up
    tray = None
    camera_spec = args.camera
    if parse_spec(args.camera)[0] == "synthetic":
        from table.demo.livetray import LiveTray

        seed = int(parse_spec(args.camera)[1] or 0)
        tray = LiveTray(seed=seed)
    db = args.db or (Path(os.environ[DB_ENV]) if os.environ.get(DB_ENV) else default_db_path())
    if args.wait:
        _wait_until_free(db, args.listen, args.port)
    if args.port:
        _check_port_free(args.listen, args.port)  # before the app starts a game that a failed start would leave behind
    # Opened before the app starts a game: a video file or image folder that cannot be opened ends here.
    first = None if tray is not None else _open_camera(camera_spec, profile)
    app: TableApp | None = None
    publisher: Any = None
    panel: Any = None
    server: Any = None
    camera: Any = None
    spare: Path | None = None
    try:
        app, spare = _start_app(
            lambda path: announce_games(  # one line per finished game: the terminal is not left silent
                TableApp(
                    path,
                    setup=setup,
                    autostart=args.players is not None or args.rules is not None,
                    tray=tray,
                    pin=args.pin,
                    camera_name=camera_spec,
                    hints=args.hints,
                    bot_dice=args.bot_dice,
                    bot_delay_s=args.bot_delay,
                    bot_seed=args.bot_seed,
                    max_dice=max_dice,
                )
            ),
            db,
        )
        server = DisplayServer(app, host=args.listen, port=args.port).start()
        print(f"dicetable: the table's page is at {server.url} (PIN for phones: {app.pin})", file=sys.stderr)
        phones = phone_urls(args.listen, server.port)
        if phones:
            print(f"dicetable: phones on the same network open {' or '.join(phones)}", file=sys.stderr)
        if app.note:
            print(f"dicetable: {app.note}", file=sys.stderr)
        if mqtt is not None:
            from table.cafe.link import share

            print(f"dicetable: sharing scores on {mqtt.url} as table {mqtt.table!r}", file=sys.stderr)
            publisher = share(app, mqtt, say=lambda line: print(f"dicetable: {line}", file=sys.stderr, flush=True))
        if app.resumed and (args.players is not None or args.rules is not None):
            print(
                f"dicetable: {app.message} --players/--rules are for a new game: finish this one, or end it "
                "from the MENU, to start theirs",
                file=sys.stderr,
            )

        def opener() -> Any:
            nonlocal first
            if tray is not None:
                return tray.reopen()  # closed by the camera loop after a fault
            source, first = first, None  # the camera opened above, once; then opened anew after a loss
            return source if source is not None else open_source(camera_spec, **profile.camera.source_options())

        if args.audit_mb > 0 and spare is None:  # a spare store's games are not kept: nor are its frames
            from table.audit.frames import FrameKeeper, frames_dir

            app.frames = FrameKeeper(frames_dir(db), budget_mb=args.audit_mb).start()
        camera = CameraLoop(app, opener, make).start()
        if pin_map is not None:
            panel = _buttons(app, pin_map)
        run_until_stopped(args.duration)  # Ctrl-C, SIGTERM (systemd) or --duration
    finally:  # a Ctrl-C at any point stops the camera's and the page's threads, or they keep the process alive
        if camera is not None:
            camera.close()
        if server is not None:
            server.close()
        if first is not None:
            first.close()
        if panel is not None:
            panel.close()
        if publisher is not None:
            publisher.stop()  # says "offline" while the app still runs
        if app is not None:
            app.close()
            if app.frames is not None:
                app.frames.close()
        if spare is not None:
            shutil.rmtree(spare, ignore_errors=True)
    return 0


def _start_app(make: Callable[[Path], Any], db: Path) -> tuple[Any, Path | None]:
    """``make(db).start()``; when the store at `db` cannot be used, the table on a spare store, and the spare's folder.

    A store in use by another dicetable, or a file that is not a store (a slip of
    ``--db``), still ends ``play`` (exit status 2). Any other store error (a folder
    the user may not write, a full disk, a newer schema) would leave the table's
    screen blank under systemd: the table runs on a spare store in a temporary
    folder (removed at the end, so games are not kept) and says the doctor's line
    for the store on every screen and on stderr.
    """
    from table.doctor.store import store_problem
    from table.store import NotAStoreError, StoreError, StoreLockedError

    try:
        return make(db).start(), None
    except (StoreLockedError, NotAStoreError):
        raise
    except StoreError as exc:
        line = store_problem(db, exc).screen_line() + " Games are not kept until it is fixed."
    spare = Path(tempfile.mkdtemp(prefix="dicetable-spare-store-"))
    try:
        app = make(spare / "games.sqlite3").start()
    except BaseException:
        shutil.rmtree(spare, ignore_errors=True)
        raise
    print(f"dicetable: {line}", file=sys.stderr)
    app.trouble("store", line)
    return app, spare


def _check_port_free(host: str, port: int) -> None:
    """Raise OSError (one clear line, advice fitting the cause) when ``host:port`` cannot be listened on."""
    from table.display.listening import bind_listener

    bind_listener(host, port).close()


#: Seconds between looks while ``play --wait`` waits for the store and the port.
WAIT_POLL_S = 2.0


def _wait_until_free(db: Path, host: str, port: int) -> None:
    """Return once no other dicetable holds the store at `db` and ``host:port`` is free (``play --wait``).

    Says what it waits for on stderr, once per cause. Under systemd the service used to
    exit on a store or port in use and be restarted every 3 s for as long as a manual
    ``play`` ran, each start costing the Pi a second of CPU. Raises the port's OSError
    for any cause but a port in use (a bad --listen never frees itself).
    """
    said = None
    while True:
        why = store_holder(db)
        if why is not None:
            why = f"the game store {str(db)!r} is in use by {why}"
        elif port:
            try:
                _check_port_free(host, port)
            except OSError as exc:
                if exc.errno != errno.EADDRINUSE:
                    raise
                why = f"port {port} is in use"
        if why is None:
            return
        if why != said:
            print(f"dicetable: waiting until it is free: {why}", file=sys.stderr, flush=True)
            said = why
        time.sleep(WAIT_POLL_S)
