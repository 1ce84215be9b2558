"""Training of the learned parts of ``vision`` (face reader, pip finder, die detector).

Nothing here is imported at run time: the product only loads the exported ONNX
models. The ``train_*`` modules need the ``train`` extra
(``pip install -e .[train]``: torch, onnx); the face reader's dataset,
augmentation, drawn-dice and evaluation modules (:mod:`.data`, :mod:`.augment`,
:mod:`.synth`, :mod:`.evaluate`, :mod:`.render_data`) need only numpy and
OpenCV.
"""
