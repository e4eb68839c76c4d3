"""benevaudit.detectors."""
