"""A paper's numbers beside a run's: matching cells as papers write them, intervals computed by hand."""

from lexicoord.analysis.paper import Measure, Published, comparison_rows, matching, rate, stored


def test_a_rate_is_in_percent_with_its_wilson_interval() -> None:
    m = rate("accuracy", {"task": "gsm8k"}, 8, 10)
    assert m is not None and m.value == 80.0 and m.n == 10
    # Wilson 95% for 8 of 10: centre (8 + z²/2)/(10 + z²), half-width z·sqrt(pq/n + z²/4n²)/(1 + z²/n).
    z = 1.959963984540054
    p, n = 0.8, 10
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / (1 + z * z / n)
    assert abs(m.low - 100 * (centre - half)) < 1e-9 and abs(m.high - 100 * (centre + half)) < 1e-9
    assert rate("accuracy", {}, 0, 0) is None, "no denominator, no rate"


def test_cells_match_as_papers_write_them_and_never_by_model() -> None:
    ours = [Measure(metric="accuracy", cell={"variant": "cogent", "task": "gsm8k"}, model="local/a", value=50),
            Measure(metric="accuracy", cell={"variant": "cogent", "task": "gsm8k"}, model="local/b", value=60),
            Measure(metric="accuracy", cell={"variant": "vanilla", "task": "gsm8k"}, model="local/a", value=40),
            Measure(metric="tokens", cell={"variant": "cogent", "task": "gsm8k"}, model="local/a", value=90)]
    paper = Published(source="Table 1", metric="accuracy", cell={"variant": "COGENT", "task": " GSM8K"}, value=79.4,
                      paper_model="GPT-3.5-Turbo")
    assert [m.model for m in matching(paper, ours)] == ["local/a", "local/b"], "case and spaces as printed"
    everything = Published(source="Table 1", metric="accuracy", value=1)
    assert len(matching(everything, ours)) == 3, "a cell that names nothing matches every cell of the measure"


def test_each_published_number_says_whether_it_lies_in_the_runs_interval() -> None:
    ours = [rate("converged_rate", {}, 19, 20), rate("failed_rate", {}, 1, 20)]
    published = [Published(source="Section 5", metric="converged_rate", value=99),
                 Published(source="Section 5", metric="failed_rate", value=30),
                 Published(source="Figure 1", metric="mean_depth", value=0.4)]
    rows = comparison_rows(published, [m for m in ours if m])
    assert [r[-1] for r in rows] == ["yes", "no", ""]
    assert rows[0][4].startswith("95 [") and rows[0][5] == "20"
    assert rows[2][4] == "not in this run", "a number the run cannot compare is listed, not dropped"


def test_numbers_stored_with_a_run_are_read_back_and_bad_ones_ignored() -> None:
    good = {"published": [{"source": "Table 1", "metric": "accuracy", "value": 60.0}]}
    assert [p.value for p in stored(good)] == [60.0]
    assert stored({}) == [] and stored({"published": [{"source": "x"}]}) == []
