"""The ``cassettes`` subcommands, one module each: ``register(commands)`` adds its parser."""
