"""Bundled real data sets (with attribution, see ``data/ATTRIBUTION.md``) and paper simulators."""

from ._bundled import load_diamonds, load_letter

__all__ = ["load_diamonds", "load_letter"]
