"""The gate on the field's benchmarks: a simulated person, the benchmarks' own metrics, the question's judge."""
