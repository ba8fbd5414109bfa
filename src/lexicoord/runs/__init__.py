"""Events, the store that keeps them, and the runner that produces them."""
