"""Wrong-PIN counting and lock-outs for the phones' pages (:class:`PinGuard`)."""

from __future__ import annotations

import collections
import math
import secrets
import time
from collections.abc import Callable

from table.display.request_checks import address_block


class PinGuard:
    """Counts wrong PINs per client address and locks an address out after too many.

    After `max_wrong` wrong PINs in a row an address may not try again for `lockout_s`
    seconds; each further wrong PIN locks it out for twice as long as the last time (at
    most `max_lockout_s`). The right PIN clears the address's count.

    IPv6 addresses are counted by their /64 network, the block one phone or one home
    network is given (RFC 4291's interface identifier is the last 64 bits): a phone can
    take any number of addresses in it, but not of other networks.

    The table as a whole is counted too: after `max_table_wrong` wrong PINs from any
    addresses within `table_window_s`, every address is locked out the same way (a
    device on a cafe's network can take one IPv4 address after another, 5 tries each).
    A right PIN does not clear this count: the phone pages offer their PIN again on
    every reconnect, which would give an attacker fresh tries. The table's own
    buttons and screen are never locked out.

    A device that gave the right PIN is given a token (:meth:`remember`, 128 random
    bits) that its page offers when it reconnects (:meth:`recognises`). A token is
    never locked out, so strangers' wrong PINs cannot take control away from the
    phones already playing; it lasts as long as this guard (the table's run), and the
    least recently used is forgotten past `max_tokens`.

    Parameters
    ----------
    max_wrong : int, optional
        Wrong PINs in a row before the first lock-out (5).
    max_table_wrong : int, optional
        Wrong PINs from all addresses together before every address is locked out (20).
    table_window_s : float, optional
        How long a wrong PIN counts for the table as a whole, in seconds (3600).
    lockout_s : float, optional
        The first lock-out, in seconds (30).
    max_lockout_s : float, optional
        The longest lock-out, in seconds (3600).
    clock : callable, optional
        Monotonic time in seconds (``time.monotonic``; tests give their own).
    max_tokens : int, optional
        Devices remembered at once (64).
    """

    #: The key of the table-wide count (no address is written this way).
    TABLE = "<every address>"

    def __init__(
        self,
        *,
        max_wrong: int = 5,
        max_table_wrong: int = 20,
        table_window_s: float = 3600.0,
        lockout_s: float = 30.0,
        max_lockout_s: float = 3600.0,
        clock: Callable[[], float] = time.monotonic,
        max_tokens: int = 64,
    ) -> None:
        self.max_wrong = max_wrong
        self.max_table_wrong = max_table_wrong
        self.table_window_s = table_window_s
        self._table_wrong_at: collections.deque[float] = collections.deque()  # times of the table's wrong PINs
        self.lockout_s = lockout_s
        self.max_lockout_s = max_lockout_s
        self.clock = clock
        self._wrong: dict[str | None, int] = {}
        self._until: dict[str | None, float] = {}
        self.max_tokens = max_tokens
        self._tokens: collections.OrderedDict[str, None] = collections.OrderedDict()

    def remember(self) -> str:
        """A new token for a device that has just given the right PIN (URL-safe text)."""
        token = secrets.token_urlsafe(16)
        self._tokens[token] = None
        while len(self._tokens) > self.max_tokens:
            self._tokens.popitem(last=False)
        return token

    def recognises(self, token: str) -> bool:
        """Whether `token` is one :meth:`remember` gave (and has not forgotten); never counted or locked out.

        A recognised token becomes the last to be forgotten (the phones in use keep theirs).
        """
        if len(token) > 64:  # ours are 22 characters: a long one is not compared, at any cost
            return False
        for known in self._tokens:
            if secrets.compare_digest(token.encode(), known.encode()):
                self._tokens.move_to_end(known)
                return True
        return False

    @staticmethod
    def _key(host: str | None) -> str | None:
        """Whose count `host` adds to: the address itself, or for IPv6 its /64 network (:func:`address_block`)."""
        return address_block(host)

    def _wait_s(self, key: str | None) -> float:
        return max(0.0, self._until.get(key, 0.0) - self.clock())

    def wait_s(self, host: str | None) -> float:
        """Seconds until `host` may try a PIN again (0: now)."""
        return max(self._wait_s(self._key(host)), self._wait_s(self.TABLE))

    def refusal(self, host: str | None) -> str | None:
        """The message for `host` while it is locked out, else None."""
        own, table = self._wait_s(self._key(host)), self._wait_s(self.TABLE)
        if own >= table and own:
            return f"Too many wrong PINs; try again in {math.ceil(own)} s."
        if table:
            return f"Too many wrong PINs at this table from several devices; try again in {math.ceil(table)} s."
        return None

    def check(self, host: str | None, given: str, pin: str) -> bool:
        """Whether `given` is `pin`, counting a wrong one against `host` (a right one clears its count).

        An empty `given` (Control pressed with no PIN typed) is wrong but not counted. The
        caller asks :meth:`refusal` first: while `host` is locked out no PIN is checked.
        """
        if not given:
            return False
        key = self._key(host)
        if secrets.compare_digest(given.encode(), pin.encode()):
            self._wrong.pop(key, None)
            self._until.pop(key, None)
            return True
        now = self.clock()
        self._table_wrong_at.append(now)
        while self._table_wrong_at[0] <= now - self.table_window_s:
            self._table_wrong_at.popleft()
        self._wrong[key] = self._wrong.get(key, 0) + 1
        for k, n, most in (
            (key, self._wrong[key], self.max_wrong),
            (self.TABLE, len(self._table_wrong_at), self.max_table_wrong),
        ):
            if n >= most:
                lockout_s = self.lockout_s * 2 ** min(n - most, 30)  # 30 s, 60 s, 120 s...
                self._until[k] = now + min(self.max_lockout_s, lockout_s)
        return False
