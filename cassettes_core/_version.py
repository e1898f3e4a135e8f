"""The library's version, for the package and for the manifest of every cassette it writes."""

__version__ = "0.1.0"
