"""Helpers shared by the tests (not fixtures: plain functions)."""
