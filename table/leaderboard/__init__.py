"""The café's leaderboard: a separate service fed by every table through one MQTT broker.

It shares the MQTT schema (docs/mqtt.md) and the broker options (:mod:`table.cafe.broker`) with
the tables: :mod:`~table.leaderboard.broker` reads its ``--mqtt*`` options, :mod:`~table.leaderboard.messages`
checks what arrives, :mod:`~table.leaderboard.subscriber` keeps the broker session,
:mod:`~table.leaderboard.store` keeps each game once in its own SQLite file,
:mod:`~table.leaderboard.queries` ranks, :mod:`~table.leaderboard.server` serves the TV page and
the read-only API, :mod:`~table.leaderboard.service` starts them together.
"""
