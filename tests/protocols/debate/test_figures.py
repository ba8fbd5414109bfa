"""The study's figures, read off the matplotlib objects: what every bar says, and where it stands."""

import pytest

from lexicoord.protocols.debate.figures import rounds_to_consensus
from lexicoord.protocols.debate.statistics import Episode, compute


def debate(leader: str, rounds: int, termination: str = "consensus", n: int = 0) -> Episode:
    return Episode(episode_id=n, item_id=f"{leader}-{n}", pair=None, type="numerical", subtype="quantity",
                   ambiguous=True, instruction="x", condition="debate", config=f"Debate({leader})", model=f"p/{leader}",
                   termination=termination, consensus=termination == "consensus", rounds=rounds, verdict="ambiguous",
                   question="How many?", detected=True, rule=True, judge=None, success=True, false_alarm=None,
                   wall_time=1.0, model_time=1.0, calls=1)


def bar_labels(fig) -> list[str]:
    [ax] = fig.axes
    return [t.get_text() for t in ax.texts]


def test_figure_6_labels_every_bar_with_count_and_denominator_and_skips_no_round() -> None:
    # Leader a: consensus in rounds 1, 1 and 3, one debate without consensus; leader b: rounds 3 and 5.
    eps = [debate("a", 1, n=1), debate("a", 1, n=2), debate("a", 3, n=3), debate("a", 5, "max_rounds", n=4),
           debate("b", 3, n=5), debate("b", 5, n=6)]
    debates = compute(eps).configs
    fig = rounds_to_consensus(debates)
    [ax] = fig.axes
    # Categorical over the round counts some debate reached consensus in: no slot for rounds 2 and 4.
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "3", "5"]
    assert sorted(ax.get_xticks()) == [0, 1, 2]
    # One bar per leader and round; each says its share, its count and its denominator (that leader's
    # debates with consensus), zero bars included.
    labels = bar_labels(fig)
    assert len(labels) == len(ax.patches) == 6
    assert sorted(labels) == sorted(["66.7%\n2/3", "33.3%\n1/3", "0.0%\n0/3",
                                     "0.0%\n0/2", "50.0%\n1/2", "50.0%\n1/2"])
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["Debate(a): 3 of 4 debates reached consensus", "Debate(b): 2 of 2 debates reached consensus"]
    assert ax.get_xlabel() == "round in which consensus was reached"


def test_figure_6_without_any_consensus_says_so_instead_of_an_empty_bar() -> None:
    fig = rounds_to_consensus(compute([debate("a", 3, "max_rounds", n=1), debate("a", 3, "max_rounds", n=2)]).configs)
    [ax] = fig.axes
    assert not ax.patches and list(ax.get_xticks()) == []
    assert bar_labels(fig) == ["no debate reached consensus (0 of 2)"]



def test_figure_6_names_a_leader_that_never_reached_consensus_without_a_bar() -> None:
    fig = rounds_to_consensus(compute([debate("a", 2, n=1), debate("b", 5, "max_rounds", n=2)]).configs)
    [ax] = fig.axes
    assert bar_labels(fig) == ["100.0%\n1/1"] and [t.get_text() for t in ax.get_xticklabels()] == ["2"]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["Debate(a): 1 of 1 debates reached consensus", "Debate(b): 0 of 1 debates reached consensus"]


@pytest.mark.parametrize("eps", [
    [debate(leader, 1, n=i) for i, leader in enumerate("ab")],  # two full bars side by side: "best" sat on them
    [debate(leader, 1, n=i) for i, leader in enumerate("abcde")],
    [debate(leader, r, n=10 * i + r) for i, leader in enumerate("abc") for r in (1, 2, 3)] + [debate("a", 1, n=99)],
])
def test_figure_6s_legend_never_covers_a_bars_label(eps: list[Episode]) -> None:
    fig = rounds_to_consensus(compute(eps).configs)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    [ax] = fig.axes
    legend = ax.get_legend().get_window_extent(renderer)
    labels = [t.get_window_extent(renderer) for t in ax.texts]
    assert labels and not any(legend.overlaps(box) for box in labels)
    assert not any(legend.overlaps(bar.get_window_extent(renderer)) for bar in ax.patches)
    whole = fig.bbox
    assert whole.x0 <= legend.x0 and legend.x1 <= whole.x1 and whole.y0 <= legend.y0, "the legend stays on the figure"
