"""placeholder"""

from __future__ import annotations

import argparse


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    pass
