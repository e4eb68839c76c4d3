"""benevaudit.report."""
