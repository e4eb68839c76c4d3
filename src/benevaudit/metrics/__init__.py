"""benevaudit.metrics."""
