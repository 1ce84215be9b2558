"""``dicetable demo``: a whole game on synthetic tray images read by the real pip reader.

- :mod:`.headless`: the terminal-only demo (renders, reads, plays; reader statistics).
- :mod:`.served`: the demo with the page: the table app on the synthetic camera.
- :mod:`.livetray`: the synthetic camera that throws on request (also used by the app's tests).
- :mod:`.presser`: the built-in player that presses the table's buttons.
"""
