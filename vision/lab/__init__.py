"""The reader's lab: what measures and trains the pip reader, never imported at the table.

- :mod:`vision.lab.evaluate` scores the reader on labelled photos (``dicetable eval``):
  :mod:`vision.lab.dataset` reads their labels, :mod:`vision.lab.report` writes the
  report, :mod:`vision.lab.reliability` the calibration figures, and
  :mod:`vision.lab.label_review` applies reviewed labels.
- :mod:`vision.lab.stress` scores renders per condition, :mod:`vision.lab.camera_changes`
  makes photos as other cameras would take them, :mod:`vision.lab.livebench` times the
  live loop (``dicetable bench``).
- :mod:`vision.lab.training` trains and exports the networks (needs the ``train`` extra).

Dependencies point lab -> runtime only; ``tests/test_layout.py`` checks that the runtime
never loads this package. Design notes and measurements: ``docs/training.md``.
"""
