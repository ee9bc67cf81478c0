"""The headless command line: the parser and dispatch, its options, the `run`, `compare` and `runs`
commands, the info commands, standard output, the progress bar and the tables `runs` prints.

May import: every core package. Nothing in core imports it.
"""
