"""Subcommands of the ``dicetable`` command line, one module each."""
