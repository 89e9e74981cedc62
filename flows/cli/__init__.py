"""The `ablate` command line: one module per sub-command, each exposing `register(app)`."""
