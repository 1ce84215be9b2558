"""The café: a table shares its games over MQTT (docs/mqtt.md).

Importing this package starts nothing. :mod:`~table.cafe.broker` checks a broker's address, login and
TLS files (for the tables and the leaderboard), :mod:`~table.cafe.settings` reads ``play``'s
``--mqtt`` options and the config file, :mod:`~table.cafe.topics` names the topics and builds the payloads (schema 1),
:mod:`~table.cafe.publisher` is the client thread that sends the store's outbox,
:mod:`~table.cafe.ha_discovery` the Home Assistant configs, :mod:`~table.cafe.link` ties a
publisher to a running :class:`~table.app.TableApp`.
"""
