"""Fixtures shared by several test modules."""

import pytest


@pytest.fixture()
def plt():
    """``matplotlib.pyplot`` on the Agg backend (skips without matplotlib); closes every figure."""
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    yield plt
    plt.close("all")
