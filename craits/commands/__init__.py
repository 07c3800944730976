"""The subcommands of ``craits``: each module has ``add_parser(sub)`` and ``run(args, parser)``."""
