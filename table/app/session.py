"""A live game: the engine, the store and the display's subscription together.

:class:`GameSession` is what the app wires inputs to.  For each command it
decides the events (:func:`table.game.execute`, which raises and changes
nothing on an invalid command), commits them to the store (from then on they
are accepted), swaps in the new state and tells each subscriber.

Example
-------
>>> with open_store(path) as store:                         # doctest: +SKIP
...     session = GameSession.resume(store) or GameSession.start(
...         store, StartGame(at=now(), ruleset="yahtzee", players=("Ann", "Bo")))
...     unsubscribe = session.subscribe(lambda state, events: display.draw(state))
...     session.handle(ReadDice(at=now(), values=(6, 6, 6, 2, 1), source="camera"))
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from table.game.commands import Command, StartGame, execute
from table.game.events import Event, GameStarted
from table.game.state import GameState
from table.store import Store

log = logging.getLogger(__name__)

#: ``callback(state, events)``: called after each accepted (committed) command.
Subscriber = Callable[[GameState, tuple[Event, ...]], None]


class GameSession:
    """One game being played, kept in a :class:`~table.store.Store`.

    Parameters
    ----------
    store : Store
        The open store the game lives in.
    game_id : int
        The game's id in the store.
    state : GameState
        Its current state (the fold of its stored events).

    Use :meth:`start` or :meth:`resume` rather than the constructor.
    """

    def __init__(self, store: Store, game_id: int, state: GameState) -> None:
        self.store = store
        self.game_id = game_id
        self.state = state
        self._subscribers: list[Subscriber] = []

    def __repr__(self) -> str:
        return f"<GameSession game {self.game_id}, {self.state.events} events>"

    @classmethod
    def start(cls, store: Store, command: StartGame) -> GameSession:
        """Start and store a new game.

        Raises
        ------
        InvalidCommandError, table.rules.RulesError
            If the start command cannot be used (bad ruleset, players, timer); nothing is stored.
        """
        state, events = execute(None, command)
        started = events[0]
        assert isinstance(started, GameStarted)
        return cls(store, store.create_game(started, state), state)

    @classmethod
    def resume(cls, store: Store, game_id: int | None = None) -> GameSession | None:
        """Load game ``game_id`` (default: the latest unfinished one) exactly as stored.

        Returns None when ``game_id`` is None and no game is unfinished.
        """
        if game_id is None:
            game_id = store.latest_unfinished()
            if game_id is None:
                return None
        return cls(store, game_id, store.load(game_id))

    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        """Call ``callback(state, events)`` after every accepted command; return an unsubscriber."""
        self._subscribers.append(callback)

        def unsubscribe() -> None:
            if callback in self._subscribers:
                self._subscribers.remove(callback)

        return unsubscribe

    def handle(self, command: Command) -> tuple[Event, ...]:
        """Decide, commit and apply ``command``; return its events once accepted.

        Raises
        ------
        InvalidCommandError, IllegalCommandError, table.rules.RulesError
            If the command is refused; the state and the store do not change.
        table.store.StoreWriteError
            If the store cannot take the commit now (a full disk, a read-only disk, an I/O
            error): nothing is stored, the state does not change and no subscriber is told;
            the same command can be handled again once the fault clears.
        table.store.StoreError
            If the commit fails otherwise; the in-memory state does not change either.
        """
        new, events = execute(self.state, command)
        self.store.append(self.game_id, self.state.events, events, new)  # raises before anything is folded
        self.state = new
        for callback in tuple(self._subscribers):
            try:
                callback(new, events)
            except Exception:  # a broken display must not stop the game
                log.exception("subscriber %r failed on game %s", callback, self.game_id)
        return events
