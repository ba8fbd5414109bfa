"""Task items and their loaders: ambiguous words, (later) robot instructions and benchmarks."""
