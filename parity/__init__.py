"""Parity harness: our plugin measured against OSWorld's published code (issue #17)."""
