"""Bundled real data sets (with attribution, see ``data/ATTRIBUTION.md``) and paper simulators."""

from ._bundled import load_diamonds, load_letter
from ._simulators import ScoreSetting, make_score_setting

__all__ = ["load_diamonds", "load_letter", "make_score_setting", "ScoreSetting"]
