"""Built-in providers; each registers itself through the entry-point hook."""
