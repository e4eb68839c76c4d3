"""benevaudit.probes."""
