"""An incident handed over in one file: the bundle (``<job>-<UTC time>.ranktop``, a folder or
a ``.tar.gz``) that holds what the console showed, the analysis behind it as JSON, the queries
and the settings that produced it (secrets removed), and what ``ranktop open`` reopens.

``saved`` is what ranktop reads back; ``gather`` collects it from the engine; ``redact`` makes
the settings and queries safe to hand over; ``write`` and ``read`` put it on disk and back;
``load`` checks what is read back (``shape`` before decoding, ``schema`` after) and
neutralises its text, for a bundle is a file from whoever wrote it."""
