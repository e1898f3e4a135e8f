"""``python -m cassette_refresh``: the ``cassette-refresh`` command."""

from cassette_refresh.cli import console_main

if __name__ == "__main__":
    console_main()
