"""Test-only helpers: the loopback provider emulator and the demo.

Nothing in the library imports this package; it exists for demos, this project's tests and
users' own tests that want a provider-shaped server on loopback (``testing.emulator``).
"""
